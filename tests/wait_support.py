"""A bounded wait for tests that watch another thread or process."""

from __future__ import annotations

import time
from collections.abc import Callable


def eventually(check: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Whether `check()` became true within `timeout` seconds (polled every 10 ms)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
