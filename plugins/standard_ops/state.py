"""OpDefs for placeholders with defaults, StopGradient and variables (``Const``, ``Placeholder``,
``Identity`` and ``NoOp`` are the engine's own: `tensorweave.engine.runtime.internal_ops`)."""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape, format_dims
from tensorweave.plugins.standard_ops.shape_fns import unchanged


def _placeholder(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(ctx.attr("dtype"), ctx.attr("shape"))]


def _with_default(ctx: InferContext) -> list[TensorSpec]:
    shape = TensorShape(ctx.attr("shape"))
    if not shape.is_compatible_with(ctx.shape(0)):
        raise ctx.shape_error(f"default shape {ctx.shape(0)} is incompatible with {shape}")
    return [TensorSpec(ctx.dtype(0), shape)]


def _assign(ctx: InferContext) -> list[TensorSpec]:
    ref, value = ctx.shape(0), ctx.shape(1)
    if ctx.attrs.get("validate_shape", True) and not ref.is_compatible_with(value):
        if ref.ndims != value.ndims:
            raise ctx.shape_error(f"Shapes must be equal rank, but are {ref.ndims} and "
                                  f"{value.ndims}")
        k = next(i for i, (a, b) in enumerate(zip(ref.dims, value.dims))
                 if a is not None and b is not None and a != b)
        raise ctx.shape_error(  # TF's words for a failed shape merge
            f"Dimension {k} in both shapes must be equal, but are {ref[k]} and {value[k]}. "
            f"Shapes are {format_dims(ref)} and {format_dims(value)}.")
    shape = ref.merge_with(value) if ctx.attrs.get("validate_shape", True) else value
    return [TensorSpec(ctx.dtype(0), shape)]


def register(registry: Any) -> None:
    registry.op("PlaceholderWithDefault", ["input:dtype"], _with_default,
                attrs={"dtype": REQUIRED, "shape": TensorShape(None)})
    registry.op("StopGradient", ["input:T"], unchanged, attrs={"T": REQUIRED})
    registry.op("VariableV2", [], _placeholder, stateful=True, ref_output=True,
                attrs={"shape": REQUIRED, "dtype": REQUIRED, "container": "",
                       "shared_name": ""})
    registry.op("IsVariableInitialized", ["ref:dtype"],
                lambda ctx: [TensorSpec(dtypes.bool_, TensorShape([]))],
                attrs={"dtype": REQUIRED}, stateful=True, ref_inputs=(0,))
    registry.op("Assign", ["ref:T", "value:T"], _assign, stateful=True, ref_inputs=(0,),
                attrs={"T": REQUIRED, "validate_shape": True, "use_locking": True})
    for name in ("AssignAdd", "AssignSub"):
        registry.op(name, ["ref:T", "value:T"], _assign, stateful=True, ref_inputs=(0,),
                    attrs={"T": REQUIRED, "use_locking": False},
                    type_constraints={"T": dtypes.NUMERIC | dtypes.COMPLEX})
