"""OpDefs of TF's candidate samplers (``UniformCandidateSampler``, ``LogUniformCandidateSampler``,
``LearnedUnigramCandidateSampler``, ``ThreadUnsafeUnigramCandidateSampler``,
``FixedUnigramCandidateSampler``, ``AllCandidateSampler``) and of ``ComputeAccidentalHits``.

Contract (``candidate_sampling_ops.cc``): a sampler takes ``true_classes`` (int64,
``[batch_size, num_true]``) and gives ``sampled_candidates`` (int64, ``[num_sampled]``),
``true_expected_count`` (float32, ``[batch_size, num_true]``) and ``sampled_expected_count``
(float32, ``[num_sampled]``). ``ComputeAccidentalHits`` gives three vectors of unknown length:
``indices`` (int32), ``ids`` (int64) and ``weights`` (float32). Integer attrs below their minimum
raise `ValueError` at construction, as TF's attr checks do. Samplers are stateful (each run draws
anew, and the learned sampler keeps counts), so they are never merged or folded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.plugins.standard_ops.shape_fns import with_rank

_INT32_MAX = 2**31 - 1
_COMMON = {"num_true": REQUIRED, "num_sampled": REQUIRED, "unique": REQUIRED, "seed": 0,
           "seed2": 0}
_RANGED = {**_COMMON, "range_max": REQUIRED}
_FIXED_UNIGRAM = {**_RANGED, "vocab_file": "", "distortion": 1.0, "num_reserved_ids": 0,
                  "num_shards": 1, "shard": 0, "unigrams": []}


def _check_min(ctx: InferContext, name: str, minimum: int) -> int:
    value = int(ctx.attr(name))
    if value < minimum:
        raise ValueError(f"Attr '{name}' of '{ctx.op}' Op passed {value} less than minimum "
                         f"{minimum}.")
    return value


def _sampler_outputs(ctx: InferContext) -> list[TensorSpec]:
    num_true = _check_min(ctx, "num_true", 1)
    num_sampled = _check_min(ctx, "num_sampled", 1)
    if "range_max" in ctx.attrs:
        _check_min(ctx, "range_max", 1)
    batch_size = with_rank(ctx, 0, 2)[0]
    return [TensorSpec(dtypes.int64, [num_sampled]),
            TensorSpec(dtypes.float32, [batch_size, num_true]),
            TensorSpec(dtypes.float32, [num_sampled])]


def _unigram_outputs(ctx: InferContext) -> list[TensorSpec]:
    if int(ctx.attr("range_max")) >= _INT32_MAX:
        raise ValueError(f"range_max must be less than {_INT32_MAX} for unigram samplers")
    return _sampler_outputs(ctx)


def _fixed_unigram_outputs(ctx: InferContext) -> list[TensorSpec]:
    _check_min(ctx, "num_shards", 1)
    _check_min(ctx, "shard", 0)
    return _sampler_outputs(ctx)


def _accidental_hits(ctx: InferContext) -> list[TensorSpec]:
    num_true = int(ctx.attr("num_true"))
    columns = with_rank(ctx, 0, 2)[1]
    if columns is not None and columns != num_true:
        raise ctx.shape_error(f"Dimension must be {num_true} but is {columns}")
    with_rank(ctx, 1, 1)
    return [TensorSpec(dtypes.int32, [None]), TensorSpec(dtypes.int64, [None]),
            TensorSpec(dtypes.float32, [None])]


_SAMPLERS: dict[str, tuple[dict[str, Any], Callable[[InferContext], list[TensorSpec]]]] = {
    "UniformCandidateSampler": (_RANGED, _sampler_outputs),
    "LogUniformCandidateSampler": (_RANGED, _sampler_outputs),
    "LearnedUnigramCandidateSampler": (_RANGED, _unigram_outputs),
    "ThreadUnsafeUnigramCandidateSampler": (_RANGED, _unigram_outputs),
    "FixedUnigramCandidateSampler": (_FIXED_UNIGRAM, _fixed_unigram_outputs),
    "AllCandidateSampler": (_COMMON, _sampler_outputs),
}


def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
    for name, (attrs, infer) in _SAMPLERS.items():
        registry.op(name, ["true_classes:int64"], infer, attrs=dict(attrs), stateful=True)
    registry.op("ComputeAccidentalHits", ["true_classes:int64", "sampled_candidates:int64"],
                _accidental_hits, attrs={"num_true": REQUIRED, "seed": 0, "seed2": 0})
