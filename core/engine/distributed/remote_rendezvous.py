"""The remote rendezvous: a step's rendezvous on a task of a cluster.

Contract: as `Rendezvous`, and a `recv_async` whose key's send device is on another task fetches
the tensor from that task by key (its worker's RecvTensor, which waits for the producer's local
send with the step's deadline). Keys whose ends share the task stay in-process. `start_abort`
also fails and cancels every remote fetch in flight. Callbacks of remote fetches run on the
call lane's reader (`lane`, whose writes never block) or on the transport's pool, never on
gRPC's own threads.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.runtime.rendezvous import RecvCallback, Rendezvous


class RemoteRendezvous(Rendezvous):
    """One step's rendezvous on task `local_task`; `stub(task)` gives a peer task's worker
    stub."""

    def __init__(self, step_id: int, local_task: str, stub: Callable[[str], Any],
                 timeout: float) -> None:
        super().__init__(step_id)
        self._local_task = local_task
        self._stub = stub
        self._timeout = timeout
        self._ids = itertools.count()
        self._remote: dict[int, tuple[RecvCallback, Callable[[], None] | None]] = {}

    def recv_async(self, key: str, callback: RecvCallback) -> None:
        src_task = key.split(";", 1)[0].rsplit("/device:", 1)[0]
        if src_task == self._local_task:
            super().recv_async(key, callback)
            return
        with self._lock:
            status = self._status
            if status is None:
                call_id = next(self._ids)
                self._remote[call_id] = (callback, None)
        if status is not None:
            callback(status, None)
            return

        def on_reply(error: errors.OpError | None, value: Any) -> None:
            with self._lock:
                entry = self._remote.pop(call_id, None)
            if entry is not None:  # else the step aborted first and already called back
                entry[0](error, value)

        try:
            cancel = self._stub(src_task).recv_tensor_async(self.step_id, key, self._timeout,
                                                            on_reply)
        except errors.OpError as exc:
            on_reply(exc, None)
            return
        with self._lock:
            entry = self._remote.get(call_id)
            if entry is not None:
                self._remote[call_id] = (entry[0], cancel)
        if entry is None:  # finished or aborted while starting: nothing to keep running
            cancel()

    def start_abort(self, error: BaseException) -> None:
        super().start_abort(error)
        with self._lock:
            pending, self._remote = self._remote, {}
        for callback, cancel in pending.values():
            if cancel is not None:
                cancel()
            callback(self._status, None)

    def pending_count(self) -> int:
        with self._lock:
            remote = len(self._remote)
        return super().pending_count() + remote
