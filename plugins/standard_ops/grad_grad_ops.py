"""OpDefs of the ops that only second-order and sampler gradients use: ``MaxPoolGradGrad`` and
``RandomGammaGrad``, as TF.

Contract: ``MaxPoolGradGrad(orig_input, orig_output, grad)`` takes the forward ``MaxPool``'s
attrs (NHWC only) and a `grad` shaped like `orig_input`; its output is shaped like
`orig_output`: each window's value of `grad` at the window's (first) maximum.
``RandomGammaGrad(alpha, sample)`` broadcasts its operands and gives ``d sample / d alpha`` of
gamma samples with unit rate (implicit reparameterization).
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.plugins.standard_ops.grad_ops import POOL_GRAD_ATTRS, REAL
from tensorweave.plugins.standard_ops.shape_fns import broadcast, with_rank

GAMMA_TYPES = {"T": frozenset({dtypes.float16, dtypes.float32, dtypes.float64})}


def _max_pool_grad_grad(ctx: InferContext) -> list[TensorSpec]:
    if ctx.attrs.get("data_format", "NHWC") != "NHWC":
        raise ctx.shape_error("tensorweave supports only the NHWC data format")
    image, pooled, grad = (with_rank(ctx, i, 4) for i in range(3))
    if not image.is_compatible_with(grad):
        raise ctx.shape_error(f"grad has shape {grad}, expected the input's shape {image}")
    return [TensorSpec(ctx.dtype(0), pooled)]


def register(registry: Any) -> None:
    registry.op("MaxPoolGradGrad", ["orig_input:T", "orig_output:T", "grad:T"],
                _max_pool_grad_grad, attrs=POOL_GRAD_ATTRS, type_constraints=REAL)
    registry.op("RandomGammaGrad", ["alpha:T", "sample:T"], broadcast(), attrs={"T": REQUIRED},
                type_constraints=GAMMA_TYPES)
