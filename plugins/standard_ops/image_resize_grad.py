"""Gradient functions of ``ResizeBicubic`` and ``CropAndResize``, as TF's ``image_grad.py``.

Contract: ``ResizeBicubic`` of a float32/float64 image differentiates through
``ResizeBicubicGrad`` with the forward attrs (other dtypes get no gradient). ``CropAndResize``
gives the image ``CropAndResizeGradImage`` (float images only, same method) and the boxes
``CropAndResizeGradBoxes`` (always bilinear, as TF); `box_ind` and `crop_size` get none.
``ResizeArea`` has no gradient in TF and none here.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.plugins.standard_ops.image import RESIZE_ATTRS

Grads = list[Tensor | None]


def _resize_bicubic_grad(op: Operation, grad: Tensor) -> Grads:
    image = op.inputs[0]
    if image.dtype not in (dtypes.float32, dtypes.float64):
        return [None, None]
    attrs = {k: op.get_attr(k) for k in RESIZE_ATTRS}
    return [apply("ResizeBicubicGrad", [grad, image], attrs), None]


def _crop_and_resize_grad(op: Operation, grad: Tensor) -> Grads:
    image, boxes, box_ind = op.inputs[0], op.inputs[1], op.inputs[2]
    image_grad = None
    if image.dtype in dtypes.FLOATS:
        size = (image.shape.as_list() if image.shape.is_fully_defined()
                else array_ops.shape(image))
        image_grad = apply("CropAndResizeGradImage", [grad, boxes, box_ind, size],
                           {"T": image.dtype, "method": op.get_attr("method")})
    boxes_grad = apply("CropAndResizeGradBoxes", [grad, image, boxes, box_ind])
    return [image_grad, boxes_grad, None, None]


def register_gradients(registry: Any) -> None:
    registry.add("ResizeBicubic", _resize_bicubic_grad)
    registry.add("CropAndResize", _crop_and_resize_grad)
