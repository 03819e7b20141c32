"""OpDefs of TF1's conditional accumulators: ``ConditionalAccumulator`` and the
``Accumulator*`` ops that use it.

Contract: ``ConditionalAccumulator`` gives a string scalar handle naming the accumulator in its
device's resource store (tensorweave has no resource dtype; TF's ref-string handle is a 2-vector,
this one is a scalar, as the queues' handles are). Every ``Accumulator*`` op takes that handle as
input 0, declared a ref input, so the placer keeps it on the accumulator's device.
``AccumulatorApplyGradient(handle, local_step: int64, gradient: dtype)`` has no outputs;
``AccumulatorTakeGradient(handle, num_required: int32)`` gives one tensor of `dtype` with an
unknown shape (the Python `ConditionalAccumulator` sets the shape it knows);
``AccumulatorNumAccumulated`` gives an int32 scalar; ``AccumulatorSetGlobalStep(handle,
new_global_step: int64)`` has no outputs. Scalar inputs must be rank 0 (`ValueError`). All are
stateful: never merged, folded or pruned into one.
"""

from __future__ import annotations

from typing import Any

from tensorweave import dtypes
from tensorweave.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.plugins.standard_ops.shape_fns import with_rank
from tensorweave.tensor_shape import TensorShape

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


def _num_accumulated(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    return [TensorSpec(dtypes.int32, TensorShape([]))]


def register(registry: Any) -> None:
    numeric = {"dtype": dtypes.NUMERIC}
    registry.op("ConditionalAccumulator", [], _handle, stateful=True, type_constraints=numeric,
                attrs={"dtype": REQUIRED, "shape": REQUIRED, "container": "",
                       "shared_name": "", "reduction_type": "MEAN"})
    registry.op("AccumulatorApplyGradient",
                ["handle:string", "local_step:int64", "gradient:dtype"], _scalar_inputs(1),
                stateful=True, ref_inputs=(0,), attrs={"dtype": REQUIRED},
                type_constraints=numeric)
    registry.op("AccumulatorTakeGradient", ["handle:string", "num_required:int32"], _take,
                stateful=True, ref_inputs=(0,), attrs={"dtype": REQUIRED},
                type_constraints=numeric)
    registry.op("AccumulatorNumAccumulated", ["handle:string"], _num_accumulated,
                stateful=True, ref_inputs=(0,))
    registry.op("AccumulatorSetGlobalStep", ["handle:string", "new_global_step:int64"],
                _scalar_inputs(1), stateful=True, ref_inputs=(0,))
