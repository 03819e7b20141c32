"""tensorweave beside TensorFlow: the same TF1 scripts under both, alternated in one run.

Run ``python benchmarks/vs_tf.py [--tf PYTHON] [--tw-base DIR] [--rounds 3] [--groups ...]``.
Each round runs every group once under TF (``PYTHON``, a Python with TensorFlow 2.x, through
``tensorflow.compat.v1`` with eager execution off), once under a baseline tensorweave if
``--tw-base`` names another checkout (run by that checkout's ``.venv/bin/python``, which must
import tensorweave from it, so a before/after comparison runs in the same run), and once under
tensorweave (this Python), each group in a fresh process, in that order; the table gives each
figure's median over the rounds and the ratios to TF. Without ``--tf`` it prints tensorweave's
figures.

The workloads are the ones of issue 16's table (the project's shared ``bench/workloads.py`` and
``bench/scale.py``), defined identically:

- ``models``: one training step of an MLP 784-512-512-10 (batch 256, relu, sparse softmax
  cross-entropy, Adam); of a CNN (conv 5x5x32, max-pool, conv 5x5x64, max-pool, dense 256,
  dense 10; batch 32 of 28x28x1; Momentum); of an LSTM (``dynamic_rnn(BasicLSTMCell(128))``
  over 20 steps of 64 features, batch 32, dense on the last output, Adam); and a
  ``from_tensor_slices(20000x32).map(v*2+1).batch(64)`` pipeline drained (elements/s);
- ``local``: the seed step ``S += w*x + b``; 1000 x ``y = y*q + p`` on float32[4] (2000 ops,
  per op); the same update inside a ``while_loop`` of 1000 iterations (per iteration); the
  first run of a 20k-node graph;
- ``graph``: wide graphs of ~10k and ~100k small elementwise ops on a float32[4] placeholder,
  reduced by ``add_n`` in chunks of 100: first and second run (each size in its own process);
- ``conv``: the convolution and pooling kernels without the rest of the step: the CNN's first
  two layers (conv 5x5x32, relu, max-pool 2x2, conv 5x5x64, relu, max-pool 2x2 on a batch of 32
  28x28x1) forward, and forward with the gradients of both filters and biases; max- and
  average-pooling 3x3 stride 2 SAME (overlapping windows) of a 32x28x28x32 batch, forward and
  backward. Beside each whole run, the time per op type (``op_<Type>_ms``, summed over its
  nodes, median over traced runs) from the step stats of ``RunOptions(trace_level=FULL_TRACE)``.

A ``*_cpu_ms`` figure (the CNN step, the conv group) is the process's CPU time per run, all its
threads together: on a machine shared with other work, the wall time also counts the time the
scheduler gives to others, the CPU time much less so.

Under TF a ``dynamic_rnn`` cell needs ``tf_keras`` (``TF_USE_LEGACY_KERAS=1`` is set here).
Nothing is asserted; ``benchmarks/run.py`` holds the project's own figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

GROUPS = ("models", "local", "graph", "conv")
GRAPH_SIZES = (10_000, 100_000)
CHUNK = 100  # add_n fan-in of the wide graphs
# figures where more is better: their ratio is still tw/TF, so > 1 means tensorweave is faster
HIGHER_IS_BETTER = ("kelem_per_s",)


def _library(lib: str) -> Any:
    """``tensorflow.compat.v1`` (graph mode) for ``"tf"``, tensorweave for ``"tw"``."""
    if lib == "tf":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # compat.v1 RNN cells need tf_keras
        import tensorflow.compat.v1 as tf

        tf.disable_eager_execution()
        return tf
    import tensorweave as tw

    return tw


def _per_call(fn: Callable[[], object], n: int, warm: int) -> float:
    """Seconds per call of `fn` over `n` calls, after `warm` untimed ones."""
    return _per_call_and_cpu(fn, n, warm)[0]


def _per_call_and_cpu(fn: Callable[[], object], n: int, warm: int) -> tuple[float, float]:
    """Wall seconds and process CPU seconds per call of `fn` over `n` calls, after `warm`
    untimed ones."""
    for _ in range(warm):
        fn()
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n, (time.process_time() - cpu) / n


def _timed(name: str, fn: Callable[[], object], n: int, warm: int) -> dict[str, float]:
    """``{name_ms, name_cpu_ms}``: wall and CPU milliseconds per call of `fn`."""
    wall, cpu = _per_call_and_cpu(fn, n, warm)
    return {f"{name}_ms": wall * 1e3, f"{name}_cpu_ms": cpu * 1e3}


# -- models ---------------------------------------------------------------------------------------


def _variable(tf: Any, rs: np.random.RandomState, *shape: int) -> Any:
    return tf.Variable((rs.randn(*shape) * 0.05).astype(np.float32))


def _xent(tf: Any, labels: Any, logits: Any) -> Any:
    return tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))


def mlp_step(tf: Any) -> float:
    """Milliseconds per Adam step of the MLP 784-512-512-10 on a batch of 256."""
    rs = np.random.RandomState(0)
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [256, 784])
        y = tf.placeholder(tf.int64, [256])
        h = x
        for a, b in ((784, 512), (512, 512)):
            h = tf.nn.relu(tf.matmul(h, _variable(tf, rs, a, b)) + _variable(tf, rs, b))
        logits = tf.matmul(h, _variable(tf, rs, 512, 10)) + _variable(tf, rs, 10)
        train = tf.train.AdamOptimizer(1e-3).minimize(_xent(tf, y, logits))
        sess = tf.Session(graph=g)
        sess.run(tf.global_variables_initializer())
        feed = {x: rs.rand(256, 784).astype(np.float32), y: rs.randint(0, 10, 256)}
        return _per_call(lambda: sess.run(train, feed), 30, warm=5) * 1e3


def cnn_step(tf: Any) -> dict[str, float]:
    """Milliseconds (wall and CPU) per Momentum step of the two-conv CNN on a batch of 32
    28x28x1 images."""
    rs = np.random.RandomState(0)
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [32, 28, 28, 1])
        y = tf.placeholder(tf.int64, [32])
        h = x
        for cin, cout in ((1, 32), (32, 64)):
            conv = tf.nn.conv2d(h, _variable(tf, rs, 5, 5, cin, cout), [1, 1, 1, 1], "SAME")
            h = tf.nn.max_pool(tf.nn.relu(conv + _variable(tf, rs, cout)),
                               [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        h = tf.nn.relu(tf.matmul(tf.reshape(h, [32, 7 * 7 * 64]),
                                 _variable(tf, rs, 7 * 7 * 64, 256)) + _variable(tf, rs, 256))
        logits = tf.matmul(h, _variable(tf, rs, 256, 10)) + _variable(tf, rs, 10)
        train = tf.train.MomentumOptimizer(0.01, 0.9).minimize(_xent(tf, y, logits))
        sess = tf.Session(graph=g)
        sess.run(tf.global_variables_initializer())
        feed = {x: rs.rand(32, 28, 28, 1).astype(np.float32), y: rs.randint(0, 10, 32)}
        return _timed("cnn_step", lambda: sess.run(train, feed), 10, warm=3)


def lstm_step(tf: Any) -> float:
    """Milliseconds per Adam step of ``dynamic_rnn(BasicLSTMCell(128))`` over 20 steps."""
    rs = np.random.RandomState(0)
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [32, 20, 64])
        y = tf.placeholder(tf.int64, [32])
        out, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(128), x, dtype=tf.float32)
        logits = tf.matmul(out[:, -1, :], _variable(tf, rs, 128, 10))
        train = tf.train.AdamOptimizer(1e-3).minimize(_xent(tf, y, logits))
        sess = tf.Session(graph=g)
        sess.run(tf.global_variables_initializer())
        feed = {x: rs.rand(32, 20, 64).astype(np.float32), y: rs.randint(0, 10, 32)}
        return _per_call(lambda: sess.run(train, feed), 10, warm=3) * 1e3


def pipeline_drain(tf: Any) -> float:
    """Thousands of elements per second through ``from_tensor_slices.map.batch``, drained."""
    rs = np.random.RandomState(0)
    with tf.Graph().as_default() as g:
        data = rs.rand(20000, 32).astype(np.float32)
        ds = tf.data.Dataset.from_tensor_slices(data).map(lambda v: v * 2.0 + 1.0).batch(64)
        nxt = ds.make_one_shot_iterator().get_next()
        sess = tf.Session(graph=g)
        batches = 0
        start = time.perf_counter()
        try:
            while True:
                sess.run(nxt)
                batches += 1
        except tf.errors.OutOfRangeError:
            pass
        return batches * 64 / (time.perf_counter() - start) / 1e3


# -- local ----------------------------------------------------------------------------------------


def seed_step(tf: Any) -> float:
    """Microseconds per ``Session.run`` of ``S += w*x + b`` on scalars."""
    with tf.Graph().as_default() as g:
        s_var, w, b = tf.Variable(0.0), tf.Variable(2.0), tf.Variable(1.0)
        x = tf.placeholder(tf.float32, [])
        step = tf.assign_add(s_var, w * x + b)
        sess = tf.Session(graph=g)
        sess.run(tf.global_variables_initializer())
        return _per_call(lambda: sess.run(step, {x: 3.0}), 2000, warm=20) * 1e6


def chain(tf: Any) -> float:
    """Microseconds per op of 1000 x ``y = y*q + p`` on float32[4]."""
    with tf.Graph().as_default() as g:
        p = tf.placeholder(tf.float32, [4])
        q = tf.placeholder(tf.float32, [4])
        y = p
        for _ in range(1000):
            y = y * q + p
        sess = tf.Session(graph=g)
        feed = {p: np.zeros(4, np.float32), q: np.ones(4, np.float32)}
        return _per_call(lambda: sess.run(y, feed), 50, warm=5) * 1e6 / 2000


def while_loop(tf: Any) -> float:
    """Microseconds per iteration of a ``while_loop`` of 1000 ``y = y*q + p`` on float32[4]:
    the loop's own cost per iteration, beside the chain's two ops."""
    with tf.Graph().as_default() as g:
        p = tf.placeholder(tf.float32, [4])
        q = tf.placeholder(tf.float32, [4])
        _, y = tf.while_loop(lambda i, y: i < 1000, lambda i, y: (i + 1, y * q + p),
                             [tf.constant(0), p])
        sess = tf.Session(graph=g)
        feed = {p: np.zeros(4, np.float32), q: np.ones(4, np.float32)}
        return _per_call(lambda: sess.run(y, feed), 10, warm=2) * 1e6 / 1000


def first_run_20k(tf: Any) -> float:
    """Milliseconds of the first run of a 10k-unit (20k-node) graph fetching a 1000-way add_n."""
    with tf.Graph().as_default() as g:
        p = tf.placeholder(tf.float32, [4])
        outs = [p * float(i) + 1.0 for i in range(10000)]
        total = tf.add_n(outs[:1000])
        sess = tf.Session(graph=g)
        start = time.perf_counter()
        sess.run(total, {p: np.ones(4, np.float32)})
        return (time.perf_counter() - start) * 1e3


# -- conv -----------------------------------------------------------------------------------------


def _op_times(tf: Any, sess: Any, fetch: Any, feed: dict[Any, Any], prefix: str,
              runs: int = 5) -> dict[str, float]:
    """Milliseconds per op type of one run of `fetch` (summed over the type's nodes, median over
    `runs` traced runs); node names the graph does not know (a runtime's own) are left out."""
    per_run: list[dict[str, float]] = []
    for _ in range(runs):
        meta = tf.RunMetadata()
        sess.run(fetch, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=meta)
        totals: dict[str, float] = {}
        for dev in meta.step_stats.dev_stats:
            for node in dev.node_stats:
                try:
                    op = sess.graph.get_operation_by_name(node.node_name).type
                except (KeyError, ValueError):
                    continue
                totals[op] = totals.get(op, 0.0) + node.all_end_rel_micros / 1e3
        per_run.append(totals)
    kinds = ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool", "MaxPoolGrad",
             "AvgPool", "AvgPoolGrad")
    return {f"{prefix}op_{op}_ms": statistics.median(run.get(op, 0.0) for run in per_run)
            for op in kinds if any(op in run for run in per_run)}


