"""Servers that no client can knock over or slip past (issue 17), against real ``tensorweave
server`` processes on 127.0.0.1: declared-but-unsent tensors cost nothing and the memory caps
name themselves; idle connections to the bulk port neither hold its threads nor delay a fetch;
a step whose client is killed is aborted on every task; a session created right after a task
restarts waits for it; and a few hundred mutated frames per service leave a working cluster."""

from __future__ import annotations

import os
import random
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import grpc
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.plugins.grpc import bulk, lane, wire
from tensorweave.train.local_cluster import LocalCluster
from tests.wait_support import eventually

MIB = 1 << 20
SESSION_CAP = 3 << 29  # 1.5 GiB: the per-connection cap the cluster's servers run with
Code = grpc.StatusCode


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster({"ps": 1, "worker": 1}, host="127.0.0.1",
                      extra_args=["--max-session-bytes", str(SESSION_CAP)]) as local:
        yield local


def address(cluster: LocalCluster, job: str = "worker") -> str:
    return cluster.target(job)[len("grpc://"):]


def connection(cluster: LocalCluster) -> grpc.Channel:
    """A channel with a connection of its own (gRPC shares them between channels otherwise)."""
    return grpc.insecure_channel(address(cluster), options=[("grpc.use_local_subchannel_pool", 1)])


def rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def string_head(count: int) -> bytes:
    """The head of a streamed request declaring one string tensor of `count` empty strings
    (8 bytes of lengths each), without its payload: 48 bytes."""
    table = struct.pack("<BBqQ", wire.STRING_CODE, 1, count, 8 * count)
    body = bytes([wire.T_TENSOR]) + struct.pack("<I", 0)
    header = table + body + bytes(-(len(table) + len(body)) % 8)
    return struct.pack("<2sBBIIIQ", b"TW", wire.VERSION, 0, 1, len(header), 0,
                       8 * count) + header


def held_stream(channel: grpc.Channel, method: str, head: bytes,
                release: threading.Event) -> grpc.Future:
    """A streamed call that sends `head` and then nothing until `release` is set."""

    def chunks() -> Iterator[bytes]:
        yield head
        release.wait(30)

    return channel.stream_unary(method).future(chunks(), timeout=30)


def test_declared_but_unsent_tensors_cost_the_server_nothing(cluster: LocalCluster) -> None:
    pid = cluster.process("worker").pid
    release = threading.Event()
    channels = [connection(cluster) for _ in range(4)]
    try:
        for channel in channels:
            grpc.channel_ready_future(channel).result(timeout=10)
        before = rss(pid)
        # 4 streams of 48 bytes, each declaring 2**25 strings (256 MiB of object pointers)
        calls = [held_stream(channel, "/tensorweave.Worker/GetStatusStream",
                             string_head(1 << 25), release) for channel in channels]
        time.sleep(1.5)
        grown = rss(pid) - before
        release.set()
        for call in calls:  # the streams end short of their payload: truncated
            with pytest.raises(grpc.RpcError) as info:
                call.result(timeout=20)
            assert info.value.code() == Code.DATA_LOSS
    finally:
        for channel in channels:
            channel.close()
    assert grown < 64 * MIB, f"the server grew by {grown / MIB:.0f} MiB"


def test_lane_frames_declared_but_unsent_cost_the_server_nothing(
        cluster: LocalCluster) -> None:
    pid = cluster.process("worker").pid
    port = bulk_port(cluster)
    name = b"/tensorweave.Worker/GetStatus"
    conns = []
    try:
        before = rss(pid)
        for _ in range(64):  # each declares a 4 MiB request and sends none of it
            conn = socket.create_connection(("127.0.0.1", port), timeout=10)
            conns.append(conn)
            conn.sendall(lane.MAGIC + lane.token_digest(""))
            assert conn.recv(4) == lane.MAGIC
            conn.sendall(lane.FRAME.pack(1, lane.MAX_PAYLOAD, lane.REQUEST, 0, len(name)) + name)
        time.sleep(1.0)
        grown = rss(pid) - before
    finally:
        for conn in conns:
            conn.close()
    assert grown < 64 * MIB, f"the server grew by {grown / MIB:.0f} MiB"


