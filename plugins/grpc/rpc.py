"""gRPC plumbing shared by the services and their stubs: channels, calls, handlers, errors.

Contract: a `Peer` is the client end of one remote task. ``call(service, method, body, timeout)``
encodes `body` as a wire envelope and sends it as one message, or streamed in chunks to
``<method>Stream`` when it is larger than one chunk; a deferred reply is fetched over the
server's bulk lane (`bulk`), or else as a stream from ``tensorweave.Transfer/Fetch``. Errors
come back as the `OpError` the server raised (code and message, with node and op when known); a
failure of the transport itself becomes `UnavailableError` (or the code's error) naming the task
and its address. `call_async` does the same without blocking and calls back exactly once. After
its first call a peer asks the server for its call lane (`lane`; plaintext servers only) in the
background; once that is open, requests of at most one chunk take it instead of gRPC, with the
same replies and errors. A call whose lane breaks or stalls after sending it (blocking, with a
callback, or fire-and-forget) is sent again over gRPC within its deadline: as it is if its
method is in `transport.IDEMPOTENT`, under the same ``request_id`` if it is in
`transport.DEDUPLICATED` (every request of those carries a fresh one). Channels and servers
send HTTP/2 keepalive pings (`KEEPALIVE_SECONDS`), so a peer that stops answering fails its
calls with `UnavailableError` in about `KEEPALIVE_SECONDS + KEEPALIVE_TIMEOUT_SECONDS`.

`ServiceHandlers` is the server end: every method is served unary and streamed; a request is
authenticated (shared token) and decoded before the method runs, within the server's memory
caps (what it decodes to is charged to its connection), and any failure becomes an error
status -- never a crash. A request of a `DEDUPLICATED` method runs once per ``request_id``
(`recent.RecentRequests`; a repeat gets the first call's answer). A cancellable method learns
when its call is cancelled (the client went away) before it answered. A reply larger than
one chunk is parked in the `Outbox` for the client to fetch, and reclaimed if it never does.
`lane_methods` serves the same methods to the call lane.

Messages are bounded: no gRPC message exceeds `wire.CHUNK_BYTES` (plus a small margin).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import random
import socket
import threading
import time
from collections.abc import Callable, Collection, Hashable, Iterator, Mapping
from concurrent.futures import Executor
from typing import Any

import attrs
import grpc

from tensorweave.engine import errors
from tensorweave.engine.distributed.transport import (
    DEDUPLICATED,
    IDEMPOTENT,
    AsyncMethod,
    Cancellation,
    Method,
)
from tensorweave.plugins.grpc import bulk, lane, wire
from tensorweave.plugins.grpc.outbox import TICKET_BYTES, Outbox
from tensorweave.plugins.grpc.recent import REJOIN_SECONDS, RecentRequests

TRANSFER = "tensorweave.Transfer"
STREAM_SUFFIX = "Stream"
AUTH_KEY = "tw-auth-token"
ORIGIN_KEY = "tw-error-origin"
NODE_KEY = "tw-error-node"
OP_KEY = "tw-error-op"
MAX_MESSAGE_BYTES = wire.CHUNK_BYTES + 4096
LANE_PROBE_SECONDS = 5.0  # the longest a peer waits to learn whether the server has a lane
LANE_RETRY_SECONDS = 1.0  # after a failed attempt to open the lane, gRPC alone for this long
OPTIONS = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    # a restarted peer should be reachable again within a second, not after minutes of backoff
    # (not grpc.min_reconnect_backoff_ms: that one is the connection attempt's timeout)
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
    ("grpc.enable_retries", 0),
]
# A peer that stops answering without closing the connection (a host gone, a network that
# drops everything) is found by HTTP/2 pings, on idle connections too, in about 10 s: far below
# the operation timeout a call would otherwise wait out. The pings are gRPC core's, answered
# without Python, so a busy process still answers them.
KEEPALIVE_SECONDS = 5
KEEPALIVE_TIMEOUT_SECONDS = 5
_KEEPALIVE = [
    ("grpc.keepalive_time_ms", KEEPALIVE_SECONDS * 1000),
    ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_SECONDS * 1000),
    # (a keepalive ping that finds another ping in flight, e.g. the flow control's, waits on
    # that one, whose own timeout is a minute by default)
    ("grpc.http2.ping_timeout_ms", KEEPALIVE_TIMEOUT_SECONDS * 1000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),  # (a long step sends no data for a while)
]
CHANNEL_OPTIONS = [*OPTIONS, *_KEEPALIVE]
# gRPC binds with SO_REUSEPORT by default: two servers could then share one task's port.
# A server pings its clients too (a client that vanished has its calls cancelled, its steps
# aborted), and accepts their pings as often as they send them (gRPC's default, one per 5
# minutes without data, would end their connections with GOAWAY "too many pings").
SERVER_OPTIONS = [
    *OPTIONS, *_KEEPALIVE, ("grpc.so_reuseport", 0),
    ("grpc.http2.min_recv_ping_interval_without_data_ms", KEEPALIVE_SECONDS * 500),
    ("grpc.http2.min_ping_interval_without_data_ms", KEEPALIVE_SECONDS * 500),
]
_STATUS_BY_CODE = {status.value[0]: status for status in grpc.StatusCode}
_NEVER = float("inf")


# -- security -----------------------------------------------------------------------------------


def _read(path: str | None, what: str) -> bytes | None:
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise ValueError(f"Cannot read the TLS {what} file '{path}': {exc}") from None


@attrs.frozen
class Security:
    """TLS material and the shared token of one process's channels and servers.

    Each setting comes from the explicit argument, else the environment:
    ``TENSORWEAVE_AUTH_TOKEN``, ``TENSORWEAVE_TLS_CERT`` and ``TENSORWEAVE_TLS_KEY`` (this
    process's PEM certificate and key: a server's identity, and the client certificate its
    channels present), ``TENSORWEAVE_TLS_ROOT_CA`` (the PEM a client trusts; a TLS server
    trusts its own certificate when none is given), ``TENSORWEAVE_TLS_CLIENT_CA`` (mutual TLS:
    a server then accepts only clients presenting a certificate this PEM signed).

    `check_exposure` is the rule for where a server may listen: on a loopback address anything
    goes; on any other address (a wildcard included) only with a token or mutual TLS, unless
    the caller says ``insecure`` (``TENSORWEAVE_INSECURE=1``, ``--insecure``).
    """

    auth_token: str = ""
    root_ca: bytes | None = None
    cert: bytes | None = None
    key: bytes | None = None
    client_ca: bytes | None = None

    @classmethod
    def resolve(cls, auth_token: str | None = None, tls_cert: str | None = None,
                tls_key: str | None = None, tls_root_ca: str | None = None,
                environ: Mapping[str, str] | None = None,
                tls_client_ca: str | None = None) -> Security:
        env = os.environ if environ is None else environ
        cert = _read(tls_cert or env.get("TENSORWEAVE_TLS_CERT"), "certificate")
        key = _read(tls_key or env.get("TENSORWEAVE_TLS_KEY"), "key")
        if (cert is None) != (key is None):
            raise ValueError("TLS needs both a certificate and a key (tls_cert and tls_key)")
        root = _read(tls_root_ca or env.get("TENSORWEAVE_TLS_ROOT_CA"), "root CA") or cert
        client_ca = _read(tls_client_ca or env.get("TENSORWEAVE_TLS_CLIENT_CA"), "client CA")
        token = auth_token if auth_token is not None else env.get("TENSORWEAVE_AUTH_TOKEN", "")
        return cls(token, root, cert, key, client_ca)

    @property
    def mutual_tls(self) -> bool:
        """Whether a server with these settings requires client certificates."""
        return self.cert is not None and self.client_ca is not None

    def check_exposure(self, task: str, host: str, insecure: bool | None = None,
                       environ: Mapping[str, str] | None = None) -> None:
        """`ValueError` if a server of `task` may not listen on `host` with these settings:
        a host that is not loopback needs a token or mutual TLS, unless `insecure` (else
        ``TENSORWEAVE_INSECURE=1``) says to serve it unauthenticated anyway."""
        env = os.environ if environ is None else environ
        if insecure is None:
            insecure = env.get("TENSORWEAVE_INSECURE", "") not in ("", "0")
        if insecure or self.auth_token or self.mutual_tls or is_loopback(host):
            return
        raise ValueError(
            f"Refusing to serve {task} on '{host}', which is not a loopback address, without "
            "authentication: anyone who reaches it could run graphs and read and write files. "
            "Set the same secret on every task (and client) with the environment variable "
            "TENSORWEAVE_AUTH_TOKEN=<secret> (or ServerOptions(auth_token=...)), or use TLS "
            "with client certificates (--tls-cert, --tls-key and --tls-client-ca), or say "
            "--insecure, Server(..., insecure=True) or TENSORWEAVE_INSECURE=1 to serve it "
            "unauthenticated.")

    def channel(self, address: str) -> grpc.Channel:
        if self.root_ca is not None:
            # with a certificate of its own, a channel presents it (for mutual TLS)
            creds = grpc.ssl_channel_credentials(root_certificates=self.root_ca,
                                                 private_key=self.key,
                                                 certificate_chain=self.cert)
            return grpc.secure_channel(address, creds, options=CHANNEL_OPTIONS)
        return grpc.insecure_channel(address, options=CHANNEL_OPTIONS)

    def bind(self, server: grpc.Server, address: str) -> int:
        """Bind `server` to exactly `address`; returns the port (`OSError` if it cannot)."""
        try:
            if self.cert is not None:
                port = server.add_secure_port(address, grpc.ssl_server_credentials(
                    [(self.key, self.cert)], root_certificates=self.client_ca,
                    require_client_auth=self.client_ca is not None))
            else:
                port = server.add_insecure_port(address)
        except RuntimeError as exc:
            raise OSError(f"Cannot bind {address}: {exc}") from None
        if not port:
            raise OSError(f"Cannot bind {address}")
        return port

    @property
    def metadata(self) -> tuple[tuple[str, str], ...] | None:
        return ((AUTH_KEY, self.auth_token),) if self.auth_token else None


def is_loopback(host: str) -> bool:
    """Whether every address `host` names is a loopback one (a wildcard, an empty host and a
    name that does not resolve are not)."""
    name = host.strip("[]")
    if not name:
        return False
    try:
        infos = socket.getaddrinfo(name, None)
    except (OSError, UnicodeError):
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback
                               for info in infos)


def split_address(address: str) -> tuple[str, int]:
    """``"host:port"`` or ``"[v6]:port"`` -> (host, port); `ValueError` if malformed."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"Address '{address}' is not of the form host:port")
    return host, int(port)


