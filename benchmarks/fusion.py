"""The fusion plugin's figures: the same workloads with it off and on, alternated in one run.

Run ``python benchmarks/fusion.py [--tf PYTHON] [--rounds 3] [--groups ...]``. Each group runs
in one fresh tensorweave process that alternates each workload ``--rounds`` times between
``TENSORWEAVE_FUSION=0`` (``off``) and the plugin on (``on``), since the switch is read when a
graph is compiled and its nodes first run (on a shared machine the load drifts more between
processes than between alternated calls); with ``--tf`` (a Python with TensorFlow) each round
also runs the group in a fresh TF process. The table gives each figure's median over the
rounds, ``on/off`` and, with TF, each over TF's. Groups:

- ``models``, ``local``: the workloads of ``benchmarks/vs_tf.py`` (issue 16's table: the MLP,
  CNN and LSTM training steps, the pipeline; the seed step, the 2000-op chain, the while loop,
  a 20k-node first run);
- ``elementwise``: a 10-op arithmetic chain ``((x*w+b)*x-w)*0.5 ...`` on float32 of 1e3, 1e5
  and 1e6 elements (reduced by ``reduce_sum``); ``(x*w+1)/(w+2)/3`` on 1e3 and 1e5 (the size
  cutoff of dividing regions); ``tanh(x*w+b)*0.5+1`` on float32[8,16]
  (small enough for its tanh to fuse) and on [1e5] (the tanh stays numpy's);
- ``updates``: one dense update (Adam, Momentum, Adagrad, RMSProp plain and centered,
  Adadelta, Ftrl: `UPDATES`) of a float32 variable of 670k elements (the MLP's parameter
  count) from a fed gradient, alone in the step; and each but Adam's (whose sparse form is
  TF1's dense decay) on 1024 random rows of a float32[100000, 64] embedding from fed
  `IndexedSlices` (the optimizer sums repeated rows, then one ``SparseApply*``).

The plugin's nodes compile after their first calls (``TENSORWEAVE_FUSION_COMPILE_AFTER``), which
the workloads' warm-up steps absorb. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vs_tf  # noqa: E402  (the sibling script's workloads)

GROUPS = ("models", "local", "elementwise", "updates")
MODES = {"off": {"TENSORWEAVE_FUSION": "0"}, "on": {"TENSORWEAVE_FUSION": "1"}}
PARAMETERS = 669_706  # the MLP 784-512-512-10's


def _session(tf: Any, graph: Any) -> Any:
    sess = tf.Session(graph=graph)
    with graph.as_default():
        sess.run(tf.global_variables_initializer())
    return sess


def chain10(tf: Any, n: int) -> float:
    """Microseconds per run of a 10-op elementwise chain on float32[n], summed."""
    rs = np.random.RandomState(0)
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [n])
        w = tf.Variable(rs.rand(n).astype(np.float32) + 0.5)
        b = tf.Variable(rs.rand(n).astype(np.float32))
        y = ((x * w + b) * x - w) * 0.5
        y = tf.maximum(y / (w + 1.0), -1.0) - b * 2.0
        out = tf.reduce_sum(y)
        sess = _session(tf, g)
        feed = {x: rs.rand(n).astype(np.float32)}
        return vs_tf._per_call(lambda: sess.run(out, feed), max(5, min(500, 10**7 // n)),
                               warm=5) * 1e6


def div_chain(tf: Any, n: int) -> float:
    """Microseconds per run of ``(x*w + 1) / (w + 2) / 3`` on float32[n] (two divides in five
    ops, with constants: the plugin's size cutoff), summed."""
    rs = np.random.RandomState(0)
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [n])
        w = tf.Variable(rs.rand(n).astype(np.float32) + 0.5)
        out = tf.reduce_sum((x * w + 1.0) / (w + 2.0) / 3.0)
        sess = _session(tf, g)
        feed = {x: rs.rand(n).astype(np.float32)}
        return vs_tf._per_call(lambda: sess.run(out, feed), max(5, min(500, 10**7 // n)),
                               warm=5) * 1e6


def tanh_chain(tf: Any, shape: list[int]) -> float:
    """Microseconds per run of ``tanh(x*w+b)*0.5+1`` on float32 of `shape`, summed."""
    rs = np.random.RandomState(0)
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, shape)
        w = tf.Variable(rs.rand(*shape).astype(np.float32))
        b = tf.Variable(rs.rand(*shape).astype(np.float32))
        out = tf.reduce_sum(tf.tanh(x * w + b) * 0.5 + 1.0)
        sess = _session(tf, g)
        feed = {x: rs.rand(*shape).astype(np.float32)}
        size = int(np.prod(shape))
        return vs_tf._per_call(lambda: sess.run(out, feed), max(5, min(500, 10**7 // size)),
                               warm=5) * 1e6


def _ms(seconds: tuple[float, float]) -> tuple[float, float]:
    return seconds[0] * 1e3, seconds[1] * 1e3


def update(tf: Any, make: Callable[[Any], Any]) -> tuple[float, float]:
    """Wall and CPU milliseconds per step of one optimizer update of a float32[PARAMETERS]
    variable."""
    rs = np.random.RandomState(0)
    with tf.Graph().as_default() as g:
        w = tf.Variable(rs.randn(PARAMETERS).astype(np.float32))
        grad = tf.placeholder(tf.float32, [PARAMETERS])
        train = make(tf).apply_gradients([(grad, w)])
        sess = _session(tf, g)
        feed = {grad: rs.randn(PARAMETERS).astype(np.float32) * 1e-3}
        return _ms(vs_tf._per_call_and_cpu(lambda: sess.run(train, feed), 30, warm=5))


def sparse_update(tf: Any, make: Callable[[Any], Any]) -> tuple[float, float]:
    """Wall and CPU milliseconds per step of one optimizer's sparse update of SPARSE_ROWS
    random rows (with repeats) of a float32[EMBEDDING] variable, from fed `IndexedSlices`."""
    rs = np.random.RandomState(0)
    with tf.Graph().as_default() as g:
        w = tf.Variable(rs.randn(*EMBEDDING).astype(np.float32))
        values = tf.placeholder(tf.float32, [SPARSE_ROWS, EMBEDDING[1]])
        indices = tf.placeholder(tf.int32, [SPARSE_ROWS])
        grad = tf.IndexedSlices(values, indices, tf.constant(list(EMBEDDING)))
        train = make(tf).apply_gradients([(grad, w)])
        sess = _session(tf, g)
        feed = {values: rs.randn(SPARSE_ROWS, EMBEDDING[1]).astype(np.float32) * 1e-3,
                indices: rs.randint(0, EMBEDDING[0], SPARSE_ROWS).astype(np.int32)}
        return _ms(vs_tf._per_call_and_cpu(lambda: sess.run(train, feed), 30, warm=5))


EMBEDDING = (100_000, 64)
SPARSE_ROWS = 1024
# the optimizers of the ``updates`` group, each one dense update op
UPDATES: dict[str, Callable[[Any], Any]] = {
    "adam": lambda tf: tf.train.AdamOptimizer(1e-3),
    "momentum": lambda tf: tf.train.MomentumOptimizer(0.01, 0.9),
    "adagrad": lambda tf: tf.train.AdagradOptimizer(0.01),
    "rmsprop": lambda tf: tf.train.RMSPropOptimizer(0.01, momentum=0.9),
    "centered_rmsprop": lambda tf: tf.train.RMSPropOptimizer(0.01, momentum=0.9, centered=True),
    "adadelta": lambda tf: tf.train.AdadeltaOptimizer(1.0),
    "ftrl": lambda tf: tf.train.FtrlOptimizer(0.01, l1_regularization_strength=0.01),
}


def _workloads(group: str) -> dict[str, Callable[[Any], Any]]:
    """Each figure of `group` (the models' and local's from vs_tf.py) by name."""
    if group == "models":
        return {"mlp_step_ms": vs_tf.mlp_step, "cnn_step_ms": vs_tf.cnn_step,
                "lstm_step_ms": vs_tf.lstm_step, "pipeline_kelem_per_s": vs_tf.pipeline_drain}
    if group == "local":
        return {"seed_step_us": vs_tf.seed_step, "chain2000_us_per_op": vs_tf.chain,
                "while_us_per_iter": vs_tf.while_loop,
                "graph20k_first_run_ms": vs_tf.first_run_20k}
    if group == "elementwise":
        figures: dict[str, Callable[[Any], Any]] = {
            f"chain10_{n:.0e}_us": (lambda tf, n=n: chain10(tf, n))
            for n in (1000, 100_000, 1_000_000)}
        figures |= {f"div_chain_{n:.0e}_us": (lambda tf, n=n: div_chain(tf, n))
                    for n in (1000, 100_000)}
        figures["tanh_chain_8x16_us"] = lambda tf: tanh_chain(tf, [8, 16])
        figures["tanh_chain_1e5_us"] = lambda tf: tanh_chain(tf, [100_000])
        return figures
    return {**{f"{name}_update_670k_ms": (lambda tf, make=make: update(tf, make))
               for name, make in UPDATES.items()},
            **{f"sparse_{name}_1024x64_ms": (lambda tf, make=make: sparse_update(tf, make))
               for name, make in UPDATES.items() if name != "adam"}}


def _figures(tf: Any, workloads: dict[str, Callable[[Any], Any]]) -> dict[str, float]:
    """Each workload's figure; one giving (wall, CPU) milliseconds gives ``name`` and
    ``name``'s ``_cpu_ms`` twin."""
    figures = {}
    for name, fn in workloads.items():
        got = fn(tf)
        if isinstance(got, tuple):
            figures[name], figures[name.removesuffix("_ms") + "_cpu_ms"] = got
        else:
            figures[name] = got
    return figures


def run_group(lib: str, group: str, rounds: int) -> dict[str, list[dict[str, float]]]:
    """Every figure of `group`: one run under TF, or `rounds` alternated runs of each
    tensorweave mode; by mode, a list of runs."""
    tf = vs_tf._library(lib)
    workloads = _workloads(group)
    if lib == "tf":
        return {"tf": [_figures(tf, workloads)]}
    runs: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    for _ in range(rounds):
        for mode, env in MODES.items():
            os.environ.update(env)
            runs[mode].append(_figures(tf, workloads))
    return runs


def _worker(python: str, lib: str, group: str, rounds: int) -> dict[str, list[dict[str, float]]]:
    """One group in a fresh process; {} (with a note on stderr) if it fails."""
    proc = subprocess.run([python, os.path.abspath(__file__), "--worker", lib, group,
                           str(rounds)], capture_output=True, text=True, timeout=3600)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        print(f"{lib} {group} failed: {proc.stderr.strip().splitlines()[-3:]}", file=sys.stderr)
        return {}
    return json.loads(lines[-1])


def _merge(runs: list[dict[str, float]], r: int, figures: dict[str, float]) -> None:
    while len(runs) <= r:
        runs.append({})
    runs[r] |= figures


def table(runs: dict[str, list[dict[str, float]]]) -> str:
    """One row per figure: the medians, on/off, and each tensorweave mode over TF."""
    keys = list(dict.fromkeys(k for lib in runs for run in runs[lib] for k in run))
    ratios = ["on/off"] + (["off/tf", "on/tf"] if "tf" in runs else [])
    rows = [f"{'figure':28} " + " ".join(f"{name:>9}" for name in [*runs, *ratios])]
    for key in keys:
        med = {lib: vs_tf._median(runs[lib], key) for lib in runs}
        cells = [vs_tf._fmt(med[lib]) for lib in runs]
        pairs = [("on", "off")] + ([("off", "tf"), ("on", "tf")] if "tf" in runs else [])
        cells += [f"{med[a] / med[b]:.2f}" if med[a] is not None and med[b] else "-"
                  for a, b in pairs]
        rows.append(f"{key:28} " + " ".join(f"{cell:>9}" for cell in cells))
    rows.append("ratios < 1: less time, except for kelem_per_s (a rate: > 1 is faster)")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tf", metavar="PYTHON", help="a Python with TensorFlow to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--groups", default=",".join(GROUPS),
                        help=f"comma-separated, of {', '.join(GROUPS)}")
    parser.add_argument("--json", metavar="PATH", help="write every round's raw figures here")
    parser.add_argument("--worker", nargs=3, metavar=("LIB", "GROUP", "ROUNDS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        lib, group, rounds = args.worker
        print(json.dumps(run_group(lib, group, int(rounds))))
        return 0
    groups = args.groups.split(",")
    for group in groups:
        if group not in GROUPS:
            parser.error(f"unknown group {group!r}")
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in
                                               (["tf"] if args.tf else []) + list(MODES)}
    for group in groups:
        got = {mode: [{} for _ in range(args.rounds)] for mode in MODES}
        for mode, values in _worker(sys.executable, "tw", group, args.rounds).items():
            got[mode] = values
        for r in range(args.rounds):
            if args.tf:
                tf_run = _worker(args.tf, "tf", group, 1).get("tf", [{}])[0]
                _merge(runs["tf"], r, tf_run)
            for mode in MODES:
                _merge(runs[mode], r, got[mode][r] if r < len(got[mode]) else {})
        print(f"{group}: {json.dumps({m: runs[m] for m in runs})}", file=sys.stderr, flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(runs, f, indent=1)
    print(table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
