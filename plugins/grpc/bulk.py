"""The bulk lane: large replies over a plain TCP connection, without gRPC's copies.

Contract: a `BulkServer` listens on the server's bind host, on a port of its own next to the
gRPC one (a connection greeted with `lane.MAGIC` is handed over to the call lane, `lane`). A
reply too large for one gRPC message is parked in the `Outbox` under a random 128-bit ticket,
and the deferred reply names the ticket and the bulk port. The client connects
and sends ``b"TWB1"`` and the ticket; the server takes the parked envelope (once) and writes it
as is -- head, then each tensor's own memory and its padding -- and closes. The client reads it
with `wire.StreamDecoder.fill`, straight into the preallocated arrays, at most
`wire.CHUNK_BYTES` per read. The ticket is the capability: only an authenticated call hands it
out, it works once, and it expires with the outbox entry. A connection with a bad greeting or an
unknown ticket is closed without a byte, and one that has not greeted within `GREETING_SECONDS`
too; greetings are read by one thread without blocking, so no connection holds a serving thread
before it has greeted; at most `MAX_LANES` call lanes are open at once (each holds a thread), a
client refused one keeps to gRPC. When the lane cannot be reached, or stalls (no first byte within
`STALL_SECONDS`), `fetch` raises `LaneUnavailableError` and the caller falls back to
``Transfer/Fetch`` over gRPC; TLS servers do not open the lane at all, so their replies stay
encrypted.
"""

from __future__ import annotations

import selectors
import socket
import struct
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from tensorweave.engine import errors
from tensorweave.plugins.grpc import lane, sockets, wire
from tensorweave.plugins.grpc.outbox import Outbox

MAGIC = b"TWB1"
HELLO = struct.Struct("<4s16s")
SERVE_THREADS = 8
GREETING_SECONDS = 2.0  # how long a connection may take to send its 20-byte greeting
MAX_GREETING = 1024  # connections that have not greeted yet; beyond it the oldest is closed
STALL_SECONDS = 2.0  # a client waits this long for the first byte, then takes gRPC instead
MAX_LANES = 1024  # open call lanes (a thread each); beyond it a greeting is refused


class LaneUnavailableError(Exception):
    """The bulk lane could not be reached; use gRPC instead."""


def _host(host: str) -> str:
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def _listen(host: str, attempts: int = 5) -> list[socket.socket]:
    """Listening sockets on one port for every address `host` resolves to (as gRPC binds
    ``localhost`` on both 127.0.0.1 and ::1), so a client's connection cannot reach a
    stranger's socket on another address."""
    infos = socket.getaddrinfo(_host(host), 0, type=socket.SOCK_STREAM)
    addresses = list(dict.fromkeys((family, address[:2]) for family, _, _, _, address in infos))
    last_error: OSError | None = None
    for _ in range(attempts):  # another process may take the port between two binds
        sockets: list[socket.socket] = []
        port = 0
        try:
            for family, (ip, _) in addresses:
                sock = socket.socket(family, socket.SOCK_STREAM)
                sockets.append(sock)
                if family == socket.AF_INET6 and len(addresses) > 1:
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                sock.bind((ip, port))
                sock.listen(64)
                port = sock.getsockname()[1]
            return sockets
        except OSError as exc:
            for sock in sockets:
                sock.close()
            last_error = exc
    raise OSError(f"Cannot open the bulk lane on {host}: {last_error}")


