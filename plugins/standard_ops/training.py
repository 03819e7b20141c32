"""OpDefs of the fused optimizer updates (TF's ``training_ops``): ``ApplyGradientDescent``,
``ApplyMomentum``, ``ApplyAdam``, ``ApplyAdagrad``, ``ApplyRMSProp``, ``ApplyCenteredRMSProp``.

Each takes the variable and its slots as refs (so it is placed with the variable, on a ps task in a
cluster), updates them in one kernel, and returns the variable's new value. The gradient has the
variable's shape; every other input is a scalar of the variable's dtype.
"""

from __future__ import annotations

from typing import Any

from tensorweave import dtypes
from tensorweave.op_def import REQUIRED, InferContext, TensorSpec

# name: (inputs, number of leading ref inputs, extra attrs)
UPDATES: dict[str, tuple[tuple[str, ...], int, dict[str, Any]]] = {
    "ApplyGradientDescent": (("var", "alpha", "delta"), 1, {}),
    "ApplyMomentum": (("var", "accum", "lr", "grad", "momentum"), 2, {"use_nesterov": False}),
    "ApplyAdam": (("var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2",
                   "epsilon", "grad"), 3, {"use_nesterov": False}),
    "ApplyAdagrad": (("var", "accum", "lr", "grad"), 2, {"update_slots": True}),
    "ApplyRMSProp": (("var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"), 3, {}),
    "ApplyCenteredRMSProp": (("var", "mg", "ms", "mom", "lr", "rho", "momentum", "epsilon",
                              "grad"), 4, {}),
}
GRADIENT_INPUTS = ("grad", "delta")


def _update(inputs: tuple[str, ...], refs: int) -> Any:
    shaped = [i for i, n in enumerate(inputs) if i < refs or n in GRADIENT_INPUTS]
    scalars = [i for i in range(len(inputs)) if i not in shaped]

    def infer(ctx: InferContext) -> list[TensorSpec]:
        shape = ctx.shape(0)
        for i in shaped[1:]:
            if not shape.is_compatible_with(ctx.shape(i)):
                raise ctx.shape_error(
                    f"Shapes of var {shape} and {inputs[i]} {ctx.shape(i)} must be equal")
            shape = shape.merge_with(ctx.shape(i))
        for i in scalars:
            rank = ctx.shape(i).ndims
            if rank not in (None, 0):
                raise ctx.shape_error(f"{inputs[i]} must be a scalar: Shape must be rank 0 but "
                                      f"is rank {rank}")
        return [TensorSpec(ctx.dtype(0), shape)]

    return infer


def register(registry: Any) -> None:
    for name, (inputs, refs, attrs) in UPDATES.items():
        registry.op(name, [f"{n}:T" for n in inputs], _update(inputs, refs),
                    attrs={"T": REQUIRED, "use_locking": False, **attrs},
                    type_constraints={"T": dtypes.FLOATS}, stateful=True,
                    ref_inputs=tuple(range(refs)))
