"""Gradients of the array backprop ops ``StridedSliceGrad`` and ``MirrorPadGrad``, as TF's
``array_grad.py``: both are linear in their gradient input, and their gradient is the forward
op (``StridedSlice``, ``MirrorPad``) applied to `grad` with the same attrs. Index and padding
inputs get none.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply

Grads = list[Tensor | None]
SLICE_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _strided_slice_grad_grad(op: Operation, grad: Tensor) -> Grads:
    _, begin, end, strides, _ = op.inputs
    attrs = {k: op.get_attr(k) for k in SLICE_MASKS}
    return [None, None, None, None, apply("StridedSlice", [grad, begin, end, strides], attrs)]


def _mirror_pad_grad_grad(op: Operation, grad: Tensor) -> Grads:
    return [apply("MirrorPad", [grad, op.inputs[1]], {"mode": op.get_attr("mode")}), None]


def register_gradients(registry: Any) -> None:
    registry.add("StridedSliceGrad", _strided_slice_grad_grad)
    registry.add("MirrorPadGrad", _mirror_pad_grad_grad)
