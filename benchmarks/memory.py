"""Memory of a step: its peak against the tensors it must hold, and its growth over many steps.

Run ``python benchmarks/memory.py`` (``--quick`` for small sizes). Two figures:

- **step peak**: a graph of float32 elementwise ops on a fed vector (a diamond, then a chain) is
  run once under `tracemalloc`; the peak of traced memory, counted from just before the feed is
  allocated, is compared with the *live tensors* of the step: the fed input and the fetched
  output, which stay alive throughout, plus the largest set of intermediates alive at once when
  the graph runs in creation order and every intermediate is dropped right after its last reader
  (`live_tensor_bytes`). An ideal executor peaks at exactly that; target: at most 1.3x.
- **flat over many steps**: the seed-graph step ``S += w * x + b`` run through `make_callable`;
  the process's resident memory after step 10k against after step 100k (1k and 10k with
  ``--quick``); the baseline is the same measurement around the same update in plain numpy.
  Target: no growth beyond 1 MiB (allocator noise; a leak of 12 bytes a step exceeds it).
"""

from __future__ import annotations

import argparse
import os
import tracemalloc

import common
import numpy as np

import tensorweave as tf

PEAK_TARGET = 1.3
GROWTH_TARGET_BYTES = 1 << 20


def live_tensor_bytes(graph: tf.Graph, fetches: list[tf.Tensor]) -> int:
    """Bytes a step must hold at its worst moment: placeholders (fed by the caller) and fetched
    tensors stay alive for the whole step; any other output lives from the op that makes it to
    its last reader, and an op's inputs are still alive while it writes its outputs. Ops run in
    creation order (a topological order); `Const` values are made once, before any step, and do
    not count."""
    ops = graph.get_operations()
    last_read: dict[str, int] = {}
    for i, op in enumerate(ops):
        for t in op.inputs:
            last_read[t.name] = i
    kept = {t.name for t in fetches}

    def nbytes(t: tf.Tensor) -> int:
        return int(np.prod(t.shape.as_list())) * t.dtype.size

    live: dict[str, int] = {}
    for op in ops:
        if op.type == "Placeholder":
            live[op.outputs[0].name] = nbytes(op.outputs[0])
    peak = sum(live.values())
    for i, op in enumerate(ops):
        if op.type in ("Placeholder", "Const"):
            continue
        for t in op.outputs:
            live[t.name] = nbytes(t)
        peak = max(peak, sum(live.values()))
        for t in op.inputs:
            if t.name in live and t.name not in kept and t.op.type != "Placeholder" \
                    and last_read[t.name] == i:
                del live[t.name]
        for t in op.outputs:  # an output nobody reads dies at once
            if t.name not in kept and t.name not in last_read:
                del live[t.name]
    return peak


def _peak_graph(n: int) -> tuple[tf.Graph, tf.Tensor, tf.Tensor]:
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [n], name="x")
        a = x * 2.0
        b = x + 1.0
        c = a * b
        y = c - a
        for i in range(8):
            y = y * 1.0001 if i % 2 == 0 else y + 0.0001
    return graph, x, y


def step_peak(n: int) -> tuple[int, int]:
    """(traced peak bytes of one step, live tensor bytes of the step) for vectors of `n`
    float32."""
    graph, x, y = _peak_graph(n)
    with tf.Session(graph=graph) as sess:
        step = sess.make_callable(y, [x])
        for _ in range(4):  # plan built and compiled, constants cached: a steady-state step
            step(np.ones(n, np.float32))
        tracemalloc.start()
        try:
            start = tracemalloc.get_traced_memory()[0]
            feed = np.ones(n, np.float32)
            out = step(feed)
            peak = tracemalloc.get_traced_memory()[1] - start
        finally:
            tracemalloc.stop()
    expected = feed * 2 * (feed + 1) - feed * 2
    for i in range(8):
        expected = expected * np.float32(1.0001) if i % 2 == 0 else expected + np.float32(1e-4)
    if not np.array_equal(out, expected):
        raise AssertionError("the memory graph computed a different result than numpy")
    return peak, live_tensor_bytes(graph, [y])


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def rss_growth(steps: int) -> tuple[int, int]:
    """(tensorweave, numpy) resident-memory growth in bytes from step ``steps // 10`` to step
    `steps` of the seed-graph update."""
    seed = common.seed_graph()
    feed = np.arange(16, dtype=np.float32)
    with tf.Session(graph=seed.graph) as sess:
        sess.run(seed.init)
        step = sess.make_callable(seed.update, [seed.x])
        tw = _growth(lambda: step(feed), steps)
    return tw, _growth(common.numpy_seed_step(common.SEED_SHAPE, feed), steps)


def _growth(fn: object, steps: int) -> int:
    for _ in range(steps // 10):
        fn()
    before = _rss()
    for _ in range(steps - steps // 10):
        fn()
    return _rss() - before


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    quick = parser.parse_args(argv).quick
    peak, live = step_peak(1 << 14 if quick else 1 << 20)
    print(f"step peak {peak / 2**20:.2f} MiB, live tensors {live / 2**20:.2f} MiB: "
          f"{peak / live:.2f}x (target <= {PEAK_TARGET}x)")
    tw, baseline = rss_growth(10_000 if quick else 100_000)
    print(f"resident memory growth: tensorweave {tw} bytes, numpy {baseline} bytes "
          f"(target <= {GROWTH_TARGET_BYTES} bytes)")


if __name__ == "__main__":
    main()
