"""OpDefs of the segment reductions that ``array.py`` lacks: the sorted ``SegmentSum``,
``SegmentMean``, ``SegmentProd``, ``SegmentMax``, ``SegmentMin`` and the unsorted
``UnsortedSegmentMin``, ``UnsortedSegmentProd``, as TF's ``math_ops.cc``.

Contract: sorted reductions take a vector of non-decreasing ``segment_ids`` as long as
``data``'s first dimension; their output has ``segment_ids[-1] + 1`` rows (unknown until run
time) and ``data.shape[1:]`` after. Unsorted ones share ``UnsortedSegmentSum``'s shape function
(``[num_segments] + data.shape[segment_ids.rank:]``).
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape, format_dims
from tensorweave.plugins.standard_ops.array import _segment
from tensorweave.plugins.standard_ops.shape_fns import with_rank, with_rank_at_least

SORTED_OPS = ("SegmentSum", "SegmentMean", "SegmentProd", "SegmentMax", "SegmentMin")
UNSORTED_OPS = ("UnsortedSegmentMin", "UnsortedSegmentProd")


def _sorted_segment(ctx: InferContext) -> list[TensorSpec]:
    data = with_rank_at_least(ctx, 0, 1)
    ids = with_rank(ctx, 1, 1)
    if data.ndims is None:
        return [TensorSpec(ctx.dtype(0), TensorShape(None))]
    if not TensorShape(data[:1]).is_compatible_with(ids):
        raise ctx.shape_error(f"Dimensions must be equal, but are {format_dims(data[:1])[1:-1]} "
                              f"and {format_dims(ids)[1:-1]}")
    return [TensorSpec(ctx.dtype(0), TensorShape([None] + list(data.dims[1:])))]


def register(registry: Any) -> None:
    index = {"Tindices": dtypes.INDEX}
    for name in SORTED_OPS:
        registry.op(name, ["data:T", "segment_ids:Tindices"], _sorted_segment,
                    attrs={"T": REQUIRED, "Tindices": None},
                    type_constraints={"T": dtypes.NUMERIC, **index})
    for name in UNSORTED_OPS:
        registry.op(name, ["data:T", "segment_ids:Tindices", "num_segments:Tnumsegments"],
                    _segment, attrs={"T": REQUIRED, "Tindices": None, "Tnumsegments": None},
                    type_constraints={"T": dtypes.NUMERIC, "Tnumsegments": dtypes.INDEX,
                                      **index})
