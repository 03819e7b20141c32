"""`SyncReplicasOptimizer`: graph construction and argument checks in process, and synchronous
training on a real cluster (1 ps + 2 workers as ``tensorweave server`` processes), each worker a
`MonitoredTrainingSession` of its own graph, as TF's distributed scripts build it. Each cluster
test gets a fresh cluster: the token queue and the accumulators live on the ps under fixed
shared names. Worker steps run in lockstep rounds (a barrier between rounds), so which gradients
each aggregation averages is deterministic and the variables can be compared with plain
full-batch gradient descent in numpy.

When a chief's session closes, its sync thread is still waiting in its take; it ends with the
session's error, raised in the thread because the coordinator was joined already (TF logs the
same). The tests that run a chief wait for that thread and let pytest's warning about it pass."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.graph.graph import constant_value
from tensorweave.train.local_cluster import LocalCluster

LR = 0.1
GRACE_SECS = 0.5  # the chief's sync thread waits in its take when training ends (as in TF)
RNG = np.random.default_rng(7)
X = RNG.normal(size=(8, 3)).astype(np.float32)
Y = (X @ np.array([[1.5], [-2.0], [0.5]], np.float32) + 0.25).astype(np.float32)


# The chief's sync thread ends with an error once its session is closed (see the docstring).
chief_thread_dies_with_its_session = pytest.mark.filterwarnings(
    "ignore::pytest.PytestUnhandledThreadExceptionWarning")


def join_sync_threads() -> None:
    for thread in threading.enumerate():
        if thread.name.startswith("QueueRunnerThread-dummy_queue"):
            thread.join(10)
            assert not thread.is_alive(), "the chief's sync thread outlived its session"


def shard(worker: int) -> tuple[np.ndarray, np.ndarray]:
    return X[worker::2], Y[worker::2]


def reference(steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Full-batch gradient descent: the mean of the two equal shards' gradients is the
    gradient of the mean loss over all the data."""
    w, b = np.zeros((3, 1)), np.zeros(1)
    for _ in range(steps):
        grads_w, grads_b = [], []
        for worker in (0, 1):
            x, y = shard(worker)
            err = x @ w + b - y
            grads_w.append(2 * x.T @ err / len(x))
            grads_b.append(2 * err.mean(axis=0))
        w = w - LR * np.mean(grads_w, axis=0)
        b = b - LR * np.mean(grads_b, axis=0)
    return w, b


def full_loss(w: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean((X @ w + b - Y) ** 2))


# The embedding model: worker i's loss is sum(lookup(emb, IDS[i]) * WEIGHTS[i]), so its
# gradient is the IndexedSlices (IDS[i], WEIGHTS[i]). Worker 0 repeats row 2, both touch it.
EMB = (np.arange(12, dtype=np.float32).reshape(6, 2) / 10).astype(np.float32)
IDS = ([0, 2, 2], [2, 4])
WEIGHTS = (np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32),
           np.array([[-1.0, 1.0], [2.0, -2.0]], np.float32))

Model = Callable[[int], tuple[tf.Tensor, dict[str, tf.Variable]]]


def linear_model(index: int) -> tuple[tf.Tensor, dict[str, tf.Variable]]:
    w = tf.Variable(tf.zeros([3, 1]), name="w")
    b = tf.Variable(tf.zeros([1]), name="b")
    x, y = shard(index)
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(x), w) + b - tf.constant(y)))
    return loss, {"w": w, "b": b}


def embedding_model(index: int) -> tuple[tf.Tensor, dict[str, tf.Variable]]:
    emb = tf.Variable(EMB, name="emb")
    rows = tf.nn.embedding_lookup(emb, tf.constant(IDS[index]))
    return tf.reduce_sum(rows * tf.constant(WEIGHTS[index])), {"emb": emb}


