"""`GrpcServer`: one task of a cluster behind gRPC -- its worker, a master and the transfers.

Contract: the server owns the task's `Worker` (its devices, so variables outlive sessions), a
`MasterService` whose sessions span the whole cluster, one `WorkerStub` per peer task, shared
by sessions and by the remote rendezvous, and (without TLS) the bulk lane for large replies.
It binds exactly ``host:port`` (the host of the task's address unless `options.host` says
otherwise); `target` is ``grpc://host:port`` with the port actually bound. A host that is not
loopback needs a token or mutual TLS unless `options.insecure` (`Security.check_exposure`:
`ValueError` before anything is bound). With `options.file_root`, the worker's devices confine
the files their kernels touch to it. Without TLS the bulk lane's port also serves the call
lane (unless ``TENSORWEAVE_CALL_LANE=0``), whose requests run on the same handler pool as
gRPC's, and one heartbeat thread tells the lanes' clients, while their calls run, that the
server is there. The requests of the methods that must run once carry ids, which `recent`
remembers (`recent.RecentRequests`), so a client may send them again after its lane stalled. A
background sweep sends queued step cleanups, cancels the calls whose lane closed and that no
retry joined, closes idle sessions, reclaims steps whose master never cleaned them and drops
unfetched replies. `stop` ends every call, session and channel; `join` returns once stopped.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc

from tensorweave.engine import errors
from tensorweave.engine.distributed.master_service import MasterService
from tensorweave.engine.distributed.remote_rendezvous import RemoteRendezvous
from tensorweave.engine.distributed.transport import MASTER, WORKER
from tensorweave.engine.distributed.worker_service import WorkerService, WorkerStub
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.runtime.device import TaskSpec
from tensorweave.engine.runtime.rendezvous import Rendezvous, RendezvousManager
from tensorweave.engine.runtime.worker import Worker
from tensorweave.plugins.grpc import lane, wire
from tensorweave.plugins.grpc.bulk import BulkServer
from tensorweave.plugins.grpc.outbox import Outbox
from tensorweave.plugins.grpc.recent import RecentRequests
from tensorweave.plugins.grpc.rpc import (
    SERVER_OPTIONS,
    Peer,
    Security,
    ServiceHandlers,
    split_address,
    transfer_handler,
)

# A step not cleaned up this long after its deadline belongs to a master that is gone.
STEP_REAP_GRACE_SECONDS = 30.0
# Cleanups of finished steps travel with the next RunGraph to the same task, or after this long.
CLEANUP_FLUSH_SECONDS = 0.1
RPC_THREADS = 64
CALLBACK_THREADS = 16


class GrpcServer:
    """The ``grpc`` transport's server for task `task_index` of job `job_name`."""

    def __init__(self, cluster: Any, job_name: str, task_index: int, config: Any,
                 options: Any) -> None:
        self.cluster = cluster
        self.task = TaskSpec(job_name, 0, task_index)
        host, port = split_address(cluster.task_address(job_name, task_index))
        self.config = config
        self.security = Security.resolve(options.auth_token, options.tls_cert, options.tls_key,
                                         options.tls_root_ca,
                                         tls_client_ca=options.tls_client_ca)
        self.security.check_exposure(self.task.name, options.host or host, options.insecure)
        file_root = options.file_root and os.path.realpath(options.file_root)
        if file_root and not os.path.isdir(file_root):
            raise ValueError(f"The file root '{options.file_root}' is not a directory")
        self._addresses = {TaskSpec(job, 0, i).name: address
                           for job, i, address in cluster.tasks()}
        self._callbacks = ThreadPoolExecutor(CALLBACK_THREADS, thread_name_prefix="tw-rpc-cb")
        self._stubs: dict[str, WorkerStub] = {}
        self._lock = threading.Lock()
        registries = get_registries()
        self.worker = Worker(self.task, config, registries,
                             rendezvous_mgr=RendezvousManager(self._rendezvous))
        for device in self.worker.devices:  # what `kernels.file_access` checks
            device.file_root = file_root or None
        self.outbox = Outbox()
        # gRPC's handlers and the call lane's share one pool
        self._handlers = ThreadPoolExecutor(RPC_THREADS, thread_name_prefix="tw-grpc")
        self.master = MasterService(self.task, self._session_workers, registries,
                                    options.session_gc_seconds, self._handlers)
        self._server = grpc.server(self._handlers, options=SERVER_OPTIONS)
        bound = self.security.bind(self._server, f"{options.host or host}:{port}")
        self.address = f"{host}:{bound}"
        ttl = config.timeout_seconds
        calls = self._serve_lane if lane.enabled() else None  # (connections come after start)
        # TLS replies stay inside gRPC's encryption; plaintext ones may take the bulk lane (and
        # calls the call lane)
        self.bulk = None if self.security.cert is not None else BulkServer(
            options.host or host, self.outbox, ttl, calls)
        bulk_port = None if self.bulk is None else self.bulk.port
        worker_service = WorkerService(self.worker)
        memory = wire.MemoryCap(options.max_session_bytes)  # shared: one budget a connection
        self.recent = RecentRequests(memory)
        services = [
            ServiceHandlers(MASTER, self.master.methods(), self.security, self.outbox, ttl,
                            bulk_port, self.master.async_methods(), options.max_message_bytes,
                            memory, self.master.cancellable, self.recent),
            ServiceHandlers(WORKER, worker_service.methods(), self.security, self.outbox, ttl,
                            bulk_port, worker_service.async_methods(),
                            options.max_message_bytes, memory, worker_service.cancellable,
                            self.recent),
        ]
        self._lane_methods: dict[bytes, lane.Handler] = {}
        self._lane_inline: dict[bytes, lane.InlineHandler] = {}
        for service in services:
            pooled, inline = service.lane_methods()
            self._lane_methods.update(pooled)
            self._lane_inline.update(inline)
        self._lane_digest = lane.token_digest(self.security.auth_token)
        self._heartbeat = lane.Heartbeat()
        self._lane_stalled = lane.stalled_methods()
        self._server.add_generic_rpc_handlers((
            *(service.generic_handler() for service in services),
            transfer_handler(self.security, self.outbox,
                             bulk_port if calls is not None else None),
        ))
        self._sweep_interval = max(0.05, min(1.0, options.session_gc_seconds / 4))
        self._stopping = threading.Event()
        self._stopped = threading.Event()
        self._started = False

    @property
    def target(self) -> str:
        return f"grpc://{self.address}"

    # -- peers ----------------------------------------------------------------------------------

    def stub(self, task_name: str) -> WorkerStub:
        """The (shared) stub of another task of the cluster."""
        with self._lock:
            stub = self._stubs.get(task_name)
            if stub is None:
                if self._stopping.is_set():
                    raise errors.UnavailableError(None, None, f"Server {self.target} is "
                                                  "stopping")
                address = self._addresses.get(task_name)
                if address is None:
                    raise errors.InvalidArgumentError(
                        None, None, f"Task {task_name} is not in the cluster "
                        f"{self.cluster.as_dict()}")
                peer = Peer(task_name, address, self.security, self._callbacks)
                stub = self._stubs[task_name] = WorkerStub(peer, self.config.timeout_seconds)
        return stub

    def _session_workers(self) -> dict[str, Any]:
        return {name: self.worker if name == self.task.name else self.stub(name)
                for name in self._addresses}

    def _serve_lane(self, conn: Any, digest: bytes) -> None:
        lane.serve(conn, digest, self._lane_digest, self._lane_methods, self._handlers,
                   self._lane_inline, self._heartbeat, self._lane_stalled)

    def _rendezvous(self, step_id: int) -> Rendezvous:
        return RemoteRendezvous(step_id, self.task.name, self.stub, self.config.timeout_seconds)

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        if self._stopping.is_set():
            raise RuntimeError(f"Server {self.target} was stopped and cannot start again")
        if self._started:
            return
        self._started = True
        self._server.start()
        if self.bulk is not None:
            self.bulk.start()
        threading.Thread(target=self._sweep, name="tw-sweep", daemon=True).start()

    def _sweep(self) -> None:
        last_gc = time.monotonic()
        while not self._stopping.wait(CLEANUP_FLUSH_SECONDS):
            with self._lock:
                stubs = list(self._stubs.values())
            for stub in stubs:
                stub.flush_cleanups()
            self.recent.sweep()
            if time.monotonic() - last_gc >= self._sweep_interval:
                last_gc = time.monotonic()
                self.master.collect_garbage()
                self.worker.reap_stale_steps(STEP_REAP_GRACE_SECONDS)
                self.outbox.sweep()

    def join(self, timeout: float | None = None) -> bool:
        """Block until the server is stopped (or `timeout` passes); True if stopped."""
        return self._stopped.wait(timeout)

    def stop(self, grace: float = 0.5) -> None:
        if self._stopping.is_set():
            self._stopped.wait()
            return
        self._stopping.set()
        self.worker.abort_all_steps(errors.CancelledError(
            None, None, f"Server {self.target} ({self.task.name}) is stopping"))
        self._server.stop(grace).wait()
        if self.bulk is not None:
            self.bulk.close()
        self._heartbeat.close()
        self._handlers.shutdown(wait=False, cancel_futures=True)
        self.master.close()
        self.worker.close()
        self.recent.close()
        with self._lock:
            stubs, self._stubs = list(self._stubs.values()), {}
        for stub in stubs:
            stub.peer.close()
        self._callbacks.shutdown(wait=False, cancel_futures=True)
        self._stopped.set()
