"""Kernels of the candidate samplers and of ``ComputeAccidentalHits`` (TF's
``candidate_sampler_ops.cc`` and ``range_sampler.cc``).

Contract: each sampler node owns a numpy `Generator` seeded from its ``(seed, seed2)`` attrs as the
random ops' kernels do (both 0: OS entropy), and draws on the host under a per-node lock. With
``unique`` it draws with replacement and keeps the first occurrence of each value until it has
``num_sampled`` distinct ones; the expected count of a value of probability p is then
``-expm1(num_tries * log1p(-p))`` (``num_tries`` draws were made), and ``p * num_sampled``
otherwise. The distributions: uniform ``1 / range_max``; log-uniform (Zipfian)
``log((v + 2) / (v + 1)) / log(range_max + 1)``; unigram ``weight / total weight``, where the
learned sampler starts every weight at 1 and adds 1 per true class after each run, and the fixed
sampler takes ``unigrams`` (or the last comma-separated field of each ``vocab_file`` line)
raised to ``distortion``, with ``num_reserved_ids`` zero weights first and only the entries of
its ``shard`` of ``num_shards``. ``AllCandidateSampler`` returns ``0 .. num_sampled - 1`` with
expected count 1. ``ComputeAccidentalHits`` lists, row-major over ``true_classes``, each true
class found among the sampled candidates (its last position there) with weight ``-FLT_MAX``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.platform import gfile
from tensorweave.plugins.kernels.file_access import checked_path

_SEED_MASK = (1 << 64) - 1
_FLT_MAX = float(np.finfo(np.float32).max)


@attrs.define
class _Uniform:
    range: int

    def draw(self, gen: np.random.Generator, n: int) -> np.ndarray:
        return gen.integers(0, self.range, n, dtype=np.int64)

    def probability(self, values: np.ndarray) -> np.ndarray:
        return np.full(values.shape, 1.0 / self.range)


@attrs.define
class _LogUniform:
    range: int

    def draw(self, gen: np.random.Generator, n: int) -> np.ndarray:
        values = np.exp(gen.random(n) * np.log1p(self.range)).astype(np.int64) - 1
        return values % self.range  # floating-point rounding could reach range itself

    def probability(self, values: np.ndarray) -> np.ndarray:
        v = values.astype(np.float64)
        return np.log((v + 2.0) / (v + 1.0)) / np.log1p(self.range)


@attrs.define
class _Unigram:
    """Sampling proportional to `weights`; a `learned` one grows them with `update`."""

    weights: np.ndarray
    learned: bool = False

    @property
    def range(self) -> int:
        return len(self.weights)

    def draw(self, gen: np.random.Generator, n: int) -> np.ndarray:
        cumulative = np.cumsum(self.weights)
        points = gen.random(n) * cumulative[-1]
        # side="right" never lands on a zero-weight entry (a reserved id)
        picks = np.searchsorted(cumulative, points, side="right")
        return np.minimum(picks, self.range - 1).astype(np.int64)

    def probability(self, values: np.ndarray) -> np.ndarray:
        inside = (values >= 0) & (values < self.range)
        weights = np.where(inside, self.weights[np.clip(values, 0, self.range - 1)], 0.0)
        return weights / self.weights.sum()

    def update(self, values: np.ndarray) -> None:
        np.add.at(self.weights, values.ravel(), 1.0)


def _fail(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _read_vocab(ctx: KernelContext, path: str) -> list[float]:
    """The weight of each vocabulary line: its last comma-separated field."""
    weights = []
    with gfile.GFile(checked_path(ctx, path), "r") as f:
        for line in f.read().splitlines():
            field = line.split(",")[-1]
            try:
                weights.append(float(field))
            except ValueError:
                raise _fail(ctx, f"Wrong vocabulary format at line: {line}") from None
    return weights


def _fixed_unigram(ctx: KernelContext) -> _Unigram:
    a = ctx.attrs
    vocab_file, unigrams = a["vocab_file"], list(a["unigrams"])
    if not vocab_file and not unigrams:
        raise _fail(ctx, "Must provide either vocab_file or unigrams.")
    if vocab_file and unigrams:
        raise _fail(ctx, "Must only provide one of vocab_file and unigrams.")
    counts = _read_vocab(ctx, vocab_file) if vocab_file else unigrams
    num_shards, shard, reserved = int(a["num_shards"]), int(a["shard"]), int(a["num_reserved_ids"])
    # TF numbers the listed words after the reserved ids it kept for this shard, so with
    # several shards the word ids it filters on shift by that count; we keep that numbering.
    weights = [0.0 for word_id in range(reserved) if word_id % num_shards == shard]
    first_id = len(weights)
    weights += [float(w) ** float(a["distortion"]) for i, w in enumerate(counts)
                if (first_id + i) % num_shards == shard]
    if len(weights) != int(a["range_max"]):
        raise _fail(ctx, f"range is {a['range_max']} must be equal to weights size  "
                         f"{len(weights)}")
    return _Unigram(np.asarray(weights, np.float64))


_FACTORIES: dict[str, Callable[[KernelContext], Any]] = {
    "UniformCandidateSampler": lambda ctx: _Uniform(int(ctx.attrs["range_max"])),
    "LogUniformCandidateSampler": lambda ctx: _LogUniform(int(ctx.attrs["range_max"])),
    "LearnedUnigramCandidateSampler":
        lambda ctx: _Unigram(np.ones(int(ctx.attrs["range_max"]), np.float64), learned=True),
    "ThreadUnsafeUnigramCandidateSampler":
        lambda ctx: _Unigram(np.ones(int(ctx.attrs["range_max"]), np.float64), learned=True),
    "FixedUnigramCandidateSampler": _fixed_unigram,
}


@attrs.define
class _NodeState:
    sampler: Any
    gen: np.random.Generator
    lock: threading.Lock = attrs.field(factory=threading.Lock)


def _node_state(ctx: KernelContext) -> _NodeState:
    state = ctx.state.get("sampler")
    if state is None:
        seed, seed2 = int(ctx.attrs["seed"]), int(ctx.attrs["seed2"])
        entropy = None if seed == seed2 == 0 else [seed & _SEED_MASK, seed2 & _SEED_MASK]
        fresh = _NodeState(_FACTORIES[ctx.op](ctx), np.random.default_rng(entropy))
        state = ctx.state.setdefault("sampler", fresh)  # atomic: racing first runs share one
    return state


def _sample_unique(sampler: Any, gen: np.random.Generator, n: int) -> tuple[np.ndarray, int]:
    """`n` distinct values in order of first draw, and how many draws that took."""
    picked = np.empty(0, np.int64)
    tries = 0
    while len(picked) < n:
        need = n - len(picked)
        chunk = sampler.draw(gen, max(2 * need, 16))
        values, first = np.unique(chunk, return_index=True)
        fresh = np.sort(first[~np.isin(values, picked)])[:need]
        picked = np.concatenate([picked, chunk[fresh]])
        tries += int(fresh[-1]) + 1 if len(fresh) == need else len(chunk)
    return picked, tries


def _expected(p: np.ndarray, n: int, tries: int) -> np.ndarray:
    if tries == n:
        return p * n
    return -np.expm1(tries * np.log1p(-p))


def _check_true_classes(ctx: KernelContext, true: np.ndarray, range_: int) -> None:
    if true.ndim != 2:
        raise _fail(ctx, "true_classes must be a matrix")
    num_true = int(ctx.attrs["num_true"])
    if true.shape[1] != num_true:
        raise _fail(ctx, f"true_classes must have num_true columns, expected: "
                         f"{true.shape[1]} was: {num_true}")
    outside = true[(true < 0) | (true >= range_)]
    if outside.size:
        raise _fail(ctx, f"`true_candidate` out of range [0, {range_}), received {outside[0]}")


def sample(ctx: KernelContext, true_classes: Any) -> tuple[Any, Any, Any]:
    true = np.asarray(ctx.device.to_host(true_classes))
    n = int(ctx.attrs["num_sampled"])
    state = _node_state(ctx)
    sampler = state.sampler
    _check_true_classes(ctx, true, sampler.range)
    unique = bool(ctx.attrs["unique"])
    if unique and n > sampler.range:
        raise _fail(ctx, "Sampler's range is too small.")
    with state.lock:
        if unique:
            sampled, tries = _sample_unique(sampler, state.gen, n)
        else:
            sampled, tries = sampler.draw(state.gen, n), n
        true_expected = _expected(sampler.probability(true), n, tries)
        sampled_expected = _expected(sampler.probability(sampled), n, tries)
        if isinstance(sampler, _Unigram) and sampler.learned:
            sampler.update(true)
    return (ctx.device.from_host(sampled),
            ctx.device.from_host(true_expected.astype(np.float32)),
            ctx.device.from_host(sampled_expected.astype(np.float32)))


def sample_all(ctx: KernelContext, true_classes: Any) -> tuple[Any, Any, Any]:
    true = np.asarray(ctx.device.to_host(true_classes))
    n = int(ctx.attrs["num_sampled"])
    _check_true_classes(ctx, true, n)
    return (ctx.device.from_host(np.arange(n, dtype=np.int64)),
            ctx.device.from_host(np.ones(true.shape, np.float32)),
            ctx.device.from_host(np.ones(n, np.float32)))


def accidental_hits(ctx: KernelContext, true_classes: Any,
                    sampled_candidates: Any) -> tuple[Any, Any, Any]:
    true = np.asarray(ctx.device.to_host(true_classes))
    sampled = np.asarray(ctx.device.to_host(sampled_candidates))
    if true.ndim != 2 or true.shape[1] != int(ctx.attrs["num_true"]):
        raise _fail(ctx, "true_candidates must be a batch_size * num_true matrix")
    if sampled.ndim != 1:
        raise _fail(ctx, "sampled_candidates must be a vector, which is typically an output "
                         "from CandidateSampler")
    position = {int(v): i for i, v in enumerate(sampled)}  # a repeated value keeps its last
    hits = [(row, position[int(v)]) for (row, _), v in np.ndenumerate(true)
            if int(v) in position]
    indices = np.asarray([h[0] for h in hits], np.int32)
    ids = np.asarray([h[1] for h in hits], np.int64)
    weights = np.full(len(hits), -_FLT_MAX, np.float32)
    return (ctx.device.from_host(indices), ctx.device.from_host(ids),
            ctx.device.from_host(weights))


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    """Register this module's kernels for `device_type`."""
    for op in _FACTORIES:
        registry.add(op, device_type, sample)
    registry.add("AllCandidateSampler", device_type, sample_all)
    registry.add("ComputeAccidentalHits", device_type, accidental_hits)
