"""Security of the gRPC transport: hostile bytes get error statuses and the server keeps
serving; the shared token; TLS with a self-signed certificate; binding exactly the host given."""

from __future__ import annotations

import shutil
import socket
import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.plugins.grpc import wire
from tensorweave.plugins.grpc.rpc import AUTH_KEY, MAX_MESSAGE_BYTES
from tensorweave.train.local_cluster import free_ports
from tensorweave.train.server_lib import ServerOptions

TOKEN = "s3cret-token"
Code = grpc.StatusCode


@pytest.fixture(scope="module")
def server() -> Iterator[tf.train.Server]:
    (port,) = free_ports(1)
    with tf.train.Server({"local": [f"127.0.0.1:{port}"]},
                         options=ServerOptions(auth_token=TOKEN)) as srv:
        yield srv


@pytest.fixture()
def channel(server: tf.train.Server) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.target[len("grpc://"):]) as ch:
        yield ch


def call(channel: grpc.Channel, method: str, request: bytes, token: str | None = TOKEN,
         ) -> bytes:
    metadata = ((AUTH_KEY, token),) if token is not None else None
    return channel.unary_unary(method)(request, timeout=10, metadata=metadata)


def status_of(channel: grpc.Channel, method: str, request: bytes,
              token: str | None = TOKEN) -> tuple[Code, str]:
    with pytest.raises(grpc.RpcError) as info:
        call(channel, method, request, token)
    return info.value.code(), info.value.details()


def still_serves(channel: grpc.Channel) -> None:
    """A correct request (a whole session: create, extend, run, close) still works."""
    reply = wire.decode(call(channel, "/tensorweave.Master/CreateSession",
                             wire.encode({"config": {}}).frame())).body
    handle = reply["session_handle"]
    const = ["c", "Const", [], "", {"value": np.array([1.5, 2.5], np.float32),
                                    "dtype": tf.float32, "_output_types": [tf.float32],
                                    "_output_shapes": [tf.TensorShape([2])]}]
    call(channel, "/tensorweave.Master/ExtendSession",
         wire.encode({"session_handle": handle, "nodes": [const]}).frame())
    out = wire.decode(call(channel, "/tensorweave.Master/RunStep", wire.encode({
        "session_handle": handle, "feeds": {}, "fetches": ["c:0"], "targets": [],
        "collect_stats": False, "timeout": 5.0}).frame())).body
    np.testing.assert_array_equal(out["values"][0], [1.5, 2.5])
    call(channel, "/tensorweave.Master/CloseSession",
         wire.encode({"session_handle": handle}).frame())


def preamble(num_tensors: int, header_len: int, payload: int, version: int = wire.VERSION,
             ) -> bytes:
    return struct.pack("<2sBBIIIQ", b"TW", version, 0, num_tensors, header_len, 0, payload)


GOOD_RUN_GRAPH = wire.encode({"handle": "h", "step_id": 1, "args": {}, "collect_stats": False})

