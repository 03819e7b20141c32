"""``tf.contrib.seq2seq``: the weighted sequence loss, and the decoders, helpers, attention and
beam-search utilities re-exported from `seq2seq_decoder`, `seq2seq_helper`,
`seq2seq_attention` and `seq2seq_beam_search`.

Contract of the loss: `sequence_loss` takes ``[batch, steps, classes]`` logits,
``[batch, steps]`` integer targets and ``[batch, steps]`` weights, computes the per-step sparse
softmax cross-entropy (or ``softmax_loss_function(labels=, logits=)``) times the weights, and
reduces it as TF does: averaging divides by the summed weights over the averaged axes, summing
(``sum_over_*``) by the count of non-zero weights, both with ``div_no_nan``; with neither, the
``[batch, steps]`` losses are returned. Ranks are checked at construction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.api import array_ops, math_ops, nn_ops
from tensorweave.api.scopes import name_scope
from tensorweave.contrib.seq2seq_attention import (
    AttentionMechanism,
    AttentionWrapper,
    AttentionWrapperState,
    BahdanauAttention,
    LuongAttention,
    hardmax,
)
from tensorweave.contrib.seq2seq_beam_search import (
    BeamSearchDecoder,
    BeamSearchDecoderOutput,
    BeamSearchDecoderState,
    FinalBeamDecoderOutput,
    FinalBeamSearchDecoderOutput,
    gather_tree,
    tile_batch,
)
from tensorweave.contrib.seq2seq_decoder import (
    BasicDecoder,
    BasicDecoderOutput,
    Decoder,
    dynamic_decode,
)
from tensorweave.contrib.seq2seq_helper import (
    CustomHelper,
    GreedyEmbeddingHelper,
    Helper,
    InferenceHelper,
    SampleEmbeddingHelper,
    ScheduledEmbeddingTrainingHelper,
    TrainingHelper,
)
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor

__all__ = [
    "AttentionMechanism", "AttentionWrapper", "AttentionWrapperState", "BahdanauAttention",
    "BasicDecoder", "BasicDecoderOutput", "BeamSearchDecoder", "BeamSearchDecoderOutput",
    "BeamSearchDecoderState", "CustomHelper", "Decoder", "FinalBeamDecoderOutput",
    "FinalBeamSearchDecoderOutput", "GreedyEmbeddingHelper",
    "Helper", "InferenceHelper", "LuongAttention", "SampleEmbeddingHelper",
    "ScheduledEmbeddingTrainingHelper", "TrainingHelper", "dynamic_decode", "gather_tree",
    "hardmax", "sequence_loss", "tile_batch",
]


def _check_rank(x: Tensor, rank: int, message: str) -> None:
    if x.shape.ndims is not None and x.shape.ndims != rank:
        raise ValueError(message)


def sequence_loss(logits: Any, targets: Any, weights: Any,
                  average_across_timesteps: bool = True, average_across_batch: bool = True,
                  sum_over_timesteps: bool = False, sum_over_batch: bool = False,
                  softmax_loss_function: Callable[..., Tensor] | None = None,
                  name: str | None = None) -> Tensor:
    """The weighted cross-entropy of a batch of sequences; see the module docstring."""
    logits, targets, weights = (convert_to_tensor(v) for v in (logits, targets, weights))
    _check_rank(logits, 3, "Logits must be a [batch_size x sequence_length x logits] tensor")
    _check_rank(targets, 2, "Targets must be a [batch_size x sequence_length] tensor")
    _check_rank(weights, 2, "Weights must be a [batch_size x sequence_length] tensor")
    if average_across_timesteps and sum_over_timesteps:
        raise ValueError("average_across_timesteps and sum_over_timesteps cannot be set to "
                         "True at same time.")
    if average_across_batch and sum_over_batch:
        raise ValueError("average_across_batch and sum_over_batch cannot be set to True at "
                         "same time.")
    with name_scope(name, "sequence_loss", [logits, targets, weights]):
        classes = array_ops.shape(logits)[2]
        flat_logits = array_ops.reshape(logits, array_ops.stack([-1, classes]))
        flat_targets = array_ops.reshape(targets, [-1])
        if softmax_loss_function is None:
            crossent = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=flat_targets,
                                                                       logits=flat_logits)
        else:
            crossent = softmax_loss_function(labels=flat_targets, logits=flat_logits)
        crossent = crossent * array_ops.reshape(weights, [-1])
        if average_across_timesteps and average_across_batch:
            return math_ops.div_no_nan(math_ops.reduce_sum(crossent),
                                       math_ops.reduce_sum(weights))
        if sum_over_timesteps and sum_over_batch:
            return math_ops.div_no_nan(math_ops.reduce_sum(crossent),
                                       math_ops.count_nonzero(weights, dtype=dtypes.float32))
        crossent = array_ops.reshape(crossent, array_ops.shape(logits)[0:2])
        if average_across_timesteps or average_across_batch:
            axis = [0] if average_across_batch else [1]
            return math_ops.div_no_nan(math_ops.reduce_sum(crossent, axis=axis),
                                       math_ops.reduce_sum(weights, axis=axis))
        if sum_over_timesteps or sum_over_batch:
            axis = [0] if sum_over_batch else [1]
            return math_ops.div_no_nan(
                math_ops.reduce_sum(crossent, axis=axis),
                math_ops.count_nonzero(weights, axis=axis, dtype=logits.dtype))
        return crossent