def sparse_reference(steps: int) -> np.ndarray:
    """TF's sparse aggregation: each row's summed gradient divided by the number of workers
    whose gradient touched it, applied once per step."""
    emb = EMB.astype(np.float64)
    for _ in range(steps):
        total, touched = np.zeros_like(emb), np.zeros(len(emb))
        for ids, values in zip(IDS, WEIGHTS):
            np.add.at(total, ids, values)
            touched[sorted(set(ids))] += 1
        rows = touched > 0
        emb[rows] -= LR * total[rows] / touched[rows, None]
    return emb


class Worker:
    """One worker's graph, train op and monitored session."""

    def __init__(self, cluster: LocalCluster, index: int, num_tokens: int,
                 model: Model = linear_model) -> None:
        self.graph = tf.Graph()
        with self.graph.as_default():
            with tf.device(tf.train.replica_device_setter(
                    cluster=cluster.cluster, worker_device=f"/job:worker/task:{index}")):
                self.global_step = tf.train.get_or_create_global_step()
                loss, self.vars = model(index)
                self.opt = tf.train.SyncReplicasOptimizer(
                    tf.train.GradientDescentOptimizer(LR), replicas_to_aggregate=2,
                    total_num_replicas=2)
                self.train_op = self.opt.minimize(loss, global_step=self.global_step)
                hook = self.opt.make_session_run_hook(index == 0, num_tokens=num_tokens)
            self.local_step = self.graph.get_tensor_by_name("sync_rep_local_step:0")
            self.sess = tf.train.MonitoredTrainingSession(
                master=cluster.target("worker", index), is_chief=index == 0, hooks=[hook],
                stop_grace_period_secs=GRACE_SECS)

    def run(self, fetches: Any) -> Any:
        return self.sess.run(fetches)


