"""The worker service: `WorkerService` serves a task's `Worker`, `WorkerStub` reaches
one from another process with the same methods the master calls in-process.

Contract: the service's methods are those of ``tensorweave.Worker`` in SCHEMA.md; each request
is validated (`messages`) before the worker sees it. RunGraph and RecvTensor also have an
asynchronous form (`async_methods`) that the call lane starts without holding a thread and that
answers from the worker's callback. The stub's control calls (status, register)
block with the configured deadline; a step's run waits for the step's own deadline plus a grace
(or runs asynchronously with `run_graph_async`); abort and deregister are sent without waiting,
so a dead peer never delays the caller; cleanups are queued and travel with the next RunGraph,
or with `flush_cleanups`, which the server calls a few times a second.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from typing import Any

import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.distributed import messages
from tensorweave.engine.distributed.transport import (
    WORKER,
    AsyncMethod,
    Cancellation,
    Channel,
    Method,
)
from tensorweave.engine.graph.graph_def import GraphDef
from tensorweave.engine.runtime.device import DeviceAttributes
from tensorweave.engine.runtime.executor import NodeStats
from tensorweave.engine.runtime.master import DEADLINE_GRACE_SECONDS
from tensorweave.engine.runtime.worker import Registration, Worker


def _step(body: dict[str, Any], message: str) -> int:
    (step_id,) = messages.fields(body, message, step_id=int)
    if step_id < 0:
        raise messages.bad(message, "step_id", "must be >= 0")
    return step_id


class WorkerService:
    """Serves one `Worker` (see SCHEMA.md for each method's request and reply)."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker

    def methods(self) -> dict[str, Method]:
        return {
            "GetStatus": self.get_status, "RegisterGraph": self.register_graph,
            "DeregisterGraph": self.deregister_graph, "RunGraph": self.run_graph,
            "RecvTensor": self.recv_tensor, "CleanupStep": self.cleanup_step,
            "AbortStep": self.abort_step,
        }

    def get_status(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"task": self.worker.task.name,
                "devices": messages.devices_to_wire(self.worker.list_devices())}

    def register_graph(self, body: dict[str, Any]) -> dict[str, Any]:
        message = "RegisterGraphRequest"
        graph, protected = messages.fields(body, message, graph=list, protected=list)
        nodes = messages.graph_from_wire(graph, message)
        registration = self.worker.register_graph(
            GraphDef(node=nodes), messages.strings(protected, message, "protected"))
        return {
            "handle": registration.handle,
            "partitions": {device: messages.graph_to_wire(part.node)
                           for device, part in registration.partitions.items()},
            "records": messages.records_to_wire(registration.records),
        }

    def deregister_graph(self, body: dict[str, Any]) -> dict[str, Any]:
        (handle,) = messages.fields(body, "DeregisterGraphRequest", handle=str)
        self.worker.deregister_graph(handle)
        return {}

    def async_methods(self) -> dict[str, AsyncMethod]:
        """The methods that can answer from a callback instead of holding a thread."""
        return {"RunGraph": self.run_graph_async, "RecvTensor": self.recv_tensor_async}

    # a step whose master is gone (its call cancelled, its connection closed) is aborted here
    cancellable = frozenset({"RunGraph"})

    def _abort_if_cancelled(self, step_id: int, cancellation: Cancellation | None) -> None:
        if cancellation is not None:
            cancellation.add(lambda: self.worker.abort_step(step_id, errors.CancelledError(
                None, None, f"Step {step_id} was cancelled: its master is gone")))

    def _run_request(self, body: dict[str, Any]) -> tuple[str, int, dict[int, Any], bool,
                                                          float | None]:
        message = "RunGraphRequest"
        handle, args, collect_stats = messages.fields(body, message, handle=str, args=dict,
                                                   collect_stats=bool)
        step_id = _step(body, message)
        self._cleanup(body.get("cleanup", []), message)
        timeout = messages.optional_float(body, message, "timeout")
        return (handle, step_id, messages.tensors_by(int, args, message, "args"), collect_stats,
                timeout)

    @staticmethod
    def _run_reply(retvals: dict[int, Any], stats: dict[str, list[NodeStats]],
                   collect_stats: bool) -> dict[str, Any]:
        return {"retvals": {i: np.asarray(v) for i, v in retvals.items()},
                "stats": messages.stats_to_wire(stats) if collect_stats else {}}

    def run_graph(self, body: dict[str, Any],
                  cancellation: Cancellation | None = None) -> dict[str, Any]:
        handle, step_id, args, collect_stats, timeout = self._run_request(body)
        self._abort_if_cancelled(step_id, cancellation)
        retvals, stats = self.worker.run_graph(handle, step_id, args, collect_stats, timeout)
        return self._run_reply(retvals, stats, collect_stats)

    def run_graph_async(self, body: dict[str, Any],
                        reply: Callable[[BaseException | None, Any], None],
                        cancellation: Cancellation | None = None) -> None:
        handle, step_id, args, collect_stats, timeout = self._run_request(body)
        self._abort_if_cancelled(step_id, cancellation)

        def done(error: BaseException | None, result: Any) -> None:
            reply(error, None if error is not None else self._run_reply(*result, collect_stats))

        self.worker.run_graph_async(handle, step_id, args, collect_stats, timeout, done)

    def _recv_request(self, body: dict[str, Any]) -> tuple[int, str, float | None]:
        message = "RecvTensorRequest"
        (key,) = messages.fields(body, message, key=str)
        return _step(body, message), key, messages.optional_float(body, message, "timeout")

    def recv_tensor(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"tensor": np.asarray(self.worker.recv_tensor(*self._recv_request(body)))}

    def recv_tensor_async(self, body: dict[str, Any],
                          reply: Callable[[BaseException | None, Any], None]) -> None:
        def done(error: BaseException | None, value: Any) -> None:
            reply(error, None if error is not None else {"tensor": np.asarray(value)})

        self.worker.recv_tensor_async(*self._recv_request(body), done)

    def _cleanup(self, step_ids: Any, message: str) -> None:
        if not isinstance(step_ids, list) or not all(
                isinstance(s, int) and not isinstance(s, bool) for s in step_ids):
            raise messages.bad(message, "step_ids", "must be a list of integers")
        for step_id in step_ids:
            self.worker.cleanup_step(step_id)

    def cleanup_step(self, body: dict[str, Any]) -> dict[str, Any]:
        message = "CleanupStepRequest"
        (step_ids,) = messages.fields(body, message, step_ids=list)
        self._cleanup(step_ids, message)
        return {}

    def abort_step(self, body: dict[str, Any]) -> dict[str, Any]:
        message = "AbortStepRequest"
        step_id = _step(body, message)
        (error,) = messages.fields(body, message, error=dict)
        self.worker.abort_step(step_id, messages.error_from_wire(error, message))
        return {}


class WorkerStub:
    """A remote task's worker, with the methods of `Worker` that masters and rendezvous use."""

    def __init__(self, peer: Channel, timeout: float) -> None:
        self.peer = peer
        self.task = peer.task
        self.timeout = timeout
        self._cleanup: list[int] = []
        self._lock = threading.Lock()

    def list_devices(self) -> list[DeviceAttributes]:
        body = self.peer.call(WORKER, "GetStatus", {}, self.timeout)
        (devices,) = messages.fields(body, "GetStatusResponse", devices=list)
        return messages.devices_from_wire(devices, "GetStatusResponse")

    def register_graph(self, graph_def: GraphDef, protected: Collection[str] = ()) -> Registration:
        message = "RegisterGraphResponse"
        body = self.peer.call(WORKER, "RegisterGraph", {
            "graph": messages.graph_to_wire(graph_def.node), "protected": sorted(protected)},
            self.timeout)
        handle, partitions, records = messages.fields(body, message, handle=str, partitions=dict,
                                                   records=list)
        if not all(isinstance(device, str) for device in partitions):
            raise messages.bad(message, "partitions", "must map device names to graphs")
        return Registration(
            handle,
            {device: GraphDef(node=messages.graph_from_wire(graph, message))
             for device, graph in partitions.items()},
            messages.records_from_wire(records, message))

    def deregister_graph(self, handle: str) -> None:
        self.peer.call_async(WORKER, "DeregisterGraph", {"handle": handle}, self.timeout)

    def _run_request(self, handle: str, step_id: int, args: dict[int, Any],
                     collect_stats: bool, timeout: float) -> dict[str, Any]:
        with self._lock:  # cleanups of finished steps ride along with the next step
            cleanup, self._cleanup = self._cleanup, []
        return {"handle": handle, "step_id": step_id,
                "args": {i: np.asarray(v) for i, v in args.items()},
                "collect_stats": collect_stats, "timeout": timeout, "cleanup": cleanup}

    @staticmethod
    def _run_reply(body: Any) -> tuple[dict[int, Any], dict[str, list[NodeStats]]]:
        message = "RunGraphResponse"
        retvals, stats = messages.fields(body, message, retvals=dict, stats=dict)
        return (messages.tensors_by(int, retvals, message, "retvals"),
                messages.stats_from_wire(stats, message))

    def run_graph(self, handle: str, step_id: int, args: dict[int, Any],
                  collect_stats: bool = False, timeout: float | None = None,
                  ) -> tuple[dict[int, Any], dict[str, list[NodeStats]]]:
        timeout = self.timeout if timeout is None else timeout
        body = self.peer.call(WORKER, "RunGraph", self._run_request(
            handle, step_id, args, collect_stats, timeout), timeout + DEADLINE_GRACE_SECONDS)
        return self._run_reply(body)

    def run_graph_async(self, handle: str, step_id: int, args: dict[int, Any],
                        collect_stats: bool, timeout: float,
                        callback: Callable[[BaseException | None, Any], None]) -> None:
        """`run_graph` without blocking: `callback(error, (retvals, stats))` runs once; it must
        be quick and never block (a master's step bookkeeping)."""

        def done(error: errors.OpError | None, body: Any) -> None:
            if error is None:
                try:
                    result = self._run_reply(body)
                except errors.OpError as exc:
                    error = exc
            callback(error, None if error is not None else result)

        self.peer.call_async(WORKER, "RunGraph", self._run_request(
            handle, step_id, args, collect_stats, timeout), timeout + DEADLINE_GRACE_SECONDS,
            done, quick=True)

    def cleanup_step(self, step_id: int) -> None:
        """Queued: sent with the next `run_graph`, or by `flush_cleanups`."""
        with self._lock:
            self._cleanup.append(step_id)

    def flush_cleanups(self) -> None:
        with self._lock:
            cleanup, self._cleanup = self._cleanup, []
        if cleanup:
            try:
                self.peer.call_async(WORKER, "CleanupStep", {"step_ids": cleanup}, self.timeout)
            except errors.OpError:
                pass  # the task is gone; it reclaims its steps itself if it comes back

    def abort_step(self, step_id: int, error: BaseException) -> None:
        self.peer.call_async(WORKER, "AbortStep", {
            "step_id": step_id, "error": messages.error_to_wire(error)}, self.timeout)

    def recv_tensor_async(self, step_id: int, key: str, timeout: float,
                          callback: Callable[[errors.OpError | None, Any], None],
                          ) -> Callable[[], None]:
        """Fetch the tensor sent under `key` in step `step_id` from this task; `callback(error,
        array)` runs once, perhaps on the call lane's reader, so it must never wait (a step's
        continuation: kernels run, nothing blocks). Returns a function that cancels the
        fetch."""

        def done(error: errors.OpError | None, body: Any) -> None:
            if error is None:
                try:
                    (tensor,) = messages.fields(body, "RecvTensorResponse", tensor=np.ndarray)
                except errors.OpError as exc:
                    error = exc
            callback(error, None if error is not None else tensor)

        return self.peer.call_async(WORKER, "RecvTensor", {
            "step_id": step_id, "key": key, "timeout": timeout},
            timeout + DEADLINE_GRACE_SECONDS, done, quick=True)
