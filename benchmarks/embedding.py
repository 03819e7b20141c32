"""An embedding trained on a ps from a worker: the sparse update (``IndexedSlices``: only the
looked-up rows travel and are applied) against the same step with the gradient made dense, in
the same run.

Run ``python benchmarks/embedding.py`` (``--quick`` for a small table). It starts a ps and a
worker as ``tensorweave server`` processes on loopback; the ``[vocab, dim]`` float32 table lives
on the ps, the lookup of a batch of ids and the loss on the worker, and one step is a
``GradientDescentOptimizer`` update. The baseline graph is the same model whose gradient is
passed through ``tf.convert_to_tensor`` before ``apply_gradients``, as a dense gradient was
before sparse gradients existed: the worker then sends the whole table's gradient. Each side is
timed as the median of `steps` steps. Target: the sparse step at most 0.25x the dense one at
full size. Nothing is asserted about speed.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import tensorweave as tf
from tensorweave.train.local_cluster import LocalCluster

TARGET = 0.25


def _step(cluster: LocalCluster, vocab: int, dim: int, batch: int, dense: bool):
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:ps/task:0"):
            table = tf.get_variable("table", [vocab, dim],
                                    initializer=tf.random_normal_initializer(stddev=0.1))
        with tf.device("/job:worker/task:0"):
            ids = tf.placeholder(tf.int64, [batch])
            loss = tf.reduce_mean(tf.square(tf.nn.embedding_lookup(table, ids) - 1.0))
            opt = tf.train.GradientDescentOptimizer(0.5)
            (grad, var), = opt.compute_gradients(loss, [table])
            if dense:
                grad = tf.convert_to_tensor(grad)
            train = opt.apply_gradients([(grad, var)])
        init = tf.global_variables_initializer()
    session = tf.Session(cluster.target("worker", 0), graph=graph)
    session.run(init)
    run = session.make_callable([loss, train], [ids])
    return session, run


def step_seconds(cluster: LocalCluster, vocab: int = 200_000, dim: int = 64,
                 batch: int = 256, steps: int = 20) -> tuple[float, float]:
    """(sparse seconds, dense seconds) per training step, medians of `steps`."""
    rng = np.random.default_rng(0)
    batches = [rng.integers(0, vocab, batch) for _ in range(steps + 1)]
    medians = []
    for dense in (False, True):
        session, run = _step(cluster, vocab, dim, batch, dense)
        with session:
            run(batches[0])  # builds and caches the plans
            times = []
            for ids in batches[1:]:
                start = time.perf_counter()
                run(ids)
                times.append(time.perf_counter() - start)
        medians.append(statistics.median(times))
    return medians[0], medians[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="a 20k-row table, 5 steps")
    quick = parser.parse_args(argv).quick
    vocab, steps = (20_000, 5) if quick else (200_000, 20)
    with LocalCluster({"ps": 1, "worker": 1}) as cluster:
        sparse, dense = step_seconds(cluster, vocab=vocab, steps=steps)
    print(f"embedding step, {vocab}x64 table on the ps: sparse {sparse * 1e3:.2f} ms, dense "
          f"{dense * 1e3:.2f} ms, ratio {sparse / dense:.3f}x (target <= {TARGET}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