HOSTILE = [
    ("/tensorweave.Worker/RunGraph", b"garbage" * 5, Code.INVALID_ARGUMENT, "bad magic"),
    ("/tensorweave.Worker/RunGraph", b"", Code.INVALID_ARGUMENT, "shorter than"),
    ("/tensorweave.Worker/RunGraph", GOOD_RUN_GRAPH.frame()[:-5], Code.INVALID_ARGUMENT,
     "declares"),
    ("/tensorweave.Worker/RunGraph", preamble(0, 8, 0, version=2) + bytes(8),
     Code.FAILED_PRECONDITION, "version 2"),
    ("/tensorweave.Worker/RunGraph", wire.encode([1, 2]).frame(), Code.INVALID_ARGUMENT,
     "body is a dict"),
    ("/tensorweave.Worker/RunGraph", wire.encode({"handle": 3}).frame(), Code.INVALID_ARGUMENT,
     "field 'handle' must be a string"),
    ("/tensorweave.Worker/RunGraph", wire.encode({"handle": "nope", "step_id": 1, "args": {},
                                                  "collect_stats": False}).frame(),
     Code.ABORTED, "Graph handle is not found"),
    ("/tensorweave.Worker/RunGraph", wire.encode({"handle": "h", "step_id": -4, "args": {},
                                                  "collect_stats": False}).frame(),
     Code.INVALID_ARGUMENT, "step_id"),
    ("/tensorweave.Worker/RunGraph", wire.encode({"handle": "h", "step_id": 1,
                                                  "args": {"0": np.zeros(2)},
                                                  "collect_stats": False}).frame(),
     Code.INVALID_ARGUMENT, "must map integers to tensors"),
    # a float32 [1000] tensor whose payload holds 8 bytes
    ("/tensorweave.Worker/RunGraph", preamble(1, 16, 8) + struct.pack("<BBq", 1, 1, 1000)
     + bytes([wire.T_NONE]) + bytes(5) + bytes(8), Code.INVALID_ARGUMENT, "payload"),
    ("/tensorweave.Worker/RunGraph", preamble(1, 16, 8) + struct.pack("<BBq", 14, 1, 2)
     + bytes([wire.T_NONE]) + bytes(5) + bytes(8), Code.INVALID_ARGUMENT, "dtype code 14"),
    ("/tensorweave.Worker/RecvTensor", wire.encode({"step_id": 1, "key": "a;b"}).frame(),
     Code.INVALID_ARGUMENT, "Invalid rendezvous key"),
    ("/tensorweave.Worker/RegisterGraph", wire.encode({"graph": [["n", "Identity", ["ghost"],
                                                                  "", {}]],
                                                       "protected": []}).frame(),
     Code.INVALID_ARGUMENT, "not an output of a node"),
    ("/tensorweave.Worker/RegisterGraph", wire.encode({"graph": [["n", "NoSuchOp", [],
                                                                  "/job:local/replica:0/task:0"
                                                                  "/device:CPU:0", {}]],
                                                       "protected": []}).frame(),
     Code.NOT_FOUND, "NoSuchOp"),
    ("/tensorweave.Master/RunStep", wire.encode({"session_handle": "forged", "feeds": {},
                                                 "fetches": [], "targets": [],
                                                 "collect_stats": False}).frame(),
     Code.ABORTED, "Session forged is not found"),
    ("/tensorweave.Master/CreateSession", wire.encode({"config": {"allow_soft_placement": 3}})
     .frame(), Code.INVALID_ARGUMENT, "config.allow_soft_placement"),
    ("/tensorweave.Transfer/Fetch", wire.encode({"transfer": 42}).frame(),
     Code.INVALID_ARGUMENT, "16-byte 'transfer' ticket"),
    ("/tensorweave.Transfer/Fetch", wire.encode({"transfer": bytes(16)}).frame(),
     Code.NOT_FOUND, "Transfer 00000000"),
    ("/tensorweave.Worker/NoSuchMethod", GOOD_RUN_GRAPH.frame(), Code.UNIMPLEMENTED, ""),
]


@pytest.mark.parametrize("method, request_bytes, code, message", HOSTILE,
                         ids=[f"{i}-{h[0].rsplit('/', 1)[1]}" for i, h in enumerate(HOSTILE)])
def test_hostile_messages_get_an_error_status_and_the_server_keeps_serving(
        channel: grpc.Channel, method: str, request_bytes: bytes, code: Code,
        message: str) -> None:
    got_code, details = status_of(channel, method, request_bytes)
    assert got_code == code, details
    assert message in (details or "")
    still_serves(channel)


def test_oversized_messages_are_refused(channel: grpc.Channel) -> None:
    code, _ = status_of(channel, "/tensorweave.Worker/RunGraph", bytes(MAX_MESSAGE_BYTES + 1))
    assert code == Code.RESOURCE_EXHAUSTED
    still_serves(channel)