# -- client side --------------------------------------------------------------------------------


def rebuild_error(exc: grpc.RpcError, task: str, address: str) -> errors.OpError:
    """The `OpError` a failed call stands for (see the module docstring)."""
    code = exc.code() if hasattr(exc, "code") else grpc.StatusCode.UNKNOWN
    details = (exc.details() if hasattr(exc, "details") else None) or str(code)
    trailing = dict(exc.trailing_metadata() or ()) if hasattr(exc, "trailing_metadata") else {}
    cls = errors.exception_type_from_error_code(code.value[0])
    if trailing.get(ORIGIN_KEY) == "app":
        return cls(trailing.get(NODE_KEY) or None, trailing.get(OP_KEY) or None, details)
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return unavailable(task, address, details)
    return cls(None, None, f"{details} (from {_who(task, address)})")


def _who(task: str, address: str) -> str:
    return f"Task {task} at {address}" if task.startswith("/job:") else f"Master at {address}"


def unavailable(task: str, address: str, details: str) -> errors.UnavailableError:
    """The error of a call that the transport could not complete."""
    return errors.UnavailableError(None, None, f"{_who(task, address)} is unavailable: {details}")


class Peer:
    """The client end of one task's services."""

    def __init__(self, task: str, address: str, security: Security,
                 pool: Executor | None = None) -> None:
        self.task = task
        self.address = address
        self.host = split_address(address)[0]
        self.channel = security.channel(address)
        self.pool = pool
        self._metadata = security.metadata
        self._methods: dict[tuple[str, str], Any] = {}
        self._inflight: set[Any] = set()  # async calls are cancelled if garbage-collected
        self._lock = threading.Lock()
        # the call lane (`lane`): asked for in the background after the first call; a TLS
        # channel never asks, its server offers none
        self._lane: lane.Lane | None = None
        self._lane_digest = lane.token_digest(security.auth_token)
        self._lane_next_try = 0.0 if lane.enabled() and security.root_ca is None else _NEVER
        self._lane_probing = False
        self._closed = False

    def _method(self, kind: str, path: str) -> Any:
        callable_ = self._methods.get((kind, path))
        if callable_ is None:
            factory = {"uu": self.channel.unary_unary, "su": self.channel.stream_unary,
                       "us": self.channel.unary_stream}[kind]
            callable_ = self._methods[(kind, path)] = factory(path)
        return callable_

    def error(self, exc: grpc.RpcError) -> errors.OpError:
        return rebuild_error(exc, self.task, self.address)

    def _unavailable(self, details: str) -> errors.UnavailableError:
        return unavailable(self.task, self.address, details)

    # -- the call lane ----------------------------------------------------------------------------

    def _ready_lane(self) -> lane.Lane | None:
        """The open call lane, if any; else starts opening one (unless that failed lately)."""
        current = self._lane
        if current is not None and current.broken is None:
            return current
        if time.monotonic() >= self._lane_next_try:
            with self._lock:
                start = not self._lane_probing and not self._closed
                self._lane_probing = True
            if start:
                threading.Thread(target=self._open_lane, name="tw-lane-open",
                                 daemon=True).start()
        return None

    def _open_lane(self) -> None:
        """Ask the server for its lane's port (over gRPC, so the question is authenticated)
        and connect; on failure, gRPC alone for `LANE_RETRY_SECONDS`."""
        opened, retry = None, time.monotonic() + LANE_RETRY_SECONDS
        try:
            reply = self._method("uu", f"/{TRANSFER}/Lane")(
                wire.encode({}).frame(), timeout=LANE_PROBE_SECONDS, metadata=self._metadata)
            port = wire.decode(reply).body.get("port")
            if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
                retry = _NEVER  # the server offers no lane
            else:
                opened = lane.Lane(self.host, port, self._lane_digest, self._unavailable,
                                   self.pool, LANE_PROBE_SECONDS)
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.UNIMPLEMENTED:
                retry = _NEVER  # a server without the lane method
        except (OSError, ValueError, AttributeError, errors.OpError):
            pass
        with self._lock:
            self._lane_probing = False
            if opened is not None and self._closed:
                opened.close()
            elif opened is not None:
                self._lane = opened
            else:
                self._lane_next_try = retry

    # -- calls --------------------------------------------------------------------------------

    def call(self, service: str, method: str, body: Any, timeout: float) -> Any:
        """Send `body` to ``service/method`` and return the reply body."""
        deadline = time.monotonic() + timeout
        envelope = wire.encode(_with_request_id(service, method, body))
        path = f"/{service}/{method}"
        current = self._ready_lane() if envelope.size <= wire.CHUNK_BYTES else None
        if current is not None:
            try:
                message = wire.decode(current.call(path.encode(), envelope.frame(), timeout))
            except lane.LaneClosedError:
                pass  # broke before sending: nothing reached the server; take gRPC
            except lane.LaneBrokenError as exc:  # the server may have run it: again if that
                if not _resendable(service, method, deadline):  # runs it once, in time
                    raise errors.UnavailableError(None, None, exc.message) from None
            else:
                try:
                    if message.kind == wire.KIND_DEFERRED:
                        message = self._fetch(message.body, deadline)
                except grpc.RpcError as exc:
                    raise self.error(exc) from None
                return message.body
        left = max(0.001, deadline - time.monotonic())
        try:
            if envelope.size <= wire.CHUNK_BYTES:
                reply = self._method("uu", path)(envelope.frame(), timeout=left,
                                                 metadata=self._metadata)
            else:
                reply = self._method("su", path + STREAM_SUFFIX)(
                    envelope.chunks(), timeout=left, metadata=self._metadata)
            message = wire.decode(reply)
            if message.kind == wire.KIND_DEFERRED:
                message = self._fetch(message.body, deadline)
        except grpc.RpcError as exc:
            raise self.error(exc) from None
        except ValueError as exc:  # gRPC refuses calls on a closed channel
            raise errors.UnavailableError(None, None, f"No channel to {self.address}: "
                                          f"{exc}") from None
        return message.body

    def _fetch(self, ref: Any, deadline: float) -> wire.Message:
        """The reply a deferred one refers to: over the bulk lane when the server has one, else
        streamed over gRPC."""
        ticket = ref.get("transfer") if isinstance(ref, dict) else None
        if not isinstance(ticket, bytes) or len(ticket) != TICKET_BYTES:
            raise errors.InvalidArgumentError(None, None, f"Malformed deferred reply from task "
                                              f"{self.task}")
        port = ref.get("bulk_port")
        message = None
        if isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536:
            try:
                message = bulk.fetch(self.host, port, ticket,
                                     max(0.001, deadline - time.monotonic()))
            except bulk.LaneUnavailableError:
                message = None
        if message is None:
            chunks = self._method("us", f"/{TRANSFER}/Fetch")(
                wire.encode({"transfer": ticket}).frame(),
                timeout=max(0.001, deadline - time.monotonic()), metadata=self._metadata)
            message = wire.decode_stream(chunks)
        if message.kind != wire.KIND_MESSAGE:
            raise errors.InvalidArgumentError(None, None, "A fetched reply is itself deferred")
        return message

    def call_async(self, service: str, method: str, body: Any, timeout: float,
                   callback: Callable[[errors.OpError | None, Any], None] | None = None,
                   quick: bool = False) -> Callable[[], None]:
        """Start ``service/method``; `callback(error, reply)` runs once it finishes (on the
        peer's pool when it has one; a `quick` callback, one that never blocks, may run on the
        call lane's reader instead). Returns a function that cancels the call. Without a
        callback, the call is fire-and-forget: failures are dropped."""
        deadline = time.monotonic() + timeout
        envelope = wire.encode(_with_request_id(service, method, body))
        path = f"/{service}/{method}"
        current = self._ready_lane() if envelope.size <= wire.CHUNK_BYTES else None
        if current is not None:
            resend = _Resend(self, path, envelope, deadline, callback,
                             _resendable(service, method, deadline))
            try:
                # even without a callback the lane tracks the call, so that a stall resends it
                resend.cancel_lane = current.start(
                    path.encode(), envelope.frame(), timeout,
                    resend.lane_reply(self._lane_reply(resend.answer, deadline, quick)),
                    quick or callback is None)
                return resend.cancel
            except lane.LaneClosedError:
                pass  # broke before sending: nothing reached the server; take gRPC
        return self._grpc_async(path, envelope, deadline, callback)

    def _grpc_async(self, path: str, envelope: wire.Envelope, deadline: float,
                    callback: Callable[[errors.OpError | None, Any], None] | None,
                    ) -> Callable[[], None]:
        """`call_async` over gRPC."""
        timeout = max(0.001, deadline - time.monotonic())
        try:
            if envelope.size <= wire.CHUNK_BYTES:
                future = self._method("uu", path).future(envelope.frame(), timeout=timeout,
                                                          metadata=self._metadata)
            else:
                future = self._method("su", path + STREAM_SUFFIX).future(
                    envelope.chunks(), timeout=timeout, metadata=self._metadata)
        except ValueError as exc:  # gRPC refuses calls on a closed channel
            raise errors.UnavailableError(None, None, f"No channel to {self.address}: "
                                          f"{exc}") from None
        with self._lock:
            self._inflight.add(future)

        def finish(f: Any) -> None:
            with self._lock:
                self._inflight.discard(f)
            if callback is None:
                return
            try:
                message = wire.decode(f.result())
                if message.kind == wire.KIND_DEFERRED:
                    message = self._fetch(message.body, deadline)
            except grpc.FutureCancelledError:
                callback(errors.CancelledError(None, None, f"Call to {path} was cancelled"),
                         None)
                return
            except grpc.RpcError as exc:
                callback(self.error(exc), None)
                return
            except Exception as exc:  # noqa: BLE001 - the caller must hear of every failure
                callback(_as_op_error(exc), None)
                return
            callback(None, message.body)

        def done(f: Any) -> None:
            if self.pool is None:
                finish(f)
                return
            try:  # keep gRPC's own threads free of decoding and of the caller's work
                self.pool.submit(finish, f)
            except RuntimeError:  # the pool is shut down: the process is stopping
                finish(f)

        future.add_done_callback(done)
        return future.cancel

    def _lane_reply(self, callback: Callable[[errors.OpError | None, Any], None],
                    deadline: float, quick: bool) -> lane.Callback:
        """`callback` for a lane call: decodes the reply, and fetches a deferred one (on the
        pool, if the reply came on the lane's reader)."""

        def fetched(message: wire.Message) -> None:
            error = None
            try:
                message = self._fetch(message.body, deadline)
            except grpc.RpcError as exc:
                error = self.error(exc)
            except Exception as exc:  # noqa: BLE001 - the caller must hear of every failure
                error = _as_op_error(exc)
            callback(error, None if error is not None else message.body)

        def on_reply(error: errors.OpError | None, payload: Any) -> None:
            if error is not None:
                callback(error, None)
                return
            try:
                message = wire.decode(payload)
            except errors.OpError as exc:
                callback(exc, None)
                return
            if message.kind != wire.KIND_DEFERRED:
                callback(None, message.body)
            elif quick and self.pool is not None:
                try:
                    self.pool.submit(fetched, message)
                except RuntimeError:  # the pool is shut down: the process is stopping
                    fetched(message)
            else:
                fetched(message)

        return on_reply

    def close(self) -> None:
        with self._lock:
            self._closed = True
            current, self._lane = self._lane, None
        if current is not None:
            current.close()
        self.channel.close()


