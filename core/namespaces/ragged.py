"""``tw.ragged``: the ragged-tensor API under ``tf.compat.v1.ragged``'s names (``constant``,
``placeholder``, ``range``, ``map_flat_values``, ``boolean_mask``, ``stack``,
``row_splits_to_segment_ids``, ``segment_ids_to_row_splits``, ``batch_gather``,
``RaggedTensorValue``), plus
ragged-aware ``reduce_*``, ``concat`` and ``gather`` (the public ``tw.reduce_sum``,
``tw.concat``, ``tw.gather``, ``tw.gather_nd``, ``tw.one_hot``, ``tw.unsorted_segment_sum``,
``tw.tile``, ``tw.stack``, ... dispatch to them too); the ops live
in `tensorweave.api.ragged_ops` and `tensorweave.api.ragged_array_ops`, the row-partition
conversions in `tensorweave.api.ragged_tensor`.
"""

from tensorweave.api.ragged_array_ops import boolean_mask, stack
from tensorweave.api.ragged_gather_ops import batch_gather
from tensorweave.api.ragged_ops import (
    RaggedTensor,
    RaggedTensorValue,
    concat,
    constant,
    gather,
    map_flat_values,
    placeholder,
    reduce_all,
    reduce_any,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
)
from tensorweave.api.ragged_ops import ragged_range as range  # noqa: A004 - TF's name
from tensorweave.api.ragged_tensor import row_splits_to_segment_ids, segment_ids_to_row_splits

__all__ = [
    "RaggedTensor", "RaggedTensorValue", "batch_gather", "boolean_mask", "concat", "constant",
    "gather",
    "map_flat_values", "placeholder", "range", "reduce_all", "reduce_any", "reduce_max",
    "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum", "row_splits_to_segment_ids",
    "segment_ids_to_row_splits", "stack",
]
