"""Candidate samplers of the friendly API (TF's ``candidate_sampling_ops.py``), exported as
``tw.nn.*`` and ``tw.random.*``.

Contract: each sampler returns the tuple ``(sampled_candidates, true_expected_count,
sampled_expected_count)`` of its op; `compute_accidental_hits` returns ``(indices, ids,
weights)``. `true_classes` must be int64 (a Python list is converted), as TF's generated
wrappers require. The op-level `seed` combines with the graph seed by TF's rule
(`tensorweave.api.random_ops.get_seed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorweave.api.random_ops import get_seed
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import make_op

__all__ = [
    "all_candidate_sampler", "compute_accidental_hits", "fixed_unigram_candidate_sampler",
    "learned_unigram_candidate_sampler", "log_uniform_candidate_sampler",
    "uniform_candidate_sampler",
]


def _seeds(seed: int | None) -> dict[str, int]:
    seed1, seed2 = get_seed(seed)
    return {"seed": seed1 or 0, "seed2": seed2 or 0}


def _sampler(op: str, true_classes: Any, attrs: dict[str, Any], seed: int | None,
             name: str | None) -> tuple[Tensor, Tensor, Tensor]:
    outputs = make_op(op, [true_classes], {**attrs, **_seeds(seed)}, name=name).outputs
    return outputs[0], outputs[1], outputs[2]


def _ranged(num_true: int, num_sampled: int, unique: bool, range_max: int) -> dict[str, Any]:
    return {"num_true": int(num_true), "num_sampled": int(num_sampled), "unique": bool(unique),
            "range_max": int(range_max)}


def uniform_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                              range_max: int, seed: int | None = None,
                              name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """`num_sampled` classes drawn uniformly from ``[0, range_max)``."""
    return _sampler("UniformCandidateSampler", true_classes,
                    _ranged(num_true, num_sampled, unique, range_max), seed, name)


def log_uniform_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int,
                                  unique: bool, range_max: int, seed: int | None = None,
                                  name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """`num_sampled` classes from the Zipfian distribution
    ``P(c) = log((c + 2) / (c + 1)) / log(range_max + 1)``."""
    return _sampler("LogUniformCandidateSampler", true_classes,
                    _ranged(num_true, num_sampled, unique, range_max), seed, name)


def learned_unigram_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int,
                                      unique: bool, range_max: int, seed: int | None = None,
                                      name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """`num_sampled` classes drawn by how often they have been true classes so far."""
    return _sampler("LearnedUnigramCandidateSampler", true_classes,
                    _ranged(num_true, num_sampled, unique, range_max), seed, name)


def fixed_unigram_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int,
                                    unique: bool, range_max: int, vocab_file: str = "",
                                    distortion: float = 1.0, num_reserved_ids: int = 0,
                                    num_shards: int = 1, shard: int = 0,
                                    unigrams: Sequence[float] = (), seed: int | None = None,
                                    name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """`num_sampled` classes drawn by fixed counts (`unigrams` or `vocab_file`) raised to
    `distortion`."""
    attrs = {**_ranged(num_true, num_sampled, unique, range_max), "vocab_file": str(vocab_file),
             "distortion": float(distortion), "num_reserved_ids": int(num_reserved_ids),
             "num_shards": int(num_shards), "shard": int(shard),
             "unigrams": [float(u) for u in unigrams]}
    return _sampler("FixedUnigramCandidateSampler", true_classes, attrs, seed, name)


def all_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                          seed: int | None = None,
                          name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Every class ``0 .. num_sampled - 1``, each with expected count 1."""
    attrs = {"num_true": int(num_true), "num_sampled": int(num_sampled), "unique": bool(unique)}
    return _sampler("AllCandidateSampler", true_classes, attrs, seed, name)


def compute_accidental_hits(true_classes: Any, sampled_candidates: Any, num_true: int,
                            seed: int | None = None,
                            name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """The positions ``(indices, ids)`` where a sampled candidate equals one of its row's true
    classes, with weights ``-FLT_MAX`` to add to those logits."""
    attrs = {"num_true": int(num_true), **_seeds(seed)}
    outputs = make_op("ComputeAccidentalHits", [true_classes, sampled_candidates], attrs,
                      name=name).outputs
    return outputs[0], outputs[1], outputs[2]
