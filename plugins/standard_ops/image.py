"""OpDefs of the image resize ops: ``ResizeBilinear``, ``ResizeNearestNeighbor`` and their
gradient ops ``ResizeBilinearGrad`` and ``ResizeNearestNeighborGrad``.

Contract: names, inputs, attrs (``align_corners``, ``half_pixel_centers``, both False by default:
TF1's legacy pixel mapping) and dtypes follow TF. Images are 4-D NHWC; `size` is an int32
vector of two elements (new height, new width) whose values, when known at graph-construction
time, give the output's spatial dimensions. ``ResizeBilinear`` always outputs float32;
``ResizeBilinearGrad`` takes float32 gradients and outputs the original image's shape and dtype.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import with_rank

RESIZE_ATTRS = {"align_corners": False, "half_pixel_centers": False}
RESIZE_TYPES = {"T": dtypes.NUMERIC}
BILINEAR_GRAD_TYPES = {"T": dtypes.FLOATS}
NEAREST_GRAD_TYPES = {"T": frozenset({dtypes.uint8, dtypes.int8, dtypes.int32, *dtypes.FLOATS})}


def _size(ctx: InferContext, i: int) -> list[int | None]:
    """The (height, width) that input `i` (a 2-vector) holds, each None where not known."""
    shape = with_rank(ctx, i, 1)
    if shape[0] is not None and shape[0] != 2:
        raise ctx.shape_error(f"Dimension must be 2 but is {shape[0]}")
    value = ctx.constant_value(i)
    if value is None:
        return [None, None]
    return [int(v) if int(v) >= 0 else None for v in value.reshape(-1)]


def _resized(dtype: Any) -> Any:
    def infer(ctx: InferContext) -> list[TensorSpec]:
        image = with_rank(ctx, 0, 4)
        height, width = _size(ctx, 1)
        return [TensorSpec(dtype or ctx.dtype(0), TensorShape([image[0], height, width,
                                                              image[3]]))]

    return infer


def _bilinear_grad(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 4)
    return [TensorSpec(ctx.dtype(1), with_rank(ctx, 1, 4))]


def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
    attrs = {"T": REQUIRED, **RESIZE_ATTRS}
    registry.op("ResizeBilinear", ["images:T", "size:int32"], _resized(dtypes.float32),
                attrs=attrs, type_constraints=RESIZE_TYPES)
    registry.op("ResizeNearestNeighbor", ["images:T", "size:int32"], _resized(None),
                attrs=attrs, type_constraints=RESIZE_TYPES)
    registry.op("ResizeBilinearGrad", ["grads:float32", "original_image:T"], _bilinear_grad,
                attrs=attrs, type_constraints=BILINEAR_GRAD_TYPES)
    registry.op("ResizeNearestNeighborGrad", ["grads:T", "size:int32"], _resized(None),
                attrs=attrs, type_constraints=NEAREST_GRAD_TYPES)
