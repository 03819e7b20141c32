"""CTC (Connectionist Temporal Classification) of the friendly API (TF 1.15's ``ctc_ops.py``),
exported as ``tw.nn.*``.

Contract: `ctc_loss` is TF1's sparse-label loss over the ``CTCLoss`` op (blank = the last class;
its gradient is the op's own, and a second derivative raises `LookupError` as in TF).
`ctc_loss_v2` takes a `SparseTensor` (then `blank_index` is required) or dense zero-padded labels
with `label_length` (blank 0 by default); both are reduced to ``CTCLoss`` by moving the blank class
last, so a dense entry needs at least one label and no more labels than frames, as the op does.
`ctc_greedy_decoder` and `ctc_beam_search_decoder` return ``(decoded, log_probabilities)`` with
`decoded` a list of int64 `SparseTensor`\\ s (one per path); `ctc_beam_search_decoder_v2` never
merges repeats. `ctc_unique_labels` and `collapse_repeated` are TF's dense label helpers.
Labels that are not a `SparseTensor` where one is required raise `TypeError`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.api.deprecation import deprecated_argument_lookup
from tensorweave.api.scopes import name_scope
from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import make_op

__all__ = [
    "collapse_repeated", "ctc_beam_search_decoder", "ctc_beam_search_decoder_v2",
    "ctc_greedy_decoder", "ctc_loss", "ctc_loss_v2", "ctc_unique_labels",
]


def ctc_loss(labels: SparseTensor, inputs: Any = None, sequence_length: Any = None,
             preprocess_collapse_repeated: bool = False, ctc_merge_repeated: bool = True,
             ignore_longer_outputs_than_inputs: bool = False, time_major: bool = True,
             logits: Any = None) -> Tensor:
    """Per-entry ``-log p(labels | inputs)`` ``[batch]``; `inputs` (alias `logits`) are
    unnormalized ``[max_time, batch, num_classes]`` (``[batch, max_time, ...]`` unless
    `time_major`), `labels` an int32 `SparseTensor` of ``[batch, max_label_length]``."""
    inputs = deprecated_argument_lookup("logits", logits, "inputs", inputs)
    if not isinstance(labels, SparseTensor):
        raise TypeError("Expected labels (first argument) to be a SparseTensor")
    inputs = convert_to_tensor(inputs)
    if not time_major:
        inputs = array_ops.transpose(inputs, [1, 0, 2])
    op = make_op("CTCLoss", [inputs, labels.indices, labels.values, sequence_length], {
        "preprocess_collapse_repeated": bool(preprocess_collapse_repeated),
        "ctc_merge_repeated": bool(ctc_merge_repeated),
        "ignore_longer_outputs_than_inputs": bool(ignore_longer_outputs_than_inputs)})
    return op.outputs[0]


def _num_classes(logits: Tensor) -> int:
    classes = logits.shape[2] if logits.shape.ndims is not None else None
    if classes is None:
        raise ValueError("ctc_loss_v2 needs the number of classes (logits' last dimension) "
                         "known at graph construction")
    return int(classes)


def _blank_last(logits: Tensor, labels: Tensor, blank: int) -> tuple[Tensor, Tensor]:
    """Logits with class `blank` moved last, and labels renumbered to match."""
    if blank == _num_classes(logits) - 1:
        return logits, labels
    logits = array_ops.concat([logits[:, :, :blank], logits[:, :, blank + 1:],
                               logits[:, :, blank:blank + 1]], axis=2)
    return logits, array_ops.where(labels < blank, labels, labels - 1)


def _dense_to_sparse(labels: Tensor, label_length: Tensor) -> SparseTensor:
    """The first `label_length[b]` labels of each row, as an int32 `SparseTensor`."""
    mask = array_ops.sequence_mask(label_length, maxlen=array_ops.shape(labels)[1])
    indices = array_ops.where(mask)
    values = math_ops.cast(array_ops.gather_nd(labels, indices), dtypes.int32)
    dense_shape = array_ops.stack([
        math_ops.cast(array_ops.shape(labels)[0], dtypes.int64),
        math_ops.cast(math_ops.reduce_max(label_length), dtypes.int64)])
    return SparseTensor(indices, values, dense_shape)


def ctc_loss_v2(labels: Any, logits: Any, label_length: Any, logit_length: Any,
                logits_time_major: bool = True, unique: Any = None, blank_index: int | None = None,
                name: str | None = None) -> Tensor:
    """TF 1.15's ``tf.nn.ctc_loss_v2``: sparse labels, or dense zero-padded ``[batch,
    max_label_length]`` labels with `label_length`; `blank_index` counts from the end when
    negative. `unique` (from `ctc_unique_labels`) only speeds TF up on TPU and is accepted."""
    del unique  # a TPU speed path in TF; the loss does not depend on it
    logits = convert_to_tensor(logits)
    if isinstance(labels, SparseTensor):
        if blank_index is None:
            raise ValueError("blank_index must be given when using SparseTensor labels.")
        if blank_index < 0:
            blank_index += _num_classes(logits)
        logits, values = _blank_last(logits, labels.values, blank_index)
        return ctc_loss(SparseTensor(labels.indices, values, labels.dense_shape), logits,
                        logit_length, time_major=logits_time_major)
    with name_scope(name, "ctc_loss_dense"):
        labels = convert_to_tensor(labels)
        label_length = convert_to_tensor(label_length)
        blank = 0 if blank_index is None else blank_index
        if blank < 0:
            blank += _num_classes(logits)
        logits, labels = _blank_last(logits, labels, blank)
        logit_length = math_ops.cast(logit_length, dtypes.int32)
        return ctc_loss(_dense_to_sparse(labels, label_length), logits, logit_length,
                        time_major=logits_time_major)


def _decoded(op: Any, top_paths: int) -> tuple[list[SparseTensor], Tensor]:
    outs = op.outputs
    decoded = [SparseTensor(outs[p], outs[top_paths + p], outs[2 * top_paths + p])
               for p in range(top_paths)]
    return decoded, outs[3 * top_paths]


def ctc_greedy_decoder(inputs: Any, sequence_length: Any,
                       merge_repeated: bool = True) -> tuple[list[SparseTensor], Tensor]:
    """Best-path decoding of logits ``[max_time, batch, num_classes]``: ``([decoded],
    neg_sum_logits)`` with `neg_sum_logits` ``[batch, 1]``."""
    op = make_op("CTCGreedyDecoder", [inputs, sequence_length],
                 {"merge_repeated": bool(merge_repeated)})
    return _decoded(op, 1)


def ctc_beam_search_decoder(inputs: Any, sequence_length: Any, beam_width: int = 100,
                            top_paths: int = 1,
                            merge_repeated: bool = True) -> tuple[list[SparseTensor], Tensor]:
    """TF's prefix beam search: `top_paths` decoded `SparseTensor`\\ s and their log
    probabilities ``[batch, top_paths]``."""
    op = make_op("CTCBeamSearchDecoder", [inputs, sequence_length],
                 {"beam_width": int(beam_width), "top_paths": int(top_paths),
                  "merge_repeated": bool(merge_repeated)})
    return _decoded(op, int(top_paths))


def ctc_beam_search_decoder_v2(inputs: Any, sequence_length: Any, beam_width: int = 100,
                               top_paths: int = 1) -> tuple[list[SparseTensor], Tensor]:
    """`ctc_beam_search_decoder` without merging repeats (TF dropped that option in v2)."""
    return ctc_beam_search_decoder(inputs, sequence_length, beam_width, top_paths,
                                   merge_repeated=False)


def ctc_unique_labels(labels: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Per row of ``[batch, max_label_length]`` labels: its distinct labels in order of first
    appearance, zero-padded (int64), and each label's index among them (int32)."""
    with name_scope(name, "ctc_unique_labels"):
        labels = convert_to_tensor(labels)
        width = array_ops.shape(labels)[1]
        same = math_ops.equal(array_ops.expand_dims(labels, 2), array_ops.expand_dims(labels, 1))
        first = math_ops.cast(math_ops.argmax(math_ops.cast(same, dtypes.int32), axis=2),
                              dtypes.int32)
        is_first = math_ops.equal(first, array_ops.range(width))
        rank = math_ops.cumsum(math_ops.cast(is_first, dtypes.int32), axis=1) - 1
        kept = math_ops.cast(labels, dtypes.int64) * math_ops.cast(is_first, dtypes.int64)
        unique = math_ops.reduce_sum(
            array_ops.one_hot(rank, width, dtype=dtypes.int64) * array_ops.expand_dims(kept, 2),
            axis=1)
        index = math_ops.reduce_sum(
            array_ops.one_hot(first, width, dtype=dtypes.int32) * array_ops.expand_dims(rank, 1),
            axis=2)
        return unique, index


