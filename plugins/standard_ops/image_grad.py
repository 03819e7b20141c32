"""Gradient functions of the image resize ops, as TF's ``image_grad.py``.

Contract: ``ResizeBilinear`` differentiates through ``ResizeBilinearGrad`` and
``ResizeNearestNeighbor`` through ``ResizeNearestNeighborGrad``, both with the forward op's
attrs; the `size` input gets no gradient.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.plugins.standard_ops.image import RESIZE_ATTRS

Grads = list[Tensor | None]


def _attrs(op: Operation) -> dict[str, Any]:
    return {k: op.get_attr(k) for k in RESIZE_ATTRS}


def _resize_bilinear_grad(op: Operation, grad: Tensor) -> Grads:
    return [apply("ResizeBilinearGrad", [grad, op.inputs[0]], _attrs(op)), None]


def _resize_nearest_neighbor_grad(op: Operation, grad: Tensor) -> Grads:
    image = op.inputs[0]
    known = image.shape.dims is not None and all(d is not None for d in image.shape.dims[1:3])
    size = (list(image.shape.dims[1:3]) if known
            else array_ops.shape(image)[1:3])
    return [apply("ResizeNearestNeighborGrad", [grad, size], _attrs(op)), None]


def register_gradients(registry: Any) -> None:
    registry.add("ResizeBilinear", _resize_bilinear_grad)
    registry.add("ResizeNearestNeighbor", _resize_nearest_neighbor_grad)
