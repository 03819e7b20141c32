"""Gradient of ``ExtractImagePatches``.

Contract: as TF's, the gradient scatters each patch element back to the pixel it was read from
and sums. The pixel of each patch element is found by extracting patches, with the same attrs,
from an image of pixel numbers (1-based, so the zero padding maps to a dropped bucket 0); an
``UnsortedSegmentSum`` over those numbers then adds the incoming gradient up.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply

_ATTRS = ("ksizes", "strides", "rates", "padding")


def _extract_image_patches_grad(op: Operation, grad: Tensor) -> list[Tensor | None]:
    image = op.inputs[0]
    shape = array_ops.shape(image)
    batch, height, width, depth = (shape[i] for i in range(4))
    pixels = height * width
    numbers = array_ops.reshape(array_ops.range(1, pixels + 1),
                                array_ops.stack([1, height, width, 1]))
    index = apply("ExtractImagePatches", [numbers], {k: op.get_attr(k) for k in _ATTRS})
    # grad: [batch, rows, cols, taps * depth] -> [rows * cols * taps, batch, depth]
    grad = array_ops.reshape(grad, array_ops.stack([batch, -1, depth]))
    grad = array_ops.transpose(grad, [1, 0, 2])
    summed = array_ops.unsorted_segment_sum(grad, array_ops.reshape(index, [-1]), pixels + 1)
    summed = array_ops.reshape(summed[1:], array_ops.stack([height, width, batch, depth]))
    return [array_ops.transpose(summed, [2, 0, 1, 3])]


def register_gradients(registry: Any) -> None:
    registry.add("ExtractImagePatches", _extract_image_patches_grad)

