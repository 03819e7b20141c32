"""``tw.image`` resizing beyond bilinear and nearest neighbour: bicubic and area resizes,
resize-with-pad, ``resize_with_crop_or_pad`` and ``crop_and_resize``, with
``tf.compat.v1.image``'s names, signatures and results.

Contract: `resize_bicubic`, `resize_area` and `crop_and_resize` build the raw ops of
`tensorweave.plugins.standard_ops.image_resize` (4-D images, float32 results).
`resize_image_with_pad` is TF's composite: the image (3-D or 4-D) is resized with
`resize_images` to the largest size that keeps its aspect ratio within the target (each side
floored), then zero-padded centrally (the odd pixel goes after) to the target; a Python target
that is not positive is a `ValueError`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops as _array
from tensorweave.api import math_ops as _math
from tensorweave.api.image_ops import (
    ResizeMethod,
    pad_to_bounding_box,
    resize_image_with_crop_or_pad,
    resize_images,
)
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import apply

__all__ = [
    "crop_and_resize", "resize_area", "resize_bicubic", "resize_image_with_pad",
    "resize_with_crop_or_pad",
]

resize_with_crop_or_pad = resize_image_with_crop_or_pad


def resize_bicubic(images: Any, size: Any, align_corners: bool = False,
                   name: str | None = None, half_pixel_centers: bool = False) -> Tensor:
    """The raw ``ResizeBicubic`` of a 4-D `images` to ``size = [height, width]`` (float32)."""
    return apply("ResizeBicubic", [images, size],
                 {"align_corners": bool(align_corners),
                  "half_pixel_centers": bool(half_pixel_centers)}, name=name)


def resize_area(images: Any, size: Any, align_corners: bool = False,
                name: str | None = None) -> Tensor:
    """The raw ``ResizeArea`` of a 4-D `images` to ``size = [height, width]`` (float32)."""
    return apply("ResizeArea", [images, size], {"align_corners": bool(align_corners)},
                 name=name)


def crop_and_resize(image: Any, boxes: Any, box_ind: Any = None, crop_size: Any = None,
                    method: str = "bilinear", extrapolation_value: float = 0,
                    name: str | None = None, box_indices: Any = None) -> Tensor:
    """Crops of a 4-D `image` at normalized `boxes` (``[y1, x1, y2, x2]``, of image
    ``box_ind[i]``), each resized to `crop_size`; `box_indices` is the TF2 name of `box_ind`."""
    if box_ind is None:
        box_ind = box_indices
    elif box_indices is not None:
        raise ValueError("Cannot specify both 'box_ind' and 'box_indices'.")
    if box_ind is None or crop_size is None:
        raise TypeError("crop_and_resize() requires 'box_ind' and 'crop_size'.")
    return apply("CropAndResize", [image, boxes, box_ind, crop_size],
                 {"method": method, "extrapolation_value": float(extrapolation_value)},
                 name=name)


def resize_image_with_pad(image: Any, target_height: Any, target_width: Any,
                          method: int = ResizeMethod.BILINEAR,
                          align_corners: bool = False) -> Tensor:
    """`image` resized to fit ``target_height x target_width`` with its aspect ratio kept,
    then zero-padded to exactly that size."""
    with name_scope(None, "resize_image_with_pad", [image]):
        image = convert_to_tensor(image, name="image")
        rank = image.shape.ndims
        if rank not in (3, 4):
            raise ValueError("'image' must have either 3 or 4 dimensions.")
        for target, label in ((target_width, "target_width"), (target_height, "target_height")):
            if not isinstance(target, Tensor) and target <= 0:
                raise ValueError(f"{label} must be > 0.")
        batched = image if rank == 4 else _array.expand_dims(image, 0)
        shape = _array.shape(batched)
        height, width = (_math.cast(shape[i], dtypes.float32) for i in (1, 2))
        f_target_h = _math.cast(target_height, dtypes.float32)
        f_target_w = _math.cast(target_width, dtypes.float32)
        ratio = _math.maximum(width / f_target_w, height / f_target_h)
        new_h, new_w = height / ratio, width / ratio
        size = _array.stack([_math.cast(_math.floor(new_h), dtypes.int32),
                             _math.cast(_math.floor(new_w), dtypes.int32)])
        pad_h = _math.maximum(0, _math.cast(_math.floor((f_target_h - new_h) / 2),
                                            dtypes.int32))
        pad_w = _math.maximum(0, _math.cast(_math.floor((f_target_w - new_w) / 2),
                                            dtypes.int32))
        resized = resize_images(batched, size, method, align_corners=align_corners)
        padded = pad_to_bounding_box(resized, pad_h, pad_w, target_height, target_width)
        return padded if rank == 4 else _array.squeeze(padded, [0])
