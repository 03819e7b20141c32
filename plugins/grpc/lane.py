"""The call lane: the services' calls over one plain TCP connection per peer, beside gRPC.

A gRPC call from Python costs about half a millisecond between two processes of one machine,
ten times a loopback round trip; a small distributed step makes several in a row. The lane
carries the same requests and replies (the same wire envelopes, to the same service methods)
over a persistent socket instead, for plaintext servers only (a TLS server opens no lane, so its
traffic stays encrypted).

Contract: the server end runs on the bulk lane's listener (`bulk.BulkServer`). A client
connects, sends ``b"TWC2"`` and the 16-byte `token_digest` of the cluster's token; a server
whose token digest differs closes the connection without a byte, else it answers ``b"TWC2"``.
Then each side writes frames: a `FRAME` header (call id, payload length, kind, method-name
length), the method name (requests only, ``/<service>/<Method>``), and the payload, one wire
envelope of at most `MAX_PAYLOAD` bytes (a large one is buffered as it arrives, not when
declared). A reply (kind `REPLY`) or error (kind `ERROR`, body
``{"code", "message", "node", "op"}``) carries its request's call id; calls may be answered in
any order. A malformed frame closes the connection. Requests run on the server's handler pool,
except those with an asynchronous form (RunGraph, RecvTensor): these start on the connection's
reader and answer from their callback, so no thread waits for a step or a tensor. When the
connection ends, the calls it has not answered are cancelled (their `Cancellation`). While a
connection has calls the server has not answered, the server's `Heartbeat` writes a `PING`
frame on it every `HEARTBEAT_SECONDS` (from a thread of its own, so a reader busy starting a
step does not silence it).

`Lane` is the client end: `call` blocks for the reply with a deadline, reading the connection
itself while it waits (the reader thread steps aside), so its reply needs no hand-off between
threads; `start` calls back exactly once (with the reply payload or an `OpError`), on the given
pool, or, for a quick callback, on whichever thread reads the reply. When the connection
breaks, every call in flight fails with the peer's `UnavailableError` and the lane is `broken`
for good (the peer opens a new one). A call whose deadline passes fails with `UnavailableError`
too, as a gRPC call's would. The lane *stalls* when, with calls in flight, no byte moves between
the ends for `STALL_SECONDS` (none arrives, heartbeats included, and the client's writer hands
none to the connection), or a frame breaks off in the middle for as long: the client then
breaks the lane. A call that broke after it was sent fails with `LaneBrokenError`, an
`UnavailableError` (the server may have run it or not: the caller decides whether to send it
again). Neither end ever blocks on a write (`_Writer`), so readers that run callbacks cannot
wait on each other. Both ends' sockets use TCP keepalive (`sockets.keep_alive`), so a peer
that vanished without a word is noticed even by a lane with no call in flight.

For tests only, ``TENSORWEAVE_TEST_LANE_STALL=ListDevices,RunStep`` (`stalled_methods`) makes a
server's lanes answer those methods with the first half of the reply frame and then fall silent
with the connection open, as a lane whose network stops in the middle of a call: the requests
that come after it are read and dropped, neither run nor answered, and the replies of those
that were running are dropped (each noted on stderr).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import os
import select
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Hashable, Mapping
from concurrent.futures import Executor
from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.distributed.transport import Cancellation
from tensorweave.plugins.grpc import sockets, wire

MAGIC = b"TWC2"  # (TWC1 lanes had no heartbeat: their servers refuse this greeting)
FRAME = struct.Struct("<QQBBH4x")  # call id, payload bytes, kind, reserved, method name bytes
REQUEST, REPLY, ERROR, PING = 0, 1, 2, 3
HEARTBEAT_SECONDS = 1.0  # how often a server tells a client with calls in flight it is there
# No byte for this long with calls in flight is a stall: well above the heartbeat (a loaded
# server's heartbeat may come late) and well below the operation timeout (60 s by default)
STALL_SECONDS = 5.0
MAX_PAYLOAD = wire.CHUNK_BYTES + 4096
MAX_NAME = 128
_SCAN_MS = 250  # how often the reader looks for calls past their deadline
_PREALLOCATE = 64 << 10  # payloads up to this are read in place; larger ones grow as they come
_PIECE = 256 << 10  # a writer's drain sends at most this much at a time

# handlers get the request, its `Cancellation` and the connection (a key for its memory cap)
Handler = Callable[[bytearray, Cancellation, Hashable], bytes]
Responder = Callable[[errors.OpError | None, bytes | None], None]
InlineHandler = Callable[[bytearray, Responder, Cancellation, Hashable], None]
Callback = Callable[[errors.OpError | None, Any], None]


def enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this process uses the lane: ``TENSORWEAVE_CALL_LANE=0`` turns it off (servers
    then offer none, clients ask for none), so every call takes gRPC."""
    if not (hasattr(socket, "MSG_DONTWAIT") and hasattr(select, "poll")):
        return False  # the lane's writers and readers need both (not on Windows)
    return (os.environ if environ is None else environ).get("TENSORWEAVE_CALL_LANE", "1") != "0"


