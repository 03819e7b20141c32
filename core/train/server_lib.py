"""`Server`: one task of a cluster, as ``tf.distribute.Server``; and the ``tensorweave server``
command.

Contract: ``Server(cluster, job_name, task_index, config=None, start=True, protocol="grpc")``
creates the task's server through the transport plugin registered for `protocol`: its devices
(which outlive sessions), a master any client can open sessions on with
``Session(server.target)``, and the worker its peers call. `job_name` and `task_index` may be
left out when the cluster leaves no choice. `start` is idempotent, `join` blocks until `stop`,
and a stopped server cannot start again. `ServerOptions` carries what a TF server has no field
for: the bind host, TLS files (``tls_client_ca`` requires client certificates: mutual TLS), the
shared auth token, the session garbage-collection delay, `insecure` and `file_root` (every
file-touching kernel of the task, readers and datasets included, refuses a path outside it with
`PermissionDeniedError`), and the memory caps on incoming messages.

Beyond TF: a server bound to an address that is not loopback refuses to start (`ValueError`)
without a token or mutual TLS, unless ``insecure=True`` (``Server(..., insecure=True)``,
``--insecure``, or ``TENSORWEAVE_INSECURE=1``) says so. A TF1 cluster script runs unchanged with
``TENSORWEAVE_AUTH_TOKEN`` set to the same secret in every task's environment.

`run_server_cli(argv)` runs ``tensorweave server --cluster spec.json --job ps --task 0`` (or the
cluster and task of ``TF_CONFIG``), prints one line with the target once serving, and returns 0
after a clean shutdown on SIGTERM or SIGINT (2 for bad arguments). With ``--stop-on-stdin-eof``
it also shuts down cleanly when its standard input reaches end of file: a parent that holds the
pipe's other end (`LocalCluster`) takes its servers with it even when it is killed outright.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

import attrs

from tensorweave.engine.client.config import ConfigProto
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.train.cluster import ClusterSpec, TFConfig

__all__ = ["Server", "ServerOptions"]

DEFAULT_SESSION_GC_SECONDS = 600.0
DEFAULT_MAX_MESSAGE_BYTES = (2 << 30) + (64 << 20)  # TF's 2 GiB TensorProto, and a header
DEFAULT_MAX_SESSION_BYTES = 4 << 30


@attrs.frozen
class ServerOptions:
    """Transport settings of a server. ``None`` fields fall back to the environment
    (``TENSORWEAVE_AUTH_TOKEN``, ``TENSORWEAVE_TLS_CERT``, ``TENSORWEAVE_TLS_KEY``,
    ``TENSORWEAVE_TLS_ROOT_CA``, ``TENSORWEAVE_TLS_CLIENT_CA``, ``TENSORWEAVE_INSECURE``)."""

    host: str | None = None  # bind host; default: the host of the task's address
    auth_token: str | None = None
    tls_cert: str | None = None  # PEM file of the server's certificate
    tls_key: str | None = None  # PEM file of its private key
    tls_root_ca: str | None = None  # PEM file trusted when calling peers
    tls_client_ca: str | None = None  # PEM file of the CA clients' certificates must chain to
    session_gc_seconds: float = DEFAULT_SESSION_GC_SECONDS
    insecure: bool | None = None  # serve a non-loopback address unauthenticated
    file_root: str | None = None  # a directory: every file the task's kernels touch is under it
    # the most one incoming message may declare, and the most the messages arriving on one
    # client connection may hold between them while they arrive (ResourceExhaustedError)
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    max_session_bytes: int = DEFAULT_MAX_SESSION_BYTES


class Server:
    """An in-process server of one cluster task."""

    def __init__(self, server_or_cluster_def: Any, job_name: str | None = None,
                 task_index: int | None = None, config: ConfigProto | None = None,
                 start: bool = True, protocol: str | None = "grpc",
                 options: ServerOptions | None = None, insecure: bool | None = None) -> None:
        cluster = ClusterSpec(server_or_cluster_def)
        if not cluster:
            raise ValueError("The cluster must have at least one job")
        if job_name is None:
            if len(cluster.jobs) != 1:
                raise ValueError("Must specify an explicit `job_name`.")
            job_name = cluster.jobs[0]
        if task_index is None:
            indices = cluster.task_indices(job_name)
            if len(indices) != 1:
                raise ValueError("Must specify an explicit `task_index`.")
            task_index = indices[0]
        cluster.task_address(job_name, task_index)  # ValueError for a task not in the cluster
        protocol = protocol or "grpc"
        transport = get_registries().transports.get(protocol)
        if transport is None or not hasattr(transport, "create_server"):
            raise ValueError(f"No transport plugin serves protocol '{protocol}'")
        self._cluster = cluster
        self._job_name = job_name
        self._task_index = task_index
        options = options or ServerOptions()
        if insecure is not None:
            options = attrs.evolve(options, insecure=insecure)
        self._impl = transport.create_server(cluster, job_name, task_index,
                                             config or ConfigProto(), options)
        if start:
            self.start()

    @staticmethod
    def create_local_server(config: ConfigProto | None = None, start: bool = True) -> Server:
        """A single-task server on localhost, on a free port."""
        return Server({"localhost": ["localhost:0"]}, protocol="grpc", config=config,
                      start=start)

    @property
    def target(self) -> str:
        """``grpc://host:port``: the target to pass to ``Session``."""
        return self._impl.target

    @property
    def cluster_spec(self) -> ClusterSpec:
        return self._cluster

    @property
    def job_name(self) -> str:
        return self._job_name

    @property
    def task_index(self) -> int:
        return self._task_index

    def start(self) -> None:
        self._impl.start()

    def join(self, timeout: float | None = None) -> bool:
        """Block until the server stops (or `timeout` seconds pass); True once stopped."""
        return self._impl.join(timeout)

    def stop(self) -> None:
        self._impl.stop()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tensorweave server",
        description="Serve one task of a cluster until SIGTERM/SIGINT. Without --cluster, the "
                    "cluster and task come from TF_CONFIG. The auth token is read from "
                    "TENSORWEAVE_AUTH_TOKEN, never from the command line.")
    parser.add_argument("--cluster", help="JSON file (or inline JSON object) mapping job names "
                        "to lists of host:port, or to {index: host:port}")
    parser.add_argument("--job", help="this task's job name")
    parser.add_argument("--task", type=int, help="this task's index in its job")
    parser.add_argument("--host", help="host to bind (default: the host of the task's address)")
    parser.add_argument("--protocol", default="grpc")
    parser.add_argument("--session-gc-seconds", type=float, default=DEFAULT_SESSION_GC_SECONDS,
                        help="close sessions idle this long (default %(default)s)")
    parser.add_argument("--operation-timeout-ms", type=int, default=0,
                        help="deadline of steps and calls (default: ConfigProto's)")
    parser.add_argument("--max-message-bytes", type=int,
                        default=DEFAULT_MAX_MESSAGE_BYTES,
                        help="the most one incoming message may declare (with what it decodes to)")
    parser.add_argument("--max-session-bytes", type=int,
                        default=DEFAULT_MAX_SESSION_BYTES,
                        help="the most the messages arriving on one connection may hold")
    parser.add_argument("--tls-cert", help="PEM certificate of this server (enables TLS)")
    parser.add_argument("--tls-key", help="PEM private key of this server")
    parser.add_argument("--tls-root-ca", help="PEM certificate trusted when calling peers")
    parser.add_argument("--tls-client-ca", help="PEM certificate of the CA that must have "
                        "signed every client's certificate (mutual TLS)")
    parser.add_argument("--insecure", action="store_true", default=None,
                        help="serve an address that is not loopback without a token or mutual "
                             "TLS (default: refuse)")
    parser.add_argument("--file-root", help="directory that every file the task's ops read, "
                        "write or list must be under (default: anywhere)")
    parser.add_argument("--stop-on-stdin-eof", action="store_true",
                        help="shut down when standard input is closed (e.g. the parent died)")
    return parser


