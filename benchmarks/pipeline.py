"""How much the master pipeline and the executor cost, each beside numpy doing the same work.

Run ``python benchmarks/pipeline.py`` (``--quick`` for a smoke run of a few seconds). It prints a
table of three figures, each measured in this run with its numpy baseline and their ratio:

- the first run (prune, passes, placement, partitioning, executor plans, and the step) of a graph
  of about 20k nodes: a chain of small adds, each of a distinct constant;
- the per-step time of the seed graph ``S += w * x + b``, through ``Session.run`` and through
  ``make_callable``;
- the per-op time on a chain of 2000 tiny elementwise ops.

Nothing is asserted about speed: the figures are for reading, and for comparing commits.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import attrs
import common
import numpy as np

import tensorweave as tf


@attrs.frozen
class Sizes:
    graph_nodes: int
    chain_ops: int
    steps: int
    repeats: int


FULL = Sizes(graph_nodes=20_000, chain_ops=2_000, steps=2_000, repeats=5)
QUICK = Sizes(graph_nodes=2_000, chain_ops=200, steps=200, repeats=2)


@attrs.frozen
class Row:
    figure: str
    unit: str
    tensorweave: float
    numpy: float

    @property
    def ratio(self) -> float:
        return self.tensorweave / self.numpy if self.numpy > 0 else float("inf")


def best_of(repeats: int, fn: Callable[[], None]) -> float:
    """The fastest of `repeats` timings of `fn`, in seconds (the least disturbed one)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def per_call(calls: int, repeats: int, fn: Callable[[], object]) -> float:
    """Seconds per call of `fn`, from the fastest of `repeats` runs of `calls` calls."""
    def loop() -> None:
        for _ in range(calls):
            fn()

    return best_of(repeats, loop) / calls


def first_run(sizes: Sizes) -> tuple[Row, float]:
    """The first run of a chain of ``graph_nodes / 2`` adds, and how long building it took."""
    adds = sizes.graph_nodes // 2
    values = np.arange(adds, dtype=np.float32)
    graph = tf.Graph()
    start = time.perf_counter()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [4], name="x")
        y = x
        for v in values:
            y = y + float(v)
    build = time.perf_counter() - start
    feed = np.ones(4, np.float32)
    with tf.Session(graph=graph) as s:
        start = time.perf_counter()
        got = s.run(y, {x: feed})
        first = time.perf_counter() - start

    def numpy_chain() -> None:
        out = feed
        for v in values:
            out = np.add(out, v)

    baseline = best_of(sizes.repeats, numpy_chain)
    np.testing.assert_allclose(got, feed + values.sum(dtype=np.float64), rtol=1e-4)
    nodes = len(graph.get_operations())
    return Row(f"first run, {nodes}-node graph", "ms", first * 1e3, baseline * 1e3), build


def seed_graph(sizes: Sizes) -> list[Row]:
    """``S += w * x + b`` per step, through Session.run and make_callable."""
    seed = common.seed_graph()
    x, update = seed.x, seed.update
    feed = np.arange(16, dtype=np.float32)
    with tf.Session(graph=seed.graph) as s:
        s.run(seed.init)
        s.run(update, {x: feed})  # compile outside the timing
        via_run = per_call(sizes.steps, sizes.repeats, lambda: s.run(update, {x: feed}))
        step = s.make_callable(update, [x])
        step(feed)
        via_callable = per_call(sizes.steps, sizes.repeats, lambda: step(feed))

    baseline = per_call(sizes.steps, sizes.repeats,
                        common.numpy_seed_step(common.SEED_SHAPE, feed))
    return [Row("seed graph step, Session.run", "us", via_run * 1e6, baseline * 1e6),
            Row("seed graph step, make_callable", "us", via_callable * 1e6, baseline * 1e6)]


def elementwise_chain(sizes: Sizes) -> Row:
    """Per-op time of a chain of tiny alternating multiplies and adds."""
    n = sizes.chain_ops
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [4], name="x")
        y = x
        for i in range(n):
            y = y * 1.0001 if i % 2 == 0 else y + 0.0001
    feed = np.ones(4, np.float32)
    with tf.Session(graph=graph) as s:
        step = s.make_callable(y, [x])
        step(feed)
        per_step = per_call(max(1, sizes.steps // 100), sizes.repeats, lambda: step(feed))
    scale, shift = np.float32(1.0001), np.float32(0.0001)

    def numpy_chain() -> None:
        out = feed
        for i in range(n):
            out = out * scale if i % 2 == 0 else out + shift

    baseline = per_call(max(1, sizes.steps // 100), sizes.repeats, numpy_chain)
    return Row(f"per op, {n}-op elementwise chain", "us", per_step / n * 1e6,
               baseline / n * 1e6)


def table(rows: list[Row]) -> str:
    width = max(len(f"{r.figure} ({r.unit})") for r in rows)
    lines = [f"{'figure':<{width}}  {'tensorweave':>12}  {'numpy':>10}  {'ratio':>8}"]
    for r in rows:
        lines.append(f"{f'{r.figure} ({r.unit})':<{width}}  {r.tensorweave:>12.1f}  "
                     f"{r.numpy:>10.2f}  {r.ratio:>7.0f}x")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    sizes = QUICK if parser.parse_args(argv).quick else FULL
    first, build = first_run(sizes)
    rows = [first, *seed_graph(sizes), elementwise_chain(sizes)]
    print(table(rows))
    print(f"Building the graph in Python took {build * 1e3:.0f} ms. A first run happens once; "
          f"every other figure is the fastest of {sizes.repeats} runs.")


if __name__ == "__main__":
    main()
