"""Shared by the tests of ops that wait (queues, accumulators): runs with a deadline, and calls
on another thread whose result or error the test checks."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import tensorweave as tf

WAIT_MS = 5000  # deadline of runs expected to complete
SHORT_MS = 150  # deadline of runs expected to wait in vain


def run(sess: tf.Session, fetches: Any, timeout_ms: int = WAIT_MS, **kwargs: Any) -> Any:
    return sess.run(fetches, options=tf.RunOptions(timeout_in_ms=timeout_ms), **kwargs)


class Background:
    """A call on another thread, with its result or error."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None

        def target() -> None:
            try:
                self.result = fn()
            except BaseException as exc:  # noqa: BLE001 - checked by the test
                self.error = exc

        self.thread = threading.Thread(target=target, daemon=True)
        self.thread.start()

    def join(self, timeout: float = 5.0) -> Any:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "background run did not finish"
        if self.error is not None:
            raise self.error
        return self.result

    def still_waiting(self, seconds: float = 0.2) -> bool:
        self.thread.join(seconds)
        return self.thread.is_alive()