# Request ids need to be unique, not secret (they grant nothing): a generator seeded from the OS
# costs a fifth of `secrets` per call; a forked child seeds its own (or parent and child, both
# calling one server, would draw the same ids)
_REQUEST_IDS = random.Random()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_REQUEST_IDS.seed)


def _with_request_id(service: str, method: str, body: Any) -> Any:
    """`body` with a fresh ``request_id`` if the method runs once per id (`DEDUPLICATED`)."""
    if (service, method) in DEDUPLICATED:
        return {**body, "request_id": _REQUEST_IDS.getrandbits(62) + 1}
    return body


def _resendable(service: str, method: str, deadline: float) -> bool:
    """Whether a call the server may have run can be sent again: its method runs the same
    twice (`IDEMPOTENT`) or once per request id (`DEDUPLICATED`), and it has time left."""
    key = (service, method)
    return (key in IDEMPOTENT or key in DEDUPLICATED) and time.monotonic() < deadline


def _ignore(error: errors.OpError | None, body: Any) -> None:
    pass


def _nothing() -> None:
    pass


class _Resend:
    """A `Peer.call_async` that took the call lane: if the lane breaks (or stalls) after
    sending it, the same request goes again over gRPC within its deadline, when `allowed`
    (`_resendable`), a fire-and-forget call too (CleanupStep, AbortStep); `cancel` cancels
    whichever attempt runs."""

    __slots__ = ("allowed", "callback", "cancel_grpc", "cancel_lane", "cancelled", "deadline",
                 "envelope", "path", "peer")

    def __init__(self, peer: Peer, path: str, envelope: wire.Envelope, deadline: float,
                 callback: Callable[[errors.OpError | None, Any], None] | None,
                 allowed: bool) -> None:
        self.peer = peer
        self.path = path
        self.envelope = envelope
        self.deadline = deadline
        self.callback = callback
        self.allowed = allowed
        self.cancel_lane: Callable[[], None] = _nothing
        self.cancel_grpc: Callable[[], None] | None = None
        self.cancelled = False

    def answer(self, error: errors.OpError | None, body: Any) -> None:
        if self.callback is not None:
            self.callback(error, body)

    def lane_reply(self, decode: lane.Callback) -> lane.Callback:
        """The lane's callback: `decode` the reply, or resend the call if the lane broke."""
        if self.callback is None:
            decode = _ignore

        def on_reply(error: errors.OpError | None, payload: Any) -> None:
            if not (isinstance(error, lane.LaneBrokenError) and self.allowed
                    and not self.cancelled and time.monotonic() < self.deadline):
                decode(error, payload)
                return
            try:
                self.cancel_grpc = self.peer._grpc_async(self.path, self.envelope,
                                                         self.deadline, self.callback)
            except errors.OpError as exc:
                self.answer(exc, None)
                return
            if self.cancelled:  # (cancelled while it was being sent)
                self.cancel_grpc()

        return on_reply

    def cancel(self) -> None:
        self.cancelled = True
        self.cancel_lane()
        if self.cancel_grpc is not None:
            self.cancel_grpc()


