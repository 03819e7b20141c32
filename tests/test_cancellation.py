"""`transport.Cancellation`: what a call's method registers runs once if its client goes away
before the reply, never after it."""

from __future__ import annotations

from tensorweave.engine.distributed.transport import Cancellation


def test_registered_functions_run_once_on_cancel_and_at_once_after_it() -> None:
    ran: list[str] = []
    cancellation = Cancellation()
    cancellation.add(lambda: ran.append("a"))
    cancellation.add(lambda: 1 / 0)  # a failing one does not stop the others
    cancellation.add(lambda: ran.append("b"))
    assert not cancellation.cancelled
    cancellation.cancel()
    cancellation.cancel()
    assert cancellation.cancelled and ran == ["a", "b"]
    cancellation.add(lambda: ran.append("late"))
    assert ran == ["a", "b", "late"]


def test_a_finished_call_is_never_cancelled() -> None:
    ran: list[str] = []
    cancellation = Cancellation()
    cancellation.add(lambda: ran.append("a"))
    cancellation.finish()
    cancellation.cancel()  # (the transport's end-of-call callback, after the reply)
    cancellation.add(lambda: ran.append("b"))
    assert ran == [] and not cancellation.cancelled
