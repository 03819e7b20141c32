"""Gradients of the segment reductions of ``segment.py``, as TF's ``math_grad.py``.

Contract: ``fn(op, grad) -> [gradient or None per input]``; ids and ``num_segments`` get None.
A sum passes each segment's gradient to its rows, a mean divides it by the segment's size, a
max/min shares it equally among the rows equal to the extreme, and an unsorted product gives
each row the product of the others (handling zeros without dividing by them). ``SegmentProd``
has no gradient, as in TF 1.x.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops, segment_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.plugins.standard_ops.array_grad import (
    _gather_drop_negatives,
    _unsorted_segment_max_grad,
)

Grads = list[Tensor | None]


def _segment_sum_grad(op: Operation, grad: Tensor) -> Grads:
    return [array_ops.gather(grad, op.inputs[1]), None]


def _segment_mean_grad(op: Operation, grad: Tensor) -> Grads:
    data, ids = op.inputs
    extra = array_ops.reshape(array_ops.rank(data) - 1, [1])
    ones_shape = array_ops.concat([array_ops.shape(ids), array_ops.ones(extra, dtypes.int32)], 0)
    ones = array_ops.ones(ones_shape, grad.dtype)
    scaled = math_ops.divide(grad, segment_ops.segment_sum(ones, ids))
    return [array_ops.gather(scaled, ids), None]


def _segment_min_or_max_grad(op: Operation, grad: Tensor) -> Grads:
    data, ids = op.inputs
    selected = math_ops.equal(data, array_ops.gather(op.outputs[0], ids))
    counts = segment_ops.segment_sum(math_ops.cast(selected, grad.dtype), ids)
    shares = array_ops.gather(math_ops.divide(grad, counts), ids)
    return [array_ops.where(selected, shares, array_ops.zeros_like(data)), None]


def _unsorted_segment_prod_grad(op: Operation, grad: Tensor) -> Grads:
    """A row's gradient is the product of the other rows of its segment: the product divided
    by the row when the segment has no zero, the product of the non-zero rows for its only
    zero, and 0 when the segment has two zeros or more."""
    data, ids, num = op.inputs
    is_zero = math_ops.equal(data, 0)
    zeros_per_segment = array_ops.unsorted_segment_sum(
        math_ops.cast(is_zero, dtypes.int32), ids, num)
    grad = array_ops.where(math_ops.greater(zeros_per_segment, 1),
                           array_ops.zeros_like(grad), grad)
    non_zero = array_ops.where(is_zero, array_ops.ones_like(data), data)
    non_zero_prod = segment_ops.unsorted_segment_prod(non_zero, ids, num)
    clipped = math_ops.maximum(ids, array_ops.zeros_like(ids))
    prod_over_row = array_ops.gather(op.outputs[0], clipped) / data  # inf/nan only where zero
    partial = array_ops.where(is_zero, array_ops.gather(non_zero_prod, clipped), prod_over_row)
    return [_gather_drop_negatives(grad, ids)[0] * partial, None, None]


def register_gradients(registry: Any) -> None:
    for name, fn in {
        "SegmentSum": _segment_sum_grad, "SegmentMean": _segment_mean_grad,
        "SegmentMax": _segment_min_or_max_grad, "SegmentMin": _segment_min_or_max_grad,
        "UnsortedSegmentMin": _unsorted_segment_max_grad,
        "UnsortedSegmentProd": _unsorted_segment_prod_grad,
    }.items():
        registry.add(name, fn)
