"""OpDefs for the random ops: RandomStandardNormal, RandomUniform, RandomUniformInt,
TruncatedNormal and RandomShuffle.

Contract: as in TF, the output shape comes from the ``shape`` input (an int32/int64 vector),
statically when its value is known at construction; ``seed``/``seed2`` both 0 mean "seed at
random". All are stateful: each run draws new numbers, so they are never merged or folded.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape, unknown_shape
from tensorweave.plugins.standard_ops.shape_fns import unchanged, with_rank

SEEDS = {"seed": 0, "seed2": 0}


def shape_from_input(ctx: InferContext, i: int) -> TensorShape:
    """The shape a 1-D shape tensor (input `i`) describes, as far as it is known."""
    length = with_rank(ctx, i, 1)[0]
    value = ctx.constant_value(i)
    if value is not None:
        dims = [int(d) for d in value.ravel()]
        negative = [d for d in dims if d < 0]
        if negative:
            raise ctx.shape_error(f"Dimension {negative[0]} must be >= 0")
        return TensorShape(dims)
    return unknown_shape(length)


def _float_output(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(ctx.attr("dtype"), shape_from_input(ctx, 0))]


def _uniform_int(ctx: InferContext) -> list[TensorSpec]:
    for i, name in ((1, "minval"), (2, "maxval")):
        if ctx.shape(i).ndims not in (None, 0):
            raise ctx.shape_error(f"{name} must be 0-D, got rank {ctx.shape(i).ndims}")
    return [TensorSpec(ctx.attr("Tout"), shape_from_input(ctx, 0))]


def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
    for name in ("RandomStandardNormal", "RandomUniform", "TruncatedNormal"):
        registry.op(name, ["shape:T"], _float_output, stateful=True,
                    attrs={**SEEDS, "dtype": REQUIRED, "T": REQUIRED},
                    type_constraints={"T": dtypes.INDEX, "dtype": dtypes.FLOATS})
    registry.op("RandomUniformInt", ["shape:T", "minval:Tout", "maxval:Tout"], _uniform_int,
                stateful=True, attrs={**SEEDS, "Tout": REQUIRED, "T": REQUIRED},
                type_constraints={"T": dtypes.INDEX, "Tout": dtypes.INDEX})
    registry.op("RandomShuffle", ["value:T"], unchanged, stateful=True,
                attrs={**SEEDS, "T": REQUIRED})
