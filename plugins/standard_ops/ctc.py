"""OpDefs of TF's CTC ops: ``CTCLoss``, ``CTCGreedyDecoder`` and ``CTCBeamSearchDecoder``.

Contract (``ctc_ops.cc``): every op takes float32/float64 logits ``inputs`` of rank 3
(``[max_time, batch, num_classes]``) and an int32 ``sequence_length`` of rank 1 whose length is
the batch size. ``CTCLoss`` also takes a sparse label (``labels_indices`` int64 rank 2,
``labels_values`` int32 rank 1, of one row count) and gives ``loss`` ``[batch]`` and ``gradient``
(the inputs' shape). A decoder gives ``top_paths`` (1 for the greedy one) sparse triples
(``decoded_indices`` ``[?, 2]``, ``decoded_values`` ``[?]``, ``decoded_shape`` ``[2]``, all int64)
and ``log_probability`` ``[batch, top_paths]``. ``beam_width`` and ``top_paths`` below 1 raise
`ValueError` at construction, as TF's attr checks.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.nn import merge_dim
from tensorweave.plugins.standard_ops.shape_fns import with_rank

_T = {"T": frozenset({dtypes.float32, dtypes.float64})}
_LOSS_ATTRS = {"T": REQUIRED, "preprocess_collapse_repeated": False,
               "ctc_merge_repeated": True, "ignore_longer_outputs_than_inputs": False}


def _batch(ctx: InferContext, seq_len_input: int) -> tuple[TensorShape, int | None]:
    inputs = with_rank(ctx, 0, 3)
    seq_len = with_rank(ctx, seq_len_input, 1)
    return inputs, merge_dim(ctx, inputs[1], seq_len[0])


def _ctc_loss(ctx: InferContext) -> list[TensorSpec]:
    indices = with_rank(ctx, 1, 2)
    values = with_rank(ctx, 2, 1)
    merge_dim(ctx, indices[0], values[0])
    inputs, batch = _batch(ctx, 3)
    return [TensorSpec(ctx.dtype(0), [batch]), TensorSpec(ctx.dtype(0), inputs)]


def _check_min(ctx: InferContext, name: str) -> int:
    value = int(ctx.attr(name))
    if value < 1:
        raise ValueError(f"Attr '{name}' of '{ctx.op}' Op passed {value} less than minimum 1.")
    return value


def _decoded(ctx: InferContext, top_paths: int) -> list[TensorSpec]:
    _, batch = _batch(ctx, 1)
    return [*(TensorSpec(dtypes.int64, [None, 2]) for _ in range(top_paths)),
            *(TensorSpec(dtypes.int64, [None]) for _ in range(top_paths)),
            *(TensorSpec(dtypes.int64, [2]) for _ in range(top_paths)),
            TensorSpec(ctx.dtype(0), [batch, top_paths])]


def _greedy(ctx: InferContext) -> list[TensorSpec]:
    return _decoded(ctx, 1)


def _beam_search(ctx: InferContext) -> list[TensorSpec]:
    _check_min(ctx, "beam_width")
    return _decoded(ctx, _check_min(ctx, "top_paths"))


def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
    registry.op("CTCLoss", ["inputs:T", "labels_indices:int64", "labels_values:int32",
                            "sequence_length:int32"], _ctc_loss, attrs=_LOSS_ATTRS,
                type_constraints=_T)
    registry.op("CTCGreedyDecoder", ["inputs:T", "sequence_length:int32"], _greedy,
                attrs={"T": REQUIRED, "merge_repeated": False}, type_constraints=_T)
    registry.op("CTCBeamSearchDecoder", ["inputs:T", "sequence_length:int32"], _beam_search,
                attrs={"T": REQUIRED, "beam_width": REQUIRED, "top_paths": REQUIRED,
                       "merge_repeated": True}, type_constraints=_T)
