"""OpDefs of the bicubic and area resizes and of ``CropAndResize``, with their gradient ops
``ResizeBicubicGrad``, ``CropAndResizeGradImage`` and ``CropAndResizeGradBoxes``.

Contract: names, inputs, attrs and dtypes follow TF. ``ResizeBicubic`` (attrs ``align_corners``
and ``half_pixel_centers``) and ``ResizeArea`` (``align_corners``) take 4-D NHWC images of any
real dtype and a 2-vector `size`, and output float32. ``CropAndResize`` takes a 4-D image,
float32 ``boxes [num_boxes, 4]`` of normalized ``(y1, x1, y2, x2)``, int32 ``box_ind
[num_boxes]`` and an int32 2-vector ``crop_size``, and outputs float32 ``[num_boxes,
crop_height, crop_width, depth]``; ``method`` is ``"bilinear"`` or ``"nearest"``. Values of
`size`, `crop_size` and `image_size` known at graph-construction time give the output shapes.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.image import RESIZE_ATTRS, RESIZE_TYPES
from tensorweave.plugins.standard_ops.image import _resized as resized_shape
from tensorweave.plugins.standard_ops.image import _size as size_value
from tensorweave.plugins.standard_ops.shape_fns import with_rank

GRAD_TYPES = {"T": frozenset({dtypes.float32, dtypes.float64})}
CROP_GRAD_TYPES = {"T": dtypes.FLOATS}


def _merge(ctx: InferContext, a: int | None, b: int | None) -> int | None:
    if a is not None and b is not None and a != b:
        raise ctx.shape_error(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def _boxes(ctx: InferContext, boxes: int, box_ind: int) -> int | None:
    """The number of boxes that `boxes` ([n, 4]) and `box_ind` ([n]) agree on."""
    shape = with_rank(ctx, boxes, 2)
    _merge(ctx, shape.dims[1], 4)
    return _merge(ctx, shape.dims[0], with_rank(ctx, box_ind, 1).dims[0])


def _crop_and_resize(ctx: InferContext) -> list[TensorSpec]:
    image = with_rank(ctx, 0, 4)
    num_boxes = _boxes(ctx, 1, 2)
    height, width = size_value(ctx, 3)
    return [TensorSpec(dtypes.float32, TensorShape([num_boxes, height, width, image.dims[3]]))]


def _crop_grad_image(ctx: InferContext) -> list[TensorSpec]:
    grads = with_rank(ctx, 0, 4)
    _merge(ctx, grads.dims[0], _boxes(ctx, 1, 2))
    shape = with_rank(ctx, 3, 1)
    _merge(ctx, shape.dims[0], 4)
    value = ctx.constant_value(3)
    dims = [None] * 4 if value is None else [int(v) for v in value.reshape(-1)]
    return [TensorSpec(ctx.attr("T"), TensorShape(dims))]


def _crop_grad_boxes(ctx: InferContext) -> list[TensorSpec]:
    grads = with_rank(ctx, 0, 4)
    with_rank(ctx, 1, 4)
    return [TensorSpec(dtypes.float32, TensorShape([_merge(ctx, grads.dims[0],
                                                           _boxes(ctx, 2, 3)), 4]))]


def _bicubic_grad(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 4)
    return [TensorSpec(ctx.dtype(1), with_rank(ctx, 1, 4))]


def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
    attrs = {"T": REQUIRED, **RESIZE_ATTRS}
    registry.op("ResizeBicubic", ["images:T", "size:int32"], resized_shape(dtypes.float32),
                attrs=attrs, type_constraints=RESIZE_TYPES)
    registry.op("ResizeBicubicGrad", ["grads:float32", "original_image:T"], _bicubic_grad,
                attrs=attrs, type_constraints=GRAD_TYPES)
    registry.op("ResizeArea", ["images:T", "size:int32"], resized_shape(dtypes.float32),
                attrs={"T": REQUIRED, "align_corners": False}, type_constraints=RESIZE_TYPES)
    registry.op("CropAndResize",
                ["image:T", "boxes:float32", "box_ind:int32", "crop_size:int32"],
                _crop_and_resize,
                attrs={"T": REQUIRED, "method": "bilinear", "extrapolation_value": 0.0},
                type_constraints=RESIZE_TYPES)
    registry.op("CropAndResizeGradImage",
                ["grads:float32", "boxes:float32", "box_ind:int32", "image_size:int32"],
                _crop_grad_image, attrs={"T": REQUIRED, "method": "bilinear"},
                type_constraints=CROP_GRAD_TYPES)
    registry.op("CropAndResizeGradBoxes",
                ["grads:float32", "image:T", "boxes:float32", "box_ind:int32"],
                _crop_grad_boxes, attrs={"T": REQUIRED, "method": "bilinear"},
                type_constraints=RESIZE_TYPES)
