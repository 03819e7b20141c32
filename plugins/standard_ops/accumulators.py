"""OpDefs of TF1's conditional accumulators, dense and sparse: ``ConditionalAccumulator``,
``SparseConditionalAccumulator`` and the ops that use them.

Contract: ``ConditionalAccumulator`` gives a string scalar handle naming the accumulator in its
device's resource store (tensorweave has no resource dtype; TF's ref-string handle is a 2-vector,
this one is a scalar, as the queues' handles are). Every ``Accumulator*`` op takes that handle as
input 0, declared a ref input, so the placer keeps it on the accumulator's device.
``AccumulatorApplyGradient(handle, local_step: int64, gradient: dtype)`` has no outputs;
``AccumulatorTakeGradient(handle, num_required: int32)`` gives one tensor of `dtype` with an
unknown shape (the Python `ConditionalAccumulator` sets the shape it knows);
``AccumulatorNumAccumulated`` gives an int32 scalar; ``AccumulatorSetGlobalStep(handle,
new_global_step: int64)`` has no outputs. ``SparseConditionalAccumulator`` gives the handle
of a sparse accumulator, used by ``SparseAccumulatorApplyGradient(handle, local_step: int64,
gradient_indices: int64, gradient_values: dtype, gradient_shape: int64)`` (no outputs; the
``has_known_shape`` attr says whether ``gradient_shape`` is meant) and
``SparseAccumulatorTakeGradient(handle, num_required: int32)``, which gives ``indices`` (int64
vector), ``values`` (`dtype`, unknown shape) and ``shape`` (int64 vector), as TF's; the
count and global-step ops serve both kinds. Scalar inputs must be rank 0, indices and the dense
shape vectors, and values at least rank 1 (`ValueError`). All are stateful: never merged, folded
or pruned into one.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import with_rank, with_rank_at_least

REDUCTION_TYPES = ("MEAN", "SUM")


def _handle(ctx: InferContext) -> list[TensorSpec]:
    if ctx.attr("reduction_type") not in REDUCTION_TYPES:
        raise ctx.type_error(f"attr 'reduction_type' must be one of {list(REDUCTION_TYPES)}, "
                             f"not {ctx.attr('reduction_type')!r}")
    return [TensorSpec(dtypes.string, TensorShape([]))]


def _scalar_inputs(*indices: int) -> Any:
    """A shape function with no outputs whose inputs at `indices` (and the handle) are
    scalars."""

    def infer(ctx: InferContext) -> list[TensorSpec]:
        for i in (0, *indices):
            with_rank(ctx, i, 0)
        return []

    return infer


def _take(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    with_rank(ctx, 1, 0)
    return [TensorSpec(ctx.attr("dtype"), TensorShape(None))]


def _sparse_apply(ctx: InferContext) -> list[TensorSpec]:
    for i, rank in ((0, 0), (1, 0), (2, 1), (4, 1)):
        with_rank(ctx, i, rank)
    with_rank_at_least(ctx, 3, 1)
    return []


def _sparse_take(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    with_rank(ctx, 1, 0)
    return [TensorSpec(dtypes.int64, TensorShape([None])),
            TensorSpec(ctx.attr("dtype"), TensorShape(None)),
            TensorSpec(dtypes.int64, TensorShape([None]))]


def _num_accumulated(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    return [TensorSpec(dtypes.int32, TensorShape([]))]


def register(registry: Any) -> None:
    numeric = {"dtype": dtypes.NUMERIC}
    accumulator = {"dtype": REQUIRED, "shape": REQUIRED, "container": "", "shared_name": "",
                   "reduction_type": "MEAN"}
    for name in ("ConditionalAccumulator", "SparseConditionalAccumulator"):
        registry.op(name, [], _handle, stateful=True, type_constraints=numeric,
                    attrs=accumulator)
    registry.op("AccumulatorApplyGradient",
                ["handle:string", "local_step:int64", "gradient:dtype"], _scalar_inputs(1),
                stateful=True, ref_inputs=(0,), attrs={"dtype": REQUIRED},
                type_constraints=numeric)
    registry.op("AccumulatorTakeGradient", ["handle:string", "num_required:int32"], _take,
                stateful=True, ref_inputs=(0,), attrs={"dtype": REQUIRED},
                type_constraints=numeric)
    registry.op("SparseAccumulatorApplyGradient",
                ["handle:string", "local_step:int64", "gradient_indices:int64",
                 "gradient_values:dtype", "gradient_shape:int64"], _sparse_apply,
                stateful=True, ref_inputs=(0,),
                attrs={"dtype": REQUIRED, "has_known_shape": REQUIRED}, type_constraints=numeric)
    registry.op("SparseAccumulatorTakeGradient", ["handle:string", "num_required:int32"],
                _sparse_take, stateful=True, ref_inputs=(0,), attrs={"dtype": REQUIRED},
                type_constraints=numeric)
    registry.op("AccumulatorNumAccumulated", ["handle:string"], _num_accumulated,
                stateful=True, ref_inputs=(0,))
    registry.op("AccumulatorSetGlobalStep", ["handle:string", "new_global_step:int64"],
                _scalar_inputs(1), stateful=True, ref_inputs=(0,))
