"""A recorder for ``callback(error, value)`` callbacks, shared by the runtime tests."""

from __future__ import annotations

import threading
from typing import Any


class Inbox:
    """A callback that remembers what it got and on which thread, and signals each call."""

    def __init__(self) -> None:
        self.calls: list[tuple[BaseException | None, Any]] = []
        self.threads: list[int] = []
        self.event = threading.Event()

    def __call__(self, error: BaseException | None, value: Any) -> None:
        self.calls.append((error, value))
        self.threads.append(threading.get_ident())
        self.event.set()
