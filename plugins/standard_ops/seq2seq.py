"""OpDef of ``GatherTree`` (TF's ``contrib/seq2seq`` beam-search backtracking op).

Contract (``beam_search_ops.cc``): ``GatherTree(step_ids, parent_ids, max_sequence_lengths,
end_token) -> beams``. `step_ids` and `parent_ids` are ``[max_time, batch_size, beam_width]``
of type T (int32), `max_sequence_lengths` is an int32 ``[batch_size]`` vector, `end_token` a
scalar T; `beams` has `step_ids`' shape. Ranks and the batch dimension are checked at
construction (`ValueError`). The op has no gradient (its output is integer).
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import InferContext, TensorSpec
from tensorweave.plugins.standard_ops.shape_fns import with_rank


def _gather_tree(ctx: InferContext) -> list[TensorSpec]:
    step_ids = with_rank(ctx, 0, 3)
    parent_ids = with_rank(ctx, 1, 3)
    lengths = with_rank(ctx, 2, 1)
    with_rank(ctx, 3, 0)
    if not step_ids.is_compatible_with(parent_ids):
        raise ctx.shape_error(f"Dimensions must be equal, but are {step_ids} and {parent_ids}")
    shape = step_ids.merge_with(parent_ids)
    if shape[1] is not None and lengths[0] is not None and shape[1] != lengths[0]:
        raise ctx.shape_error(f"Dimensions must be equal, but are {shape[1]} and {lengths[0]}")
    return [TensorSpec(ctx.dtype(0), shape)]


def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
    registry.op("GatherTree", ["step_ids:T", "parent_ids:T", "max_sequence_lengths:int32",
                               "end_token:T"], _gather_tree,
                type_constraints={"T": frozenset({dtypes.int32})})