def _nothing() -> None:
    pass


def token_digest(token: str) -> bytes:
    """The 16 bytes a client presents for the shared token (empty: no token)."""
    return hashlib.sha256(token.encode()).digest()[:16]


class _ClosedError(Exception):
    """The connection ended (or carried something that is not a frame)."""


class _StalledError(_ClosedError):
    """No byte moved for `STALL_SECONDS` with calls in flight."""


class LaneClosedError(Exception):
    """The lane broke before the call was sent: nothing reached the server; use gRPC."""


class LaneBrokenError(errors.UnavailableError):
    """The lane broke (or stalled) after the call was sent: the server may have run it or
    not."""


def stalled_methods(environ: Mapping[str, str] | None = None) -> frozenset[bytes]:
    """The method names (``b"RunStep"``) whose replies a server's lanes stall in the middle of
    the frame: ``TENSORWEAVE_TEST_LANE_STALL``, comma-separated, for tests (empty: none)."""
    value = (os.environ if environ is None else environ).get("TENSORWEAVE_TEST_LANE_STALL", "")
    return frozenset(name.strip().encode() for name in value.split(",") if name.strip())


def _note(what: str) -> None:
    """Tell the stall hook's test what it did (on stderr: the hook is for tests only)."""
    sys.stderr.write(f"TENSORWEAVE_TEST_LANE_STALL: {what}\n")
    sys.stderr.flush()


Reader = Callable[[memoryview], int]  # ``recv_into``: bytes read into the view, 0 at the end


def _recv_into(read: Reader, buffer: bytearray) -> bytearray:
    view = memoryview(buffer)
    got, n = 0, len(buffer)
    while got < n:
        k = read(view[got:got + min(n - got, wire.CHUNK_BYTES)])
        if not k:
            raise _ClosedError("connection closed")
        got += k
    return buffer


def _read_frame(conn: socket.socket, read: Reader | None = None,
                ) -> tuple[int, int, bytes, bytearray]:
    """(call id, kind, method name, payload) of the next frame, read with `read` (default: the
    connection's blocking ``recv_into``)."""
    read = conn.recv_into if read is None else read
    call_id, length, kind, reserved, name_len = FRAME.unpack(_recv_into(read,
                                                                         bytearray(FRAME.size)))
    if kind > PING or reserved or name_len > MAX_NAME or length > MAX_PAYLOAD \
            or (kind == REQUEST) != (name_len > 0) or (kind == PING and length):
        raise _ClosedError("malformed frame")
    name = bytes(_recv_into(read, bytearray(name_len))) if name_len else b""
    if length <= _PREALLOCATE:
        return call_id, kind, name, _recv_into(read, bytearray(length))
    payload = bytearray()  # a large payload grows as its bytes arrive, not when declared
    piece = memoryview(bytearray(_PREALLOCATE))
    while len(payload) < length:
        k = read(piece[:min(length - len(payload), _PREALLOCATE)])
        if not k:
            raise _ClosedError("connection closed")
        payload += piece[:k]
    return call_id, kind, name, payload


