"""The master: compiled steps cached per signature, graph growth, feeds and fetches."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import errors
from tensorweave.engine.client.session import local_master
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.runtime import master as master_module
from tensorweave.engine.runtime.device import TaskSpec
from tensorweave.engine.runtime.master import MasterSession
from tensorweave.engine.runtime.worker import Worker


def compiled_step(s: tf.Session, fetches: list[tf.Tensor],
                  feed_dict: dict[tf.Tensor, object]) -> object:
    """Run `fetches`; the compiled step the session's master holds for that signature."""
    s.run(fetches, feed_dict)
    return s._master.cached([t.name for t in feed_dict], [t.name for t in fetches], [])


def test_a_signature_compiles_once() -> None:
    x = tf.placeholder(tf.float32, [2])
    y = x * 3.0
    with tf.Session() as s:
        first = compiled_step(s, [y], {x: [1.0, 2.0]})
        assert first is not None and compiled_step(s, [y], {x: [5.0, 6.0]}) is first
        assert compiled_step(s, [y, x], {x: [1.0, 2.0]}) is not first


def test_master_compile_is_cached_per_signature() -> None:
    x = tf.placeholder(tf.float32, [], name="x")
    y = tf.multiply(x, 2.0, name="y")
    master, workers = local_master(tf.ConfigProto())
    try:
        master.extend([op._engine_node_def for op in tf.get_default_graph().get_operations()])
        compiled = master.compile([x.name], [y.name], [])
        assert master.compile([x.name], [y.name], []) is compiled
        assert master.compile([], [y.name], []) is not compiled
        assert master.compile([x.name], [y.name], [y.op.name]) is not compiled
        master.extend([tf.identity(y).op._engine_node_def])
        assert master.compile([x.name], [y.name], []) is not compiled
        (worker,) = workers
        (stale_handle,) = compiled.handles.values()
        with pytest.raises(errors.AbortedError, match="Graph handle is not found"):
            worker.run_graph(stale_handle, 1, {0: np.float32(1.0)})
    finally:
        master.close()
        for worker in workers:
            worker.close()


def test_ops_added_after_a_run_work_and_stale_steps_are_not_reused() -> None:
    x = tf.placeholder(tf.float32, [2])
    y = x + 1.0
    feed = {x: [1.0, 2.0]}
    with tf.Session() as s:
        before = compiled_step(s, [y], feed)
        z = y * 10.0
        np.testing.assert_array_equal(s.run(z, feed), np.array([20.0, 30.0], np.float32))
        after = compiled_step(s, [y], feed)
        assert after is not None and after is not before
        assert compiled_step(s, [y], feed) is after
        w = tf.Variable(2.0)
        s.run(w.initializer)
        np.testing.assert_array_equal(s.run(y * w, feed), np.array([4.0, 6.0], np.float32))


def test_a_fetch_of_a_fed_tensor_returns_the_fed_value() -> None:
    x = tf.placeholder(tf.float32, [2])
    y = x * 2.0
    z = y + 1.0
    with tf.Session() as s:
        got_y, got_z = s.run([y, z], {y: [10.0, 20.0]})
        np.testing.assert_array_equal(got_y, np.array([10.0, 20.0], np.float32))
        np.testing.assert_array_equal(got_z, np.array([11.0, 21.0], np.float32))
        got_x, got_y = s.run([x, y], {x: [3.0, 4.0]})
        np.testing.assert_array_equal(got_x, np.array([3.0, 4.0], np.float32))
        np.testing.assert_array_equal(got_y, np.array([6.0, 8.0], np.float32))
        assert got_x.dtype == got_y.dtype == np.float32


def test_feed_order_is_part_of_the_signature_not_of_the_result() -> None:
    a = tf.placeholder(tf.float32, [])
    b = tf.placeholder(tf.float32, [])
    d = a - b
    with tf.Session() as s:
        assert s.run(d, {a: 5.0, b: 2.0}) == np.float32(3.0)
        assert s.run(d, {b: 2.0, a: 5.0}) == np.float32(3.0)
        assert s.run(d, {b: 5.0, a: 2.0}) == np.float32(-3.0)


def test_concurrent_runs_share_the_cache_and_stay_correct() -> None:
    x = tf.placeholder(tf.float32, [])
    y = x * x
    results: dict[int, float] = {}
    with tf.Session() as s:
        def worker(i: int) -> None:
            for _ in range(50):
                results[i] = float(s.run(y, {x: float(i)}))

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert results == {i: float(i * i) for i in range(8)}


def test_the_session_keeps_working_after_an_error() -> None:
    x = tf.placeholder(tf.float32, [2], name="x")
    y = x + 1.0
    with tf.Session() as s:
        with pytest.raises(errors.InvalidArgumentError, match="placeholder tensor 'x'"):
            s.run(y)
        np.testing.assert_array_equal(s.run(y, {x: [0.0, 1.0]}),
                                      np.array([1.0, 2.0], np.float32))


