"""``tw.logging``: ``tf.compat.v1.logging``, a thin front on the ``tensorweave`` logger that
the library's own modules log to (``logging.getLogger(__name__)`` under ``tensorweave.``).

Contract: the level constants and functions of TF 1.x (``set_verbosity(tw.logging.INFO)``,
``info``, ``warn``, ``log_every_n`` ...). The verbosity is the level of the ``tensorweave``
logger; when the script configured no logging itself (the root logger has no handler), the
first use of this module gives that logger a stderr handler, as TF does for its own logger,
so ``set_verbosity(INFO)`` makes INFO messages (e.g. ``LoggingTensorHook``'s) visible.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections import Counter
from typing import Any

__all__ = ["DEBUG", "ERROR", "FATAL", "INFO", "WARN", "debug", "error", "fatal", "flush",
           "get_logger", "get_verbosity", "info", "log", "log_every_n", "log_first_n",
           "log_if", "set_verbosity", "vlog", "warn", "warning"]

DEBUG = logging.DEBUG
INFO = logging.INFO
WARN = logging.WARN
ERROR = logging.ERROR
FATAL = logging.FATAL

_lock = threading.Lock()
_configured = False
# Per call site, how many times log_every_n / log_first_n were reached there.
_site_counts: Counter[tuple[str, int]] = Counter()


def get_logger() -> logging.Logger:
    """The ``tensorweave`` logger, with a stderr handler if logging is otherwise unset."""
    global _configured
    logger = logging.getLogger("tensorweave")
    with _lock:
        if not _configured:
            _configured = True
            if not logging.getLogger().handlers and not logger.handlers:
                handler = logging.StreamHandler(sys.stderr)
                handler.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
                logger.addHandler(handler)
                if logger.level == logging.NOTSET:
                    logger.setLevel(WARN)
    return logger


def set_verbosity(v: int) -> None:
    get_logger().setLevel(v)


def get_verbosity() -> int:
    return get_logger().getEffectiveLevel()


def log(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().debug(msg, *args, **kwargs)


def info(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().info(msg, *args, **kwargs)


def warning(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().warning(msg, *args, **kwargs)


warn = warning


def error(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().error(msg, *args, **kwargs)


def fatal(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs at FATAL level; like TF's, it does not end the process."""
    get_logger().critical(msg, *args, **kwargs)


def vlog(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().log(level, msg, *args, **kwargs)


def log_if(level: int, msg: Any, condition: Any, *args: Any) -> None:
    if condition:
        log(level, msg, *args)


def _call_site_count() -> int:
    """How many times the caller's caller has been here before (0 the first time)."""
    frame = sys._getframe(2)
    site = (frame.f_code.co_filename, frame.f_lineno)
    with _lock:
        count = _site_counts[site]
        _site_counts[site] += 1
    return count


def log_every_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Logs on the 1st, (n+1)th, (2n+1)th ... call from the same line."""
    if _call_site_count() % n == 0:
        log(level, msg, *args)


def log_first_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Logs the first `n` calls from the same line only."""
    if _call_site_count() < n:
        log(level, msg, *args)


def flush() -> None:
    for handler in get_logger().handlers:
        handler.flush()
