"""`RemoteMaster`: a client's session on a master in another process, over a `Channel`.

Contract: offers what `MasterSession` offers to `Session`: `devices`, `extend(nodes)`,
``run(feeds, fetches, targets, collect_stats, timeout, ran)`` returning (values, stats, compiled)
and `close()`. The compiled step's `partitions` and `records` are fetched from the master on
first use and cached per compiled step. `close` gives up after a short deadline and never
raises for a master that is gone: the server garbage-collects the session. `start_close` sends
the same CloseSession without waiting and returns an event set once it is answered (or has
failed); `close(timeout)` waits that long at most, then closes the channel.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.client.config import ConfigProto
from tensorweave.engine.distributed import messages
from tensorweave.engine.distributed.transport import MASTER, Channel
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef
from tensorweave.engine.runtime.executor import NodeStats
from tensorweave.engine.runtime.master import DEADLINE_GRACE_SECONDS
from tensorweave.engine.runtime.passes import PassRecord

CLOSE_TIMEOUT_SECONDS = 3.0


class RemoteCompiledStep:
    """A compiled step held by a remote master; its graphs and records are fetched lazily."""

    def __init__(self, master: RemoteMaster, compiled_id: int) -> None:
        self.id = compiled_id
        self._master = master
        self._info: tuple[list[GraphDef], list[PassRecord]] | None = None

    def _fetch(self) -> tuple[list[GraphDef], list[PassRecord]]:
        if self._info is None:
            self._info = self._master.step_info(self.id)
        return self._info

    @property
    def partitions(self) -> list[GraphDef]:
        return self._fetch()[0]

    @property
    def records(self) -> list[PassRecord]:
        return self._fetch()[1]


class RemoteMaster:
    """One session on the master at `target`, reached through `channel` (which it closes)."""

    def __init__(self, target: str, config: ConfigProto, channel: Channel) -> None:
        self.target = target
        self._timeout = config.timeout_seconds
        # the master's own calls to its workers take up to a deadline; ours must outlast them
        self._control_timeout = self._timeout + 2 * DEADLINE_GRACE_SECONDS
        self._peer = channel
        self._compiled: dict[int, RemoteCompiledStep] = {}
        self.closed = False
        self._closing: threading.Event | None = None
        self._channel_closed = False
        try:
            body = self._peer.call(MASTER, "CreateSession",
                                   {"config": messages.config_to_wire(config)},
                                   self._control_timeout)
            message = "CreateSessionResponse"
            self._handle, task, devices = messages.fields(body, message, session_handle=str,
                                                       task=str, devices=list)
            self.devices = messages.devices_from_wire(devices, message)
        except BaseException:
            self._peer.close()
            raise
        self._peer.task = task  # errors now name the master's task

    def _session_call(self, method: str, body: dict[str, Any], timeout: float) -> Any:
        """A call on this session. One that `close` (from another thread) ended, whichever way
        it ended (the channel shut, the handle gone, the step cancelled), raises TF's
        ``CancelledError("Session has been closed.")``."""
        try:
            return self._peer.call(MASTER, method, {"session_handle": self._handle, **body},
                                   timeout)
        except errors.OpError:
            if self.closed:
                raise errors.CancelledError(None, None, "Session has been closed.") from None
            raise

    def extend(self, nodes: Sequence[NodeDef]) -> None:
        self._session_call("ExtendSession", {"nodes": messages.graph_to_wire(nodes)},
                           self._control_timeout)
        self._compiled.clear()

    def run(self, feeds: Mapping[str, Any], fetches: Sequence[str], targets: Sequence[str],
            collect_stats: bool = False, timeout: float | None = None, ran: Sequence[str] = (),
            ) -> tuple[list[Any], dict[str, list[NodeStats]], RemoteCompiledStep]:
        if self.closed:  # closed while this run was being prepared (Session.run checked first)
            raise errors.CancelledError(None, None, "Session has been closed.")
        message = "RunStepResponse"
        step_timeout = self._timeout if timeout is None else timeout
        body = self._session_call("RunStep", {
            "feeds": {name: np.asarray(v) for name, v in feeds.items()},
            "fetches": list(fetches), "targets": list(targets),
            "collect_stats": collect_stats, "timeout": timeout, "ran": list(ran),
        }, step_timeout + 2 * DEADLINE_GRACE_SECONDS)
        values, stats, compiled_id = messages.fields(body, message, values=list, stats=dict,
                                                  compiled_id=int)
        if len(values) != len(fetches) or not all(isinstance(v, np.ndarray) for v in values):
            raise messages.bad(message, "values", f"must hold {len(fetches)} tensors")
        compiled = self._compiled.get(compiled_id)
        if compiled is None:
            compiled = self._compiled[compiled_id] = RemoteCompiledStep(self, compiled_id)
        return values, messages.stats_from_wire(stats, message), compiled

    def step_info(self, compiled_id: int) -> tuple[list[GraphDef], list[PassRecord]]:
        message = "GetStepInfoResponse"
        body = self._session_call("GetStepInfo", {"compiled_id": compiled_id},
                                  self._control_timeout)
        partitions, records = messages.fields(body, message, partitions=list, records=list)
        return ([GraphDef(node=messages.graph_from_wire(p, message)) for p in partitions],
                messages.records_from_wire(records, message))

    def start_close(self) -> threading.Event:
        """Send CloseSession and return at once (no thread started, nothing waited for); the
        event is set when the master answered or the call failed. Idempotent."""
        if self._closing is not None:
            return self._closing
        self.closed = True
        done = self._closing = threading.Event()
        try:
            self._peer.call_async(MASTER, "CloseSession", {"session_handle": self._handle},
                                  min(self._timeout, CLOSE_TIMEOUT_SECONDS),
                                  lambda error, body: done.set(), quick=True)
        except (errors.OpError, RuntimeError):
            done.set()  # no channel, or no thread left to send on: the master reclaims it
        return done

    def close(self, timeout: float = CLOSE_TIMEOUT_SECONDS) -> None:
        """End the session, waiting at most `timeout` seconds for the master to confirm; the
        channel is closed either way (a call still in flight is cancelled)."""
        if self._channel_closed:
            return
        done = self.start_close()
        try:
            done.wait(timeout)
        finally:
            self._channel_closed = True
            self._peer.close()
