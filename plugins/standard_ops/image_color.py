"""OpDefs of the colour-space image ops: ``RGBToHSV``, ``HSVToRGB``, ``AdjustHue`` and
``AdjustSaturation``.

Contract: names, inputs and dtypes follow TF. The colour conversions take any float images of
rank >= 1 whose last dimension is 3 and keep their dtype and shape; the adjustments take
float16/float32 images of rank >= 3 (last dimension 3) and a float32 scalar (hue ``delta`` in
turns, saturation ``scale``). A known last dimension other than 3 is a `ValueError` here, an
unknown one is checked by the kernel.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.plugins.standard_ops.shape_fns import with_rank, with_rank_at_least

ADJUST_TYPES = {"T": frozenset({dtypes.float16, dtypes.float32})}


def _rgb_shape(ctx: InferContext, rank: int) -> list[TensorSpec]:
    shape = with_rank_at_least(ctx, 0, rank)
    if shape.ndims is not None and shape.dims[-1] is not None and shape.dims[-1] != 3:
        raise ctx.shape_error(f"Dimension must be 3 but is {shape.dims[-1]}")
    return [ctx.inputs[0]]


def _colorspace(ctx: InferContext) -> list[TensorSpec]:
    return _rgb_shape(ctx, 1)


def _adjust(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 1, 0)
    return _rgb_shape(ctx, 3)


def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
    floats = {"T": dtypes.FLOATS}
    registry.op("RGBToHSV", ["images:T"], _colorspace, attrs={"T": REQUIRED},
                type_constraints=floats)
    registry.op("HSVToRGB", ["images:T"], _colorspace, attrs={"T": REQUIRED},
                type_constraints=floats)
    registry.op("AdjustHue", ["images:T", "delta:float32"], _adjust, attrs={"T": REQUIRED},
                type_constraints=ADJUST_TYPES)
    registry.op("AdjustSaturation", ["images:T", "scale:float32"], _adjust,
                attrs={"T": REQUIRED}, type_constraints=ADJUST_TYPES)
