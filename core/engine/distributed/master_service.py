"""The master service: sessions of remote clients, each a `MasterSession`.

Contract: the methods are those of ``tensorweave.Master`` in SCHEMA.md. `CreateSession` makes a
`MasterSession` over every task of the server's cluster (this task's worker in-process, the
others through stubs), placing unplaced nodes on this task. A session handle is a random token;
an unknown or closed handle gives `AbortedError`. `collect_garbage` closes sessions that have had
no call in flight for `gc_seconds` (the state of a client that vanished). With a pool, RunStep
also has an asynchronous form (`async_methods`) for the call lane: a step of an already compiled
signature over several tasks is answered from the callback of its last task, so no thread waits
for it. RunStep checks each feed against the dtype and static shape its tensor has in the
session's graph (`check_feeds`), so a client that skips the Python checks still gets
`InvalidArgumentError` naming the fed node, not a kernel running on a value it cannot take.
RunStep is `cancellable`: a step whose client is gone is aborted on every task.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from typing import Any

import attrs
import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.device_spec import DeviceSpec
from tensorweave.engine.distributed import messages
from tensorweave.engine.distributed.transport import AsyncMethod, Cancellation, Method
from tensorweave.engine.graph.graph_def import NodeDef
from tensorweave.engine.runtime.device import TaskSpec
from tensorweave.engine.runtime.master import MasterSession
from tensorweave.engine.tensor_shape import as_shape, format_dims


@attrs.define
class _Session:
    master: MasterSession
    last_used: float
    active: int = 0


def _step_request(body: dict[str, Any],
                  ) -> tuple[dict[str, Any], list[str], list[str], bool, float | None]:
    """(feeds, fetches, targets, collect_stats, timeout) of a RunStep request."""
    message = "RunStepRequest"
    feeds, fetches, targets, collect_stats = messages.fields(
        body, message, feeds=dict, fetches=list, targets=list, collect_stats=bool)
    return (messages.tensors_by(str, feeds, message, "feeds"),
            messages.strings(fetches, message, "fetches"),
            messages.strings(targets, message, "targets"), collect_stats,
            messages.optional_float(body, message, "timeout"))


def _ran(body: dict[str, Any]) -> list[str]:
    """The nodes a partial run already ran, of a RunStep request (none when absent)."""
    return messages.strings(body.get("ran", []), "RunStepRequest", "ran")


def check_feeds(nodes: Mapping[str, NodeDef], feeds: Mapping[str, np.ndarray]) -> None:
    """`InvalidArgumentError` for a feed whose dtype is not its tensor's or whose shape is not
    compatible with the tensor's static shape (a name not in `nodes` is left to the pruner)."""
    for name, value in feeds.items():
        node_name, _, index = name.partition(":")
        node = nodes.get(node_name)
        if node is None or not (index or "0").isdigit():
            continue
        i = int(index or "0")
        types, shapes = node.output_types, node.output_shapes
        if i >= len(types):
            continue
        dtype = types[i]
        if value.dtype != np.dtype(dtype.np_type):
            got = value.dtype.name if value.dtype.kind != "O" else "string"
            raise errors.InvalidArgumentError(
                node.name, node.op, f"Cannot feed value of dtype {got} for Tensor '{name}', "
                                    f"which has dtype {dtype.name}")
        if i < len(shapes) and not shapes[i].is_compatible_with(value.shape):
            fed = format_dims(as_shape(value.shape))
            raise errors.InvalidArgumentError(
                node.name, node.op, f"Cannot feed value of shape {fed} for Tensor '{name}', "
                                    f"which has shape {format_dims(shapes[i])}")


def _step_reply(result: tuple[list[Any], dict[str, list[Any]], Any],
                collect_stats: bool) -> dict[str, Any]:
    values, stats, compiled = result
    return {"values": [np.asarray(v) for v in values],
            "stats": messages.stats_to_wire(stats) if collect_stats else {},
            "compiled_id": compiled.id}


