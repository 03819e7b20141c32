"""The distributed runtime across real processes: 1 ps and 3 workers run as ``tensorweave
server`` subprocesses on loopback (started once for the module); this test process is a client
that hosts no server. The last test kills worker 2."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.train.local_cluster import LocalCluster

MIB = 1 << 20


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster({"ps": 1, "worker": 3}) as local:
        yield local


def seed_graph(device_fn: object, prefix: str) -> tuple[object, object, object]:
    with tf.device(device_fn):
        x = tf.placeholder(tf.float32, shape=[], name="x")
        S = tf.Variable(0.0, name=f"{prefix}_S")
        w = tf.Variable(2.0, name=f"{prefix}_w")
        b = tf.Variable(1.0, name=f"{prefix}_b")
        update = tf.assign_add(S, w * x + b)
    return x, update, tf.global_variables_initializer()


def test_seed_graph_results_equal_the_in_process_run(cluster: LocalCluster) -> None:
    x, update, init = seed_graph(None, "local")
    with tf.Session() as sess:
        sess.run(init)
        expected = [sess.run(update, {x: step}) for step in range(5)]
    tf.reset_default_graph()
    x, update, init = seed_graph(tf.train.replica_device_setter(cluster=cluster.cluster),
                                 "seed")
    metadata = tf.RunMetadata()
    with tf.Session(cluster.target("worker", 0)) as sess:
        sess.run(init)
        got = [sess.run(update, {x: step}) for step in range(5)]
        sess.run(update, {x: 0.0}, options=tf.RunOptions(output_partition_graphs=True),
                 run_metadata=metadata)
    assert got == expected == [1.0, 4.0, 9.0, 16.0, 25.0]
    assert all(isinstance(v, np.float32) for v in got)
    placed = {n.name: n.device for g in metadata.partition_graphs for n in g.node}
    assert placed["seed_S"] == placed["AssignAdd"] == "/job:ps/replica:0/task:0/device:CPU:0"
    # (`add`, not `mul`: the fusion plugin may fold `mul` into the fused node named `add`)
    assert placed["add"] == "/job:worker/replica:0/task:0/device:CPU:0"


def test_two_clients_on_two_workers_share_the_ps_variables(cluster: LocalCluster) -> None:
    clients = []
    for worker in (0, 1):
        graph = tf.Graph()
        with graph.as_default():
            x, update, init = seed_graph(tf.train.replica_device_setter(
                cluster=cluster.cluster, worker_device=f"/job:worker/task:{worker}"), "shared")
        clients.append((tf.Session(cluster.target("worker", worker), graph=graph), x, update,
                        init))
    try:
        clients[0][0].run(clients[0][3])
        sums = []
        for step in range(6):
            sess, x, update, _ = clients[step % 2]
            sums.append(sess.run(update, {x: step}))
        assert sums == [1.0, 4.0, 9.0, 16.0, 25.0, 36.0]
    finally:
        for sess, *_ in clients:
            sess.close()


def test_every_dtype_round_trips_between_tasks(cluster: LocalCluster) -> None:
    rng = np.random.default_rng(0)
    values = {
        np.float16: np.array([np.finfo(np.float16).max, -0.0, np.nan, np.inf, 1e-7], np.float16),
        np.float32: rng.standard_normal(7).astype(np.float32),
        np.float64: np.array([np.finfo(np.float64).tiny, -np.inf, 1 / 3]),
        np.int8: np.array([-128, 127, 0], np.int8), np.int16: np.array([-32768, 32767], np.int16),
        np.int32: np.iinfo(np.int32).min + np.arange(3, dtype=np.int32),
        np.int64: np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max]),
        np.uint8: np.arange(256, dtype=np.uint8).reshape(16, 16),
        np.bool_: np.array([[True, False], [False, True]]),
    }
    feeds, outs = {}, []
    for i, (np_type, value) in enumerate(values.items()):
        with tf.device("/job:ps/task:0"):
            p = tf.placeholder(tf.as_dtype(np_type), name=f"dt_in{i}")
            on_ps = tf.identity(p, name=f"dt_ps{i}")
        with tf.device("/job:worker/task:1"):
            outs.append(tf.identity(on_ps, name=f"dt_worker{i}"))  # ps -> worker 1
        feeds[p] = value
    with tf.Session(cluster.target("worker", 0)) as sess:  # fetched via worker 0's master
        got = sess.run(outs, feeds)
    for value, out in zip(values.values(), got):
        assert out.dtype == value.dtype and out.shape == value.shape
        assert out.tobytes() == value.tobytes()  # bit-exact, NaN and -0.0 included


def test_64_mib_crosses_tasks_in_chunks_and_comes_back(cluster: LocalCluster) -> None:
    data = np.random.default_rng(1).integers(0, 255, 64 * MIB + 5, dtype=np.uint8)
    with tf.device("/job:ps/task:0"):
        x = tf.placeholder(tf.uint8, name="big_in")
        big = tf.Variable(np.zeros(data.size, np.uint8), name="big_var")
        load = tf.assign(big, x)  # client -> worker 0's master -> ps, streamed
    with tf.device("/job:worker/task:1"):
        pulled = tf.identity(big, name="big_on_worker")  # ps -> worker 1 by RecvTensor
    with tf.Session(cluster.target("worker", 0)) as sess:
        sess.run(load, {x: data})
        got = sess.run(pulled)  # worker 1 -> master -> client
    assert got.dtype == np.uint8 and np.array_equal(got, data)


def test_an_error_in_one_task_aborts_the_step_on_every_task(cluster: LocalCluster) -> None:
    with tf.device("/job:worker/task:1"):
        a = tf.placeholder(tf.float32, name="err_a")
        doubled = a * 2.0
    with tf.device("/job:ps/task:0"):
        b = tf.placeholder(tf.float32, name="err_b")
        total = doubled + b  # [2] + [3]: fails on the ps, while worker 1 waits on the ps
    with tf.device("/job:worker/task:0"):
        out = tf.identity(total * 1.0, name="err_out")
    with tf.Session(cluster.target("worker", 0)) as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.InvalidArgumentError, match="/job:ps/replica:0/task:0"):
            sess.run(out, {a: [1.0, 2.0], b: [1.0, 2.0, 3.0]})
        assert time.monotonic() - start < 5.0
        np.testing.assert_array_equal(sess.run(out, {a: [1.0, 2.0], b: [0.5, 0.5]}),
                                      [2.5, 4.5])


def test_a_compiled_step_answered_from_its_last_task_relays_values_and_errors(
        cluster: LocalCluster) -> None:
    # the first run compiles (on the master's pool); the next ones, of a compiled signature
    # over two tasks, are answered from the callback of the step's last task
    with tf.device("/job:worker/task:1"):
        a = tf.placeholder(tf.float32, name="cmp_a")
        doubled = a * 2.0
    with tf.device("/job:ps/task:0"):
        b = tf.placeholder(tf.float32, name="cmp_b")
        total = doubled + b
    with tf.device("/job:worker/task:1"):
        out = tf.identity(total * 1.0, name="cmp_out")
    with tf.Session(cluster.target("worker", 1)) as sess:
        for step in range(3):
            got = sess.run(out, {a: [1.0, float(step)], b: [0.5, 0.5]})
            np.testing.assert_array_equal(got, np.array([2.5, 2.0 * step + 0.5], np.float32))
            assert got.dtype == np.float32
        start = time.monotonic()
        with pytest.raises(tf.errors.InvalidArgumentError, match="/job:ps/replica:0/task:0"):
            sess.run(out, {a: [1.0, 2.0], b: [1.0, 2.0, 3.0]})
        assert time.monotonic() - start < 5.0
        np.testing.assert_array_equal(sess.run(out, {a: [1.0, 2.0], b: [0.5, 0.5]}),
                                      [2.5, 4.5])


def test_kill_9_of_a_worker_mid_run(cluster: LocalCluster) -> None:
    with tf.device("/job:ps/task:0"):
        counter = tf.Variable(0.0, name="kill_counter")
    with tf.device("/job:worker/task:2"):
        increment = tf.constant(1.0) * tf.placeholder(tf.float32, name="kill_x")
    with tf.device("/job:ps/task:0"):
        step = tf.assign_add(counter, increment)
    sess = tf.Session(cluster.target("worker", 1))
    sess.run(counter.initializer)
    failure: list[BaseException] = []
    steps = [0]
    running = threading.Event()

    def loop() -> None:
        try:
            while True:
                sess.run(step, {"kill_x:0": 1.0})
                steps[0] += 1
                running.set()
        except tf.errors.OpError as exc:
            failure.append(exc)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    assert running.wait(10)
    cluster.kill("worker", 2)  # SIGKILL, mid-run
    killed = time.monotonic()
    thread.join(15)
    assert not thread.is_alive() and failure
    assert time.monotonic() - killed < 10.0
    assert isinstance(failure[0], tf.errors.UnavailableError)
    assert "/job:worker/replica:0/task:2" in failure[0].message
    with pytest.raises(tf.errors.UnavailableError):  # and so does the next step
        sess.run(step, {"kill_x:0": 1.0})
    start = time.monotonic()
    sess.close()
    assert time.monotonic() - start < 3.0

    # the ps still serves and holds what the steps did; new sessions on live tasks work
    tf.reset_default_graph()
    with tf.device("/job:ps/task:0"):
        survivor = tf.Variable(0.0, name="kill_counter")
    with tf.device("/job:worker/task:0"):
        read = survivor * 1.0
    # (the master waits for the dead task up to the operation timeout, then leaves it out)
    config = tf.ConfigProto(operation_timeout_in_ms=2000)
    with tf.Session(cluster.target("worker", 0), config=config) as fresh:
        assert fresh.run(read) >= steps[0] >= 1
