"""Recent request ids: a call sent twice under one request id runs once.

TF's workers remember the ids of recent RunGraph and RecvTensor requests
(``recent_request_ids.h``) and refuse one they have seen with ABORTED, so a retried call never
runs twice. Here a repeated id (a client sending a call again over gRPC after its call lane
stalled) gets the first call's answer instead: it joins the call while that runs, gets its
reply while that is kept, and `AbortedError` once it is not.

Contract: `RecentRequests.submit` runs ``start`` for an id it has not seen and hands every
caller of the id the same answer (an error or the reply's bytes), once each. The last
`max_ids` ids are remembered (with a failed call's error); a reply only when its caller asks
(`keep`: the call lane's replies, the ones a client may need again), for `keep_seconds`, within
`max_bytes` for all of them, and charged, with `ENTRY_BYTES` for its bookkeeping, to the
connection it came from under the server's per-connection memory cap (a reply that does not
fit is not kept). A call whose transport goes away (its lane closed, its gRPC call cancelled)
is cancelled once no caller of its id is left, after `grace` seconds in which a retry may join
it (`sweep`, a few times a second, does that and drops the replies kept too long).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Hashable

from tensorweave.engine import errors
from tensorweave.engine.distributed.transport import Cancellation
from tensorweave.plugins.grpc import wire

Answer = Callable[[errors.OpError | None, bytes | None], None]
Start = Callable[[Cancellation, Answer], None]

MAX_IDS = 100_000  # TF's bound for RecvTensor's ids
KEEP_SECONDS = 20.0  # a lane's stall shows after 5 s, and the retry follows at once
MAX_KEPT_BYTES = 64 << 20
# The bookkeeping of one kept reply beyond its bytes, an upper bound (measured with tracemalloc:
# about 600 bytes for its call, cancellation, id and places in the tables; the test checks it)
ENTRY_BYTES = 640
# How long a lane's call whose lane closed waits for its retry over gRPC before it is cancelled
# (the client sends it at once; a client that is gone has its steps aborted within a second)
REJOIN_SECONDS = 0.5


class _Call:
    """A call that runs, or whose reply is kept."""

    __slots__ = ("attached", "cancellation", "charged", "data", "detached_at", "done",
                 "error", "key", "keep", "method", "request_id", "waiters")

    def __init__(self, method: str, request_id: int, key: Hashable, keep: bool) -> None:
        self.method = method
        self.request_id = request_id
        self.key = key  # the connection a kept reply is charged to
        self.keep = keep
        self.cancellation = Cancellation()
        self.waiters: list[Answer] = []
        self.attached = 0  # callers whose transport may still be there
        self.detached_at: float | None = None
        self.done = False
        self.error: errors.OpError | None = None
        self.data: bytes | None = None
        self.charged = 0


class _Seen:
    """An id whose call finished and whose reply is not kept (a failed call keeps its error)."""

    __slots__ = ("error", "method")

    def __init__(self, method: str, error: errors.OpError | None) -> None:
        self.method = method
        self.error = error


class RecentRequests:
    """The ids of one server's recent deduplicated requests, and the replies it keeps."""

    def __init__(self, memory: wire.MemoryCap, max_ids: int = MAX_IDS,
                 max_bytes: int = MAX_KEPT_BYTES, keep_seconds: float = KEEP_SECONDS) -> None:
        self._memory = memory
        self._max_ids = max_ids
        self._max_bytes = max_bytes
        self._keep_seconds = keep_seconds
        self._lock = threading.Lock()
        self._entries: dict[int, _Call | _Seen] = {}
        self._order: deque[int] = deque()  # the ids, oldest first
        self._kept: deque[tuple[float, _Call]] = deque()  # calls with a kept reply, oldest first
        self._kept_bytes = 0
        self._detached: list[tuple[_Call, float]] = []

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    @property
    def kept_bytes(self) -> int:
        with self._lock:
            return self._kept_bytes

    def submit(self, method: str, request_id: int, key: Hashable, start: Start, answer: Answer,
               outer: Cancellation | None = None, keep: bool = False,
               grace: float = 0.0) -> None:
        """Answer the call `request_id` of `method` from connection `key`: run `start` if the
        id is new (it gets the call's `Cancellation` and must call its answer once), else
        join the call or answer from its reply. `outer` is the transport's cancellation of
        this caller; `keep` says to keep the reply for a retry; `grace` is how long a call
        whose callers are all gone waits for a retry before it is cancelled."""
        with self._lock:
            entry = self._entries.get(request_id)
            if entry is None:
                entry = self._entries[request_id] = _Call(method, request_id, key, keep)
                self._order.append(request_id)
                for _ in range(len(self._order) - self._max_ids):
                    self._forget(self._order.popleft())
                new = True
            else:
                new = False
            if entry.method == method and isinstance(entry, _Call) and not entry.done:
                entry.waiters.append(answer)
                entry.attached += 1
                entry.detached_at = None
                running = True
            else:
                running = False
        if not running:
            answer(*_repeated(entry, method, request_id))
            return
        if outer is not None:
            outer.add(lambda: self._detach(entry, grace))
        if new:
            try:
                start(entry.cancellation, lambda error, data: self._complete(entry, error, data))
            except Exception as exc:  # noqa: BLE001 - every caller must hear of every failure
                self._complete(entry, _op_error(exc), None)

    def _forget(self, request_id: int) -> None:
        entry = self._entries.get(request_id)
        if isinstance(entry, _Call) and not entry.done:
            self._order.append(request_id)  # a call still running keeps its id
            return
        del self._entries[request_id]
        if isinstance(entry, _Call) and entry.charged:
            self._release(entry)

    def _complete(self, call: _Call, error: errors.OpError | None, data: bytes | None) -> None:
        with self._lock:
            if call.done:
                return
            call.done = True
            call.error, waiters, call.waiters = error, call.waiters, []
            if not (error is None and call.keep and data is not None and self._keep(call, data)):
                self._settle(call)
        call.cancellation.finish()
        for answer in waiters:
            answer(error, data)

    def _keep(self, call: _Call, data: bytes) -> bool:
        size = len(data) + ENTRY_BYTES
        if size > self._max_bytes:
            return False
        try:
            self._memory.charge(call.key, size)
        except errors.ResourceExhaustedError:
            return False  # a retry of this one gets AbortedError
        call.data, call.charged = data, size
        self._kept.append((time.monotonic(), call))
        self._kept_bytes += size
        while self._kept_bytes > self._max_bytes:
            self._drop_oldest()
        return True

    def _settle(self, call: _Call) -> None:
        """Keep only what a finished call's id needs (its error), if it is still remembered."""
        if self._entries.get(call.request_id) is call:
            self._entries[call.request_id] = _Seen(call.method, call.error)

    def _release(self, call: _Call) -> None:
        self._kept_bytes -= call.charged
        self._memory.release(call.key, call.charged)
        call.data, call.charged = None, 0

    def _drop_oldest(self) -> None:
        _, call = self._kept.popleft()
        if call.charged:  # (else forgotten already)
            self._release(call)
            self._settle(call)

    def _detach(self, call: _Call, grace: float) -> None:
        with self._lock:
            if call.done:
                return
            call.attached -= 1
            if call.attached > 0:
                return
            if grace > 0:
                call.detached_at = time.monotonic()
                self._detached.append((call, grace))
                return
        call.cancellation.cancel()

    def sweep(self, now: float | None = None) -> None:
        """Cancel the calls left alone past their grace; drop the replies kept too long."""
        now = time.monotonic() if now is None else now
        with self._lock:
            due, waiting = [], []
            for call, grace in self._detached:
                if call.done or call.attached > 0 or call.detached_at is None:
                    continue
                (due if now - call.detached_at >= grace else waiting).append((call, grace))
            self._detached = waiting
            while self._kept and self._kept[0][0] < now - self._keep_seconds:
                self._drop_oldest()
        for call, _ in due:
            call.cancellation.cancel()

    def close(self) -> None:
        """Give back what the kept replies were charged."""
        with self._lock:
            while self._kept:
                self._drop_oldest()


def _repeated(entry: _Call | _Seen, method: str,
              request_id: int) -> tuple[errors.OpError | None, bytes | None]:
    """The answer to a repeated id whose call is not running."""
    if entry.method != method:
        return errors.InvalidArgumentError(
            None, None, f"Request id {request_id} of {method} was used by {entry.method}"), None
    if entry.error is not None:
        return entry.error, None
    if isinstance(entry, _Call) and entry.data is not None:
        return None, entry.data
    return errors.AbortedError(
        None, None, f"The same {method} request (id {request_id}) was received twice, and "
        "the reply to the first is no longer kept"), None


def _op_error(exc: BaseException) -> errors.OpError:
    if isinstance(exc, errors.OpError):
        return exc
    return errors.InternalError(None, None, f"{type(exc).__name__}: {exc}")
