"""An LSTM training step through ``dynamic_rnn`` (a ``While`` loop and its gradient) against
the same model unrolled by ``static_rnn``, in the same run.

Run ``python benchmarks/rnn.py`` (``--quick`` for short sequences). Both graphs hold the same
cell, batch and sequence; one step is a forward pass, the gradient and a
`GradientDescentOptimizer` update. Each side is timed as the fastest of `repeats` steps, the two
interleaved so both see the same machine load. The loop's gradient records what the backward
pass needs in a second forward run, so its step costs a constant multiple of the unrolled
one's, whatever the length. Target: at most 3x ``static_rnn``. Nothing is asserted about speed.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

import tensorweave as tf

TARGET = 3.0


def _train_step(steps: int, dynamic: bool, batch: int, units: int,
                inputs: np.ndarray) -> Callable[[], object]:
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [batch, steps, inputs.shape[-1]])
        cell = tf.nn.rnn_cell.BasicLSTMCell(units)
        if dynamic:
            outputs, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        else:
            outputs, _ = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float32)
            outputs = tf.stack(outputs, axis=1)
        train = tf.train.GradientDescentOptimizer(0.1).minimize(
            tf.reduce_mean(tf.square(outputs)))
        init = tf.global_variables_initializer()
    session = tf.Session(graph=graph)
    session.run(init)
    run = session.make_callable(train, [x])
    run(inputs)  # the first run builds and caches the plans
    return lambda: run(inputs)


def training_steps(steps: int = 100, batch: int = 16, units: int = 32,
                   repeats: int = 5) -> tuple[float, float]:
    """(dynamic_rnn seconds, static_rnn seconds) for one training step on `steps` time
    steps."""
    inputs = np.random.default_rng(0).standard_normal((batch, steps, 8)).astype(np.float32)
    dynamic = _train_step(steps, True, batch, units, inputs)
    static = _train_step(steps, False, batch, units, inputs)
    best = [float("inf"), float("inf")]
    for _ in range(repeats):
        for side, fn in enumerate((dynamic, static)):
            start = time.perf_counter()
            fn()
            best[side] = min(best[side], time.perf_counter() - start)
    return best[0], best[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="10 time steps instead of 100")
    steps = 10 if parser.parse_args(argv).quick else 100
    dynamic, static = training_steps(steps)
    print(f"LSTM training step, {steps} time steps: dynamic_rnn {dynamic * 1e3:.1f} ms, "
          f"static_rnn {static * 1e3:.1f} ms, ratio {dynamic / static:.2f}x "
          f"(target <= {TARGET}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