def _cluster_arg(text: str) -> ClusterSpec:
    if text.lstrip().startswith("{"):
        data = json.loads(text)
    else:
        with open(text, encoding="utf-8") as f:
            data = json.load(f)
    if isinstance(data, dict) and isinstance(data.get("cluster"), dict):
        data = data["cluster"]  # a TF_CONFIG-style file
    return ClusterSpec(data)


def _set_on_eof(fd: int, stop: threading.Event) -> None:
    """Set `stop` once file descriptor `fd` reaches end of file; what it carries is ignored."""
    while os.read(fd, 4096):
        pass
    stop.set()


def run_server_cli(argv: Sequence[str]) -> int:
    """``tensorweave server ...``; see the module docstring."""
    parser = _parser()
    args = parser.parse_args(list(argv))
    stop = threading.Event()
    # Before the server binds its port: a signal may come as soon as a client can connect.
    previous = {sig: signal.signal(sig, lambda *_: stop.set())
                for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        return _serve(parser, args, stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _serve(parser: argparse.ArgumentParser, args: argparse.Namespace,
           stop: threading.Event) -> int:
    try:
        tf_config = TFConfig.from_env()
        if args.cluster:
            cluster = _cluster_arg(args.cluster)
        elif tf_config is not None:
            cluster = tf_config.cluster
        else:
            parser.error("give --cluster, or set TF_CONFIG")
        job = args.job or (tf_config.task_type if tf_config else None)
        task = args.task if args.task is not None else (tf_config.task_index if tf_config
                                                         else None)
        options = ServerOptions(host=args.host, tls_cert=args.tls_cert, tls_key=args.tls_key,
                                tls_root_ca=args.tls_root_ca, tls_client_ca=args.tls_client_ca,
                                session_gc_seconds=args.session_gc_seconds,
                                insecure=args.insecure, file_root=args.file_root,
                                max_message_bytes=args.max_message_bytes,
                                max_session_bytes=args.max_session_bytes)
        config = ConfigProto(operation_timeout_in_ms=args.operation_timeout_ms)
        server = Server(cluster, job, task, config=config, start=False, protocol=args.protocol,
                        options=options)
    except (OSError, ValueError, TypeError) as exc:
        print(f"tensorweave server: error: {exc}", file=sys.stderr)
        return 2
    if args.stop_on_stdin_eof:
        threading.Thread(target=_set_on_eof, args=(sys.stdin.fileno(), stop), daemon=True,
                         name="stdin-eof").start()
    try:
        server.start()
        print(f"tensorweave server: /job:{server.job_name}/task:{server.task_index} serving on "
              f"{server.target}", flush=True)
        # Timed: a signal the kernel delivers to another thread (one of gRPC's) runs its
        # Python handler only when the main thread next executes bytecode.
        while not stop.wait(0.1):
            pass
    finally:
        server.stop()
    return 0
