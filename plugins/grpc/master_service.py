"""The master service over gRPC: sessions of remote clients, each a `MasterSession`.

Contract: the methods are those of ``tensorweave.Master`` in SCHEMA.md. `CreateSession` makes a
`MasterSession` over every task of the server's cluster (this task's worker in-process, the
others through stubs), placing unplaced nodes on this task. A session handle is a random token;
an unknown or closed handle gives `AbortedError`. `collect_garbage` closes sessions that have had
no call in flight for `gc_seconds` (the state of a client that vanished).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import numpy as np

from tensorweave import errors
from tensorweave.device_spec import DeviceSpec
from tensorweave.plugins.grpc import codec
from tensorweave.plugins.grpc.rpc import Method
from tensorweave.runtime.device import TaskSpec
from tensorweave.runtime.master import MasterSession


@attrs.define
class _Session:
    master: MasterSession
    last_used: float
    active: int = 0


class MasterService:
    """Serves the sessions of one server's master."""

    def __init__(self, task: TaskSpec, workers: Callable[[], Mapping[str, Any]],
                 registries: Any, gc_seconds: float) -> None:
        self.task = task
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

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def _call(self, body: dict[str, Any], message: str) -> _Session:
        """The session named by the request, marked busy until `_done`."""
        (handle,) = codec.fields(body, message, session_handle=str)
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
        config = codec.config_from_wire(body.get("config", {}), "CreateSessionRequest")
        default_task = DeviceSpec(job=self.task.job, replica=self.task.replica,
                                  task=self.task.task)
        master = MasterSession(self._workers(), default_task, config, self._registries)
        handle = secrets.token_hex(16)
        with self._lock:
            self._sessions[handle] = _Session(master, time.monotonic())
        return {"session_handle": handle, "task": self.task.name,
                "devices": codec.devices_to_wire(master.devices)}

    def extend_session(self, body: dict[str, Any]) -> dict[str, Any]:
        message = "ExtendSessionRequest"
        session = self._call(body, message)
        try:
            (nodes,) = codec.fields(body, message, nodes=list)
            session.master.extend(codec.graph_from_wire(nodes, message, session.master.nodes))
        finally:
            self._done(session)
        return {}

    def run_step(self, body: dict[str, Any]) -> dict[str, Any]:
        message = "RunStepRequest"
        session = self._call(body, message)
        try:
            feeds, fetches, targets, collect_stats = codec.fields(
                body, message, feeds=dict, fetches=list, targets=list, collect_stats=bool)
            feeds = codec.tensors_by(str, feeds, message, "feeds")
            timeout = codec.optional_float(body, message, "timeout")
            values, stats, compiled = session.master.run(
                feeds, codec.strings(fetches, message, "fetches"),
                codec.strings(targets, message, "targets"), collect_stats, timeout)
        finally:
            self._done(session)
        return {"values": [np.asarray(v) for v in values],
                "stats": codec.stats_to_wire(stats) if collect_stats else {},
                "compiled_id": compiled.id}

    def get_step_info(self, body: dict[str, Any]) -> dict[str, Any]:
        message = "GetStepInfoRequest"
        session = self._call(body, message)
        try:
            (compiled_id,) = codec.fields(body, message, compiled_id=int)
            compiled = session.master.compiled_step(compiled_id)
        finally:
            self._done(session)
        return {"partitions": [codec.graph_to_wire(p.node) for p in compiled.partitions],
                "records": codec.records_to_wire(compiled.records)}

    def close_session(self, body: dict[str, Any]) -> dict[str, Any]:
        (handle,) = codec.fields(body, "CloseSessionRequest", session_handle=str)
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
        return {"devices": codec.devices_to_wire(devices)}

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
