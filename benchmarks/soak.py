"""Soak: the servers' resident memory over many distributed steps (issue 17, item 10).

Run ``python benchmarks/soak.py`` (``--steps`` to change the default 1e6). It starts a ps and a
worker as ``tensorweave server`` processes on 127.0.0.1, runs the seed-graph step
``S += w * x + b`` with the variables on the ps and the arithmetic on the worker (every step
crosses both tasks and the client), and prints each server's RSS every ``--every`` steps. The
figure is the growth from the step ``--settle`` (by then every bounded table has filled: each
worker remembers the last `worker.REMEMBERED_STEPS` cleaned step ids, to refuse late calls) to
the last step, per step and as a ratio against the RSS at ``--settle``. Target: flat (the
growth per step after settling well under the ~140 B/step the issue measured).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from common import rss

import tensorweave as tf
from tensorweave.engine.runtime.worker import REMEMBERED_STEPS
from tensorweave.train.local_cluster import LocalCluster


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--every", type=int, default=10_000)
    parser.add_argument("--settle", type=int, default=2 * REMEMBERED_STEPS)
    args = parser.parse_args()
    with LocalCluster({"ps": 1, "worker": 1}, host="127.0.0.1") as cluster:
        pids = {job: cluster.process(job).pid for job in ("ps", "worker")}
        with tf.device("/job:ps/task:0"):
            s = tf.Variable(np.zeros(16, np.float32), name="S")
            w = tf.Variable(np.full(16, 2.0, np.float32), name="w")
            b = tf.Variable(np.ones(16, np.float32), name="b")
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [16], name="x")
            delta = w * x + b
        with tf.device("/job:ps/task:0"):
            update = tf.assign_add(s, delta)
        feed = np.ones(16, np.float32)
        samples: list[tuple[int, dict[str, int]]] = []
        with tf.Session(cluster.target("worker")) as sess:
            sess.run(tf.global_variables_initializer())
            step = sess.make_callable(update, [x])
            start = time.monotonic()
            for i in range(1, args.steps + 1):
                step(feed)
                if i % args.every == 0 or i == args.steps:
                    sizes = {job: rss(pid) for job, pid in pids.items()}
                    samples.append((i, sizes))
                    rate = i / (time.monotonic() - start)
                    print(f"step {i:>9}: " + "  ".join(
                        f"{job} {size / (1 << 20):8.2f} MiB" for job, size in sizes.items())
                        + f"  ({rate:.0f} steps/s)", flush=True)
    settled = [(i, sizes) for i, sizes in samples if i >= args.settle]
    if len(settled) < 2:
        print(f"not enough samples after step {args.settle} to give a figure")
        return
    (first, base), (last, end) = settled[0], settled[-1]
    for job in pids:
        growth = end[job] - base[job]
        print(f"{job}: RSS {base[job] / (1 << 20):.2f} MiB at step {first}, "
              f"{end[job] / (1 << 20):.2f} MiB at step {last}: {growth / (1 << 10):+.1f} KiB, "
              f"{growth / (last - first):+.2f} B/step, ratio {end[job] / base[job]:.4f}")


if __name__ == "__main__":
    main()