def conv_layers(tf: Any) -> dict[str, float]:
    """The CNN's two conv/pool layers alone: forward, and forward with the gradients of the
    filters and biases (ms per run), with the second's time per op type."""
    rs = np.random.RandomState(0)
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [32, 28, 28, 1])
        h, params = x, []
        for cin, cout in ((1, 32), (32, 64)):
            w, b = _variable(tf, rs, 5, 5, cin, cout), _variable(tf, rs, cout)
            params += [w, b]
            conv = tf.nn.conv2d(h, w, [1, 1, 1, 1], "SAME")
            h = tf.nn.max_pool(tf.nn.relu(conv + b), [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        weights = tf.constant(rs.rand(32, 7, 7, 64).astype(np.float32))
        grads = tf.gradients(tf.reduce_sum(h * weights), params)
        sess = tf.Session(graph=g)
        sess.run(tf.global_variables_initializer())
        feed = {x: rs.rand(32, 28, 28, 1).astype(np.float32)}
        figures = (_timed("conv_layers_fwd", lambda: sess.run(h, feed), 10, warm=3)
                   | _timed("conv_layers_train", lambda: sess.run(grads, feed), 10, warm=3))
        return figures | _op_times(tf, sess, grads, feed, "conv_layers_")


def overlapping_pools(tf: Any) -> dict[str, float]:
    """Max- and average-pooling 3x3 stride 2 SAME of a 32x28x28x32 batch, forward and backward
    (ms per run), with the time per op type."""
    rs = np.random.RandomState(0)
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [32, 28, 28, 32])
        pools = [pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
                 for pool in (tf.nn.max_pool, tf.nn.avg_pool)]
        # fed, so that no runtime folds AvgPoolGrad (it reads only a shape and this) into a constant
        weights = tf.placeholder(tf.float32, [32, 14, 14, 32])
        grad = tf.gradients(tf.add_n([tf.reduce_sum(p * weights) for p in pools]), x)[0]
        sess = tf.Session(graph=g)
        feed = {x: rs.rand(32, 28, 28, 32).astype(np.float32),
                weights: rs.rand(32, 14, 14, 32).astype(np.float32)}
        fetch = [pools, grad]
        figures = _timed("pool3x3s2_train", lambda: sess.run(fetch, feed), 10, warm=3)
        return figures | _op_times(tf, sess, fetch, feed, "pool3x3s2_")


# -- graph ----------------------------------------------------------------------------------------


def wide_graph(tf: Any, size: int) -> dict[str, float]:
    """First and second run (ms) of a ~`size`-node wide graph: units ``p * c_i + 1.0`` (4 ops
    with their constants), add_n per 100 units, then add_n of the sums, tree-reduced."""
    with tf.Graph().as_default() as g:
        units = max(1, (size * CHUNK) // (4 * CHUNK + 1))
        p = tf.placeholder(tf.float32, [4])
        outs = [p * float(i) + 1.0 for i in range(units)]
        while len(outs) > 1:
            outs = [tf.add_n(outs[i:i + CHUNK]) if len(outs[i:i + CHUNK]) > 1 else outs[i]
                    for i in range(0, len(outs), CHUNK)]
        sess = tf.Session(graph=g)
        feed = {p: np.ones(4, np.float32)}
        start = time.perf_counter()
        first = sess.run(outs[0], feed)
        mid = time.perf_counter()
        second = sess.run(outs[0], feed)
        end = time.perf_counter()
        if not np.allclose(first, second):
            raise AssertionError(f"the two runs differ: {first} {second}")
        key = f"graph{size // 1000}k"
        return {f"{key}_first_run_ms": (mid - start) * 1e3,
                f"{key}_second_run_ms": (end - mid) * 1e3}


def run_group(lib: str, group: str) -> dict[str, float]:
    """The figures of one group (``graph:SIZE`` for one wide graph) under `lib`."""
    tf = _library(lib)
    if group.startswith("graph:"):
        return wide_graph(tf, int(group.split(":", 1)[1]))
    if group == "conv":
        return conv_layers(tf) | overlapping_pools(tf)
    workloads: dict[str, dict[str, Callable[[Any], float | dict[str, float]]]] = {
        "models": {"mlp_step_ms": mlp_step, "cnn_step": cnn_step,
                   "lstm_step_ms": lstm_step, "pipeline_kelem_per_s": pipeline_drain},
        "local": {"seed_step_us": seed_step, "chain2000_us_per_op": chain,
                  "while_us_per_iter": while_loop, "graph20k_first_run_ms": first_run_20k},
    }
    figures: dict[str, float] = {}
    for name, fn in workloads[group].items():
        value = fn(tf)  # a figure, or (a workload of several) a dict of them
        figures |= value if isinstance(value, dict) else {name: value}
    return figures


# -- driver ---------------------------------------------------------------------------------------


def _worker(python: str, lib: str, group: str) -> dict[str, float]:
    """One group in a fresh process of `python`; {} (with a note on stderr) if it fails."""
    proc = subprocess.run([python, os.path.abspath(__file__), "--worker", lib[:2], group],
                          capture_output=True, text=True, timeout=1800)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        print(f"{lib} {group} failed: {proc.stderr.strip().splitlines()[-3:]}", file=sys.stderr)
        return {}
    return json.loads(lines[-1])


def _median(runs: list[dict[str, float]], key: str) -> float | None:
    values = [run[key] for run in runs if key in run]
    return statistics.median(values) if values else None


def table(runs: dict[str, list[dict[str, float]]]) -> str:
    """One row per figure: the medians under each library, then each tensorweave's over TF's."""
    keys = list(dict.fromkeys(k for lib in runs for run in runs[lib] for k in run))
    tws = [lib for lib in runs if lib != "tf"]
    ratios = [f"{lib}/tf" for lib in tws] if "tf" in runs else []
    rows = [f"{'figure':30} " + " ".join(f"{name:>10}" for name in [*runs, *ratios])]
    for key in keys:
        medians = {lib: _median(runs[lib], key) for lib in runs}
        cells = [_fmt(medians[lib]) for lib in runs]
        if "tf" in runs:
            base = medians["tf"]
            cells += [f"{medians[lib] / base:.2f}" if base and medians[lib] is not None else "-"
                      for lib in tws]
        rows.append(f"{key:30} " + " ".join(f"{cell:>10}" for cell in cells))
    if "tf" in runs:
        rows.append("x/tf: < 1 means tensorweave takes less time, except for "
                    f"{', '.join(HIGHER_IS_BETTER)} (a rate: > 1 means tensorweave is faster)")
    return "\n".join(rows)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _base_python(parser: argparse.ArgumentParser, checkout: str) -> str:
    """The Python of the baseline `checkout`, checked to import tensorweave from it."""
    python = os.path.join(checkout, ".venv", "bin", "python")
    found = subprocess.run([python, "-c", "import tensorweave; print(tensorweave.__file__)"],
                           capture_output=True, text=True, cwd="/") if os.path.exists(python) \
        else None
    if found is None or not found.stdout.strip().startswith(checkout + os.sep):
        parser.error(f"--tw-base: {python} does not import tensorweave from {checkout}")
    return python


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tf", metavar="PYTHON", help="a Python with TensorFlow to compare with")
    parser.add_argument("--tw-base", metavar="DIR",
                        help="a directory where `import tensorweave` finds a baseline to compare")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--groups", default=",".join(GROUPS),
                        help=f"comma-separated, of {', '.join(GROUPS)}")
    parser.add_argument("--sizes", default=",".join(map(str, GRAPH_SIZES)),
                        help="node counts of the graph group")
    parser.add_argument("--json", metavar="PATH", help="write every round's raw figures here")
    parser.add_argument("--worker", nargs=2, metavar=("LIB", "GROUP"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(run_group(*args.worker)))
        return 0
    groups = []
    for group in args.groups.split(","):
        if group not in GROUPS:
            parser.error(f"unknown group {group!r}")
        groups += [f"graph:{s}" for s in args.sizes.split(",")] if group == "graph" else [group]
    libs: dict[str, str] = {}  # library: its python
    if args.tf:
        libs["tf"] = args.tf
    if args.tw_base:
        libs["tw-base"] = _base_python(parser, os.path.abspath(args.tw_base))
    libs["tw"] = sys.executable
    runs: dict[str, list[dict[str, float]]] = {lib: [] for lib in libs}
    for r in range(args.rounds):
        for lib, python in libs.items():
            merged: dict[str, float] = {}
            for group in groups:
                merged |= _worker(python, lib, group)
            runs[lib].append(merged)
            print(f"round {r} {lib}: {json.dumps(merged)}", file=sys.stderr, flush=True)
            if args.json:
                with open(args.json, "w") as f:
                    json.dump(runs, f, indent=1)
    print(table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