def test_the_memory_caps_are_resource_exhausted_naming_the_limit(
        cluster: LocalCluster) -> None:
    release = threading.Event()
    with connection(cluster) as channel, connection(cluster) as other:
        # over the per-message cap, however few bytes come
        huge = struct.pack("<2sBBIIIQ", b"TW", wire.VERSION, 0, 0, 8, 0, 1 << 40) + bytes(8)
        with pytest.raises(grpc.RpcError) as info:
            channel.stream_unary("/tensorweave.Worker/GetStatusStream")(iter([huge]),
                                                                        timeout=10)
        assert info.value.code() == Code.RESOURCE_EXHAUSTED
        assert "max_message_bytes" in info.value.details()
        # 1 GiB (strings: raw bytes and pointers) held by one stream; a second one on the same
        # connection goes over the 1.5 GiB per-session cap, one on another connection does not
        first = held_stream(channel, "/tensorweave.Worker/GetStatusStream",
                            string_head(1 << 26), release)
        time.sleep(0.5)
        second = held_stream(channel, "/tensorweave.Worker/GetStatusStream",
                             string_head(1 << 26), release)
        with pytest.raises(grpc.RpcError) as info:
            second.result(timeout=10)
        assert info.value.code() == Code.RESOURCE_EXHAUSTED
        assert "max_session_bytes" in info.value.details()
        third = held_stream(other, "/tensorweave.Worker/GetStatusStream",
                            string_head(1 << 26), release)
        time.sleep(0.5)
        assert not third.done()
        release.set()
        for call in (first, third):
            with pytest.raises(grpc.RpcError) as info:
                call.result(timeout=20)
            assert info.value.code() == Code.DATA_LOSS


def bulk_port(cluster: LocalCluster) -> int:
    with grpc.insecure_channel(address(cluster)) as channel:
        reply = channel.unary_unary("/tensorweave.Transfer/Lane")(wire.encode({}).frame(),
                                                                   timeout=10)
    return wire.decode(reply).body["port"]


def test_idle_connections_to_the_bulk_port_delay_no_fetch(cluster: LocalCluster) -> None:
    port = bulk_port(cluster)
    idle = [socket.create_connection(("127.0.0.1", port), timeout=10)
            for _ in range(2 * bulk.SERVE_THREADS)]
    try:
        with tf.device("/job:worker/task:0"):
            big = tf.fill([3 * MIB], 2.0)  # 12 MiB: a deferred reply, fetched over the bulk port
        with tf.Session(cluster.target("worker")) as sess:
            start = time.monotonic()
            got = sess.run(big)
            elapsed = time.monotonic() - start
        assert got.shape == (3 * MIB,) and got[-1] == 2.0
        assert elapsed < 5.0, f"the fetch took {elapsed:.1f} s"
        # the server closes connections that never greet
        deadline = time.monotonic() + bulk.GREETING_SECONDS + 5
        for conn in idle:
            conn.settimeout(max(0.1, deadline - time.monotonic()))
            assert conn.recv(1) == b""
    finally:
        for conn in idle:
            conn.close()


def test_a_stalled_bulk_lane_is_given_up_for_grpc() -> None:
    silent = socket.create_server(("127.0.0.1", 0))  # accepts, never answers
    try:
        start = time.monotonic()
        with pytest.raises(bulk.LaneUnavailableError, match="no reply"):
            bulk.fetch("127.0.0.1", silent.getsockname()[1], bytes(16), timeout=30)
        assert time.monotonic() - start < bulk.STALL_SECONDS + 2
    finally:
        silent.close()


