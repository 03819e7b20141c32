"""The gRPC transport with servers in this process: sessions over the wire, step cleanup,
error propagation, unreachable tasks, garbage collection of vanished clients."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.distributed.transport import MASTER, WORKER
from tensorweave.plugins.grpc import wire
from tensorweave.plugins.grpc.outbox import Outbox
from tensorweave.plugins.grpc.rpc import Peer, Security
from tensorweave.train.local_cluster import free_ports
from tensorweave.train.server_lib import ServerOptions
from tests.wait_support import eventually


@pytest.fixture(scope="module")
def pair() -> Iterator[dict[str, tf.train.Server]]:
    """A ps and a worker server in this process (calls between them still go over gRPC)."""
    ps_port, worker_port = free_ports(2)
    cluster = {"ps": [f"localhost:{ps_port}"], "worker": [f"localhost:{worker_port}"]}
    servers = {"ps": tf.train.Server(cluster, "ps", 0),
               "worker": tf.train.Server(cluster, "worker", 0)}
    yield servers
    for server in servers.values():
        server.stop()


def live_steps(server: tf.train.Server) -> int:
    return len(server._impl.worker.rendezvous_mgr)


def test_local_server_session_matches_in_process_run() -> None:
    x = tf.placeholder(tf.float32, shape=[None], name="x")
    v = tf.Variable(np.arange(3, dtype=np.float32), name="v")
    y = tf.assign_add(v, x * 2.0)
    feeds = np.array([1.0, -2.0, 0.5], np.float32)
    with tf.Session() as local:
        local.run(tf.global_variables_initializer())
        expected = [local.run(y, {x: feeds}) for _ in range(3)]
    server = tf.train.Server.create_local_server()
    try:
        assert server.target.startswith("grpc://localhost:")
        with tf.Session(server.target) as remote:
            remote.run(tf.global_variables_initializer())
            got = [remote.run(y, {x: feeds}) for _ in range(3)]
            assert [d.name for d in remote.list_devices()] == [
                "/job:localhost/replica:0/task:0/device:CPU:0"]
    finally:
        server.stop()
    for a, b in zip(got, expected):
        assert a.dtype == b.dtype == np.float32
        np.testing.assert_array_equal(a, b)


def test_run_metadata_comes_back_from_a_remote_master(pair: dict) -> None:
    with tf.device("/job:ps/task:0"):
        a = tf.placeholder(tf.float32, name="meta_a") * 3.0
    with tf.device("/job:worker/task:0"):
        b = tf.identity(a, name="meta_b")
    metadata = tf.RunMetadata()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)
    with tf.Session(pair["worker"].target) as sess:
        got = sess.run(b, {"meta_a:0": [1.0, 2.0]}, options=options, run_metadata=metadata)
    np.testing.assert_array_equal(got, [3.0, 6.0])
    devices = {g.node[0].device for g in metadata.partition_graphs}
    assert devices == {"/job:ps/replica:0/task:0/device:CPU:0",
                       "/job:worker/replica:0/task:0/device:CPU:0"}
    ops = {n.op for g in metadata.partition_graphs for n in g.node}
    assert {"_Send", "_Recv", "_Retval"} <= ops
    traced = {s.node_name for d in metadata.step_stats.dev_stats for s in d.node_stats}
    assert "meta_b" in traced


def test_step_state_is_cleaned_on_every_task_after_success_and_failure(pair: dict) -> None:
    with tf.device("/job:ps/task:0"):
        x = tf.placeholder(tf.float32, name="clean_x")
        doubled = x * 2.0
    with tf.device("/job:worker/task:0"):
        y = tf.placeholder(tf.float32, name="clean_y")
        total = doubled + y
    with tf.Session(pair["worker"].target) as sess:
        assert sess.run(total, {x: 1.0, y: 2.0}) == 4.0
        assert eventually(lambda: live_steps(pair["ps"]) == live_steps(pair["worker"]) == 0)
        with pytest.raises(tf.errors.InvalidArgumentError):  # shapes [2] + [3] fail on worker
            sess.run(total, {x: [1.0, 2.0], y: [1.0, 2.0, 3.0]})
        assert eventually(lambda: live_steps(pair["ps"]) == live_steps(pair["worker"]) == 0)
        assert sess.run(total, {x: 3.0, y: 1.0}) == 7.0  # both tasks still healthy


def test_an_error_on_one_task_reaches_the_client_with_its_type_and_message(pair: dict) -> None:
    with tf.device("/job:ps/task:0"):
        never_set = tf.Variable(1.0, name="never_initialized")
        read = never_set * 1.0
    with tf.device("/job:worker/task:0"):
        out = read + 1.0
    with tf.Session(pair["worker"].target) as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="uninitialized value never_initialized") as info:
            sess.run(out)
        assert time.monotonic() - start < 5.0  # the waiting worker was aborted, not timed out
        assert "/job:ps/replica:0/task:0" in info.value.message
        sess.run(never_set.initializer)
        assert sess.run(out) == 2.0


def test_a_task_that_is_not_running_gives_unavailable_naming_it() -> None:
    live, dead = free_ports(2)
    cluster = {"worker": [f"localhost:{live}"], "ghost": [f"localhost:{dead}"]}
    with tf.train.Server(cluster, "worker", 0) as server:
        with tf.device("/job:ghost/task:0"):
            a = tf.placeholder(tf.float32, name="on_ghost") * 2.0
        start = time.monotonic()
        # the master waits for the ghost up to the operation timeout, then leaves it out
        config = tf.ConfigProto(operation_timeout_in_ms=1000)
        with tf.Session(server.target, config=config) as sess:
            with pytest.raises(tf.errors.UnavailableError, match="/job:ghost/replica:0/task:0"):
                sess.run(a, {"on_ghost:0": 1.0})
            assert sess.run(tf.constant(5.0) * 2.0) == 10.0  # the live task still serves
        assert time.monotonic() - start < 5.0


def test_a_task_that_never_answers_gives_unavailable_within_the_deadline() -> None:
    silent = socket.create_server(("127.0.0.1", 0))  # accepts connections, never speaks HTTP/2
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        silent.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(silent.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    (live,) = free_ports(1)
    cluster = {"worker": [f"localhost:{live}"],
               "mute": [f"127.0.0.1:{silent.getsockname()[1]}"]}
    config = tf.ConfigProto(operation_timeout_in_ms=1000)
    try:
        with tf.train.Server(cluster, "worker", 0, config=config) as server:
            with tf.device("/job:mute/task:0"):
                a = tf.placeholder(tf.float32, name="on_mute") * 2.0
            start = time.monotonic()
            with tf.Session(server.target, config=config) as sess:
                with pytest.raises(tf.errors.UnavailableError, match="/job:mute"):
                    sess.run(a, {"on_mute:0": 1.0})
            assert time.monotonic() - start < 6.0
    finally:
        stop.set()
        thread.join()
        for s in [silent, *accepted]:
            s.close()


def test_sessions_of_a_vanished_client_are_garbage_collected() -> None:
    (port,) = free_ports(1)
    options = ServerOptions(session_gc_seconds=0.3)
    with tf.train.Server({"local": [f"localhost:{port}"]}, options=options) as server:
        sess = tf.Session(server.target)
        assert sess.run(tf.constant(3.0)) == 3.0
        assert len(server._impl.master) == 1
        assert eventually(lambda: len(server._impl.master) == 0)
        with pytest.raises(tf.errors.AbortedError, match="not found"):
            sess.run(tf.constant(4.0))
        sess.close()


def test_close_with_a_dead_master_returns_promptly() -> None:
    server = tf.train.Server.create_local_server()
    sess = tf.Session(server.target)
    assert sess.run(tf.constant(1.0)) == 1.0
    server.stop()
    start = time.monotonic()
    sess.close()
    assert time.monotonic() - start < 2.0


def test_a_stopped_server_cannot_restart_and_join_returns() -> None:
    server = tf.train.Server.create_local_server(start=False)
    server.start()
    server.start()  # idempotent
    assert not server.join(timeout=0.05)
    server.stop()
    assert server.join(timeout=1.0)
    with pytest.raises(RuntimeError, match="stopped"):
        server.start()


def test_large_replies_take_the_bulk_lane_and_leave_nothing_behind(pair: dict) -> None:
    data = np.random.default_rng(0).standard_normal(3 << 20)  # 24 MiB of float64
    with tf.device("/job:ps/task:0"):
        x = tf.placeholder(tf.float64, name="big_x")
        y = tf.identity(x, name="big_y")
    with tf.device("/job:worker/task:0"):
        z = tf.identity(y, name="big_z")  # ps -> worker: a RecvTensor reply of 24 MiB
    with tf.Session(pair["worker"].target) as sess:
        got = sess.run(z, {x: data})
    assert got.dtype == np.float64 and np.array_equal(got, data)
    assert got.flags.writeable  # received into an array of its own
    assert len(pair["ps"]._impl.outbox) == len(pair["worker"]._impl.outbox) == 0


def test_without_the_bulk_lane_64_mib_streams_over_grpc_in_chunks() -> None:
    data = np.random.default_rng(2).integers(0, 255, (64 << 20) + 3, dtype=np.uint8)
    x = tf.placeholder(tf.uint8, name="grpc_x")
    y = tf.identity(x, name="grpc_y")
    with tf.train.Server.create_local_server() as server:
        server._impl.bulk.close()  # replies must now come by Transfer/Fetch
        with tf.Session(server.target) as sess:
            got = sess.run(y, {x: data})
        assert len(server._impl.outbox) == 0
    assert np.array_equal(got, data)


def test_an_unfetched_reply_expires() -> None:
    outbox = Outbox()
    transfer = outbox.put(wire.encode({"v": np.zeros(4)}), ttl=0.0)
    time.sleep(0.01)
    assert outbox.sweep() == 1 and len(outbox) == 0
    with pytest.raises(tf.errors.NotFoundError, match=transfer.hex()):
        outbox.take(transfer)


def test_a_recv_for_a_cleaned_up_step_is_refused_at_once(pair: dict) -> None:
    worker = pair["ps"]._impl.worker
    worker.cleanup_step(12345)
    key = f"{worker.devices[0].name};0000000000000001;/job:worker/replica:0/task:0/device:CPU:0;" \
          "t:0;0:0"
    start = time.monotonic()
    with pytest.raises(tf.errors.AbortedError, match="already cleaned up"):
        worker.recv_tensor(12345, key, timeout=5.0)
    assert time.monotonic() - start < 1.0


def test_steps_whose_master_vanished_are_reaped(pair: dict) -> None:
    worker = pair["ps"]._impl.worker
    key = f"{worker.devices[0].name};0000000000000001;/job:worker/replica:0/task:0/device:CPU:0;" \
          "t:0;0:0"
    with pytest.raises(tf.errors.DeadlineExceededError):
        worker.recv_tensor(777, key, timeout=0.01)
    assert 777 in worker._deadlines
    assert worker.reap_stale_steps(grace=0.0) == [777]
    assert live_steps(pair["ps"]) == 0


def test_list_devices_covers_the_cluster(pair: dict) -> None:
    peer = Peer("worker", pair["worker"].target[len("grpc://"):], Security.resolve())
    try:
        body = peer.call(MASTER, "ListDevices", {}, 5.0)
    finally:
        peer.close()
    assert sorted(d[0] for d in body["devices"]) == [
        "/job:ps/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:0/device:CPU:0"]


def test_abort_and_cleanup_over_the_wire(pair: dict) -> None:
    ps = pair["ps"]._impl
    peer = Peer(ps.task.name, ps.address, Security.resolve())
    key = f"{ps.worker.devices[0].name};0000000000000001;" \
          "/job:worker/replica:0/task:0/device:CPU:0;t:0;0:0"
    try:
        peer.call(WORKER, "AbortStep", {"step_id": 4242, "error": {
            "code": tf.errors.RESOURCE_EXHAUSTED, "message": "boom"}}, 5.0)
        with pytest.raises(tf.errors.ResourceExhaustedError, match="^boom$"):
            peer.call(WORKER, "RecvTensor", {"step_id": 4242, "key": key, "timeout": 5.0}, 10.0)
        peer.call(WORKER, "CleanupStep", {"step_ids": [4242]}, 5.0)
        assert 4242 not in ps.worker._deadlines
        with pytest.raises(tf.errors.AbortedError, match="already cleaned up"):
            peer.call(WORKER, "RecvTensor", {"step_id": 4242, "key": key, "timeout": 5.0}, 10.0)
    finally:
        peer.close()
