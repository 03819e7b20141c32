"""The call lane: the services' calls over a plain TCP connection beside gRPC -- the same
replies and typed errors, deadlines, cancellation, a broken connection, the token, hostile
frames, writes that never block, and the same results with the lane switched off."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.distributed import messages
from tensorweave.engine.distributed.transport import WORKER
from tensorweave.engine.distributed.worker_service import WorkerStub
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.grpc import lane, wire
from tensorweave.plugins.grpc.rpc import TRANSFER, Peer, Security
from tensorweave.train.local_cluster import free_ports
from tensorweave.train.server_lib import ServerOptions
from tests.callbacks import Inbox
from tests.wait_support import eventually

RECV = b"/tensorweave.Worker/RecvTensor"




@pytest.fixture(autouse=True)
def lane_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lane on for these tests, even when the suite runs with it off."""
    monkeypatch.setenv("TENSORWEAVE_CALL_LANE", "1")


@pytest.fixture(scope="module")
def server() -> Iterator[tf.train.Server]:
    (port,) = free_ports(1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TENSORWEAVE_CALL_LANE", "1")
        srv = tf.train.Server({"local": [f"127.0.0.1:{port}"]})
    with srv:
        yield srv


def lane_port(srv: tf.train.Server, token: str = "") -> int | None:
    peer = Peer(srv._impl.task.name, srv._impl.address, Security(auth_token=token))
    try:
        reply = peer._method("uu", f"/{TRANSFER}/Lane")(
            wire.encode({}).frame(), timeout=5.0, metadata=peer._metadata)
    finally:
        peer.close()
    return wire.decode(reply).body.get("port")


def open_lane(srv: tf.train.Server, token: str = "", pool: Any = None) -> lane.Lane:
    impl = srv._impl
    return lane.Lane("127.0.0.1", lane_port(srv, token), lane.token_digest(token),
                     lambda details: tf.errors.UnavailableError(
                         None, None, f"Task {impl.task.name} is unavailable: {details}"),
                     pool, 5.0)


def recv_request(srv: tf.train.Server, step_id: int, timeout: float, edge: str = "e:0") -> bytes:
    device = srv._impl.worker.devices[0]
    key = f"{device.name};{device.incarnation:016x};{device.name};{edge};0:0"
    return wire.encode({"step_id": step_id, "key": key, "timeout": timeout}).frame()


def test_a_peer_opens_the_lane_and_gets_the_same_replies(server: tf.train.Server) -> None:
    impl = server._impl
    peer = Peer(impl.task.name, impl.address, Security.resolve())
    try:
        over_grpc = peer.call(WORKER, "GetStatus", {}, 5.0)  # the first call takes gRPC
        assert eventually(lambda: peer._lane is not None)
        assert peer._ready_lane() is peer._lane
        assert peer.call(WORKER, "GetStatus", {}, 5.0) == over_grpc
    finally:
        peer.close()
    assert over_grpc["task"] == impl.task.name


def test_errors_come_back_typed(server: tf.train.Server) -> None:
    channel = open_lane(server)
    try:
        server._impl.worker.cleanup_step(4242)
        with pytest.raises(tf.errors.AbortedError, match="already cleaned up"):
            channel.call(RECV, recv_request(server, 4242, 1.0), 5.0)
        with pytest.raises(tf.errors.UnimplementedError, match="Nope"):
            channel.call(b"/tensorweave.Worker/Nope", wire.encode({}).frame(), 5.0)
        with pytest.raises(tf.errors.InvalidArgumentError, match="RecvTensorRequest"):
            channel.call(RECV, wire.encode({"step_id": 1}).frame(), 5.0)
    finally:
        channel.close()


def test_a_value_sent_later_answers_a_waiting_recv(server: tf.train.Server) -> None:
    channel = open_lane(server)
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    try:
        box = Inbox()
        channel.start(RECV, recv_request(server, 5001, 5.0, "later:0"), 5.0, box)
        time.sleep(0.05)
        assert not box.calls
        device = server._impl.worker.devices[0]
        key = f"{device.name};{device.incarnation:016x};{device.name};later:0;0:0"
        server._impl.worker.rendezvous_mgr.find_or_create(5001).send(key, value)
        assert box.event.wait(5)
        error, payload = box.calls[0]
        assert error is None
        got = wire.decode(payload).body["tensor"]
        np.testing.assert_array_equal(got, value)
        assert got.dtype == np.float32
    finally:
        channel.close()
        server._impl.worker.cleanup_step(5001)


def test_deadlines_on_both_ends(server: tf.train.Server) -> None:
    channel = open_lane(server)
    try:
        start = time.monotonic()  # the server gives up first: its own typed error
        with pytest.raises(tf.errors.DeadlineExceededError, match="Timed out after 0.1s"):
            channel.call(RECV, recv_request(server, 6001, 0.1), 5.0)
        assert time.monotonic() - start < 3.0
        start = time.monotonic()  # the client gives up first: unavailable, as over gRPC
        with pytest.raises(tf.errors.UnavailableError, match="Deadline Exceeded"):
            channel.call(RECV, recv_request(server, 6002, 30.0), 0.1)
        assert time.monotonic() - start < 3.0
        box = Inbox()
        channel.start(RECV, recv_request(server, 6003, 30.0), 0.1, box)
        assert box.event.wait(5)
        assert isinstance(box.calls[0][0], tf.errors.UnavailableError)
        assert channel.broken is None  # a late call does not break the lane
        assert channel.call(b"/tensorweave.Worker/GetStatus", wire.encode({}).frame(), 5.0)
    finally:
        channel.close()
        for step in (6001, 6002, 6003):
            server._impl.worker.cleanup_step(step)


def test_a_call_longer_than_a_stall_lives_on_the_heartbeat(server: tf.train.Server) -> None:
    # no reply for longer than STALL_SECONDS: the server's heartbeat shows the lane is alive
    channel = open_lane(server)
    device = server._impl.worker.devices[0]
    key = f"{device.name};{device.incarnation:016x};{device.name};slow:0;0:0"
    value = np.arange(3.0)
    later = threading.Timer(lane.STALL_SECONDS + 1.5, lambda: server._impl.worker.rendezvous_mgr
                            .find_or_create(7501).send(key, value))
    try:
        later.start()
        reply = channel.call(RECV, recv_request(server, 7501, 30.0, "slow:0"), 30.0)
        np.testing.assert_array_equal(wire.decode(reply).body["tensor"], value)
        assert channel.broken is None
    finally:
        later.cancel()
        channel.close()
        server._impl.worker.cleanup_step(7501)


def test_blocking_calls_read_their_own_replies_beside_the_reader(
        server: tf.train.Server) -> None:
    # a thread blocked in `call` takes the read role from the reader thread; replies for other
    # calls (blocking or with a callback) that it reads reach their owners, and once no call
    # blocks, the reader thread reads again
    channel = open_lane(server)
    worker = server._impl.worker
    device = worker.devices[0]
    steps = (9001, 9002, 9003)
    values = {step: np.full(3, step, np.int64) for step in steps}

    def send(step: int) -> None:
        key = f"{device.name};{device.incarnation:016x};{device.name};role:0;0:0"
        worker.rendezvous_mgr.find_or_create(step).send(key, values[step])

    def blocking(step: int, box: Inbox) -> None:
        try:
            box(None, wire.decode(channel.call(RECV, recv_request(server, step, 5.0, "role:0"),
                                               5.0)).body["tensor"])
        except tf.errors.OpError as exc:
            box(exc, None)

    try:
        first, third, late = Inbox(), Inbox(), Inbox()
        threads = [threading.Thread(target=blocking, args=(9001, first), daemon=True),
                   threading.Thread(target=blocking, args=(9003, third), daemon=True)]
        for thread in threads:
            thread.start()
        called_back = Inbox()
        channel.start(RECV, recv_request(server, 9002, 5.0, "role:0"), 5.0, called_back)
        time.sleep(0.05)
        with pytest.raises(tf.errors.UnavailableError, match="Deadline Exceeded"):
            channel.call(RECV, recv_request(server, 9004, 30.0, "role:0"), 0.1)
        assert channel.call(b"/tensorweave.Worker/GetStatus", wire.encode({}).frame(), 5.0)
        for step, box in ((9003, third), (9002, called_back), (9001, first)):
            send(step)
            assert box.event.wait(5)
        for thread in threads:
            thread.join(5)
        for step, box in ((9001, first), (9003, third)):
            assert len(box.calls) == 1 and box.calls[0][0] is None
            np.testing.assert_array_equal(box.calls[0][1], values[step])
        assert called_back.calls[0][0] is None
        np.testing.assert_array_equal(wire.decode(called_back.calls[0][1]).body["tensor"],
                                      values[9002])
        channel.start(RECV, recv_request(server, 9005, 5.0, "role:0"), 5.0, late)
        time.sleep(0.05)  # no call blocks now: the reader thread must read this reply
        values[9005] = np.zeros(2, np.int64)
        send(9005)
        assert late.event.wait(5) and late.calls[0][0] is None
        assert channel.broken is None
    finally:
        channel.close()
        for step in (*steps, 9004, 9005):
            worker.cleanup_step(step)


def test_a_cancelled_call_calls_back_once_with_cancelled(server: tf.train.Server) -> None:
    channel = open_lane(server)
    try:
        box = Inbox()
        cancel = channel.start(RECV, recv_request(server, 7001, 30.0), 30.0, box)
        cancel()
        cancel()
        server._impl.worker.cleanup_step(7001)  # the server answers now: dropped
        assert box.event.wait(5)
        time.sleep(0.05)
        assert len(box.calls) == 1
        assert isinstance(box.calls[0][0], tf.errors.CancelledError)
    finally:
        channel.close()


def test_a_lost_connection_fails_calls_in_flight_with_unavailable() -> None:
    srv = tf.train.Server.create_local_server()
    try:
        channel = open_lane(srv)
        box = Inbox()
        channel.start(RECV, recv_request(srv, 8001, 30.0), 30.0, box)
        blocked = Inbox()
        threading.Thread(target=lambda: blocked(*_call(channel, srv)), daemon=True).start()
        time.sleep(0.05)
        srv._impl.bulk.close()  # drops the lane's connections; the step itself lives on
        assert box.event.wait(5) and blocked.event.wait(5)
        for error, _ in (box.calls[0], blocked.calls[0]):
            assert isinstance(error, tf.errors.UnavailableError)
            assert srv._impl.task.name in error.message
        assert channel.broken is not None
        with pytest.raises(lane.LaneClosedError):
            channel.call(RECV, recv_request(srv, 8003, 1.0), 1.0)
    finally:
        srv.stop()


def _call(channel: lane.Lane, srv: tf.train.Server) -> tuple[BaseException | None, Any]:
    try:
        return None, channel.call(RECV, recv_request(srv, 8002, 30.0), 30.0)
    except tf.errors.OpError as exc:
        return exc, None


def test_the_token_guards_the_lane() -> None:
    (port,) = free_ports(1)
    with tf.train.Server({"local": [f"127.0.0.1:{port}"]},
                         options=ServerOptions(auth_token="t0ken")) as srv:
        port_ = lane_port(srv, "t0ken")
        with pytest.raises(OSError, match="cannot open the call lane"):
            lane.Lane("127.0.0.1", port_, lane.token_digest("wrong"), tf.errors.UnavailableError,
                      None, 5.0)
        channel = open_lane(srv, "t0ken")
        try:
            assert channel.call(b"/tensorweave.Worker/GetStatus", wire.encode({}).frame(), 5.0)
        finally:
            channel.close()
        # a peer with the wrong token never gets a lane and hears UNAUTHENTICATED over gRPC
        peer = Peer(srv._impl.task.name, srv._impl.address, Security(auth_token="wrong"))
        try:
            for _ in range(3):
                with pytest.raises(tf.errors.UnauthenticatedError):
                    peer.call(WORKER, "GetStatus", {}, 5.0)
                time.sleep(0.05)
            assert peer._lane is None
        finally:
            peer.close()


@pytest.mark.parametrize("header", [
    lane.FRAME.pack(1, 8, lane.REQUEST, 1, 4),  # reserved byte set
    lane.FRAME.pack(1, lane.MAX_PAYLOAD + 1, lane.REQUEST, 0, 4),  # payload too large
    lane.FRAME.pack(1, 8, lane.REQUEST, 0, 0),  # a request without a method
    lane.FRAME.pack(1, 8, 9, 0, 4),  # unknown kind
])
def test_a_malformed_frame_closes_the_connection(server: tf.train.Server,
                                                 header: bytes) -> None:
    with socket.create_connection(("127.0.0.1", lane_port(server)), timeout=5) as conn:
        conn.sendall(lane.MAGIC + lane.token_digest(""))
        assert conn.recv(4) == lane.MAGIC
        conn.sendall(header + b"/x/y" + bytes(8))
        try:
            assert conn.recv(100) == b""
        except ConnectionResetError:
            pass  # closed with our bytes unread: reset, not a clean end
    channel = open_lane(server)  # and the server keeps serving
    try:
        assert channel.call(b"/tensorweave.Worker/GetStatus", wire.encode({}).frame(), 5.0)
    finally:
        channel.close()


def test_writes_never_block_and_keep_their_order() -> None:
    left, right = socket.socketpair()
    left.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    writer = lane._Writer(left, "test-writer")
    payloads = [bytes([i]) * 300_000 for i in range(8)]
    start = time.monotonic()
    for i, payload in enumerate(payloads):
        writer.frame(i, lane.REPLY, b"", payload)  # nobody reads yet: queued, not blocked
    assert time.monotonic() - start < 1.0
    try:
        for i, payload in enumerate(payloads):
            call_id, kind, name, got = lane._read_frame(right)
            assert (call_id, kind, name) == (i, lane.REPLY, b"")
            assert bytes(got) == payload
    finally:
        writer.close("done")
        left.close()
        right.close()


def _step_results(monkeypatch: pytest.MonkeyPatch, enabled: bool) -> tuple[list[Any], bool]:
    monkeypatch.setenv("TENSORWEAVE_CALL_LANE", "1" if enabled else "0")
    ps_port, worker_port = free_ports(2)
    cluster = {"ps": [f"localhost:{ps_port}"], "worker": [f"localhost:{worker_port}"]}
    servers = [tf.train.Server(cluster, "ps", 0), tf.train.Server(cluster, "worker", 0)]
    try:
        graph = tf.Graph()
        with graph.as_default():
            with tf.device("/job:ps/task:0"):
                w = tf.Variable(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), name="w")
                s = tf.Variable(np.zeros([2, 3], np.float32), name="s")
            with tf.device("/job:worker/task:0"):
                x = tf.placeholder(tf.float32, [2, 3], name="x")
                delta = tf.tanh(w * x) / 3.0
            with tf.device("/job:ps/task:0"):
                update = tf.assign_add(s, delta)
        feed = np.arange(6, dtype=np.float32).reshape(2, 3) / 7.0
        with tf.Session(servers[1].target, graph=graph) as sess:
            sess.run([w.initializer, s.initializer])
            results = [sess.run(update, {x: feed * i}) for i in range(30)]
        stubs = servers[1]._impl._stubs.values()
        used = any(stub.peer._lane is not None for stub in stubs)
        return results, used
    finally:
        for srv in servers:
            srv.stop()


