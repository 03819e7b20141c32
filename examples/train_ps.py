"""Train a small classifier on a ps/worker cluster, TF1-style: an MLP on a synthetic dataset.

A plain TF1 graph-mode training script (only the import differs from TensorFlow's). By default
it starts a local cluster of 1 ps + 2 worker tasks (``tensorweave server`` processes on free
loopback ports) and trains with between-graph replication: each worker task has its own client
(a thread here) that builds its own graph under ``replica_device_setter``, so the variables
(weights, biases, global step, momentum slots) live on the ps and the compute on that worker,
and runs it in its own session on that worker. Both workers push asynchronous momentum updates
to the shared ps variables, each on its shard of the data. The chief (worker 0) initializes the
variables, or restores them from the last checkpoint in ``--checkpoint-dir`` (the restore runs
on the ps), and writes the checkpoints; worker 1 waits until the variables are initialized.

It shows a progress bar with the global step, loss and accuracy, checkpoints periodically and at
the end, resumes from the last checkpoint when run again (the global step goes on counting),
prints the final accuracy on the training set and on held-out data, and stops its servers on
exit, on an error and on Ctrl-C. ``--local`` runs the same model in this process with a plain
``tf.Session()``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import tensorweave as tf
from tensorweave.train.local_cluster import LocalCluster

CLASSES = 4
FEATURES = 8
WORKERS = 2
READY_TIMEOUT = 60.0  # seconds a non-chief worker waits for the chief to initialize
DEFAULT_CHECKPOINT_DIR = os.path.join(tempfile.gettempdir(), "tensorweave_train_ps")


def make_dataset(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian blobs around `CLASSES` well-separated centers (the same centers for every seed)."""
    centers = np.random.default_rng(1234).normal(scale=2.0, size=(CLASSES, FEATURES))
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, CLASSES, n)
    data = centers[labels] + rng.normal(scale=1.0, size=(n, FEATURES))
    return data.astype(np.float32), labels.astype(np.int64)


