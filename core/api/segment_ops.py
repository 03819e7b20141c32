"""Segment reductions: the sorted ``segment_sum``, ``segment_mean``, ``segment_prod``,
``segment_max``, ``segment_min``, the unsorted ``unsorted_segment_min``,
``unsorted_segment_prod``, and TF's composites ``unsorted_segment_mean`` and
``unsorted_segment_sqrt_n`` (``unsorted_segment_sum``/``_max`` live in ``array_ops``).

Contract: names, arguments and default op names follow ``tf.compat.v1`` (also under
``tw.math``). The composites divide a segment's sum by its size (or the size's square root),
counting an empty segment as size 1, so they give 0 there.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, dispatch, math_ops
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import apply

__all__ = [
    "segment_max", "segment_mean", "segment_min", "segment_prod", "segment_sum",
    "unsorted_segment_mean", "unsorted_segment_min", "unsorted_segment_prod",
    "unsorted_segment_sqrt_n",
]


def segment_sum(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    return apply("SegmentSum", [data, segment_ids], name=name or "SegmentSum")


def segment_mean(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    return apply("SegmentMean", [data, segment_ids], name=name or "SegmentMean")


def segment_prod(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    return apply("SegmentProd", [data, segment_ids], name=name or "SegmentProd")


def segment_max(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    return apply("SegmentMax", [data, segment_ids], name=name or "SegmentMax")


def segment_min(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    return apply("SegmentMin", [data, segment_ids], name=name or "SegmentMin")


@dispatch.dispatchable
def unsorted_segment_min(data: Any, segment_ids: Any, num_segments: Any,
                         name: str | None = None) -> Tensor:
    return apply("UnsortedSegmentMin", [data, segment_ids, num_segments],
                 name=name or "UnsortedSegmentMin")


@dispatch.dispatchable
def unsorted_segment_prod(data: Any, segment_ids: Any, num_segments: Any,
                          name: str | None = None) -> Tensor:
    return apply("UnsortedSegmentProd", [data, segment_ids, num_segments],
                 name=name or "UnsortedSegmentProd")


def _segment_sizes(data: Tensor, segment_ids: Tensor, num_segments: Any) -> Tensor:
    """Each segment's size (at least 1), shaped to broadcast against the segment sums."""
    num_segments = convert_to_tensor(num_segments)
    ones = array_ops.ones_like(segment_ids, dtype=data.dtype)
    sizes = array_ops.unsorted_segment_sum(ones, segment_ids, num_segments)
    data_rank, ids_rank = data.shape.ndims, segment_ids.shape.ndims
    if data_rank is not None and ids_rank is not None:
        shape: Any = [-1] + [1] * (data_rank - ids_rank)
    else:
        extra = array_ops.rank(data) - array_ops.rank(segment_ids)
        shape = array_ops.concat([
            array_ops.reshape(math_ops.cast(num_segments, dtypes.int32), [1]),
            array_ops.ones(array_ops.reshape(extra, [1]), dtypes.int32)], 0)
    return math_ops.maximum(array_ops.reshape(sizes, shape), 1)


@dispatch.dispatchable
def unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: Any,
                          name: str | None = None) -> Tensor:
    with name_scope(name, "UnsortedSegmentMean"):
        data = convert_to_tensor(data)
        segment_ids = convert_to_tensor(segment_ids)
        sizes = _segment_sizes(data, segment_ids, num_segments)
        return array_ops.unsorted_segment_sum(data, segment_ids, num_segments) / sizes


@dispatch.dispatchable
def unsorted_segment_sqrt_n(data: Any, segment_ids: Any, num_segments: Any,
                            name: str | None = None) -> Tensor:
    with name_scope(name, "UnsortedSegmentSqrtN"):
        data = convert_to_tensor(data)
        segment_ids = convert_to_tensor(segment_ids)
        sizes = _segment_sizes(data, segment_ids, num_segments)
        return array_ops.unsorted_segment_sum(data, segment_ids, num_segments) \
            / math_ops.sqrt(sizes)