ORPHAN_CLIENT = """
import sys
import tensorweave as tf
with tf.device("/job:ps/task:0"):
    counter = tf.Variable(0, dtype=tf.int64, name="orphan_counter")
    def body(i):
        with tf.control_dependencies([tf.assign_add(counter, tf.constant(1, tf.int64))]):
            return i + 1
    loop = tf.while_loop(lambda i: i < 10**9, body, [tf.constant(0)])
with tf.device("/job:worker/task:0"):
    out = loop * 2
sess = tf.Session(sys.argv[1])
sess.run(counter.initializer)
print("running", flush=True)
sess.run(out)
"""


def counter_reader(cluster: LocalCluster) -> tuple[tf.Session, object]:
    graph = tf.Graph()
    with graph.as_default(), tf.device("/job:ps/task:0"):
        counter = tf.Variable(0, dtype=tf.int64, name="orphan_counter")
    return tf.Session(cluster.target("worker"), graph=graph), counter


@pytest.mark.parametrize("call_lane", ["1", "0"], ids=["lane", "grpc"])
def test_a_step_whose_client_is_killed_is_aborted_on_every_task(
        cluster: LocalCluster, call_lane: str) -> None:
    # the client's RunStep travels on the call lane (its connection closes) or on gRPC (the
    # call is cancelled)
    client = subprocess.Popen([sys.executable, "-c", ORPHAN_CLIENT, cluster.target("worker")],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env={**os.environ, "TENSORWEAVE_CALL_LANE": call_lane})
    sess, counter = counter_reader(cluster)
    try:
        assert client.stdout.readline().strip() == "running"
        deadline = time.monotonic() + 20
        while sess.run(counter) < 1000:  # the loop runs on the ps
            assert time.monotonic() < deadline and client.poll() is None
            time.sleep(0.05)
        client.send_signal(signal.SIGKILL)
        client.wait(10)
        time.sleep(1.0)
        settled = sess.run(counter)
        time.sleep(0.5)
        assert sess.run(counter) == settled, "the orphaned step still runs"
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
        sess.close()


def test_fuzzed_frames_to_every_service_leave_the_cluster_serving(
        cluster: LocalCluster) -> None:
    rng = random.Random(17)
    target = address(cluster)
    valid = {
        "/tensorweave.Master/CreateSession": wire.encode({"config": {}}).frame(),
        "/tensorweave.Master/RunStep": wire.encode({
            "session_handle": "x", "feeds": {"a:0": np.ones(3, np.float32)}, "fetches": ["a:0"],
            "targets": [], "collect_stats": False, "timeout": 1.0}).frame(),
        "/tensorweave.Master/ExtendSession": wire.encode({"session_handle": "x", "nodes": [
            ["c", "Const", [], "", {"value": np.ones(2, np.float32), "dtype": tf.float32}]],
        }).frame(),
        "/tensorweave.Worker/RunGraph": wire.encode({
            "handle": "h", "step_id": 5, "args": {0: np.arange(4.0)}, "collect_stats": False,
            "timeout": 1.0}).frame(),
        "/tensorweave.Worker/RecvTensor": wire.encode({
            "step_id": 5, "key": "a;1;b;e:0", "timeout": 0.2}).frame(),
        "/tensorweave.Worker/RegisterGraph": wire.encode({"graph": [
            ["n", "Identity", ["m"], "", {"T": tf.float32}]], "protected": []}).frame(),
    }

    def mutate(frame: bytes) -> bytes:
        data = bytearray(frame)
        for _ in range(rng.randint(1, 4)):
            kind = rng.random()
            if kind < 0.6 and data:
                data[rng.randrange(len(data))] = rng.randrange(256)
            elif kind < 0.8:
                del data[rng.randrange(len(data) + 1):]
            else:
                at = rng.randrange(len(data) + 1)
                data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        return bytes(data)

    per_service = 200
    with grpc.insecure_channel(target) as channel:
        for service in ("Master", "Worker"):
            methods = [m for m in valid if f".{service}/" in m]
            for i in range(per_service):
                method = rng.choice(methods)
                frame = mutate(valid[method])
                try:
                    if i % 4:
                        channel.unary_unary(method)(frame, timeout=5)
                    else:  # streamed, in pieces
                        pieces = [frame[j:j + 7] for j in range(0, len(frame), 7)]
                        channel.stream_unary(method + "Stream")(iter(pieces), timeout=5)
                except grpc.RpcError as exc:
                    assert exc.code() not in (Code.UNKNOWN, Code.INTERNAL), exc.details()
    port = bulk_port(cluster)
    digest = lane.token_digest("")
    for _ in range(per_service):  # the call lane: mutated frames after a good greeting
        method = rng.choice(list(valid))
        name = method.encode()
        frame = mutate(lane.FRAME.pack(1, len(valid[method]), lane.REQUEST, 0, len(name))
                       + name + valid[method])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(lane.MAGIC + digest)
            assert conn.recv(4) == lane.MAGIC
            conn.sendall(frame)
            conn.settimeout(0.05)
            try:
                conn.recv(1 << 16)
            except OSError:  # waiting for more of the frame, or closed on a malformed one
                pass
    for _ in range(per_service):  # the bulk port: mutated greetings and tickets
        greeting = mutate(bulk.HELLO.pack(bulk.MAGIC, os.urandom(16)))
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(greeting)
            conn.settimeout(0.05)
            try:
                assert conn.recv(1 << 16) == b""  # nothing for a bad or unknown ticket
            except OSError:  # a short greeting waits for its last bytes; a long one is reset
                pass
    for job in ("ps", "worker"):
        assert cluster.process(job).poll() is None
    with tf.device("/job:ps/task:0"):
        v = tf.Variable([1.0, 2.0], name="fuzz_v")
    with tf.device("/job:worker/task:0"):
        x = tf.placeholder(tf.float32, [2], name="fuzz_x")
        y = tf.assign_add(v, x) * 2.0
    with tf.Session(cluster.target("worker")) as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, 1.0]}), [4.0, 6.0])