def build_model(hidden: int, learning_rate: float) -> dict[str, Any]:
    """The graph: placeholders, a 2-layer MLP, loss, accuracy and the training op."""
    x = tf.placeholder(tf.float32, [None, FEATURES], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    with tf.variable_scope("hidden"):
        w1 = tf.get_variable("w", [FEATURES, hidden])
        b1 = tf.get_variable("b", [hidden], initializer=tf.zeros_initializer())
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
    with tf.variable_scope("logits"):
        w2 = tf.get_variable("w", [hidden, CLASSES])
        b2 = tf.get_variable("b", [CLASSES], initializer=tf.zeros_initializer())
        logits = tf.matmul(h, w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                        logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    global_step = tf.train.get_or_create_global_step()
    optimizer = tf.train.MomentumOptimizer(learning_rate, momentum=0.9)
    train_op = optimizer.minimize(loss, global_step=global_step)
    with tf.control_dependencies([train_op]):  # the step this update brought the model to
        step_after = global_step.read_value()
    variables = tf.global_variables()  # the model's, the global step and the momentum slots
    ready = tf.reduce_all(tf.stack([tf.is_variable_initialized(v) for v in variables]))
    return {"x": x, "y": y, "loss": loss, "accuracy": accuracy, "global_step": global_step,
            "train": step_after, "init": tf.global_variables_initializer(), "ready": ready}


class Progress:
    """The progress bar, shared by the workers: it redraws when the global step crosses a
    multiple of `every` (in place on a terminal, one line per update in a log)."""

    def __init__(self, first: int, last: int, every: int, width: int = 30) -> None:
        self._first, self._last, self._every, self._width = first, last, every, width
        self._shown = first
        self._in_place = sys.stdout.isatty()
        self._line_open = False  # a bar drawn in place, not yet ended by a newline
        self._lock = threading.Lock()

    def update(self, step: int, loss: float, accuracy: float) -> None:
        with self._lock:
            if self._shown >= self._last:
                return
            if step < self._last and step // self._every <= self._shown // self._every:
                return
            self._shown = step
            done = min((step - self._first) / max(self._last - self._first, 1), 1.0)
            filled = int(done * self._width)
            bar = "#" * filled + "." * (self._width - filled)
            self._line_open = self._in_place and step < self._last
            print(f"\r[{bar}] step {step}/{self._last}  loss {loss:.4f}  acc {accuracy:.3f}",
                  end="" if self._line_open else "\n", flush=True)

    def close(self) -> None:
        """End a bar left open by an interruption, so what follows starts on a new line."""
        with self._lock:
            if self._line_open:
                print(flush=True)
                self._line_open = False


def build_graph(task: int, args: argparse.Namespace, cluster: tf.train.ClusterSpec | None
                ) -> tuple[tf.Graph, dict[str, Any]]:
    """Worker `task`'s own graph. With a `cluster`, `replica_device_setter` puts the variables
    on the ps and the rest on ``/job:worker/task:<task>``; without one, nothing is placed."""
    graph = tf.Graph()
    device_fn = None if cluster is None else tf.train.replica_device_setter(
        cluster=cluster, worker_device=f"/job:worker/task:{task}")
    with graph.as_default(), tf.device(device_fn):
        tf.set_random_seed(args.seed)
        model = build_model(args.hidden, args.learning_rate)
    return graph, model


class Replica:
    """One worker task's client: its own graph and session (between-graph replication); the
    chief (task 0) also owns the `Saver`."""

    def __init__(self, task: int, args: argparse.Namespace, target: str = "",
                 cluster: tf.train.ClusterSpec | None = None) -> None:
        self.task = task
        self.is_chief = task == 0
        self.steps_run = 0
        graph, self.model = build_graph(task, args, cluster)
        with graph.as_default():
            self.saver = tf.train.Saver(max_to_keep=3) if self.is_chief else None
        self.sess = tf.Session(target, graph=graph)

    def global_step(self) -> int:
        return tf.train.global_step(self.sess, self.model["global_step"])

    def restore_or_initialize(self, checkpoint_dir: str) -> int:
        """The chief's start: restore the last checkpoint if there is one, else initialize."""
        assert self.saver is not None
        checkpoint = tf.train.latest_checkpoint(checkpoint_dir)
        if checkpoint is None:
            self.sess.run(self.model["init"])
            print("starting from scratch", flush=True)
            return self.global_step()
        self.saver.restore(self.sess, checkpoint)
        state = tf.train.get_checkpoint_state(checkpoint_dir)
        self.saver.recover_last_checkpoints(state.all_model_checkpoint_paths)
        step = self.global_step()
        print(f"resumed from {checkpoint} at global step {step}", flush=True)
        return step

    def wait_until_ready(self, timeout: float) -> None:
        """A non-chief's start: wait (bounded) until the chief has set every variable."""
        deadline = time.monotonic() + timeout
        while not self.sess.run(self.model["ready"]):
            if time.monotonic() > deadline:
                raise RuntimeError(f"worker {self.task}: the variables were not initialized "
                                   f"within {timeout:.0f}s")
            time.sleep(0.05)

    def save(self, checkpoint_dir: str, step: int) -> str:
        assert self.saver is not None
        return self.saver.save(self.sess, os.path.join(checkpoint_dir, "model.ckpt"),
                               global_step=step)

    def train(self, data: tuple[np.ndarray, np.ndarray], args: argparse.Namespace, last: int,
              progress: Progress, stop: threading.Event) -> None:
        """Train on `data` until the global step reaches `last`; the chief also checkpoints."""
        features, labels = data
        rng = np.random.default_rng([args.seed, self.task])
        model = self.model
        saved = step = self.global_step()
        while step < last and not stop.is_set():
            batch = rng.integers(0, len(labels), args.batch_size)
            feed = {model["x"]: features[batch], model["y"]: labels[batch]}
            step, loss, accuracy = self.sess.run([model["train"], model["loss"],
                                                  model["accuracy"]], feed)
            self.steps_run += 1
            progress.update(step, loss, accuracy)
            # The final checkpoint is written once every worker has stopped.
            if (self.is_chief and step < last
                    and step // args.checkpoint_every > saved // args.checkpoint_every):
                saved = step
                self.save(args.checkpoint_dir, step)

    def evaluate(self, data: tuple[np.ndarray, np.ndarray]) -> float:
        model = self.model
        return float(self.sess.run(model["accuracy"], {model["x"]: data[0], model["y"]: data[1]}))


def run_threads(targets: Sequence[Callable[[], None]], stop: threading.Event) -> None:
    """Run each target in a thread; the first error stops the others and is raised here."""
    errors: list[BaseException] = []

    def guarded(target: Callable[[], None]) -> None:
        try:
            target()
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            errors.append(exc)
            stop.set()

    threads = [threading.Thread(target=guarded, args=(t,), daemon=True) for t in targets]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():  # a timed join lets Ctrl-C through
                thread.join(0.1)
    finally:
        stop.set()
    if errors:
        raise errors[0]


def train_replicas(replicas: list[Replica], args: argparse.Namespace) -> None:
    """Between-graph training: the chief starts (or resumes), then every replica trains on its
    shard of the data; the chief writes the final checkpoint and evaluates."""
    chief = replicas[0]
    train_data, test_data = make_dataset(2000, seed=1), make_dataset(500, seed=2)
    start = time.time()
    first = chief.restore_or_initialize(args.checkpoint_dir)
    last = first + args.steps
    progress = Progress(first, last, args.log_every)
    stop = threading.Event()

    def work(replica: Replica) -> None:
        if not replica.is_chief:
            replica.wait_until_ready(READY_TIMEOUT)
        shard = tuple(a[replica.task::len(replicas)] for a in train_data)
        replica.train(shard, args, last, progress, stop)

    try:
        run_threads([lambda r=r: work(r) for r in replicas], stop)
    finally:
        progress.close()
    step = chief.global_step()
    path = chief.save(args.checkpoint_dir, step)
    elapsed = time.time() - start
    if len(replicas) > 1:
        print(", ".join(f"worker {r.task} ran {r.steps_run} steps" for r in replicas))
    print(f"trained to global step {step} in {elapsed:.1f}s; saved {path}")
    print(f"final accuracy: train {chief.evaluate(train_data):.3f}, "
          f"held-out {chief.evaluate(test_data):.3f}", flush=True)


def run_local(args: argparse.Namespace) -> None:
    replica = Replica(0, args)
    try:
        train_replicas([replica], args)
    finally:
        replica.sess.close()


def run_cluster(args: argparse.Namespace) -> None:
    with LocalCluster({"ps": 1, "worker": WORKERS}) as local:
        for job, task, address in local.cluster.tasks():
            print(f"started /job:{job}/task:{task} on {address} "
                  f"(pid {local.process(job, task).pid})", flush=True)
        replicas: list[Replica] = []
        try:
            for task in range(WORKERS):
                replicas.append(Replica(task, args, local.target("worker", task),
                                        local.cluster))
            train_replicas(replicas, args)
        finally:
            for replica in replicas:
                replica.sess.close()
            codes = local.stop()
            print(f"stopped {len(codes)} servers (exit codes {list(codes.values())})", flush=True)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--local", action="store_true",
                        help="train in this process with a plain Session, without a cluster")
    parser.add_argument("--steps", type=int, default=600,
                        help="global steps for this run (all workers together)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--checkpoint-dir", default=DEFAULT_CHECKPOINT_DIR,
                        help="where checkpoints go and are resumed from (default %(default)s)")
    parser.add_argument("--checkpoint-every", type=int, default=100)
    parser.add_argument("--log-every", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name in ("steps", "batch_size", "hidden", "checkpoint_every", "log_every"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def _terminate(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    # SIGTERM unwinds like Ctrl-C does, through the `finally` that stops the servers.
    signal.signal(signal.SIGTERM, _terminate)
    os.makedirs(args.checkpoint_dir, exist_ok=True)
    if args.local:
        run_local(args)
    else:
        run_cluster(args)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
