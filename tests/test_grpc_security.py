"""Security of the gRPC transport: hostile bytes get error statuses and the server keeps
serving; the shared token; TLS with a self-signed certificate; mutual TLS; binding exactly the
host given; servers on an address that is not loopback refuse to start unauthenticated."""

from __future__ import annotations

import os
import shutil
import socket
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.plugins.grpc import wire
from tensorweave.plugins.grpc.rpc import AUTH_KEY, MAX_MESSAGE_BYTES, Security, is_loopback
from tensorweave.train.local_cluster import READY_MARKER, LocalCluster, free_ports
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


def signed_by_ca(directory: Path) -> dict[str, Path]:
    """A CA, and a certificate it signed for each of "server" and "client" (with keys)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is not installed: cannot make a test certificate")
    files = {"ca": directory / "ca.pem", "ca_key": directory / "ca.key"}

    def run(*args: str) -> None:
        subprocess.run([openssl, *args], check=True, capture_output=True, timeout=60)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-keyout",
        str(files["ca_key"]), "-out", str(files["ca"]), "-subj", "/CN=tensorweave test CA")
    san = directory / "san.ext"
    san.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for who in ("server", "client"):
        cert, key, csr = (directory / f"{who}.{ext}" for ext in ("pem", "key", "csr"))
        run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr),
            "-subj", "/CN=localhost")
        run("x509", "-req", "-in", str(csr), "-CA", str(files["ca"]), "-CAkey",
            str(files["ca_key"]), "-CAcreateserial", "-days", "1", "-out", str(cert),
            "-extfile", str(san))
        files[who], files[f"{who}_key"] = cert, key
    return files


def test_mutual_tls_accepts_only_clients_with_a_certificate_of_the_ca(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pki = signed_by_ca(tmp_path)
    monkeypatch.delenv("TENSORWEAVE_AUTH_TOKEN", raising=False)
    server_env = {"TENSORWEAVE_TLS_CERT": str(pki["server"]),
                  "TENSORWEAVE_TLS_KEY": str(pki["server_key"]),
                  "TENSORWEAVE_TLS_ROOT_CA": str(pki["ca"])}
    with LocalCluster({"ps": 1, "worker": 1}, env=server_env,
                      extra_args=["--tls-client-ca", str(pki["ca"])]) as cluster:
        with tf.device("/job:ps/task:0"):
            x = tf.placeholder(tf.float32, name="mtls_x")
            v = x * 2.0
        with tf.device("/job:worker/task:0"):
            y = v + 1.0
        monkeypatch.setenv("TENSORWEAVE_TLS_ROOT_CA", str(pki["ca"]))
        with pytest.raises(tf.errors.UnavailableError):  # TLS, but no client certificate
            tf.Session(cluster.target("worker", 0))
        (tmp_path / "other").mkdir()
        other = signed_by_ca(tmp_path / "other")
        monkeypatch.setenv("TENSORWEAVE_TLS_CERT", str(other["client"]))  # another CA's
        monkeypatch.setenv("TENSORWEAVE_TLS_KEY", str(other["client_key"]))
        with pytest.raises(tf.errors.UnavailableError):
            tf.Session(cluster.target("worker", 0))
        monkeypatch.setenv("TENSORWEAVE_TLS_CERT", str(pki["client"]))
        monkeypatch.setenv("TENSORWEAVE_TLS_KEY", str(pki["client_key"]))
        with tf.Session(cluster.target("worker", 0)) as sess:  # client -> worker -> ps, mTLS
            assert sess.run(y, {x: 20.0}) == 41.0
    assert Security.resolve("", str(pki["server"]), str(pki["server_key"]),
                            tls_client_ca=str(pki["ca"]), environ={}).mutual_tls


def public_address() -> str | None:
    """An address of this machine that is not loopback and can be bound, if there is one."""
    hostname = shutil.which("hostname")
    if hostname is None:
        return None
    found = subprocess.run([hostname, "-I"], capture_output=True, text=True, timeout=10)
    for address in found.stdout.split():
        if ":" in address or is_loopback(address):
            continue
        with socket.socket() as probe:
            try:
                probe.bind((address, 0))
            except OSError:
                continue
        return address
    return None


def serve(host: str, *args: str, env: dict[str, str] | None = None,
          ) -> tuple[int | None, str]:
    """Start ``tensorweave server`` for one task on `host`; (its exit code, or None if it
    started serving (then it is stopped), and its output)."""
    (port,) = free_ports(1)
    cluster = f'{{"w": ["{host}:{port}"]}}'
    environ = {k: v for k, v in os.environ.items()
               if k not in ("TENSORWEAVE_AUTH_TOKEN", "TENSORWEAVE_INSECURE")}
    process = subprocess.Popen(
        [sys.executable, "-m", "tensorweave", "server", "--cluster", cluster, "--job", "w",
         "--task", "0", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**environ, **(env or {})})
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        if READY_MARKER in first:
            assert f"{host}:{port}" in first
            return None, first
        return process.wait(30), first + process.stdout.read()
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(30)


def test_a_server_on_a_public_address_refuses_to_start_unauthenticated() -> None:
    code, output = serve("0.0.0.0")
    assert code == 2
    assert "not a loopback address" in output and "TENSORWEAVE_AUTH_TOKEN" in output
    assert "--insecure" in output and "TENSORWEAVE_INSECURE=1" in output
    address = public_address()
    if address is not None:
        assert serve(address)[0] == 2
        assert serve(address, env={"TENSORWEAVE_AUTH_TOKEN": TOKEN})[0] is None
        assert serve(address, "--insecure")[0] is None
    assert serve("0.0.0.0", env={"TENSORWEAVE_INSECURE": "1"})[0] is None


def test_the_exposure_rule() -> None:
    token = Security(auth_token=TOKEN)
    tls_only = Security(root_ca=b"ca", cert=b"cert", key=b"key")
    mutual = Security(root_ca=b"ca", cert=b"cert", key=b"key", client_ca=b"ca")
    none = Security()
    for host in ("localhost", "127.0.0.1", "127.0.0.2", "::1", "[::1]"):
        none.check_exposure("/job:w/task:0", host, environ={})
    for host in ("0.0.0.0", "", "::", "192.0.2.1", "no-such-host.invalid"):
        for security in (none, tls_only):
            with pytest.raises(ValueError, match="TENSORWEAVE_AUTH_TOKEN"):
                security.check_exposure("/job:w/task:0", host, environ={})
        token.check_exposure("/job:w/task:0", host, environ={})
        mutual.check_exposure("/job:w/task:0", host, environ={})
        none.check_exposure("/job:w/task:0", host, insecure=True, environ={})
        none.check_exposure("/job:w/task:0", host, environ={"TENSORWEAVE_INSECURE": "1"})
        with pytest.raises(ValueError):
            none.check_exposure("/job:w/task:0", host, environ={"TENSORWEAVE_INSECURE": "0"})
    with pytest.raises(ValueError, match="/job:w/replica:0/task:0 on '0.0.0.0'"):
        tf.train.Server({"w": ["0.0.0.0:0"]}, options=ServerOptions(auth_token=""))
    tf.train.Server({"w": ["localhost:0"]}, options=ServerOptions(host="0.0.0.0",
                                                                  auth_token=""),
                    insecure=True).stop()
