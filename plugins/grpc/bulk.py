"""The bulk lane: large replies over a plain TCP connection, without gRPC's copies.

Contract: a `BulkServer` listens on the server's bind host, on a port of its own next to the
gRPC one (a connection greeted with ``b"TWC1"`` is handed over to the call lane, `lane`). A
reply too large for one gRPC message is parked in the `Outbox` under a random 128-bit ticket,
and the deferred reply names the ticket and the bulk port. The client connects
and sends ``b"TWB1"`` and the ticket; the server takes the parked envelope (once) and writes it
as is -- head, then each tensor's own memory and its padding -- and closes. The client reads it
with `wire.StreamDecoder.fill`, straight into the preallocated arrays, at most
`wire.CHUNK_BYTES` per read. The ticket is the capability: only an authenticated call hands it
out, it works once, and it expires with the outbox entry. A connection with a bad greeting or an
unknown ticket is closed without a byte. When the lane cannot be reached, `fetch` raises
`LaneUnavailableError` and the caller falls back to ``Transfer/Fetch`` over gRPC; TLS servers do not
open the lane at all, so their replies stay encrypted.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from tensorweave.engine import errors
from tensorweave.plugins.grpc import lane, wire
from tensorweave.plugins.grpc.outbox import Outbox

MAGIC = b"TWB1"
HELLO = struct.Struct("<4s16s")
SERVE_THREADS = 8


class LaneUnavailableError(Exception):
    """The bulk lane could not be reached; use gRPC instead."""


def _host(host: str) -> str:
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def _recv_exactly(conn: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        piece = conn.recv(n - len(data))
        if not piece:
            break
        data += piece
    return bytes(data)


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
    with `lane.MAGIC` to `calls` (the call lane), each on a thread of its own."""

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
        self._threads = [threading.Thread(target=self._accept, args=(listener,),
                                          name="tw-bulk-accept", daemon=True)
                         for listener in self._listeners]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:  # the listener was closed: the server is stopping
                return
            try:
                self._pool.submit(self._serve, conn)
            except RuntimeError:
                conn.close()
                return

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(self._timeout)
            hello = _recv_exactly(conn, HELLO.size)
            if len(hello) == HELLO.size:
                magic, ticket = HELLO.unpack(hello)
                if magic == lane.MAGIC and self._calls is not None:
                    with self._lanes_lock:
                        self._lanes.add(conn)
                    threading.Thread(target=self._serve_lane, args=(conn, ticket),
                                     name="tw-lane", daemon=True).start()
                    return  # the lane's thread owns the connection now
                if magic == MAGIC:
                    self._send_parked(conn, ticket)
        except OSError:
            pass  # the client went away; a parked entry is gone with its one use
        conn.close()

    def _send_parked(self, conn: socket.socket, ticket: bytes) -> None:
        try:
            envelope = self._outbox.take(ticket)
        except errors.NotFoundError:
            return
        conn.sendall(envelope.head)
        for blob in envelope.blobs:
            conn.sendall(blob)
            pad = -blob.size % 8
            if pad:
                conn.sendall(bytes(pad))

    def _serve_lane(self, conn: socket.socket, digest: bytes) -> None:
        try:
            self._calls(conn, digest)
        finally:
            with self._lanes_lock:
                self._lanes.discard(conn)

    def close(self) -> None:
        for listener in self._listeners:
            try:
                listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
            except OSError:
                pass
            listener.close()
        for thread in self._threads:
            if thread.is_alive():
                thread.join(5)
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
    be reached, `DataLossError` if the reply breaks off."""
    try:
        conn = socket.create_connection((_host(host), port), timeout=timeout)
    except OSError as exc:
        raise LaneUnavailableError(str(exc)) from None
    with conn:
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.sendall(HELLO.pack(MAGIC, ticket))
            decoder = wire.StreamDecoder()
            decoder.fill(conn.recv_into)
        except OSError as exc:
            raise errors.DataLossError(None, None, f"Bulk transfer from {host}:{port} broke "
                                       f"off: {exc}") from None
    return decoder.finish()
