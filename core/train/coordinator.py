"""`Coordinator`: stopping a set of threads together, as ``tf.compat.v1.train.Coordinator``.

Contract: threads loop while `should_stop` is false; any of them (or the main thread) calls
`request_stop`, optionally with the exception that made it stop. The first such exception is
kept (exceptions of `clean_stop_exception_types`, by default `OutOfRangeError`, count as a clean
stop) and re-raised by `join` once the threads are done, or by `raise_requested_exception`.
`join` waits for the threads (registered ones plus those given) until they exit or a stop is
requested, then gives live threads `stop_grace_period_secs` more and raises `RuntimeError` naming
the stragglers unless `ignore_live_threads`. `LooperThread` calls a function repeatedly, or
every `timer_interval_secs`, until the coordinator stops.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import Any

from tensorweave.engine import errors

__all__ = ["Coordinator", "LooperThread"]

_log = logging.getLogger(__name__)

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


class Coordinator:
    """A coordinator for threads; see the module docstring."""

    def __init__(self, clean_stop_exception_types: Iterable[type[BaseException]] | None = None
                 ) -> None:
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise: Any = None
        self._joined = False
        self._registered_threads: set[threading.Thread] = set()

    def _filter_exception(self, ex: Any) -> Any:
        value = ex[1] if isinstance(ex, tuple) else ex
        return None if isinstance(value, self._clean_stop_exception_types) else ex

    def request_stop(self, ex: BaseException | ExcInfo | None = None) -> None:
        """Ask every thread to stop; `ex` (an exception being handled, or an exc_info tuple)
        is reported by `join`. After `join`, an exception is raised right away instead."""
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if isinstance(ex, tuple):
                    raise ex[1].with_traceback(ex[2])
                if ex is not None:
                    raise ex
            if self._stop_event.is_set():
                return
            if ex is not None and self._exc_info_to_raise is None:
                if isinstance(ex, tuple):
                    _log.info("Error reported to Coordinator: %s", ex[1], exc_info=ex)
                    self._exc_info_to_raise = ex
                else:
                    _log.info("Error reported to Coordinator: %s, %s", type(ex), ex)
                    current = sys.exc_info()
                    # TF takes sys.exc_info(); an exception passed outside its handler is kept
                    # as it is, with its own traceback.
                    self._exc_info_to_raise = current if current[1] is ex else \
                        (type(ex), ex, ex.__traceback__)
            self._stop_event.set()

    def clear_stop(self) -> None:
        """Forget the stop request and its exception, so the threads can be started again."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self) -> Iterator[None]:
        """Report any exception raised in the block with `request_stop`, and swallow it."""
        try:
            yield
        except BaseException:  # noqa: BLE001 - TF's bare except: every error stops the threads
            self.request_stop(ex=sys.exc_info())  # type: ignore[arg-type]

    def wait_for_stop(self, timeout: float | None = None) -> bool:
        """Wait until a stop is requested (at most `timeout` seconds); True if it was."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread: threading.Thread) -> None:
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads: Iterable[threading.Thread] | None = None,
             stop_grace_period_secs: float = 120, ignore_live_threads: bool = False) -> None:
        """Wait for the threads; re-raise the reported exception; see the module docstring."""
        with self._lock:
            pending = self._registered_threads if threads is None \
                else self._registered_threads.union(threads)
            pending = list(pending)
        while any(t.is_alive() for t in pending) and not self.wait_for_stop(1.0):
            pass
        # Live threads get the grace period, polled at growing intervals.
        wait = 0.001
        while any(t.is_alive() for t in pending) and stop_grace_period_secs >= 0.0:
            time.sleep(wait)
            stop_grace_period_secs -= wait
            wait = max(min(2 * wait, stop_grace_period_secs), 0.001)
        stragglers = [t.name for t in pending if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                _, value, traceback = self._exc_info_to_raise
                raise value.with_traceback(traceback)
            if stragglers:
                message = "Coordinator stopped with threads still running: " + " ".join(stragglers)
                if not ignore_live_threads:
                    raise RuntimeError(message)
                _log.info(message)

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self) -> None:
        """Raise the exception reported to `request_stop`, if any."""
        with self._lock:
            if self._exc_info_to_raise:
                _, value, traceback = self._exc_info_to_raise
                raise value.with_traceback(traceback)


class LooperThread(threading.Thread):
    """A daemon thread that runs `run_loop` (by default `target(*args, **kwargs)`) back to back,
    or every `timer_interval_secs`, until `coord` stops; registered with `coord`."""

    def __init__(self, coord: Coordinator, timer_interval_secs: float | None,
                 target: Callable[..., Any] | None = None, args: Any = None,
                 kwargs: dict[str, Any] | None = None) -> None:
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord}")
        super().__init__(daemon=True)
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._loop_target = target
        if target is None and (args or kwargs):
            raise ValueError("'args' and 'kwargs' argument require that you also pass 'target'")
        self._loop_args = tuple(args or ())
        self._loop_kwargs = dict(kwargs or {})
        coord.register_thread(self)

    @staticmethod
    def loop(coord: Coordinator, timer_interval_secs: float | None,
             target: Callable[..., Any], args: Any = None,
             kwargs: dict[str, Any] | None = None) -> LooperThread:
        """Start a `LooperThread` calling `target`; returns it."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper

    def run(self) -> None:
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.time()
                while not self._coord.wait_for_stop(max(next_time - time.time(), 0.0)):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self) -> None:
        """Called once when the thread starts."""

    def stop_loop(self) -> None:
        """Called once when the loop ends."""

    def run_loop(self) -> None:
        """One iteration of the loop."""
        if self._loop_target is not None:
            self._loop_target(*self._loop_args, **self._loop_kwargs)
