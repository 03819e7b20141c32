"""OpDef of ``ExtractGlimpse``: windows of ``size = [height, width]`` cut out of float32
``input [batch, h, w, c]`` at float32 ``offsets [batch, 2]`` (``(y, x)`` each), giving float32
``[batch, height, width, c]`` (height and width static when `size` is a constant).

Attrs, as TF 1.15: ``centered``, ``normalized``, ``uniform_noise`` (all true by default) and
``noise`` (``"uniform"``, ``"gaussian"`` or ``"zero"``); ``uniform_noise`` together with a
``noise`` other than ``"uniform"`` is a `ValueError`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import with_rank


def _glimpse(ctx: InferContext) -> list[TensorSpec]:
    images = with_rank(ctx, 0, 4)
    size = with_rank(ctx, 1, 1)
    offsets = with_rank(ctx, 2, 2)
    if size.dims[0] is not None and size.dims[0] != 2:
        raise ctx.shape_error(f"Dimension must be 2 but is {size.dims[0]}")
    if offsets.dims[1] is not None and offsets.dims[1] != 2:
        raise ctx.shape_error(f"Dimension must be 2 but is {offsets.dims[1]}")
    batch, batch_offsets = images.dims[0], offsets.dims[0]
    if None not in (batch, batch_offsets) and batch != batch_offsets:
        raise ctx.shape_error(f"Dimensions must be equal, but are {batch} and {batch_offsets}")
    if ctx.attr("uniform_noise") and ctx.attr("noise") not in ("", "uniform"):
        raise ctx.shape_error("The uniform_noise and noise should not be specified at the "
                              "same time")
    if ctx.attr("noise") not in ("", "uniform", "gaussian", "zero"):
        raise ctx.shape_error(f"Unknown noise type: {ctx.attr('noise')}")
    window = ctx.constant_value(1)
    height, width = (None, None) if window is None else (int(window[0]), int(window[1]))
    return [TensorSpec(dtypes.float32, TensorShape([batch if batch is not None else batch_offsets,
                                                    height, width, images.dims[3]]))]


def register(registry: Any) -> None:
    registry.op("ExtractGlimpse", ["input:float32", "size:int32", "offsets:float32"], _glimpse,
                attrs={"centered": True, "normalized": True, "uniform_noise": True,
                       "noise": "uniform"})