class BulkServer:
    """Serves parked replies to clients holding their tickets, and hands connections greeted
    with `lane.MAGIC` to `calls` (the call lane), each on a thread of its own.

    Until a connection has sent its whole greeting it holds no thread: one greeter thread
    accepts and reads every greeting without blocking, and closes a connection that has not
    greeted within `GREETING_SECONDS` (or the oldest one once `MAX_GREETING` wait), so idle
    or slow connections cannot starve the clients that hold tickets."""

    def __init__(self, host: str, outbox: Outbox, timeout: float,
                 calls: Callable[[socket.socket, bytes], None] | None = None) -> None:
        self._listeners = _listen(host)
        self.port: int = self._listeners[0].getsockname()[1]
        self._outbox = outbox
        self._timeout = timeout
        self._calls = calls
        self._lanes: set[socket.socket] = set()
        self._lanes_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(SERVE_THREADS, thread_name_prefix="tw-bulk")
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._closing = False
        for listener in self._listeners:
            listener.setblocking(False)
            self._selector.register(listener, selectors.EVENT_READ, None)
        self._wake_r.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        # connection -> (greeting bytes so far, deadline), oldest first
        self._greeting: dict[socket.socket, tuple[bytearray, float]] = {}
        self._thread = threading.Thread(target=self._greet, name="tw-bulk-greeter",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _greet(self) -> None:
        try:
            while not self._closing:
                for key, _ in self._selector.select(self._next_timeout()):
                    sock = key.fileobj
                    if sock is self._wake_r:
                        continue
                    if sock in self._greeting:
                        self._read_greeting(sock)
                    else:
                        self._accept(sock)
                self._expire(time.monotonic())
        finally:
            for conn in list(self._greeting):
                self._drop(conn)
            self._selector.close()

    def _next_timeout(self) -> float:
        if not self._greeting:
            return 1.0
        first_deadline = next(iter(self._greeting.values()))[1]
        return max(0.0, min(1.0, first_deadline - time.monotonic()))

    def _accept(self, listener: socket.socket) -> None:
        try:
            conn, _ = listener.accept()
        except BlockingIOError:
            return
        except OSError:  # the listener was closed: the server is stopping
            return
        try:
            sockets.keep_alive(conn)
        except OSError:  # reset already
            conn.close()
            return
        if len(self._greeting) >= MAX_GREETING:
            self._drop(next(iter(self._greeting)))
        conn.setblocking(False)
        self._greeting[conn] = (bytearray(), time.monotonic() + GREETING_SECONDS)
        self._selector.register(conn, selectors.EVENT_READ, None)

    def _drop(self, conn: socket.socket) -> None:
        self._greeting.pop(conn, None)
        try:
            self._selector.unregister(conn)
        except (KeyError, ValueError):
            pass
        conn.close()

    def _expire(self, now: float) -> None:
        late = [conn for conn, (_, deadline) in self._greeting.items() if deadline <= now]
        for conn in late:
            self._drop(conn)

    def _read_greeting(self, conn: socket.socket) -> None:
        hello, _ = self._greeting[conn]
        try:
            piece = conn.recv(HELLO.size - len(hello))
        except BlockingIOError:
            return
        except OSError:
            piece = b""
        if not piece:
            self._drop(conn)
            return
        hello += piece
        if len(hello) < HELLO.size:
            return
        self._greeting.pop(conn)
        self._selector.unregister(conn)
        magic, ticket = HELLO.unpack(hello)
        try:
            conn.setblocking(True)
            conn.settimeout(self._timeout)
            if magic == lane.MAGIC and self._calls is not None:
                with self._lanes_lock:
                    if len(self._lanes) >= MAX_LANES:  # the client keeps to gRPC instead
                        conn.close()
                        return
                    self._lanes.add(conn)
                threading.Thread(target=self._serve_lane, args=(conn, ticket),
                                 name="tw-lane", daemon=True).start()
                return  # the lane's thread owns the connection now
            if magic == MAGIC:
                self._pool.submit(self._serve_parked, conn, ticket)
                return
        except (OSError, RuntimeError):  # RuntimeError: the pool is shut down
            pass
        conn.close()

    def _serve_parked(self, conn: socket.socket, ticket: bytes) -> None:
        with conn:
            try:
                envelope = self._outbox.take(ticket)
            except errors.NotFoundError:
                return
            try:
                conn.sendall(envelope.head)
                for blob in envelope.blobs:
                    conn.sendall(blob)
                    pad = -blob.size % 8
                    if pad:
                        conn.sendall(bytes(pad))
            except OSError:
                pass  # the client went away; a parked entry is gone with its one use

    def _serve_lane(self, conn: socket.socket, digest: bytes) -> None:
        try:
            self._calls(conn, digest)
        finally:
            with self._lanes_lock:
                self._lanes.discard(conn)

    def close(self) -> None:
        self._closing = True
        for listener in self._listeners:
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        try:
            self._wake_w.send(b"x")  # wakes the greeter's select
        except OSError:
            pass
        if self._thread.is_alive():
            self._thread.join(5)
        self._wake_r.close()
        self._wake_w.close()
        with self._lanes_lock:
            lanes = list(self._lanes)
        for conn in lanes:  # their clients see the connection end, as with a stopped server
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._pool.shutdown(wait=False, cancel_futures=True)


def fetch(host: str, port: int, ticket: bytes, timeout: float) -> wire.Message:
    """The reply parked under `ticket` at ``host:port``; `LaneUnavailableError` if the lane cannot
    be reached or sends nothing within `STALL_SECONDS` (the caller then fetches over gRPC; the
    server takes the ticket only when it starts to send), `DataLossError` if the reply breaks
    off."""
    deadline = time.monotonic() + timeout
    try:
        conn = socket.create_connection((_host(host), port),
                                        timeout=min(timeout, STALL_SECONDS))
    except OSError as exc:
        raise LaneUnavailableError(str(exc)) from None
    with conn:
        decoder = wire.StreamDecoder()
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sockets.keep_alive(conn)
            conn.sendall(HELLO.pack(MAGIC, ticket))
            first = decoder.next_buffer()
            try:
                n = conn.recv_into(first)
            except TimeoutError:
                raise LaneUnavailableError(f"no reply within {STALL_SECONDS} s") from None
            if n <= 0:  # closed without a byte: an unknown ticket, or a lane that gave up
                raise LaneUnavailableError("the lane closed without a reply")
            decoder.advance(n)
            conn.settimeout(max(0.001, deadline - time.monotonic()))
            decoder.fill(conn.recv_into)
        except OSError as exc:
            raise errors.DataLossError(None, None, f"Bulk transfer from {host}:{port} broke "
                                       f"off: {exc}") from None
    return decoder.finish()
