"""Recent request ids (`recent.RecentRequests`): a repeated id joins the running call or gets
its kept reply, never runs it again; kept replies are bounded and charged to their connection;
a call left alone by its transport is cancelled after the grace, unless a retry joins it."""

from __future__ import annotations

from typing import Any

import pytest

from tensorweave.engine import errors
from tensorweave.engine.distributed.transport import Cancellation
from tensorweave.plugins.grpc import wire
from tensorweave.plugins.grpc.recent import ENTRY_BYTES, RecentRequests
from tests.callbacks import Inbox


class Calls:
    """A method that counts its runs and answers when told."""

    def __init__(self) -> None:
        self.runs = 0
        self.pending: list[tuple[Cancellation, Any]] = []

    def start(self, cancellation: Cancellation, answer: Any) -> None:
        self.runs += 1
        self.pending.append((cancellation, answer))

    def answer(self, error: errors.OpError | None = None, data: bytes | None = b"reply") -> None:
        self.pending.pop(0)[1](error, data)


def test_a_repeated_id_joins_the_running_call_and_then_gets_its_kept_reply() -> None:
    memory = wire.MemoryCap(1 << 20)
    recent, calls = RecentRequests(memory), Calls()
    first, joined, later = Inbox(), Inbox(), Inbox()
    recent.submit("RunGraph", 5, "lane", calls.start, first, keep=True)
    recent.submit("RunGraph", 5, "grpc", calls.start, joined)
    assert calls.runs == 1 and not joined.calls
    calls.answer()
    assert first.calls == joined.calls == [(None, b"reply")]
    assert memory.used("lane") == len(b"reply") + ENTRY_BYTES
    recent.submit("RunGraph", 5, "grpc", calls.start, later)
    assert later.calls == [(None, b"reply")] and calls.runs == 1
    recent.close()
    assert memory.used("lane") == 0


def test_a_reply_no_longer_kept_is_aborted_and_errors_are_repeated() -> None:
    recent, calls = RecentRequests(wire.MemoryCap(1 << 20), keep_seconds=10.0), Calls()
    recent.submit("RunStep", 1, "lane", calls.start, Inbox(), keep=True)
    calls.answer()
    recent.submit("RecvTensor", 2, "grpc", calls.start, Inbox())  # not kept (gRPC)
    calls.answer()
    recent.submit("RunGraph", 3, "lane", calls.start, Inbox(), keep=True)
    calls.answer(errors.NotFoundError(None, None, "no such graph"), None)
    recent.sweep(now=float("inf"))  # past every reply's keep time
    for method, request_id, error in (("RunStep", 1, errors.AbortedError),
                                      ("RecvTensor", 2, errors.AbortedError),
                                      ("RunGraph", 3, errors.NotFoundError),
                                      ("RunGraph", 1, errors.InvalidArgumentError)):
        inbox = Inbox()
        recent.submit(method, request_id, "grpc", calls.start, inbox)
        assert isinstance(inbox.calls[0][0], error)
    assert calls.runs == 3
    assert "received twice" in str(_answer(recent, "RunStep", 1))


def _answer(recent: RecentRequests, method: str, request_id: int) -> errors.OpError | None:
    inbox = Inbox()
    recent.submit(method, request_id, "grpc", Calls().start, inbox)
    return inbox.calls[0][0]


def test_kept_replies_are_bounded_and_charged_to_their_connection() -> None:
    memory = wire.MemoryCap(3 * (100 + ENTRY_BYTES))
    recent, calls = RecentRequests(memory, max_bytes=2 * (100 + ENTRY_BYTES)), Calls()
    for request_id in (1, 2, 3):  # the third pushes the first out of the table's bound
        recent.submit("RunGraph", request_id, "lane", calls.start, Inbox(), keep=True)
        calls.answer(data=bytes(100))
    assert recent.kept_bytes == memory.used("lane") == 2 * (100 + ENTRY_BYTES)
    assert isinstance(_answer(recent, "RunGraph", 1), errors.AbortedError)
    assert _answer(recent, "RunGraph", 3) is None
    memory.charge("lane", 100 + ENTRY_BYTES)  # the connection's cap is full now
    recent.submit("RunGraph", 4, "lane", calls.start, Inbox(), keep=True)
    calls.answer(data=bytes(100))
    assert isinstance(_answer(recent, "RunGraph", 4), errors.AbortedError)


def test_only_the_last_ids_are_remembered() -> None:
    recent, calls = RecentRequests(wire.MemoryCap(), max_ids=2), Calls()
    for request_id in (1, 2, 3):
        recent.submit("RunGraph", request_id, "grpc", calls.start, Inbox())
        calls.answer()
    assert len(recent) == 2
    recent.submit("RunGraph", 1, "grpc", calls.start, Inbox())  # forgotten: it runs again
    assert calls.runs == 4


@pytest.mark.parametrize("retried", [False, True], ids=["gone", "retried"])
def test_a_call_left_alone_is_cancelled_after_the_grace_unless_a_retry_joins(
        retried: bool) -> None:
    recent, calls = RecentRequests(wire.MemoryCap()), Calls()
    lane_call, retry = Cancellation(), Cancellation()
    recent.submit("RunStep", 9, "lane", calls.start, Inbox(), lane_call, keep=True, grace=0.5)
    inner = calls.pending[0][0]
    lane_call.cancel()  # the lane closed
    if retried:
        recent.submit("RunStep", 9, "grpc", calls.start, Inbox(), retry)
    recent.sweep()
    assert not inner.cancelled  # within the grace
    recent.sweep(now=float("inf"))
    assert inner.cancelled != retried
    if retried:
        retry.cancel()  # and the retry's client goes too: nobody is left
        assert inner.cancelled
    assert calls.runs == 1


def test_a_kept_reply_is_charged_at_least_what_its_bookkeeping_takes() -> None:
    import tracemalloc

    count = 20_000
    replies = [bytes(300) for _ in range(count)]  # (made before: only the bookkeeping counts)
    recent = RecentRequests(wire.MemoryCap(1 << 40), max_bytes=1 << 40)
    tracemalloc.start()
    try:
        for request_id, data in enumerate(replies, 1):
            recent.submit("RunGraph", request_id, "lane",
                          lambda _, answer, data=data: answer(None, data), lambda *_: None,
                          Cancellation(), keep=True, grace=0.5)
        built = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert recent.kept_bytes == count * (300 + ENTRY_BYTES)
    assert ENTRY_BYTES * count >= built, f"{built / count:.0f} B of bookkeeping per reply"
