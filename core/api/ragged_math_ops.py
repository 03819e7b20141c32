"""Segment reductions over ragged data, as TF 1.15's ``ragged_math_ops.segment_*``.

Contract: ``segment_aggregate(op, data, segment_ids, num_segments)`` combines the rows of `data`
(ragged or dense) that share a segment id with ``op`` (an unsorted segment op such as
``unsorted_segment_sum``): a ragged row of the result is as long as the longest row of its
segment, and its item ``j`` combines the items ``j`` of the segment's rows; a ragged
`segment_ids` must share `data`'s outer row partition (checked at run time) and then indexes its
values. Segments that no row falls in are empty rows. The public ``unsorted_segment_sum``,
``_prod``, ``_min``, ``_max``, ``_mean`` and ``_sqrt_n`` dispatch here when `data` or
`segment_ids` is a `RaggedTensor` once this module is imported (``import tensorweave`` does);
``mean``/``sqrt_n`` divide the sums by the count of items combined (or its square root). The
ragged reductions over an outer axis of a ragged_rank > 1 tensor are built on
``segment_aggregate`` (`tensorweave.api.ragged_ops`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.api import array_ops, check_ops, control_flow_ops, dispatch, math_ops, segment_ops
from tensorweave.api.ragged_tensor import RaggedTensor
from tensorweave.api.scopes import control_dependencies, name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor

SegmentOp = Callable[..., Any]


def segment_aggregate(op: SegmentOp, data: Any, segment_ids: Any, num_segments: Any) -> Any:
    """`op` over the rows of `data` grouped by `segment_ids` into `num_segments` rows."""
    if isinstance(segment_ids, RaggedTensor):
        if not isinstance(data, RaggedTensor):
            raise ValueError("segment_ids.shape must be a prefix of data.shape, but "
                             "segment_ids is ragged and data is not.")
        check = check_ops.assert_equal(segment_ids.row_splits, data.row_splits,
                                       message="segment_ids.shape must be a prefix of "
                                               "data.shape")
        with control_dependencies([check]):
            flat = control_flow_ops.identity(segment_ids.flat_values)
        values = segment_ids.with_flat_values(flat).values
        return segment_aggregate(op, data.values, values, num_segments)
    segment_ids = convert_to_tensor(segment_ids, name="segment_ids")
    if segment_ids.dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError("segment_ids must have dtype int32 or int64.")
    if not isinstance(data, RaggedTensor):
        return op(data, segment_ids, num_segments)
    splits_dtype = data.row_splits_dtype
    segment_ids = math_ops.cast(segment_ids, splits_dtype)
    num_segments = math_ops.cast(num_segments, splits_dtype)
    lengths = data.row_lengths()
    out_lengths = math_ops.maximum(
        array_ops.unsorted_segment_max(lengths, segment_ids, num_segments),
        array_ops.zeros([], splits_dtype))
    out_splits = array_ops.concat([array_ops.zeros([1], splits_dtype),
                                   math_ops.cumsum(out_lengths)], 0)
    # item j of a row lands on item j of its segment's output row
    rowids = data.value_rowids()
    column = array_ops.range(array_ops.shape(rowids, out_type=splits_dtype)[0],
                            dtype=splits_dtype) - array_ops.gather(data.row_splits, rowids)
    targets = array_ops.gather(array_ops.gather(out_splits, segment_ids), rowids) + column
    values = segment_aggregate(op, data.values, targets, out_splits[-1])
    return RaggedTensor(values, out_splits, internal=True)


def _counted(root: bool) -> SegmentOp:
    """The sum divided by the count of items combined (its square root with `root`)."""

    def aggregate(data: Any, segment_ids: Any, num_segments: Any) -> Any:
        total = segment_aggregate(array_ops.unsorted_segment_sum, data, segment_ids,
                                  num_segments)
        ones = data.with_flat_values(array_ops.ones_like(data.flat_values)) \
            if isinstance(data, RaggedTensor) else array_ops.ones_like(data)
        count = segment_aggregate(array_ops.unsorted_segment_sum, ones, segment_ids,
                                  num_segments)
        if root:
            count = count.with_flat_values(math_ops.sqrt(count.flat_values)) \
                if isinstance(count, RaggedTensor) else math_ops.sqrt(count)
        if isinstance(total, RaggedTensor):
            return total.with_flat_values(math_ops.truediv(total.flat_values, count.flat_values))
        return math_ops.truediv(total, count)

    return aggregate


def _handler(op: SegmentOp, scope: str) -> SegmentOp:
    def handler(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Any:
        if not isinstance(data, RaggedTensor) and not isinstance(segment_ids, RaggedTensor):
            return NotImplemented
        with name_scope(name, scope):
            return op(data, segment_ids, num_segments)

    return handler


def _bound(op: SegmentOp) -> SegmentOp:
    return lambda data, segment_ids, num_segments: segment_aggregate(op, data, segment_ids,
                                                                     num_segments)


def _register_dispatch() -> None:
    for public, op, scope in (
            (array_ops.unsorted_segment_sum, _bound(array_ops.unsorted_segment_sum),
             "RaggedSegmentSum"),
            (array_ops.unsorted_segment_max, _bound(array_ops.unsorted_segment_max),
             "RaggedSegmentMax"),
            (segment_ops.unsorted_segment_min, _bound(segment_ops.unsorted_segment_min),
             "RaggedSegmentMin"),
            (segment_ops.unsorted_segment_prod, _bound(segment_ops.unsorted_segment_prod),
             "RaggedSegmentProd"),
            (segment_ops.unsorted_segment_mean, _counted(root=False), "RaggedSegmentMean"),
            (segment_ops.unsorted_segment_sqrt_n, _counted(root=True),
             "RaggedSegmentSqrtN")):
        dispatch.register(public, _handler(op, scope))


_register_dispatch()
