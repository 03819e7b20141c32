"""OpDefs of the parameterized samplers ``RandomGamma`` and ``RandomPoissonV2``.

Contract: as TF's, each draws ``shape`` (an int32/int64 vector input) samples per element of its
parameter tensor, so the output shape is ``shape + param.shape`` (unknown when either is).
``RandomGamma(shape, alpha)`` is typed as `alpha` (a float type); ``RandomPoissonV2(shape,
rate)`` takes a float or integer ``rate`` (attr ``R``) and gives ``dtype`` (float or int32 /
int64). Both carry ``seed``/``seed2`` and are stateful.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.random import SEEDS, shape_from_input


def _samples_shape(ctx: InferContext) -> TensorShape:
    return shape_from_input(ctx, 0).concatenate(ctx.shape(1))


def _gamma(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(ctx.dtype(1), _samples_shape(ctx))]


def _poisson(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(ctx.attr("dtype"), _samples_shape(ctx))]


def register(registry: Any) -> None:
    registry.op("RandomGamma", ["shape:S", "alpha:T"], _gamma, stateful=True,
                attrs={**SEEDS, "S": REQUIRED, "T": REQUIRED},
                type_constraints={"S": dtypes.INDEX, "T": dtypes.FLOATS})
    registry.op("RandomPoissonV2", ["shape:S", "rate:R"], _poisson, stateful=True,
                attrs={**SEEDS, "S": REQUIRED, "R": REQUIRED, "dtype": dtypes.int64},
                type_constraints={"S": dtypes.INDEX, "R": dtypes.FLOATS | dtypes.INDEX,
                                  "dtype": dtypes.FLOATS | dtypes.INDEX})