class _Writer:
    """Writes frames onto one connection, in order, without ever blocking the caller: what the
    socket does not take at once is queued and written by a drain thread of the connection's
    own. So a lane's reader, which runs callbacks and inline handlers, never waits for a peer
    whose own reader might be waiting for it."""

    def __init__(self, conn: socket.socket, name: str) -> None:
        self._conn = conn
        self._name = name
        self._cond = threading.Condition()
        self._queue: deque[memoryview] = deque()
        self._draining = False
        self._thread: threading.Thread | None = None
        self._silent = False
        self.failed: str | None = None
        self.moved = time.monotonic()  # when the connection last took bytes from this writer

    def frame(self, call_id: int, kind: int, name: bytes, payload: bytes) -> None:
        """Queue one frame; raises `OSError` if the connection failed."""
        self._write([FRAME.pack(call_id, len(payload), kind, 0, len(name)) + name, payload])

    def go_silent(self, call_id: int, payload: bytes) -> None:
        """Write the first half of `payload`'s reply frame, then drop every later frame while
        the connection stays open (the `stalled_methods` hook)."""
        head = FRAME.pack(call_id, len(payload), REPLY, 0, 0)
        with self._cond:  # (re-entrant) no other frame, a heartbeat's, may follow the half
            self._write([head, payload[:len(payload) // 2]])
            self._silent = True

    @property
    def silent(self) -> bool:
        """Whether `go_silent` was called: the connection carries nothing more."""
        return self._silent

    def _write(self, parts: list[bytes]) -> None:
        with self._cond:
            if self.failed is not None:
                raise OSError(self.failed)
            if self._silent:
                return
            if not self._draining:
                try:
                    sent = self._conn.sendmsg(parts, [], socket.MSG_DONTWAIT)
                except BlockingIOError:
                    sent = 0
                except OSError as exc:
                    self.failed = f"connection lost: {exc}"
                    raise
                if sent:
                    self.moved = time.monotonic()
                for part in parts:
                    if sent >= len(part):
                        sent -= len(part)
                        continue
                    self._queue.append(memoryview(part)[sent:])
                    sent = 0
                if not self._queue:
                    return
                self._draining = True
                if self._thread is None:
                    self._thread = threading.Thread(target=self._drain, name=self._name,
                                                    daemon=True)
                    self._thread.start()
            else:
                self._queue.extend(memoryview(part) for part in parts)
            self._cond.notify()

    def _drain(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    if self.failed is not None:
                        return
                    self._draining = False
                    self._cond.wait()
                data = self._queue.popleft()
            try:
                for at in range(0, len(data), _PIECE):  # (in pieces: `moved` is progress)
                    self._conn.sendall(data[at:at + _PIECE])
                    self.moved = time.monotonic()
            except OSError as exc:
                self.close(f"connection lost: {exc}")
                return

    def close(self, reason: str) -> None:
        with self._cond:
            if self.failed is None:
                self.failed = reason
            self._queue.clear()
            self._cond.notify()


def error_payload(error: errors.OpError) -> bytes:
    node = error.node_def if isinstance(error.node_def, str) else None
    op = error.op if isinstance(error.op, str) else None
    return wire.encode({"code": error.error_code, "message": error.message, "node": node,
                        "op": op}).frame()


def _error_from_payload(payload: bytearray) -> errors.OpError:
    body = wire.decode(payload).body
    code = body.get("code") if isinstance(body, dict) else None
    if not isinstance(code, int) or not isinstance(body.get("message"), str):
        return errors.InternalError(None, None, "Malformed error reply on the call lane")
    cls = errors.exception_type_from_error_code(code)
    return cls(body.get("node") or None, body.get("op") or None, body["message"])


# -- server -------------------------------------------------------------------------------------


class Heartbeat:
    """One thread that, every `interval` seconds, calls each registered beat: a server's lanes
    each register one that writes a `PING` while the connection has calls unanswered."""

    def __init__(self, interval: float = HEARTBEAT_SECONDS) -> None:
        self._interval = interval
        self._beats: dict[int, Callable[[], None]] = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, beat: Callable[[], None]) -> Callable[[], None]:
        """Register `beat` (which must not block); returns the function that removes it."""
        key = next(self._ids)
        with self._lock:
            self._beats[key] = beat
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._run, name="tw-lane-heartbeat",
                                                daemon=True)
                self._thread.start()

        def remove() -> None:
            with self._lock:
                self._beats.pop(key, None)

        return remove

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            with self._lock:
                beats = list(self._beats.values())
            for beat in beats:
                beat()

    def close(self) -> None:
        self._stop.set()


def serve(conn: socket.socket, digest: bytes, expected: bytes, methods: Mapping[bytes, Handler],
          pool: Executor, inline: Mapping[bytes, InlineHandler], heartbeat: Heartbeat,
          stalled: Collection[bytes] = ()) -> None:
    """Serve the calls of one client on `conn` (its greeting's magic already read, `digest` the
    token digest it presented) until it closes; closes `conn`. A request for one of `methods`
    runs on `pool`; one for an `inline` handler starts on this thread, which must not block,
    and is answered by the handler's responder, from whatever thread calls it (once). Each
    handler gets its call's `Cancellation`, cancelled if the connection ends before it
    answered, and `conn` (the key of the connection's memory budget). `heartbeat` pings the
    client while calls are unanswered; the replies of the methods named in `stalled`
    (`stalled_methods`) stall the connection instead."""
    writer = _Writer(conn, "tw-lane-writer")
    live: dict[int, Cancellation] = {}  # calls not answered yet
    live_lock = threading.Lock()

    def beat() -> None:
        if live:
            try:
                writer.frame(0, PING, b"", b"")
            except OSError:
                pass  # the connection is ending: `serve` is about to return

    def responder(call_id: int, name: bytes) -> Responder:
        stall = name.rpartition(b"/")[2] in stalled

        def respond(error: errors.OpError | None, reply: bytes | None) -> None:
            with live_lock:
                cancellation = live.pop(call_id, None)
            if cancellation is not None:
                cancellation.finish()
            kind, payload = (REPLY, reply) if error is None else (ERROR, error_payload(error))
            try:
                if writer.silent:
                    _note(f"dropped the reply of {name.decode()}")
                elif stall:
                    writer.go_silent(call_id, payload)
                    _note(f"stalled the reply of {name.decode()}")
                else:
                    writer.frame(call_id, kind, b"", payload)
            except OSError:
                pass  # the client went away; its calls failed on its side

        return respond

    def begin(call_id: int) -> Cancellation:
        cancellation = Cancellation()
        with live_lock:
            live[call_id] = cancellation
        return cancellation

    def handle(call_id: int, fn: Handler | None, name: bytes, payload: bytearray,
               cancellation: Cancellation) -> None:
        respond = responder(call_id, name)
        try:
            if fn is None:
                raise errors.UnimplementedError(None, None, f"Method {name!r} is not served")
            reply = fn(payload, cancellation, conn)
        except Exception as exc:  # noqa: BLE001 - every failure becomes an error reply
            respond(_op_error(exc), None)
            return
        respond(None, reply)

    with conn:
        remove_beat = heartbeat.add(beat)
        try:
            if not hmac.compare_digest(digest, expected):
                return
            conn.settimeout(None)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.sendall(MAGIC)
            while True:
                call_id, kind, name, payload = _read_frame(conn)
                if kind != REQUEST:
                    return
                if writer.silent:  # (the stall hook: as if the request never arrived)
                    continue
                started = inline.get(name)
                cancellation = begin(call_id)
                if started is None:
                    pool.submit(handle, call_id, methods.get(name), name, payload,
                                cancellation)
                    continue
                respond = responder(call_id, name)
                try:
                    started(payload, respond, cancellation, conn)
                except Exception as exc:  # noqa: BLE001 - raised before it answered
                    respond(_op_error(exc), None)
        except (OSError, _ClosedError, RuntimeError):  # RuntimeError: the pool is shut down
            return
        finally:
            remove_beat()
            writer.close("the connection is closed")
            with live_lock:  # the client is gone: nobody waits for these any more
                orphans = list(live.values())
                live.clear()
            for cancellation in orphans:
                cancellation.cancel()


def _op_error(exc: Exception) -> errors.OpError:
    if isinstance(exc, errors.OpError):
        return exc
    return errors.InternalError(None, None, f"{type(exc).__name__}: {exc}")


# -- client -------------------------------------------------------------------------------------


class _Call:
    __slots__ = ("callback", "deadline", "done", "error", "inline", "reply")

    def __init__(self, callback: Callback | None, deadline: float, inline: bool = False) -> None:
        self.callback = callback
        self.deadline = deadline
        self.inline = inline
        self.done = threading.Event() if callback is None else None
        self.error: errors.OpError | None = None
        self.reply: Any = None


class Lane:
    """The client end of one connection to a peer's call lane."""

    def __init__(self, host: str, port: int, digest: bytes,
                 unavailable: Callable[[str], errors.OpError], pool: Executor | None,
                 connect_timeout: float) -> None:
        """Connect and greet; raises `OSError` if the lane cannot be opened."""
        self._unavailable = unavailable
        self._pool = pool
        conn = socket.create_connection((host, port), timeout=connect_timeout)
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sockets.keep_alive(conn)
            conn.sendall(MAGIC + digest)
            if bytes(_recv_into(conn.recv_into, bytearray(len(MAGIC)))) != MAGIC:
                raise OSError("the server refused the call lane")
            conn.settimeout(None)
        except (OSError, _ClosedError) as exc:
            conn.close()
            raise OSError(f"cannot open the call lane: {exc}") from None
        self._conn = conn
        self._writer = _Writer(conn, "tw-lane-writer")
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._calls: dict[int, _Call] = {}
        self._next_scan = 0.0
        self._heard = time.monotonic()  # when a byte last came (or a first call began)
        self.broken: str | None = None
        # The read role: one thread at a time reads frames. A thread blocked in `call` takes it
        # (the reader thread steps aside when woken through the pipe), so its reply needs no
        # hand-off from the reader to it.
        self._role = threading.Condition()
        self._reader_polling = False
        self._caller_reading = False
        self._wanting = 0  # calling threads waiting for the role
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._caller_poller = select.poll()
        self._caller_poller.register(conn, select.POLLIN)
        threading.Thread(target=self._read, name="tw-lane-reader", daemon=True).start()

    def _begin(self, callback: Callback | None, timeout: float,
               inline: bool = False) -> tuple[int, _Call]:
        call = _Call(callback, time.monotonic() + timeout, inline)
        with self._lock:
            if self.broken is not None:
                raise LaneClosedError(self.broken)
            call_id = next(self._ids)
            if not self._calls:  # the stall clock starts now, not when the lane went quiet
                self._heard = time.monotonic()
            self._calls[call_id] = call
        return call_id, call

    def _send(self, call_id: int, name: bytes, request: bytes) -> None:
        try:
            self._writer.frame(call_id, REQUEST, name, request)
        except OSError as exc:
            self._break(f"connection lost: {exc}")

    def call(self, name: bytes, request: bytes, timeout: float) -> bytearray:
        """The reply payload of ``name(request)``; raises the call's `OpError` (`LaneClosedError`
        if the lane was broken before, `LaneBrokenError` if it broke or stalled after the call
        was sent)."""
        call_id, call = self._begin(None, timeout)
        self._send(call_id, name, request)
        if not self._await(call):
            with self._lock:
                expired = self._calls.pop(call_id, None) is not None
            if expired:
                raise self._unavailable("Deadline Exceeded")
            call.done.wait()
        if call.error is not None:
            raise call.error
        return call.reply

    def _await(self, call: _Call) -> bool:
        """Wait for `call`'s reply until its deadline, reading the connection on this thread
        once no other thread reads it; True once the reply (or the lane's failure) came."""
        with self._role:
            self._wanting += 1
            try:
                while not call.done.is_set():
                    if not (self._reader_polling or self._caller_reading):
                        self._caller_reading = True
                        break
                    if self._reader_polling:
                        try:
                            os.write(self._wake_w, b"w")
                        except BlockingIOError:
                            pass  # the pipe is full: the reader is awake already
                    remaining = call.deadline - time.monotonic()
                    if remaining <= 0:
                        return False
                    self._role.wait(remaining)
                else:
                    return True
            finally:
                self._wanting -= 1
                if not self._wanting:  # the reader thread may take the role back
                    self._role.notify_all()
        try:
            while not call.done.is_set():
                remaining = call.deadline - time.monotonic()
                if remaining <= 0:
                    return False
                if self._caller_poller.poll(min(remaining * 1000, _SCAN_MS)):
                    self._take_frame()
                    if self._wanting:  # their replies may have come: let them look
                        with self._role:
                            self._role.notify_all()
                elif self._calls:
                    self._watch()
        except (OSError, _ClosedError, ValueError) as exc:
            self._break(_lost(exc))  # (which answers `call`)
        finally:
            with self._role:
                self._caller_reading = False
                self._role.notify_all()
        return True

    def start(self, name: bytes, request: bytes, timeout: float, callback: Callback | None,
              inline: bool = False) -> Callable[[], None]:
        """Start ``name(request)``; `callback(error, payload)` runs exactly once, on the pool
        (on the lane's reader if `inline`: for a callback that is quick and never blocks).
        Returns a function that cancels the call (its callback then gets `CancelledError`).
        Without a callback the call is fire-and-forget: its reply is dropped."""
        if callback is None:
            with self._lock:
                if self.broken is not None:
                    raise LaneClosedError(self.broken)
                call_id = next(self._ids)
            self._send(call_id, name, request)
            return _nothing
        call_id, call = self._begin(callback, timeout, inline)
        self._send(call_id, name, request)

        def cancel() -> None:
            self._finish(call_id, errors.CancelledError(
                None, None, f"Call to {name.decode()} was cancelled"), None)

        return cancel

    def _finish(self, call_id: int, error: errors.OpError | None, reply: Any) -> None:
        with self._lock:
            call = self._calls.pop(call_id, None)
        if call is not None:  # else finished already (cancelled, expired, fire-and-forget)
            self._deliver(call, error, reply)

    def _deliver(self, call: _Call, error: errors.OpError | None, reply: Any) -> None:
        call.error, call.reply = error, reply
        if call.callback is None:
            call.done.set()
        elif self._pool is None or call.inline:
            try:
                call.callback(error, reply)
            except Exception:  # noqa: BLE001 - as on a pool: the reader must live on
                pass
        else:
            try:  # keep the reader free of the caller's work
                self._pool.submit(call.callback, error, reply)
            except RuntimeError:  # the pool is shut down: the process is stopping
                call.callback(error, reply)

    def _watch(self) -> None:
        """A few times a second, with calls in flight: fail the calls with a callback whose
        deadline passed, and raise `_StalledError` when no byte moved for `STALL_SECONDS` (a
        blocking `call` watches its own deadline)."""
        now = time.monotonic()
        if now < self._next_scan:
            return
        self._next_scan = now + _SCAN_MS / 1000
        with self._lock:
            late = [i for i, c in self._calls.items()
                    if c.callback is not None and c.deadline <= now]
        for call_id in late:
            self._finish(call_id, self._unavailable("Deadline Exceeded"), None)
        quiet = now - max(self._heard, self._writer.moved)
        if self._calls and quiet > STALL_SECONDS and not self._readable(0):
            raise _StalledError(f"the call lane stalled: no byte moved for {quiet:.1f} s with "
                                "calls in flight")

    def _readable(self, timeout: float) -> bool:
        poller = select.poll()  # (one of its own: the reader and a caller may both ask)
        poller.register(self._conn, select.POLLIN)
        return bool(poller.poll(timeout * 1000))

    def _recv(self, view: memoryview) -> int:
        """``recv_into`` that waits at most `STALL_SECONDS` for the next bytes of a frame."""
        while True:
            try:
                n = self._conn.recv_into(view, 0, socket.MSG_DONTWAIT)
            except BlockingIOError:
                if not self._readable(STALL_SECONDS):
                    raise _StalledError(f"the call lane stalled: a frame broke off for "
                                        f"{STALL_SECONDS:.0f} s") from None
                continue
            self._heard = time.monotonic()
            return n

    def _take_frame(self) -> None:
        """Read the next frame and finish its call (by the holder of the read role)."""
        call_id, kind, _, payload = _read_frame(self._conn, self._recv)
        if kind == REQUEST:
            raise _ClosedError("the server sent a request")
        if kind == PING:
            pass  # the server is there (`_recv` noted it)
        elif kind == ERROR:
            try:
                error = _error_from_payload(payload)
            except errors.OpError as exc:
                error = exc
            self._finish(call_id, error, None)
        else:
            self._finish(call_id, None, payload)
        if self._calls:
            self._watch()

    def _read(self) -> None:
        """The reader thread: holds the read role whenever no calling thread wants it."""
        poller = select.poll()
        poller.register(self._conn, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        try:
            while True:
                with self._role:
                    while (self._wanting or self._caller_reading) and self.broken is None:
                        self._role.wait()
                    if self.broken is not None:
                        return
                    self._reader_polling = True
                try:
                    ready = [fd for fd, _ in poller.poll(_SCAN_MS)]
                    if self._wake_r in ready:
                        os.read(self._wake_r, 4096)
                    if any(fd != self._wake_r for fd in ready):
                        self._take_frame()
                    elif self._calls:  # idle: a moment to look for late calls and stalls
                        self._watch()
                finally:
                    with self._role:
                        self._reader_polling = False
                        if self._wanting:
                            self._role.notify_all()
        except (OSError, _ClosedError, ValueError) as exc:
            self._break(_lost(exc))
        finally:
            with self._role:  # (no caller writes to the pipe unless the reader polls)
                os.close(self._wake_r)
                os.close(self._wake_w)

    def _break(self, reason: str) -> None:
        with self._lock:
            if self.broken is None:
                self.broken = reason
            pending, self._calls = list(self._calls.values()), {}
        with self._role:
            self._role.notify_all()  # the reader thread, if it waits for the role, ends
        for call in pending:
            self._deliver(call, LaneBrokenError(None, None, self._unavailable(reason).message),
                          None)
        self._writer.close(reason)
        try:
            self._conn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._conn.close()

    def close(self) -> None:
        self._break("closed")


def _lost(exc: BaseException) -> str:
    """Why the lane broke, for its calls' errors."""
    return str(exc) if isinstance(exc, _StalledError) else f"connection lost: {exc}"