def test_truncated_and_garbage_streams_are_refused(channel: grpc.Channel) -> None:
    stream = channel.stream_unary("/tensorweave.Worker/RunGraphStream")
    metadata = ((AUTH_KEY, TOKEN),)
    big = wire.encode({"handle": "h", "step_id": 1, "collect_stats": False,
                       "args": {0: np.zeros(3 << 20)}})  # 24 MiB: more than one chunk
    chunks = list(big.chunks())
    for bad, code in ((chunks[:-1], Code.DATA_LOSS), ([b"junk" * 10, b"more junk"],
                                                      Code.INVALID_ARGUMENT)):
        with pytest.raises(grpc.RpcError) as info:
            stream(iter(bad), timeout=10, metadata=metadata)
        assert info.value.code() == code
    still_serves(channel)


def test_requests_without_the_right_token_are_unauthenticated(
        channel: grpc.Channel, server: tf.train.Server,
        monkeypatch: pytest.MonkeyPatch) -> None:
    request = wire.encode({"config": {}}).frame()
    for token in (None, "wrong", ""):
        code, details = status_of(channel, "/tensorweave.Master/CreateSession", request, token)
        assert code == Code.UNAUTHENTICATED and "auth token" in details
    code, _ = status_of(channel, "/tensorweave.Master/CreateSession", b"garbage", None)
    assert code == Code.UNAUTHENTICATED  # refused before the bytes are even looked at
    monkeypatch.delenv("TENSORWEAVE_AUTH_TOKEN", raising=False)
    with pytest.raises(tf.errors.UnauthenticatedError):
        tf.Session(server.target)
    monkeypatch.setenv("TENSORWEAVE_AUTH_TOKEN", TOKEN)
    with tf.Session(server.target) as sess:
        assert sess.run(tf.constant(2.0) * 3.0) == 6.0
    still_serves(channel)


def bulk_reply(port: int, greeting: bytes) -> bytes:
    """What the bulk lane sends back to a connection that says `greeting`."""
    data = b""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(greeting)
            conn.shutdown(socket.SHUT_WR)
            while chunk := conn.recv(100):
                data += chunk
    except OSError:
        pass  # closed or reset by the server before we were done talking
    return data


def test_hostile_bulk_lane_connections_get_nothing(server: tf.train.Server,
                                                 channel: grpc.Channel) -> None:
    port = server._impl.bulk.port
    for greeting in (b"", b"TWB1", b"GET / HTTP/1.1\r\n\r\n", b"TWB1" + bytes(16),
                     b"XXXX" + bytes(16), bytes(1000)):
        assert bulk_reply(port, greeting) == b""
    still_serves(channel)


def test_servers_bind_exactly_the_host_given(server: tf.train.Server) -> None:
    for port in (int(server.target.rsplit(":", 1)[1]), server._impl.bulk.port):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        with pytest.raises(OSError):  # another loopback address of this machine: nothing there
            socket.create_connection(("127.0.0.2", port), timeout=2).close()


def self_signed(directory: Path) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is not installed: cannot make a test certificate")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def test_tls_with_a_self_signed_certificate(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    cert, key = self_signed(tmp_path)
    ps_port, worker_port = free_ports(2)
    cluster = {"ps": [f"localhost:{ps_port}"], "worker": [f"localhost:{worker_port}"]}
    options = ServerOptions(tls_cert=str(cert), tls_key=str(key))
    monkeypatch.delenv("TENSORWEAVE_AUTH_TOKEN", raising=False)
    with tf.train.Server(cluster, "ps", 0, options=options), \
            tf.train.Server(cluster, "worker", 0, options=options) as worker:
        with tf.device("/job:ps/task:0"):
            x = tf.placeholder(tf.float32, name="tls_x")
            v = x * 2.0
        with tf.device("/job:worker/task:0"):
            y = v + 1.0
        with pytest.raises(tf.errors.UnavailableError):  # a plaintext client gets nowhere
            tf.Session(worker.target)
        monkeypatch.setenv("TENSORWEAVE_TLS_ROOT_CA", str(cert))
        assert worker._impl.bulk is None  # large replies stay inside TLS too
        big = np.arange(3 << 20, dtype=np.float32)  # 12 MiB: streamed in chunks
        with tf.Session(worker.target) as sess:  # client -> worker -> ps, all over TLS
            assert sess.run(y, {x: 20.0}) == 41.0
            np.testing.assert_array_equal(sess.run(y, {x: big}), big * 2.0 + 1.0)
