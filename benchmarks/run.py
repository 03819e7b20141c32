"""Every performance figure of the project, each beside a baseline measured in the same run.

Run ``python benchmarks/run.py``. It prints one row per figure: tensorweave's value, the
baseline's (numpy doing the same work, or raw loopback TCP), their ratio, the target and
whether it is met (``pass``/``MISS``). The figures and their modules:

- seed-graph step ``S += w * x + b``, local, per ``Session.run`` (and per `make_callable`
  call): <= 30 us; baseline: the same update in numpy (`pipeline`);
- a 2000-op chain of tiny elementwise ops, per op: <= 1.0 us; baseline numpy (`pipeline`);
- the first run of a 20k-node graph (prune, passes, place, partition, plans, the step):
  <= 0.9 s; baseline: numpy's chain of the same adds (`pipeline`);
- a chain of 8 float32 1024x1024 matmuls: <= 1.05x the same numpy code (`matmul`);
- an LSTM training step through ``dynamic_rnn`` (a ``While`` loop and its gradient) over 100
  time steps: <= 3x the same model unrolled by ``static_rnn`` (`rnn`);
- the seed-graph step across a ps and a worker process on loopback: <= 1.5 ms; baseline: a
  raw loopback TCP round trip (`distributed`);
- 64 MiB from the ps to the worker: >= 60 % of raw loopback TCP throughput, and 64 MiB fetched
  to the client: >= 50 % (`distributed`);
- an embedding training step with a 200k x 64 table on the ps: the sparse update (only the
  looked-up rows travel and are applied) <= 0.25x the same step with the gradient made dense
  (`embedding`);
- memory: a step's peak <= 1.3x its live tensors, and resident memory flat from step 10k to
  step 100k of a small step (`memory`, which says how live tensors are counted).

``--quick`` runs every figure at small sizes in a few seconds, as a smoke check: its markers
compare small-size figures with full-size targets and mean nothing. Nothing is asserted about
speed; the exit code is 0 unless a figure fails to compute.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import attrs

# the sibling modules: a script's own folder is the first entry of sys.path
import distributed
import embedding
import matmul
import memory
import pipeline
import rnn

from tensorweave.train.local_cluster import LocalCluster

MIB = 1 << 20


@attrs.frozen
class Figure:
    """One row: tensorweave's value, the baseline's, and the target on one of them."""

    name: str
    value: float
    baseline: float
    baseline_name: str
    unit: str
    target: str
    met: bool

    @property
    def ratio(self) -> str:
        return f"{self.value / self.baseline:.3g}x" if self.baseline else "-"


@attrs.frozen
class Plan:
    """The sizes of one run."""

    pipeline: pipeline.Sizes
    matmul_size: int
    matmul_repeats: int
    steps: int  # distributed small steps timed
    transfer_bytes: int
    transfers: int
    peak_elements: int
    flat_steps: int
    rnn_steps: int
    vocab: int  # embedding rows


FULL = Plan(pipeline.FULL, 1024, 10, 300, 64 * MIB, 7, 1 << 20, 100_000, 100, 200_000)
QUICK = Plan(pipeline.QUICK, 128, 3, 30, 4 * MIB, 2, 1 << 14, 10_000, 10, 20_000)


def at_most(limit: float, unit: str) -> tuple[str, Callable[[float], bool]]:
    return f"<= {limit:g} {unit}", lambda v: v <= limit


def local_figures(plan: Plan) -> list[Figure]:
    first, _ = pipeline.first_run(plan.pipeline)
    via_run, via_callable = pipeline.seed_graph(plan.pipeline)
    chain = pipeline.elementwise_chain(plan.pipeline)
    figures = []
    for name, row, limit, unit, scale in (
            ("seed-graph step, local, Session.run", via_run, 30.0, "us", 1.0),
            ("seed-graph step, local, make_callable", via_callable, 30.0, "us", 1.0),
            (f"{chain.figure} (tiny ops)", chain, 1.0, "us", 1.0),
            (first.figure, first, 0.9, "s", 1e-3)):
        target, check = at_most(limit, unit)
        value = row.tensorweave * scale
        figures.append(Figure(name, value, row.numpy * scale, "numpy", unit, target,
                              check(value)))
    tw, np_seconds = matmul.matmul_chain(plan.matmul_size, repeats=plan.matmul_repeats)
    size = plan.matmul_size
    figures.append(Figure(f"8 matmuls of {size}x{size} float32", tw * 1e3, np_seconds * 1e3,
                          "numpy", "ms", f"<= {matmul.TARGET}x numpy",
                          tw <= matmul.TARGET * np_seconds))
    dynamic, static = rnn.training_steps(plan.rnn_steps)
    figures.append(Figure(f"LSTM training step, dynamic_rnn, {plan.rnn_steps} steps",
                          dynamic * 1e3, static * 1e3, "static_rnn", "ms",
                          f"<= {rnn.TARGET:g}x static_rnn", dynamic <= rnn.TARGET * static))
    return figures


def distributed_figures(plan: Plan) -> list[Figure]:
    raw_gbps = distributed.raw_tcp_gbps(plan.transfer_bytes)
    rtt = distributed.raw_tcp_rtt_ms(plan.steps * 10)
    with LocalCluster({"ps": 1, "worker": 1}) as cluster:
        step_ms = distributed.seed_step_ms(cluster, plan.steps)
        pull, fetch = distributed.transfer_gbps(cluster, plan.transfers, plan.transfer_bytes)
        sparse, dense = embedding.step_seconds(cluster, vocab=plan.vocab)
    mib = plan.transfer_bytes // MIB
    target, check = at_most(distributed.STEP_TARGET_MS, "ms")
    figures = [Figure("distributed small step (ps + worker)", step_ms, rtt,
                      "raw TCP round trip", "ms", target, check(step_ms))]
    for name, gbps, share in (
            (f"{mib} MiB ps -> worker", pull, distributed.TRANSFER_TARGET),
            (f"{mib} MiB fetch to the client", fetch, distributed.FETCH_TARGET)):
        figures.append(Figure(name, gbps, raw_gbps, "raw TCP", "GB/s",
                              f">= {share:.0%} of raw TCP", gbps >= share * raw_gbps))
    figures.append(Figure(f"embedding step, {plan.vocab // 1000}k x 64 table on the ps",
                          sparse * 1e3, dense * 1e3, "dense gradient", "ms",
                          f"<= {embedding.TARGET:g}x dense", sparse <= embedding.TARGET * dense))
    return figures


def memory_figures(plan: Plan) -> list[Figure]:
    peak, live = memory.step_peak(plan.peak_elements)
    tw, baseline = memory.rss_growth(plan.flat_steps)
    limit = memory.GROWTH_TARGET_BYTES / MIB
    return [
        Figure("memory: step peak", peak / MIB, live / MIB, "live tensors", "MiB",
               f"<= {memory.PEAK_TARGET}x live", peak <= memory.PEAK_TARGET * live),
        Figure(f"memory: RSS growth, step {plan.flat_steps // 10} -> {plan.flat_steps}",
               tw / MIB, baseline / MIB, "numpy", "MiB", f"<= {limit:g} MiB",
               tw <= memory.GROWTH_TARGET_BYTES),
    ]


def table(figures: list[Figure]) -> str:
    width = max(len(f.name) for f in figures)
    lines = [f"{'figure':<{width}}  {'tensorweave':>16}  {'baseline':>28}  {'ratio':>8}  "
             f"{'target':<20}  result"]
    for f in figures:
        ours = f"{f.value:.4g} {f.unit}"
        theirs = f"{f.baseline_name} {f.baseline:.4g} {f.unit}"
        lines.append(f"{f.name:<{width}}  {ours:>16}  {theirs:>28}  {f.ratio:>8}  "
                     f"{f.target:<20}  {'pass' if f.met else 'MISS'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true",
                        help="every figure at small sizes: a smoke check, not a measurement")
    quick = parser.parse_args(argv).quick
    plan = QUICK if quick else FULL
    start = time.perf_counter()
    figures = local_figures(plan) + memory_figures(plan) + distributed_figures(plan)
    print(table(figures))
    missed = sum(not f.met for f in figures)
    print(f"{len(figures) - missed} of {len(figures)} targets met in "
          f"{time.perf_counter() - start:.0f} s.")
    if quick:
        print("(--quick: small sizes against full-size targets; the results mean nothing)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
