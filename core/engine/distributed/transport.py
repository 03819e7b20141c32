"""What the distributed services need of a transport: named services, methods and channels.

Contract: a transport plugin (``tensorweave_transports``) serves each service's `Method`s under
``/<service>/<name>`` and gives clients a `Channel` to a task. Bodies are wire values (nested
lists, dicts, strings, numbers, numpy arrays, `DType`, `TensorShape`, `messages.WireFunction`);
the services validate them with `messages`, so a transport carries bytes and checks nothing but
its own framing and authentication. A method raises `OpError` for a bad request; the transport
returns it to the caller as the same typed error. A service names the methods that want to know
when their client goes away (its `cancellable` set); the transport hands those a `Cancellation`
as their last argument.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

MASTER = "tensorweave.Master"
WORKER = "tensorweave.Worker"

# The methods a transport may send again as they are when it cannot tell whether the server ran
# the first attempt (its connection broke or stalled after sending): running them twice leaves
# what running them once does. Reads; cleanups, aborts, deregistrations and CloseSession (a
# second one finds nothing left to do); ExtendSession (the same nodes again replace
# themselves); CreateSession (a second session nobody uses is closed by the session sweep).
IDEMPOTENT = frozenset({
    (MASTER, "CreateSession"), (MASTER, "ExtendSession"), (MASTER, "GetStepInfo"),
    (MASTER, "CloseSession"), (MASTER, "ListDevices"),
    (WORKER, "GetStatus"), (WORKER, "DeregisterGraph"), (WORKER, "CleanupStep"),
    (WORKER, "AbortStep"),
})

# The others: RunStep and RunGraph (a step would run twice), RecvTensor (a rendezvous hands its
# value out once), RegisterGraph (the first registration would stay behind). A transport sends
# each of their requests with a ``request_id`` of its own, a random integer in [1, 2**63), and
# again with the same id when it cannot tell; its server runs the call once per id and answers
# a repeated id with the first call's answer (as TF's ``request_id`` and
# ``recent_request_ids.h``, which answer ABORTED), or `AbortedError` once it no longer has it.
DEDUPLICATED = frozenset({
    (MASTER, "RunStep"), (WORKER, "RegisterGraph"), (WORKER, "RunGraph"),
    (WORKER, "RecvTensor"),
})

Method = Callable[[Any], Any]
"""``method(body) -> reply body``; may block."""

Reply = Callable[[BaseException | None, Any], None]
"""``reply(error, body)``: called exactly once, with an error or a reply body."""

AsyncMethod = Callable[[Any, Reply], None]
"""``method(body, reply)``: returns at once and answers through `reply`, from any thread."""

CancellableMethod = Callable[[Any, "Cancellation"], Any]
"""``method(body, cancellation)``: a `Method` told when its client is gone."""

CancellableAsyncMethod = Callable[[Any, Reply, "Cancellation"], None]
"""``method(body, reply, cancellation)``: an `AsyncMethod` told when its client is gone."""


class Cancellation:
    """Whether the client of one call is gone.

    A service's method registers (`add`) what stops the work it started for the call; the
    transport calls `cancel` when the call is cancelled or its connection closes before the
    reply, and `finish` once it has answered (a later `cancel` then does nothing). Each
    registered function runs at most once, at once if the call is cancelled already; one that
    raises is ignored (the client is gone: there is nobody to tell)."""

    __slots__ = ("_fns", "_lock", "_state")

    def __init__(self) -> None:
        self._fns: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self._state = 0  # 0 live, 1 cancelled, 2 finished

    @property
    def cancelled(self) -> bool:
        return self._state == 1

    def add(self, fn: Callable[[], None]) -> None:
        with self._lock:
            if self._state == 0:
                self._fns.append(fn)
                return
            run = self._state == 1
        if run:
            _quietly(fn)

    def cancel(self) -> None:
        with self._lock:
            if self._state != 0:
                return
            self._state = 1
            fns, self._fns = self._fns, []
        for fn in fns:
            _quietly(fn)

    def finish(self) -> None:
        with self._lock:
            if self._state == 0:
                self._state = 2
            self._fns = []


def _quietly(fn: Callable[[], None]) -> None:
    try:
        fn()
    except Exception:  # noqa: BLE001, S110 - see `Cancellation`
        pass


class Channel(Protocol):
    """The client end of one remote task.

    `task` names the task in the errors the channel raises (a caller may rename it once it
    learns the task's name). `call` blocks up to `timeout` seconds and returns the reply body or
    raises the server's `OpError` (`UnavailableError` / `DeadlineExceededError` for a transport
    failure). `call_async` never blocks: `callback(error, body)` runs once, and must be quick
    (``quick=True`` lets the transport run it on its reader thread); it returns a function that
    cancels the call. `close` ends the channel; calls in flight fail.
    """

    task: str

    def call(self, service: str, method: str, body: Any, timeout: float) -> Any: ...

    def call_async(self, service: str, method: str, body: Any, timeout: float,
                   callback: Callable[[Any, Any], None] | None = None,
                   quick: bool = False) -> Callable[[], None]: ...

    def close(self) -> None: ...
