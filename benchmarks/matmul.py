"""A chain of float32 matmuls through a session, against the same numpy code, in the same run.

Run ``python benchmarks/matmul.py`` (``--quick`` for small matrices). The graph is ``h = x``,
then ``h = h @ w_i`` for each of `count` constant weights, with `x` fed; the baseline is the same
loop over the same arrays with ``np.matmul``. The results must agree exactly (the kernels call
the same BLAS routine in the same order). Each side is timed as the fastest of `repeats` calls,
the two interleaved so both see the same machine load (BLAS threads make single timings noisy
on a shared machine). Target: at most 1.05x numpy. Nothing is asserted about speed.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

import tensorweave as tf

TARGET = 1.05


def _seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def matmul_chain(size: int = 1024, count: int = 8, repeats: int = 10) -> tuple[float, float]:
    """(tensorweave seconds, numpy seconds) for one chain of `count` ``size``-square matmuls."""
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((size, size), dtype=np.float32)
    # N(0, 1/n) weights keep every product's entries near N(0, 1): no overflow along the chain
    weights = [rng.standard_normal((size, size), dtype=np.float32) / np.float32(np.sqrt(size))
               for _ in range(count)]
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [size, size], name="x")
        h = x
        for i, w in enumerate(weights):
            h = tf.matmul(h, tf.constant(w, name=f"w{i}"))

    def numpy_chain() -> np.ndarray:
        out = x0
        for w in weights:
            out = np.matmul(out, w)
        return out

    with tf.Session(graph=graph) as sess:
        step = sess.make_callable(h, [x])
        got = step(x0)
        if not np.array_equal(got, numpy_chain()):
            raise AssertionError("the matmul chain differs from numpy's")
        tw, baseline = [], []
        for _ in range(repeats):
            tw.append(_seconds(lambda: step(x0)))
            baseline.append(_seconds(numpy_chain))
    return min(tw), min(baseline)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="128x128 matrices")
    quick = parser.parse_args(argv).quick
    size = 128 if quick else 1024
    tw, baseline = matmul_chain(size, repeats=3 if quick else 10)
    ratio = tw / baseline
    print(f"8 matmuls of {size}x{size} float32: tensorweave {tw * 1e3:.2f} ms, numpy "
          f"{baseline * 1e3:.2f} ms, {ratio:.3f}x (target <= {TARGET}x: "
          f"{'met' if ratio <= TARGET else 'missed'})")


if __name__ == "__main__":
    main()