def in_lockstep(workers: list[Worker], rounds: int) -> list[int]:
    """Both workers run `rounds` train steps, round by round, on threads; returns each
    worker's steps."""
    barrier = threading.Barrier(len(workers), timeout=20)
    steps = [0] * len(workers)
    failures: list[BaseException] = []

    def loop(i: int) -> None:
        try:
            for _ in range(rounds):
                barrier.wait()
                workers[i].run(workers[i].train_op)
                steps[i] += 1
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            failures.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=loop, args=(i,), daemon=True)
               for i in range(len(workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "a worker hung"
    if failures:
        raise failures[0]
    return steps


def train_on_cluster(num_tokens: int, body: Callable[[list[Worker]], None],
                     model: Model = linear_model) -> None:
    with LocalCluster({"ps": 1, "worker": 2}) as cluster:
        # the chief first: the other waits for it
        workers = [Worker(cluster, 0, num_tokens, model)]
        workers.append(Worker(cluster, 1, num_tokens, model))
        try:
            body(workers)
        finally:
            for worker in reversed(workers):
                worker.sess.close()
    join_sync_threads()  # released by the servers' exit


# -- the cluster ----------------------------------------------------------------------------------

@chief_thread_dies_with_its_session
def test_two_workers_aggregate_each_step_into_one_global_step() -> None:
    rounds = 12

    def body(workers: list[Worker]) -> None:
        chief, other = workers
        assert other.run(other.global_step) == 0
        steps = in_lockstep(workers, rounds)
        assert steps == [rounds, rounds]  # 2 * rounds gradients were applied ...
        assert other.run(other.global_step) == rounds  # ... and the model took `rounds` steps
        assert chief.run(chief.local_step) == other.run(other.local_step) == rounds
        w, b = other.run([other.vars["w"], other.vars["b"]])
        ref_w, ref_b = reference(rounds)
        np.testing.assert_allclose(w, ref_w, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(b, ref_b, rtol=1e-4, atol=1e-5)
        assert w.dtype == np.float32
        assert full_loss(w, b) < 0.5 * full_loss(np.zeros((3, 1)), np.zeros(1))

    train_on_cluster(0, body)


@chief_thread_dies_with_its_session
def test_initial_tokens_let_the_first_steps_through_and_their_late_gradients_are_stale() -> None:
    def body(workers: list[Worker]) -> None:
        chief, other = workers
        # Default tokens (replicas_to_aggregate): each worker's first step does not wait.
        chief.run(chief.train_op)
        other.run(other.train_op)
        ref_w, ref_b = reference(1)
        deadline = time.monotonic() + 10.0  # the chief's thread applies the mean meanwhile
        while other.run(other.global_step) != 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        np.testing.assert_allclose(other.run(other.vars["w"]), ref_w, rtol=1e-5)
        assert chief.run(chief.local_step) == other.run(other.local_step) == 0
        # The second steps still carry local step 0, below the accumulators' global step 1:
        # their gradients are dropped, and the workers wait for the tokens of step 1.
        in_lockstep(workers, 1)
        assert other.run(other.global_step) == 1
        assert chief.run(chief.local_step) == other.run(other.local_step) == 1
        np.testing.assert_allclose(other.run(other.vars["w"]), ref_w, rtol=1e-5)
        in_lockstep(workers, 3)
        assert other.run(other.global_step) == 4
        np.testing.assert_allclose(other.run(other.vars["w"]), reference(4)[0], rtol=1e-4,
                                   atol=1e-5)

    train_on_cluster(-1, body)


@chief_thread_dies_with_its_session
def test_sparse_gradients_aggregate_row_by_row_and_stay_sparse() -> None:
    rounds = 2

    def body(workers: list[Worker]) -> None:
        chief, other = workers
        ops = chief.graph.get_operations()
        takes = [op for op in ops if op.type == "SparseAccumulatorTakeGradient"]
        assert len(takes) == 1 and takes[0].device == "/job:ps/task:0"
        assert not [op for op in ops if op.type == "ConditionalAccumulator"]
        # the chief's update reads the taken rows, not a [6, 2] densified gradient
        consumers = {op.type for out in takes[0].outputs for op in out.consumers()}
        assert "UnsortedSegmentSum" not in consumers
        in_lockstep(workers, rounds)
        assert other.run(other.global_step) == rounds
        emb = other.run(other.vars["emb"])
        np.testing.assert_allclose(emb, sparse_reference(rounds), rtol=1e-6)
        np.testing.assert_array_equal(emb[[1, 3, 5]], EMB[[1, 3, 5]])  # untouched rows
        assert emb.dtype == np.float32

    train_on_cluster(0, body, embedding_model)


# -- graph construction ---------------------------------------------------------------------------

def build(num_workers: int = 2, replicas: int = 2, on_cluster: bool = True,
          averages: Any = None) -> tuple[Any, Any, Any, Any]:
    cluster = tf.train.ClusterSpec({"ps": ["localhost:1"],
                                    "worker": [f"localhost:{2 + i}" for i in range(num_workers)]})
    setter = tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:1")
    with tf.device(setter if on_cluster else None):
        global_step = tf.train.get_or_create_global_step()
        v = tf.Variable([1.0, 2.0], name="v")
        opt = tf.train.SyncReplicasOptimizer(
            tf.train.GradientDescentOptimizer(0.5), replicas, total_num_replicas=num_workers,
            variable_averages=averages, variables_to_average=None if averages is None else [v])
        train_op = opt.apply_gradients([(tf.constant([0.1, 0.2]), v)], global_step=global_step)
    return opt, train_op, global_step, v


def test_graph_puts_accumulators_and_tokens_on_the_ps_and_the_local_step_on_the_worker() -> None:
    opt, train_op, _, _ = build()
    graph = tf.get_default_graph()
    ops = {op.name: op for op in graph.get_operations()}
    accumulator = ops["sync_replicas/conditional_accumulator"]
    assert accumulator.type == "ConditionalAccumulator"
    assert accumulator.get_attr("shared_name") == "v:0/grad_accum"
    assert accumulator.get_attr("shape").as_list() == [2]
    assert accumulator.device == ops["sync_token_q"].device == "/job:ps/task:0"
    assert ops["sync_token_q"].get_attr("shared_name") == "sync_token_q"
    local_step = ops["sync_rep_local_step"]
    assert local_step.device == "/job:worker/task:1"
    assert "sync_rep_local_step:0" not in [v.name for v in tf.global_variables()]
    assert "sync_rep_local_step:0" in [v.name for v in tf.local_variables()]
    assert train_op.op.type == "Assign" and train_op.dtype == tf.int64
    runner = opt.get_chief_queue_runner()
    assert runner.queue.name == "dummy_queue"
    assert [op.type for op in runner.enqueue_ops] == ["QueueEnqueueManyV2"]
    assert opt.get_slot_names() == [] and opt.variables() == []


def test_tokens_per_step_and_init_tokens() -> None:
    opt, _, _, _ = build(num_workers=3, replicas=2)
    runner = opt.get_chief_queue_runner()
    fill = runner.enqueue_ops[0].inputs[1].op
    assert fill.type == "Fill"
    np.testing.assert_array_equal(constant_value(fill.inputs[0]), [3])  # max(3, 2)
    assert opt.get_init_tokens_op(0).type == "NoOp"
    with pytest.raises(ValueError, match="Too few tokens to finish the first step"):
        tf.reset_default_graph()
        opt, _, _, _ = build(num_workers=1, replicas=3)
        opt.get_init_tokens_op(1)
    init = opt.get_init_tokens_op()
    assert init.type == "QueueEnqueueManyV2"


@chief_thread_dies_with_its_session
def test_one_replica_in_one_process_drops_the_stale_second_step() -> None:
    """The chief's thread applies each gradient alone. The first step takes an initial token
    of step 0, so the second one's gradient (local step 0) is stale once the first is applied,
    or is averaged with it: both are the same constant. Either way the third step waits for the
    tokens of step 2. The chief's op also updates the moving averages, after the tokens."""
    ema = tf.train.ExponentialMovingAverage(0.5)
    opt, train_op, global_step, v = build(num_workers=1, replicas=1, on_cluster=False,
                                          averages=ema)
    hook = opt.make_session_run_hook(is_chief=True)
    with tf.train.MonitoredTrainingSession(hooks=[hook],
                                           stop_grace_period_secs=GRACE_SECS) as sess:
        assert [sess.run(train_op) for _ in range(3)] == [0, 1, 2]
        assert sess.run(global_step) == 2
        np.testing.assert_allclose(sess.run(v), [1.0 - 2 * 0.05, 2.0 - 2 * 0.1], rtol=1e-6)
        expected = np.array([1.0, 2.0])
        for value in ([0.95, 1.9], [0.9, 1.8]):
            expected = 0.5 * expected + 0.5 * np.array(value)
        deadline = time.monotonic() + 5.0
        while not np.allclose(sess.run(ema.average(v)), expected) and \
                time.monotonic() < deadline:
            time.sleep(0.01)
        np.testing.assert_allclose(sess.run(ema.average(v)), expected, rtol=1e-6)
    join_sync_threads()


def test_bad_arguments() -> None:
    v = tf.Variable(1.0)
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2)
    with pytest.raises(ValueError, match="Global step is required to check staleness"):
        opt.apply_gradients([(tf.constant(1.0), v)])
    with pytest.raises(ValueError, match="Must supply at least one variable"):
        opt.apply_gradients([], global_step=tf.train.get_or_create_global_step())
    with pytest.raises(ValueError, match="after apply_gradients"):
        opt.get_chief_queue_runner()
    with pytest.raises(ValueError, match="after apply_gradients"):
        opt.get_init_tokens_op()
    with pytest.raises(ValueError, match="apply_gradient should be called before"):
        opt.make_session_run_hook(True).begin()