class MasterService:
    """Serves the sessions of one server's master."""

    def __init__(self, task: TaskSpec, workers: Callable[[], Mapping[str, Any]],
                 registries: Any, gc_seconds: float, pool: Executor | None = None) -> None:
        """`pool` runs the RunSteps that `run_step_async` does not start on its caller's
        thread; without one, RunStep has no asynchronous form."""
        self.task = task
        self._pool = pool
        self._workers = workers
        self._registries = registries
        self.gc_seconds = gc_seconds
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()

    def methods(self) -> dict[str, Method]:
        return {
            "CreateSession": self.create_session, "ExtendSession": self.extend_session,
            "RunStep": self.run_step, "GetStepInfo": self.get_step_info,
            "CloseSession": self.close_session, "ListDevices": self.list_devices,
        }

    def async_methods(self) -> dict[str, AsyncMethod]:
        return {} if self._pool is None else {"RunStep": self.run_step_async}

    # a step whose client is gone is aborted on every task
    cancellable = frozenset({"RunStep"})

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def _call(self, body: dict[str, Any], message: str) -> _Session:
        """The session named by the request, marked busy until `_done`."""
        (handle,) = messages.fields(body, message, session_handle=str)
        with self._lock:
            session = self._sessions.get(handle)
            if session is None:
                raise errors.AbortedError(None, None, f"Session {handle} is not found; it was "
                                          "closed or garbage-collected.")
            session.active += 1
            session.last_used = time.monotonic()
        return session

    def _done(self, session: _Session) -> None:
        with self._lock:
            session.active -= 1
            session.last_used = time.monotonic()

    def create_session(self, body: dict[str, Any]) -> dict[str, Any]:
        config = messages.config_from_wire(body.get("config", {}), "CreateSessionRequest")
        default_task = DeviceSpec(job=self.task.job, replica=self.task.replica,
                                  task=self.task.task)
        master = MasterSession(self._workers(), default_task, config, self._registries)
        handle = secrets.token_hex(16)
        with self._lock:
            self._sessions[handle] = _Session(master, time.monotonic())
        return {"session_handle": handle, "task": self.task.name,
                "devices": messages.devices_to_wire(master.devices)}

    def extend_session(self, body: dict[str, Any]) -> dict[str, Any]:
        message = "ExtendSessionRequest"
        session = self._call(body, message)
        try:
            (nodes,) = messages.fields(body, message, nodes=list)
            session.master.extend(messages.graph_from_wire(nodes, message, session.master.nodes))
        finally:
            self._done(session)
        return {}

    def run_step(self, body: dict[str, Any],
                 cancellation: Cancellation | None = None) -> dict[str, Any]:
        session = self._call(body, "RunStepRequest")
        try:
            step = _step_request(body)
            check_feeds(session.master.nodes, step[0])
            return _step_reply(session.master.run(*step, cancellation=cancellation,
                                                  ran=_ran(body)), step[3])
        finally:
            self._done(session)

    def run_step_async(self, body: dict[str, Any],
                       reply: Callable[[BaseException | None, Any], None],
                       cancellation: Cancellation | None = None) -> None:
        """RunStep started on the caller's thread (the call lane's reader), which it must not
        hold: a step of a compiled signature over several tasks starts there and `reply`
        comes from its end; any other step (a compile, or a single task's piece, which runs
        where it is started) goes to the pool."""
        session = self._call(body, "RunStepRequest")
        try:
            step = _step_request(body)
            check_feeds(session.master.nodes, step[0])
            ran = _ran(body)
            compiled = session.master.cached(list(step[0]), step[1], step[2], ran)
            if compiled is None or len(compiled.handles) < 2:
                self._pool.submit(self._run_step_pooled, session, step, ran, reply,
                                  cancellation)
                return

            def done(error: BaseException | None, result: Any) -> None:
                self._done(session)
                if error is not None:
                    reply(error, None)
                    return
                try:
                    answer = _step_reply(result, step[3])
                except Exception as exc:  # noqa: BLE001 - the caller must hear of every failure
                    reply(exc, None)
                    return
                reply(None, answer)

            session.master.run_async(*step, done, cancellation, ran)
        except BaseException:
            self._done(session)
            raise

    def _run_step_pooled(self, session: _Session, step: tuple[Any, ...], ran: list[str],
                         reply: Callable[[BaseException | None, Any], None],
                         cancellation: Cancellation | None) -> None:
        try:
            answer = _step_reply(session.master.run(*step, cancellation=cancellation, ran=ran),
                                 step[3])
        except Exception as exc:  # noqa: BLE001 - the caller must hear of every failure
            reply(exc, None)
            return
        finally:
            self._done(session)
        reply(None, answer)

    def get_step_info(self, body: dict[str, Any]) -> dict[str, Any]:
        message = "GetStepInfoRequest"
        session = self._call(body, message)
        try:
            (compiled_id,) = messages.fields(body, message, compiled_id=int)
            compiled = session.master.compiled_step(compiled_id)
        finally:
            self._done(session)
        return {"partitions": [messages.graph_to_wire(p.node) for p in compiled.partitions],
                "records": messages.records_to_wire(compiled.records)}

    def close_session(self, body: dict[str, Any]) -> dict[str, Any]:
        (handle,) = messages.fields(body, "CloseSessionRequest", session_handle=str)
        with self._lock:
            session = self._sessions.pop(handle, None)
        if session is not None:
            session.master.close()
        return {}

    def list_devices(self, body: dict[str, Any]) -> dict[str, Any]:
        devices = []
        for worker in self._workers().values():
            try:
                devices.extend(worker.list_devices())
            except (errors.UnavailableError, errors.DeadlineExceededError):
                continue  # a task that is down has no devices to offer
        return {"devices": messages.devices_to_wire(devices)}

    def collect_garbage(self, now: float | None = None) -> list[str]:
        """Close the sessions idle for more than `gc_seconds`; returns their handles."""
        now = time.monotonic() if now is None else now
        with self._lock:
            idle = [h for h, s in self._sessions.items()
                    if s.active == 0 and now - s.last_used > self.gc_seconds]
            closed = [self._sessions.pop(h) for h in idle]
        for session in closed:
            session.master.close()
        return idle

    def close(self) -> None:
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            session.master.close()