# -- server side --------------------------------------------------------------------------------




def _as_op_error(exc: BaseException) -> errors.OpError:
    if isinstance(exc, errors.OpError):
        return exc
    if isinstance(exc, MemoryError):
        return errors.ResourceExhaustedError(None, None, f"Out of memory: {exc}")
    return errors.InternalError(None, None, f"{type(exc).__name__}: {exc}")


class ServiceHandlers:
    """Serves one service's methods (``name -> fn(body) -> reply body``) over gRPC."""

    def __init__(self, service: str, methods: Mapping[str, Method], security: Security,
                 outbox: Outbox, reply_ttl: float, bulk_port: int | None = None,
                 async_methods: Mapping[str, AsyncMethod] | None = None,
                 max_message_bytes: int = wire.DEFAULT_MAX_MESSAGE_BYTES,
                 memory: wire.MemoryCap | None = None,
                 cancellable: Collection[str] = (),
                 recent: RecentRequests | None = None) -> None:
        """A streamed request may declare at most `max_message_bytes`, and the requests
        arriving on one connection hold at most `memory`'s limit between them. The methods
        named in `cancellable` get a `Cancellation` as their last argument, cancelled when their
        call is (or its connection closes) before they answer. With `recent`, a request of a
        method in `transport.DEDUPLICATED` that carries a ``request_id`` runs once however often
        it comes (`recent.RecentRequests`; the call lane's replies are kept for a retry)."""
        self.service = service
        self._recent = recent
        self._deduplicated = frozenset(
            name for owner, name in DEDUPLICATED if owner == service and recent is not None)
        self._cancellable = frozenset(cancellable)
        self._max_message_bytes = max_message_bytes
        self._memory = wire.MemoryCap() if memory is None else memory
        self.methods = dict(methods)
        self.async_methods = dict(async_methods or {})
        self._token = security.auth_token.encode()
        self._outbox = outbox
        self._reply_ttl = reply_ttl
        self._bulk_port = bulk_port

    def generic_handler(self) -> grpc.GenericRpcHandler:
        handlers = {}
        for name, fn in self.methods.items():
            cancellable = name in self._cancellable
            handlers[name] = grpc.unary_unary_rpc_method_handler(
                self._unary(name, fn, cancellable))
            handlers[name + STREAM_SUFFIX] = grpc.stream_unary_rpc_method_handler(
                self._streamed(name, fn, cancellable))
        return grpc.method_handlers_generic_handler(self.service, handlers)

    def authorized(self, context: grpc.ServicerContext) -> bool:
        if not self._token:
            return True
        for key, value in context.invocation_metadata():
            if key == AUTH_KEY:
                given = value.encode() if isinstance(value, str) else value
                return hmac.compare_digest(given, self._token)
        return False

    def reject(self, context: grpc.ServicerContext) -> None:
        fail(context, errors.UnauthenticatedError(
            None, None, "Request has no valid tensorweave auth token (set "
            "TENSORWEAVE_AUTH_TOKEN to the cluster's token)"))

    def _reply(self, body: Any) -> bytes:
        envelope = wire.encode(body)
        if envelope.size <= wire.CHUNK_BYTES:
            return envelope.frame()
        ref = {"transfer": self._outbox.put(envelope, self._reply_ttl), "size": envelope.size}
        if self._bulk_port is not None:
            ref["bulk_port"] = self._bulk_port
        return wire.encode(ref, wire.KIND_DEFERRED).frame()

    def lane_methods(self) -> tuple[dict[bytes, lane.Handler], dict[bytes, lane.InlineHandler]]:
        """The methods as the call lane serves them (``b"/service/Method"`` -> handler): those
        run on the handler pool, and those with an asynchronous form, started on the lane's
        reader and answered from their callback. The lane authenticates its connection once,
        so the handlers do not."""

        def pooled(name: str, fn: Method) -> lane.Handler:
            cancellable = name in self._cancellable

            def handle(request: bytearray, cancellation: Cancellation, peer: Hashable) -> bytes:
                try:
                    body = _request_body(self._decode(request, peer))
                    return self._once(
                        name, body, peer, cancellation, None, True,
                        lambda inner: self._reply(fn(body, inner) if cancellable else fn(body)))
                except Exception as exc:  # noqa: BLE001 - every failure becomes an error reply
                    raise _as_op_error(exc) from None

            return handle

        def started(name: str, fn: AsyncMethod) -> lane.InlineHandler:
            cancellable = name in self._cancellable

            def handle(request: bytearray, respond: lane.Responder,
                       cancellation: Cancellation, peer: Hashable) -> None:
                try:
                    body = _request_body(self._decode(request, peer))
                except Exception as exc:  # noqa: BLE001
                    raise _as_op_error(exc) from None

                def start(inner: Cancellation, answer: lane.Responder) -> None:
                    def reply(error: BaseException | None, result: Any) -> None:
                        if error is None:
                            try:
                                data = self._reply(result)
                            except Exception as exc:  # noqa: BLE001
                                answer(_as_op_error(exc), None)
                                return
                            answer(None, data)
                        else:
                            answer(_as_op_error(error), None)

                    try:
                        if cancellable:
                            fn(body, reply, inner)
                        else:
                            fn(body, reply)
                    except Exception as exc:  # noqa: BLE001
                        raise _as_op_error(exc) from None

                request_id = self._request_id(name, body)
                if request_id is None:
                    start(cancellation, respond)
                else:
                    self._recent.submit(name, request_id, peer, start, respond, cancellation,
                                        keep=True, grace=REJOIN_SECONDS)

            return handle

        def path(name: str) -> bytes:
            return f"/{self.service}/{name}".encode()

        return ({path(name): pooled(name, fn) for name, fn in self.methods.items()
                 if name not in self.async_methods},
                {path(name): started(name, fn) for name, fn in self.async_methods.items()})

    def _decode(self, request: bytes | bytearray, peer: Hashable) -> wire.Message:
        """A one-message request, what it decodes to charged to its connection's budget."""
        return wire.decode(request, self._max_message_bytes, self._memory, peer)

    def _request_id(self, name: str, body: dict[str, Any]) -> int | None:
        """The request's id, if its method runs once per id (`InvalidArgumentError` if bad)."""
        if name not in self._deduplicated or body.get("request_id") is None:
            return None
        request_id = body["request_id"]
        if not isinstance(request_id, int) or isinstance(request_id, bool) \
                or not 0 < request_id < 1 << 63:
            raise errors.InvalidArgumentError(None, None, f"{name}Request: field 'request_id' "
                                              "must be an integer in [1, 2**63)")
        return request_id

    def _once(self, name: str, body: dict[str, Any], key: Hashable,
              outer: Cancellation | None, timeout: float | None, from_lane: bool,
              run: Callable[[Cancellation | None], bytes]) -> bytes:
        """``run(cancellation)`` -- the reply's bytes -- once per request id: a repeated id
        waits (up to `timeout`) for the first call's answer. `outer` is this call's own
        cancellation; a call from the lane keeps its reply for a retry over gRPC."""
        request_id = self._request_id(name, body)
        if request_id is None:
            return run(outer)
        answered = threading.Event()
        result: list[tuple[errors.OpError | None, bytes | None]] = []

        def start(inner: Cancellation, answer: Callable[..., None]) -> None:
            answer(None, run(inner))

        def answer(error: errors.OpError | None, data: bytes | None) -> None:
            result.append((error, data))
            answered.set()

        self._recent.submit(name, request_id, key, start, answer, outer, keep=from_lane,
                            grace=REJOIN_SECONDS if from_lane else 0.0)
        if not answered.wait(timeout):
            raise errors.DeadlineExceededError(None, None, f"{name}: the first call of request "
                                               f"{request_id} did not finish in time")
        error, data = result[0]
        if error is not None:
            raise error
        return data

    def _run(self, name: str, fn: Method, cancellable: bool, body: dict[str, Any],
             context: grpc.ServicerContext) -> bytes:
        if not cancellable:
            return self._once(name, body, context.peer(), None, context.time_remaining(), False,
                              lambda _: self._reply(fn(body)))
        cancellation = Cancellation()
        if not context.add_callback(cancellation.cancel):  # (runs when the call ends)
            cancellation.cancel()
        try:
            return self._once(name, body, context.peer(), cancellation,
                              context.time_remaining(), False,
                              lambda inner: self._reply(fn(body, inner)))
        finally:
            cancellation.finish()

    def _unary(self, name: str, fn: Method, cancellable: bool,
               ) -> Callable[[bytes, grpc.ServicerContext], bytes]:
        def handle(request: bytes, context: grpc.ServicerContext) -> bytes:
            if not self.authorized(context):
                self.reject(context)
            try:
                message = self._decode(request, context.peer())
                return self._run(name, fn, cancellable, _request_body(message), context)
            except Exception as exc:  # noqa: BLE001 - every failure becomes an error status
                fail(context, _as_op_error(exc))

        return handle

    def _streamed(self, name: str, fn: Method, cancellable: bool,
                  ) -> Callable[[Iterator[bytes], grpc.ServicerContext], bytes]:
        def handle(chunks: Iterator[bytes], context: grpc.ServicerContext) -> bytes:
            if not self.authorized(context):
                self.reject(context)
            try:
                message = wire.decode_stream(chunks, self._max_message_bytes, self._memory,
                                             context.peer())
                return self._run(name, fn, cancellable, _request_body(message), context)
            except Exception as exc:  # noqa: BLE001
                fail(context, _as_op_error(exc))

        return handle