def collapse_repeated(labels: Any, seq_length: Any,
                      name: str | None = None) -> tuple[Tensor, Tensor]:
    """Labels ``[batch, max_length]`` with runs of one label merged, within `seq_length`, and
    zero-padded to the longest result; and the new lengths (`seq_length`'s dtype)."""
    with name_scope(name, "collapse_repeated_labels"):
        labels = convert_to_tensor(labels)
        seq_length = convert_to_tensor(seq_length)
        width = array_ops.shape(labels)[1]
        changed = math_ops.not_equal(labels[:, 1:], labels[:, :-1])
        keep = array_ops.concat([array_ops.ones_like(labels[:, :1], dtype=dtypes.bool_),
                                 changed], axis=1)
        keep = math_ops.logical_and(keep, array_ops.sequence_mask(seq_length, maxlen=width))
        keep_int = math_ops.cast(keep, dtypes.int32)
        new_length = math_ops.reduce_sum(keep_int, axis=1)
        slot = math_ops.cumsum(keep_int, axis=1) - 1 - (1 - keep_int) * width
        moved = array_ops.one_hot(slot, width, dtype=labels.dtype) * array_ops.expand_dims(
            labels, 2)
        collapsed = math_ops.reduce_sum(moved, axis=1)[:, :math_ops.reduce_max(new_length)]
        return collapsed, math_ops.cast(new_length, seq_length.dtype)