def test_results_are_bit_identical_with_the_lane_off(monkeypatch: pytest.MonkeyPatch) -> None:
    with_lane, used = _step_results(monkeypatch, True)
    assert used
    without, unused = _step_results(monkeypatch, False)
    assert not unused
    for a, b in zip(with_lane, without):
        assert a.dtype == b.dtype == np.float32
        assert a.tobytes() == b.tobytes()


def test_a_server_with_the_lane_off_offers_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSORWEAVE_CALL_LANE", "0")
    srv = tf.train.Server.create_local_server()
    try:
        assert lane_port(srv) is None
    finally:
        srv.stop()
    assert not lane.enabled({"TENSORWEAVE_CALL_LANE": "0"})
    assert lane.enabled({})


def test_the_frame_header_is_24_bytes() -> None:
    assert lane.FRAME.size == 24
    assert struct.unpack("<QQBBH4x", lane.FRAME.pack(1, 2, 3, 0, 5)) == (1, 2, 3, 0, 5)


def _stalling_server(method: str) -> tf.train.Server:
    """A one-task server whose call lane stalls in `method`'s reply and then drops every
    request unrun (the test-only hook, read when the server starts)."""
    (port,) = free_ports(1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TENSORWEAVE_CALL_LANE", "1")
        patch.setenv("TENSORWEAVE_TEST_LANE_STALL", method)
        return tf.train.Server({"local": [f"127.0.0.1:{port}"]})


def _peer_on_its_lane(srv: tf.train.Server) -> Peer:
    """A client end to `srv` with its call lane open (a first call, over gRPC, opens it)."""
    peer = Peer(srv._impl.task.name, srv._impl.address, Security())
    try:
        peer.call(WORKER, "GetStatus", {}, 10.0)
        assert eventually(lambda: peer._lane is not None, 10.0)
    except BaseException:
        peer.close()
        raise
    return peer


def test_cleanups_and_aborts_sent_on_a_lane_that_stalls_go_again_over_grpc() -> None:
    with _stalling_server("GetStatus") as srv:
        worker = srv._impl.worker
        device = worker.devices[0]
        key = f"{device.name};{device.incarnation:016x};{device.name};gone:0;0:0"
        aborted = worker.rendezvous_mgr.find_or_create(8101)
        peer = _peer_on_its_lane(srv)
        try:
            status = Inbox()
            peer.call_async(WORKER, "GetStatus", {}, 30.0, status)
            # fire-and-forget, behind the stalled reply: the server never sees them on the lane
            peer.call_async(WORKER, "AbortStep", {"step_id": 8101, "error": messages.error_to_wire(
                tf.errors.CancelledError(None, None, "the master is gone"))}, 30.0)
            peer.call_async(WORKER, "CleanupStep", {"step_ids": [8102]}, 30.0)
            assert status.event.wait(lane.STALL_SECONDS + 10)
            assert status.calls[0][0] is None  # GetStatus, again over gRPC
            assert eventually(lambda: aborted.status is not None, 10.0)
            assert "the master is gone" in str(aborted.status)
            with pytest.raises(tf.errors.AbortedError, match="already cleaned up"):
                assert eventually(lambda: worker.recv_tensor_async(
                    8102, key, 0.01, lambda error, value: None) is not None, 10.0)
        finally:
            peer.close()
            worker.cleanup_step(8101)


def test_a_registration_whose_lane_stalls_is_sent_again_and_registered_once() -> None:
    with _stalling_server("RegisterGraph") as srv:
        worker = srv._impl.worker
        const = NodeDef("c", "Const", [], worker.devices[0].name, {
            "dtype": tf.float32, "value": np.array(1.0, np.float32),
            "_output_types": [tf.float32], "_output_shapes": [TensorShape([])]})
        peer = _peer_on_its_lane(srv)
        try:
            stalled = peer._lane
            # the lane's socket probes a peer that went quiet (TCP keepalive)
            assert stalled._conn.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)
            before = set(worker._graphs)
            registration = WorkerStub(peer, 30.0).register_graph(GraphDef(node=[const]))
            assert "stalled" in stalled.broken  # sent again over gRPC, under its request id
            assert set(worker._graphs) - before == {registration.handle}
        finally:
            peer.close()


def test_a_fetch_still_waiting_when_its_lane_stalls_is_joined_by_its_repeat() -> None:
    with _stalling_server("GetStatus") as srv:
        worker = srv._impl.worker
        device = worker.devices[0]
        key = f"{device.name};{device.incarnation:016x};{device.name};later:0;0:0"
        value = np.arange(4.0)
        peer = _peer_on_its_lane(srv)
        try:
            fetched, status = Inbox(), Inbox()
            # the fetch waits on the server for a value not sent yet; then the lane stalls
            peer.call_async(WORKER, "RecvTensor", {"step_id": 8201, "key": key,
                                                   "timeout": 60.0}, 60.0, fetched, quick=True)
            peer.call_async(WORKER, "GetStatus", {}, 30.0, status)
            assert status.event.wait(lane.STALL_SECONDS + 10)  # broken, sent again over gRPC
            assert not fetched.calls  # its repeat waits with the first fetch, which never ran twice
            worker.rendezvous_mgr.find_or_create(8201).send(key, value)
            assert fetched.event.wait(10)
            error, body = fetched.calls[0]
            assert error is None
            np.testing.assert_array_equal(body["tensor"], value)
        finally:
            peer.close()
            worker.cleanup_step(8201)