def _request_body(message: wire.Message) -> dict[str, Any]:
    if message.kind != wire.KIND_MESSAGE or not isinstance(message.body, dict):
        raise errors.InvalidArgumentError(None, None, "A request must be a message whose body "
                                          "is a dict")
    return message.body


def fail(context: grpc.ServicerContext, error: errors.OpError) -> None:
    """End the call with `error` as its status; the trailing metadata marks it as the
    application's error (not the transport's) and carries node and op."""
    trailing = [(ORIGIN_KEY, "app")]
    if isinstance(error.node_def, str) and error.node_def.isprintable():
        trailing.append((NODE_KEY, error.node_def))
    if isinstance(error.op, str) and error.op.isprintable():
        trailing.append((OP_KEY, error.op))
    context.set_trailing_metadata(tuple(trailing))
    code = _STATUS_BY_CODE.get(error.error_code, grpc.StatusCode.UNKNOWN)
    context.abort(code, error.message)


def transfer_handler(security: Security, outbox: Outbox,
                     lane_port: int | None = None) -> grpc.GenericRpcHandler:
    """``tensorweave.Transfer/Fetch``: stream a parked reply in chunks; ``Transfer/Lane``: the
    call lane's port (``{"port": int}``, or ``{}`` when the server offers no lane)."""
    auth = ServiceHandlers(TRANSFER, {}, security, outbox, 0.0)
    lane_reply = wire.encode({} if lane_port is None else {"port": lane_port}).frame()

    def lane_port_of(request: bytes, context: grpc.ServicerContext) -> bytes:
        if not auth.authorized(context):
            auth.reject(context)
        return lane_reply

    def fetch(request: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
        if not auth.authorized(context):
            auth.reject(context)
        try:
            body = _request_body(wire.decode(request))
            ticket = body.get("transfer")
            if not isinstance(ticket, bytes) or len(ticket) != TICKET_BYTES:
                raise errors.InvalidArgumentError(
                    None, None, f"Fetch needs a {TICKET_BYTES}-byte 'transfer' ticket")
            envelope = outbox.take(ticket)
        except Exception as exc:  # noqa: BLE001
            fail(context, _as_op_error(exc))
        yield from envelope.chunks()

    return grpc.method_handlers_generic_handler(
        TRANSFER, {"Fetch": grpc.unary_stream_rpc_method_handler(fetch),
                   "Lane": grpc.unary_unary_rpc_method_handler(lane_port_of)})
