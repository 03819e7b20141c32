"""OpDefs of the fused optimizer updates (TF's ``training_ops``): ``ApplyGradientDescent``,
``ApplyMomentum``, ``ApplyAdam``, ``ApplyAdagrad``, ``ApplyRMSProp``, ``ApplyCenteredRMSProp``,
``ApplyAdadelta``, ``ApplyFtrl``, ``ApplyFtrlV2``, and the sparse updates
``SparseApplyMomentum``, ``SparseApplyAdagrad``, ``SparseApplyRMSProp``,
``SparseApplyCenteredRMSProp``, ``SparseApplyAdadelta``, ``SparseApplyFtrl``,
``SparseApplyFtrlV2``.

Each takes the variable and its slots as refs (so it is placed with the variable, on a ps task in a
cluster), updates them in one kernel, and returns the variable's new value. A dense update's
gradient has the variable's shape; a sparse update's gradient holds one row per entry of its 1-D
``indices`` (``grad.shape = indices.shape + var.shape[1:]``) and only those rows of the variable
and its slots change. Every other input is a scalar of the variable's dtype.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.plugins.standard_ops.shape_fns import with_rank, with_rank_at_least

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
    "ApplyAdadelta": (("var", "accum", "accum_update", "lr", "rho", "epsilon", "grad"), 3, {}),
    "ApplyFtrl": (("var", "accum", "linear", "grad", "lr", "l1", "l2", "lr_power"), 3, {}),
    "ApplyFtrlV2": (("var", "accum", "linear", "grad", "lr", "l1", "l2", "l2_shrinkage",
                     "lr_power"), 3, {}),
}
SPARSE_UPDATES: dict[str, tuple[tuple[str, ...], int, dict[str, Any]]] = {
    "SparseApplyMomentum": (("var", "accum", "lr", "grad", "indices", "momentum"), 2,
                            {"use_nesterov": False}),
    "SparseApplyAdagrad": (("var", "accum", "lr", "grad", "indices"), 2, {"update_slots": True}),
    "SparseApplyRMSProp": (("var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad",
                            "indices"), 3, {}),
    "SparseApplyCenteredRMSProp": (("var", "mg", "ms", "mom", "lr", "rho", "momentum",
                                    "epsilon", "grad", "indices"), 4, {}),
    "SparseApplyAdadelta": (("var", "accum", "accum_update", "lr", "rho", "epsilon", "grad",
                             "indices"), 3, {}),
    "SparseApplyFtrl": (("var", "accum", "linear", "grad", "indices", "lr", "l1", "l2",
                         "lr_power"), 3, {}),
    "SparseApplyFtrlV2": (("var", "accum", "linear", "grad", "indices", "lr", "l1", "l2",
                           "l2_shrinkage", "lr_power"), 3, {}),
}
GRADIENT_INPUTS = ("grad", "delta")


def _check_scalars(ctx: InferContext, inputs: tuple[str, ...], scalars: list[int]) -> None:
    for i in scalars:
        rank = ctx.shape(i).ndims
        if rank not in (None, 0):
            raise ctx.shape_error(f"{inputs[i]} must be a scalar: Shape must be rank 0 but "
                                  f"is rank {rank}")


def _merge_slots(ctx: InferContext, inputs: tuple[str, ...], shaped: list[int]) -> Any:
    shape = ctx.shape(0)
    for i in shaped[1:]:
        if not shape.is_compatible_with(ctx.shape(i)):
            raise ctx.shape_error(
                f"Shapes of var {shape} and {inputs[i]} {ctx.shape(i)} must be equal")
        shape = shape.merge_with(ctx.shape(i))
    return shape


def _update(inputs: tuple[str, ...], refs: int) -> Any:
    shaped = [i for i, n in enumerate(inputs) if i < refs or n in GRADIENT_INPUTS]
    scalars = [i for i in range(len(inputs)) if i not in shaped]

    def infer(ctx: InferContext) -> list[TensorSpec]:
        shape = _merge_slots(ctx, inputs, shaped)
        _check_scalars(ctx, inputs, scalars)
        return [TensorSpec(ctx.dtype(0), shape)]

    return infer


def _sparse_update(inputs: tuple[str, ...], refs: int) -> Any:
    """TF's ``HandleGradAndIndicesInputs``: 1-D indices, one gradient row per index."""
    grad, indices = inputs.index("grad"), inputs.index("indices")
    scalars = [i for i in range(refs, len(inputs)) if i not in (grad, indices)]

    def infer(ctx: InferContext) -> list[TensorSpec]:
        shape = _merge_slots(ctx, inputs, list(range(refs)))
        _check_scalars(ctx, inputs, scalars)
        index_shape = with_rank(ctx, indices, 1)
        grad_shape = with_rank_at_least(ctx, grad, 1)
        with_rank_at_least(ctx, 0, 1)
        if grad_shape.ndims and not index_shape.is_compatible_with(grad_shape[:1]):
            raise ctx.shape_error(f"Dimension 0 in both shapes must be equal, but are "
                                  f"{grad_shape[0]} and {index_shape[0]}")
        if shape.ndims is not None and grad_shape.ndims is not None \
                and not shape[1:].is_compatible_with(grad_shape[1:]):
            raise ctx.shape_error(f"Shapes of var {shape} and grad {grad_shape} must be equal "
                                  f"in all dimensions but the first")
        return [TensorSpec(ctx.dtype(0), shape)]

    return infer


def register(registry: Any) -> None:
    for name, (inputs, refs, attrs) in UPDATES.items():
        registry.op(name, [f"{n}:T" for n in inputs], _update(inputs, refs),
                    attrs={"T": REQUIRED, "use_locking": False, **attrs},
                    type_constraints={"T": dtypes.FLOATS}, stateful=True,
                    ref_inputs=tuple(range(refs)))
    for name, (inputs, refs, attrs) in SPARSE_UPDATES.items():
        registry.op(name, [f"{n}:Tindices" if n == "indices" else f"{n}:T" for n in inputs],
                    _sparse_update(inputs, refs),
                    attrs={"T": REQUIRED, "Tindices": None, "use_locking": False, **attrs},
                    type_constraints={"T": dtypes.FLOATS, "Tindices": dtypes.INDEX},
                    stateful=True, ref_inputs=tuple(range(refs)))