def test_control_flow_nested_100_deep_runs_across_the_cluster(cluster: LocalCluster) -> None:
    def nest(value: object, depth: int) -> object:
        if depth == 0:
            return value + 1.0
        return tf.cond(value > -1.0, lambda: nest(value, depth - 1), lambda: value)

    with tf.device("/job:ps/task:0"):
        x = tf.placeholder(tf.float32, [], name="nest_x")
        deep = nest(x, 100)  # the wire once refused 16
    with tf.device("/job:worker/task:0"):
        out = deep * 2.0
    with tf.Session(cluster.target("worker")) as sess:
        assert sess.run(out, {x: 1.0}) == 4.0


# a server that says when it has imported what it runs (most of its start on a busy machine)
RESTARTED_SERVER = """
import sys
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.train.server_lib import run_server_cli
get_registries()
print("imported", flush=True)
sys.exit(run_server_cli(sys.argv[1:]))
"""


def test_a_session_created_right_after_a_task_restarts_waits_for_it(
        cluster: LocalCluster) -> None:
    cluster.kill("ps")
    restarted = subprocess.Popen(
        [sys.executable, "-c", RESTARTED_SERVER, "--cluster", cluster.spec_path,
         "--job", "ps", "--task", "0", "--stop-on-stdin-eof"], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert restarted.stdout.readline().strip() == "imported"
        with tf.device("/job:ps/task:0"):
            on_ps = tf.constant(3.0) * 2.0
        config = tf.ConfigProto(operation_timeout_in_ms=30_000)
        # before it serves: the ps refuses connections until it is back, within the retries
        with tf.Session(cluster.target("worker"), config=config) as sess:
            assert sess.run(on_ps) == 6.0
    finally:
        restarted.stdin.close()
        restarted.terminate()
        restarted.wait(10)




def test_a_lane_that_stalls_mid_reply_is_left_for_grpc_without_running_a_step_twice(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the server's lanes answer ExtendSession and RunStep with half a frame, then fall silent
    env = {"TENSORWEAVE_CALL_LANE": "1", "TENSORWEAVE_TEST_LANE_STALL": "ExtendSession,RunStep"}
    with LocalCluster({"worker": 1}, host="127.0.0.1", env=env) as stalling:
        target = stalling.target("worker")
        with tf.device("/job:worker/task:0"):
            v = tf.Variable(0.0, name="stall_v")
            bump = tf.assign_add(v, 1.0)
        config = tf.ConfigProto(operation_timeout_in_ms=300_000)  # far beyond any stall
        monkeypatch.setenv("TENSORWEAVE_CALL_LANE", "0")
        plain = tf.Session(target, config=config)  # gRPC only: nothing of it stalls
        monkeypatch.setenv("TENSORWEAVE_CALL_LANE", "1")
        laned = tf.Session(target, config=config)
        try:
            plain.run(v.initializer)
            peer = laned._master._peer
            assert eventually(lambda: peer._lane is not None, 10.0)
            stalled = peer._lane
            # ExtendSession stalls on the lane and is sent again over gRPC (the same nodes
            # again change nothing); the RunStep after it takes gRPC while the lane reopens
            assert laned.run(bump) == 1.0
            assert "stalled" in stalled.broken
            assert eventually(lambda: peer._lane is not stalled and peer._lane.broken is None, 10.0)
            # a RunStep that stalls is sent again over gRPC under its request id: the server
            # answers it from the first one's reply instead of running the step again
            reopened = peer._lane
            assert laned.run(bump) == 2.0
            assert "stalled" in reopened.broken
            assert plain.run(v) == 2.0
            assert stalling.process("worker").poll() is None
        finally:
            laned.close()
            plain.close()


def hook_notes(cluster: LocalCluster, job: str) -> str:
    return "\n".join(line for line in cluster.output(job)
                     if line.startswith("TENSORWEAVE_TEST_LANE_STALL"))


def test_steps_whose_lanes_stall_mid_reply_run_once_over_grpc(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # every lane stalls in the reply of the first RunStep, RunGraph or RecvTensor it carries,
    # then drops everything: the client's RunStep to the worker, and the worker's RunGraph
    # and RecvTensor to the ps
    env = {"TENSORWEAVE_CALL_LANE": "1",
           "TENSORWEAVE_TEST_LANE_STALL": "RunStep,RunGraph,RecvTensor"}
    with LocalCluster({"ps": 1, "worker": 1}, host="127.0.0.1", env=env) as stalling:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(0.0, name="once_v")
            bump = tf.assign_add(v, 1.0)  # runs on the ps (RunGraph) ...
            # (and the ps's piece runs on after it, so RecvTensor is answered while RunGraph
            # runs: both are in flight when the lane stalls)
            busy = tf.while_loop(lambda i: i < 3000, lambda i: i + 1, [tf.constant(0)])
        with tf.device("/job:worker/task:0"):
            out = bump * 10.0  # ... and its value goes to the worker (RecvTensor)
        config = tf.ConfigProto(operation_timeout_in_ms=300_000)  # far beyond any stall
        monkeypatch.setenv("TENSORWEAVE_CALL_LANE", "0")
        plain = tf.Session(stalling.target("ps"), config=config)  # gRPC, steps on the ps alone
        monkeypatch.setenv("TENSORWEAVE_CALL_LANE", "1")
        laned = tf.Session(stalling.target("worker"), config=config)
        try:
            plain.run(v.initializer)
            peer = laned._master._peer
            assert eventually(lambda: peer._lane is not None, 10.0)
            # (the first step opens the worker's lane to the ps, if its calls came first)
            assert [laned.run([out, busy]) for _ in range(2)] == [[10.0, 3000], [20.0, 3000]]
            assert plain.run(v) == 2.0  # each step's assign_add ran once
            assert "RunStep" in hook_notes(stalling, "worker")
            ps_notes = hook_notes(stalling, "ps")
            assert "RunGraph" in ps_notes and "RecvTensor" in ps_notes
        finally:
            laned.close()
            plain.close()


def empty_lists(count: int) -> bytes:
    """A request ``{"x": [[], [], ...]}`` of `count` empty lists: 5 header bytes each, which
    decode to 64 bytes of objects each."""
    body = b"".join((bytes([wire.T_DICT]), struct.pack("<I", 1), bytes([wire.T_STR]),
                     struct.pack("<I", 1), b"x", bytes([wire.T_LIST]), struct.pack("<I", count),
                     (bytes([wire.T_LIST]) + bytes(4)) * count))
    header = body + bytes(-len(body) % 8)
    return struct.pack("<2sBBIIIQ", b"TW", wire.VERSION, 0, 0, len(header), 0, 0) + header


def float_head(count: int) -> bytes:
    """The head of a request ``{"x": <float32 tensor of `count` elements>}``, without its
    payload."""
    table = struct.pack("<BBq", 1, 1, count)  # float32, rank 1
    body = b"".join((bytes([wire.T_DICT]), struct.pack("<I", 1), bytes([wire.T_STR]),
                     struct.pack("<I", 1), b"x", bytes([wire.T_TENSOR]), struct.pack("<I", 0)))
    header = table + body + bytes(-(len(table) + len(body)) % 8)
    return struct.pack("<2sBBIIIQ", b"TW", wire.VERSION, 0, 1, len(header), 0,
                       4 * count + (-4 * count) % 8) + header


def test_what_a_header_decodes_to_is_charged_to_the_caps_naming_them() -> None:
    caps = ["--max-message-bytes", str(64 * MIB), "--max-session-bytes", str(80 * MIB)]
    with LocalCluster({"worker": 1}, host="127.0.0.1", extra_args=caps) as small:
        with connection(small) as channel, connection(small) as other:
            status = "/tensorweave.Worker/GetStatus"
            # a 10 MiB header of 2M empty lists decodes to 128 MiB of objects: over one
            # message's cap
            hostile = empty_lists(2_000_000)
            chunks = [hostile[i:i + 4 * MIB] for i in range(0, len(hostile), 4 * MIB)]
            with pytest.raises(grpc.RpcError) as info:
                channel.stream_unary(status + "Stream")(iter(chunks), timeout=30)
            assert info.value.code() == Code.RESOURCE_EXHAUSTED
            assert "max_message_bytes" in info.value.details()
            # 1.5 MiB decoding to 19 MiB (charged as 38): within one message's cap, but not
            # beside a stream holding 60 MiB on the same connection
            one_message = empty_lists(300_000)
            assert wire.decode(other.unary_unary(status)(one_message, timeout=30)).body["task"]
            release = threading.Event()
            held = held_stream(channel, status + "Stream", float_head(15 * MIB), release)
            time.sleep(0.5)
            with pytest.raises(grpc.RpcError) as info:
                channel.unary_unary(status)(one_message, timeout=30)
            assert info.value.code() == Code.RESOURCE_EXHAUSTED
            assert "max_session_bytes" in info.value.details()
            assert wire.decode(other.unary_unary(status)(one_message, timeout=30)).body["task"]
            release.set()
            with pytest.raises(grpc.RpcError) as info:
                held.result(timeout=20)
            assert info.value.code() == Code.DATA_LOSS
        assert small.process("worker").poll() is None


def test_a_session_beside_a_dead_task_is_created_without_waiting_for_it() -> None:
    with LocalCluster({"ps": 1, "worker": 1}, host="127.0.0.1") as dead:
        dead.kill("ps")
        with tf.device("/job:ps/task:0"):
            on_ps = tf.constant(3.0) * 2.0
        with tf.device("/job:worker/task:0"):
            on_worker = tf.constant(4.0) * 2.0
        # the ps refuses connections: a few quick retries, not the operation timeout
        config = tf.ConfigProto(operation_timeout_in_ms=600_000)
        with tf.Session(dead.target("worker"), config=config) as sess:
            assert sess.run(on_worker) == 8.0
            with pytest.raises(tf.errors.UnavailableError,
                               match="task /job:ps/replica:0/task:0 was unreachable"):
                sess.run(on_ps)


class BlackHole:
    """A TCP proxy to ``127.0.0.1:port`` that forwards bytes until `stop`, then holds every
    connection open and moves nothing more (a network that silently drops everything)."""

    def __init__(self, port: int) -> None:
        self._port = port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._stopped = threading.Event()
        self._sockets: list[socket.socket] = [self._listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
                upstream = socket.create_connection(("127.0.0.1", self._port))
            except OSError:
                return
            self._sockets += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        src.settimeout(0.1)
        while not self._stopped.is_set():
            try:
                data = src.recv(1 << 16)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data or self._stopped.is_set():
                return
            dst.sendall(data)

    def stop(self) -> None:
        self._stopped.set()

    def close(self) -> None:
        self._stopped.set()
        for sock in self._sockets:
            sock.close()


def test_a_peer_that_stops_answering_fails_long_before_the_deadline(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSORWEAVE_CALL_LANE", "0")  # (a lane would bypass the proxy)
    with LocalCluster({"worker": 1}, host="127.0.0.1") as local:
        hole = BlackHole(int(local.target("worker").rsplit(":", 1)[1]))
        with tf.device("/job:worker/task:0"):
            x = tf.constant(2.0) * 3.0
        # (below the minute after which gRPC gives up on an unanswered flow-control ping)
        config = tf.ConfigProto(operation_timeout_in_ms=50_000)
        sess = tf.Session(f"grpc://127.0.0.1:{hole.port}", config=config)
        try:
            assert sess.run(x) == 6.0
            hole.stop()
            start = time.monotonic()
            with pytest.raises(tf.errors.UnavailableError) as info:
                sess.run(x)
            print(f"black-holed call failed after {time.monotonic() - start:.1f} s")
            # the connection's keepalive pings went unanswered: not the call's deadline
            assert "Deadline" not in info.value.message
        finally:
            hole.close()
            sess.close()


def two_byte_strings(count: int) -> bytes:
    """A request ``{"x": <string tensor of `count` two-byte strings>}``: 10 bytes an element
    on the wire, about 60 once decoded."""
    table = struct.pack("<BBqQ", wire.STRING_CODE, 1, count, 10 * count)
    body = b"".join((bytes([wire.T_DICT]), struct.pack("<I", 1), bytes([wire.T_STR]),
                     struct.pack("<I", 1), b"x", bytes([wire.T_TENSOR]), struct.pack("<I", 0)))
    header = table + body + bytes(-(len(table) + len(body)) % 8)
    payload = np.full(count, 2, "<u8").tobytes() + b"ab" * count
    payload += bytes(-len(payload) % 8)
    return struct.pack("<2sBBIIIQ", b"TW", wire.VERSION, 0, 1, len(header), 0,
                       len(payload)) + header + payload


def test_string_elements_are_charged_to_the_caps_naming_them() -> None:
    caps = ["--max-message-bytes", str(64 * MIB)]
    with LocalCluster({"worker": 1}, host="127.0.0.1", extra_args=caps) as small:
        pid = small.process("worker").pid
        with connection(small) as channel:
            # 40 MB on the wire, within the 64 MiB cap, but 4M string objects once decoded
            hostile = two_byte_strings(4_000_000)
            chunks = [hostile[i:i + 4 * MIB] for i in range(0, len(hostile), 4 * MIB)]
            before = rss(pid)
            try:
                channel.stream_unary("/tensorweave.Worker/GetStatusStream")(iter(chunks),
                                                                            timeout=60)
                refused = None
            except grpc.RpcError as exc:
                refused = exc
            print(f"server RSS grew by {(rss(pid) - before) / MIB:.0f} MiB")
            assert refused is not None and refused.code() == Code.RESOURCE_EXHAUSTED
            assert "max_message_bytes" in refused.details()
            # the same strings, fewer of them, still go through
            few = two_byte_strings(100_000)
            assert wire.decode(channel.unary_unary("/tensorweave.Worker/GetStatus")(
                few, timeout=30)).body["task"]