class _SilentWorker(Worker):
    """A task that registers its piece but never answers a step (a hung process)."""

    def __init__(self) -> None:
        super().__init__(TaskSpec("silent", 0, 0), tf.ConfigProto(), get_registries())
        self.aborted: list[int] = []
        self.cleaned: list[int] = []

    def run_graph_async(self, *args: object) -> None:
        pass

    def abort_step(self, step_id: int, error: BaseException) -> None:
        self.aborted.append(step_id)

    def cleanup_step(self, step_id: int) -> None:
        self.cleaned.append(step_id)


def two_task_master() -> tuple[MasterSession, _SilentWorker, list[str]]:
    """A master over a local task and a silent one, with `[local fetch, silent fetch]`."""
    with tf.device("/job:localhost/task:0"):
        here = tf.constant(3.0, name="here") * 2.0
    with tf.device("/job:silent/task:0"):
        there = tf.constant(4.0, name="there") * 2.0
    local, _ = local_master(tf.ConfigProto())
    silent = _SilentWorker()
    master = MasterSession({**local.workers, silent.task.name: silent}, local.default_task,
                           local.config, local.registries)
    master.extend([op._engine_node_def for op in tf.get_default_graph().get_operations()])
    return master, silent, [here.name, there.name]


def run_async_result(master: MasterSession, fetches: list[str], timeout: float) -> list[tuple]:
    outcomes: list[tuple] = []
    finished = threading.Event()

    def done(error: BaseException | None, result: object) -> None:
        outcomes.append((error, result))
        finished.set()

    master.run_async({}, fetches, [], False, timeout, done)
    assert finished.wait(5.0)
    time.sleep(0.05)  # a second call of `done` would come now
    return outcomes


def test_run_async_answers_as_run_does() -> None:
    x = tf.placeholder(tf.float32, None, name="x")
    y = x * tf.constant([3.0, 3.0])
    master, _ = local_master(tf.ConfigProto())
    master.extend([op._engine_node_def for op in tf.get_default_graph().get_operations()])
    assert master.cached([x.name], [y.name], []) is None
    values, _, compiled = master.run({x.name: np.array([1.0, 2.0], np.float32)}, [y.name], [])
    assert master.cached([x.name], [y.name], []) is compiled
    outcomes: list[tuple] = []
    master.run_async({x.name: np.array([5.0, 6.0], np.float32)}, [y.name], [], False, None,
                     lambda error, result: outcomes.append((error, result)))
    [(error, (async_values, _, async_compiled))] = outcomes
    assert error is None and async_compiled is compiled
    np.testing.assert_array_equal(values[0], np.array([3.0, 6.0], np.float32))
    np.testing.assert_array_equal(async_values[0], np.array([15.0, 18.0], np.float32))
    assert async_values[0].dtype == np.float32
    outcomes.clear()
    master.run_async({x.name: np.array([1.0, 2.0, 3.0], np.float32)}, [y.name], [], False, None,
                     lambda error, result: outcomes.append((error, result)))
    [(error, result)] = outcomes
    assert isinstance(error, errors.InvalidArgumentError) and result is None


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_task_that_never_answers_fails_the_step_at_its_deadline(
        monkeypatch: pytest.MonkeyPatch, asynchronous: bool) -> None:
    monkeypatch.setattr(master_module, "DEADLINE_GRACE_SECONDS", 0.05)
    master, silent, fetches = two_task_master()
    start = time.monotonic()
    if asynchronous:
        [(error, result)] = run_async_result(master, fetches, 0.1)
        assert result is None
    else:
        with pytest.raises(errors.DeadlineExceededError) as raised:
            master.run({}, fetches, [], False, 0.1)
        error = raised.value
    assert isinstance(error, errors.DeadlineExceededError)
    assert "no answer from ['/job:silent/replica:0/task:0']" in error.message
    assert 0.14 <= time.monotonic() - start < 2.0
    assert len(silent.aborted) == 1 and silent.cleaned == silent.aborted


def test_device_filters_keep_a_session_to_the_tasks_they_name() -> None:
    # A between-graph worker filters to the ps and itself (TF's usual device_filters).
    from tensorweave.train.local_cluster import free_ports

    ports = free_ports(3)
    cluster = {"ps": [f"localhost:{ports[0]}"],
               "worker": [f"localhost:{ports[1]}", f"localhost:{ports[2]}"]}
    servers = [tf.train.Server(cluster, job, task) for job, task in
               (("ps", 0), ("worker", 0), ("worker", 1))]
    try:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0)
        with tf.device("/job:worker/task:0"):
            y = v * 2.0
        config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:0"])
        with tf.Session(servers[1].target, config=config) as sess:
            tasks = {d.name.rsplit("/device:", 1)[0] for d in sess.list_devices()}
            assert tasks == {"/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0"}
            sess.run(v.initializer)
            assert sess.run(y) == 2.0
        with tf.Session(servers[1].target) as sess:
            assert len({d.name.rsplit("/device:", 1)[0] for d in sess.list_devices()}) == 3
    finally:
        for server in servers:
            server.stop()
