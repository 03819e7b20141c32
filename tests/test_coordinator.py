"""`Coordinator` and `LooperThread` with real threads."""

from __future__ import annotations

import sys
import threading
import time

import pytest

import tensorweave as tf
from tensorweave.engine import errors
from tensorweave.train.coordinator import Coordinator, LooperThread


def test_request_stop_sets_should_stop_and_wakes_waiters() -> None:
    coord = Coordinator()
    assert not coord.should_stop()
    assert coord.wait_for_stop(0.01) is False
    woke = threading.Event()

    def waiter() -> None:
        if coord.wait_for_stop(5.0):
            woke.set()

    thread = threading.Thread(target=waiter)
    thread.start()
    coord.request_stop()
    thread.join(5.0)
    assert coord.should_stop() and woke.is_set()
    coord.join([thread])
    assert coord.joined


def test_join_reraises_the_first_exception_a_thread_reported() -> None:
    coord = Coordinator()
    started = threading.Barrier(3)

    def failing(message: str) -> None:
        with coord.stop_on_exception():
            started.wait()
            raise ValueError(message)

    def looping() -> None:
        started.wait()
        while not coord.should_stop():
            time.sleep(0.001)

    threads = [threading.Thread(target=failing, args=("boom",)),
               threading.Thread(target=looping)]
    for thread in threads:
        coord.register_thread(thread)
        thread.start()
    started.wait()
    with pytest.raises(ValueError, match="boom"):
        coord.join(stop_grace_period_secs=5)
    assert all(not t.is_alive() for t in threads)


def test_out_of_range_is_a_clean_stop_by_default() -> None:
    coord = Coordinator()
    try:
        raise errors.OutOfRangeError(None, None, "end of input")
    except errors.OutOfRangeError as exc:
        coord.request_stop(exc)
    assert coord.should_stop()
    coord.join()  # nothing re-raised
    custom = Coordinator(clean_stop_exception_types=[KeyError])
    custom.request_stop(ex=(KeyError, KeyError("k"), None))
    custom.join()
    strict = Coordinator(clean_stop_exception_types=[])
    strict.request_stop(errors.OutOfRangeError(None, None, "end"))
    with pytest.raises(errors.OutOfRangeError):
        strict.raise_requested_exception()


def test_an_exception_passed_outside_its_handler_is_kept() -> None:
    coord = Coordinator()
    coord.request_stop(RuntimeError("outside"))
    coord.request_stop(KeyError("ignored: a stop was already requested"))
    with pytest.raises(RuntimeError, match="outside"):
        coord.raise_requested_exception()
    with pytest.raises(RuntimeError, match="outside"):
        coord.join()


def test_stop_on_exception_swallows_and_reports() -> None:
    coord = Coordinator()
    with coord.stop_on_exception():
        raise IndexError("inside")
    assert coord.should_stop()
    with pytest.raises(IndexError, match="inside"):
        coord.raise_requested_exception()


def test_join_names_stragglers_unless_told_to_ignore_them() -> None:
    coord = Coordinator()
    release = threading.Event()
    thread = threading.Thread(target=release.wait, name="straggler")
    thread.start()
    try:
        coord.request_stop()
        with pytest.raises(RuntimeError, match="threads still running: straggler"):
            coord.join([thread], stop_grace_period_secs=0.05)
        coord.clear_stop()
        coord.request_stop()
        coord.join([thread], stop_grace_period_secs=0.05, ignore_live_threads=True)
    finally:
        release.set()
        thread.join()


def test_clear_stop_allows_a_restart_and_request_stop_after_join_raises() -> None:
    coord = Coordinator()
    coord.request_stop()
    coord.join()
    try:
        raise KeyError("late")
    except KeyError:
        with pytest.raises(KeyError):
            coord.request_stop(sys.exc_info())  # type: ignore[arg-type]
    coord.clear_stop()
    assert not coord.should_stop() and not coord.joined
    coord.raise_requested_exception()  # nothing recorded


def test_looper_thread_calls_its_target_until_stopped() -> None:
    coord = tf.train.Coordinator()
    calls: list[int] = []

    def target(value: int) -> None:
        calls.append(value)
        if len(calls) == 3:
            coord.request_stop()

    looper = LooperThread.loop(coord, None, target, args=(7,))
    coord.join(stop_grace_period_secs=5)
    assert calls == [7, 7, 7] and not looper.is_alive()


def test_looper_thread_on_a_timer_and_its_errors() -> None:
    coord = tf.train.Coordinator()
    times: list[float] = []

    def tick() -> None:
        times.append(time.monotonic())
        if len(times) == 3:
            raise ZeroDivisionError("tick failed")

    tf.train.LooperThread.loop(coord, 0.02, tick)
    with pytest.raises(ZeroDivisionError, match="tick failed"):
        coord.join(stop_grace_period_secs=5)
    assert len(times) == 3 and times[2] - times[0] >= 0.03
    with pytest.raises(ValueError, match="must be a Coordinator"):
        LooperThread(object(), None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="require that you also pass 'target'"):
        LooperThread(coord, None, args=(1,))
