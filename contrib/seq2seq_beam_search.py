"""``tf.contrib.seq2seq``'s beam search: `BeamSearchDecoder` and its utilities `gather_tree`,
`tile_batch` and `gather_tree_from_array`.

Contract of the utilities: `gather_tree` is the ``GatherTree`` op (backtracking each beam's ids
through its parent pointers; see `tensorweave.plugins.kernels.seq2seq`). `tile_batch` repeats
every batch entry of a tensor (or nest of tensors) `multiplier` times in place,
``[b0, b0, b1, b1, ...]``, as a beam-search decoder needs its memory and initial state:
``[batch, ...]`` becomes ``[batch * multiplier, ...]``; a scalar is an error (`ValueError`).
`gather_tree_from_array` reorders a stacked ``[time, batch * beam, ...]`` history along the
beams' final paths.

Contract of `BeamSearchDecoder` (TF 1.15): the cell runs on ``batch * beam_width`` rows, so its
initial state (and an attention memory, via `tile_batch`) is tiled; the decoder keeps every
state tensor as ``[batch, beam_width, ...]`` between steps. Each step scores every
``(beam, token)`` continuation by its total log-probability divided by the length penalty
``((5 + length) / 6) ** length_penalty_weight`` (a continuing beam's candidate length grows by
one unless the token is `end_token`), plus, with `coverage_penalty_weight`, the weighted
``sum(log(min(accumulated attention, 1)))`` of finished beams; it keeps the `beam_width` best
(ties: the lower flat index) and gathers the cell state, log-probabilities, lengths and finished
flags by their parent beams. A finished beam only extends with `end_token`, at zero cost; a
beam's stored length counts its `end_token`. Beams other than beam 0 start finished at
log-probability ``-inf``, so the first step expands beam 0 alone. The decoder tracks its own
finished flags; `finalize` backtracks the ids with `gather_tree` (up to each batch entry's
longest beam) and, with `reorder_tensor_arrays`, replaces the cell state's TensorArrays (an
attention wrapper's alignment history) by their stacked, beam-reordered values.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.api import array_ops, math_ops, nn_ops
from tensorweave.api.control_flow_ops import _flatten, _pack_as
from tensorweave.api.rnn import _check_cell
from tensorweave.api.scopes import name_scope
from tensorweave.api.tensor_array import TensorArray
from tensorweave.contrib.seq2seq_attention import AttentionWrapperState
from tensorweave.contrib.seq2seq_decoder import Decoder, _layer_output_size, _map, _tensors
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor, constant_value
from tensorweave.engine.graph.op_builder import apply
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "BeamSearchDecoder", "BeamSearchDecoderOutput", "BeamSearchDecoderState",
    "FinalBeamDecoderOutput", "FinalBeamSearchDecoderOutput", "gather_tree",
    "gather_tree_from_array", "tile_batch",
]

_log = logging.getLogger(__name__)


def gather_tree(step_ids: Any, parent_ids: Any, max_sequence_lengths: Any, end_token: Any,
                name: str | None = None) -> Tensor:
    """The full beams ``[max_time, batch, beam_width]`` from per-step ids and parents."""
    return apply("GatherTree", [step_ids, parent_ids, max_sequence_lengths, end_token],
                 name=name or "GatherTree")


def _tile(t: Tensor, multiplier: int) -> Tensor:
    t = convert_to_tensor(t, name="t")
    if t.shape.ndims == 0:
        raise ValueError("t must have statically known rank")
    rank = t.shape.ndims if t.shape.ndims is not None else array_ops.rank(t)
    shape = array_ops.shape(t)
    tiling = array_ops.concat([[1, multiplier], array_ops.ones([rank - 1], "int32")], 0)
    tiled = array_ops.tile(array_ops.expand_dims(t, 1), tiling)
    out = array_ops.reshape(tiled, array_ops.concat([[shape[0] * multiplier], shape[1:]], 0))
    if t.shape.ndims is not None:
        batch = t.shape[0] * multiplier if t.shape[0] is not None else None
        out.set_shape([batch, *t.shape[1:]])
    return out


def tile_batch(t: Any, multiplier: int, name: str | None = None) -> Any:
    """Each batch entry of `t` (a tensor or nest of tensors) repeated `multiplier` times."""
    flat = _flatten(t)
    with name_scope(name, "tile_batch", [x for x in flat if isinstance(x, Tensor)]):
        return _pack_as(t, [_tile(x, multiplier) for x in flat])


def _dim(t: Tensor, axis: int) -> Any:
    """`t`'s size along `axis`: a Python int when static, else a tensor."""
    static = t.shape[axis] if t.shape.ndims is not None else None
    return static if static is not None else array_ops.shape(t)[axis]


def gather_tree_from_array(t: Any, parent_ids: Any, sequence_length: Any) -> Tensor:
    """`t` (``[time, batch * beam, ...]`` or ``[time, batch, beam, ...]``) with each step's
    beams reordered along the final beams' paths through `parent_ids`
    (``[time, batch, beam]``); steps past a beam's `sequence_length` keep their own beam."""
    t, parent_ids = convert_to_tensor(t), convert_to_tensor(parent_ids)
    max_time, batch, width = (_dim(parent_ids, i) for i in range(3))
    beam_ids = array_ops.tile(array_ops.reshape(array_ops.range(width), [1, 1, -1]),
                              array_ops.stack([max_time, batch, 1]))
    max_lengths = math_ops.cast(math_ops.reduce_max(sequence_length, axis=1), dtypes.int32)
    # An end token no beam id equals: gather_tree then never truncates a path early.
    sorted_ids = gather_tree(beam_ids, parent_ids, max_lengths, width + 1)
    in_bounds = array_ops.transpose(
        array_ops.sequence_mask(sequence_length, maxlen=max_time), [2, 0, 1])
    sorted_ids = array_ops.where(in_bounds, sorted_ids, beam_ids)
    rows = (array_ops.reshape(array_ops.range(max_time), [-1, 1, 1]) * batch
            + array_ops.reshape(array_ops.range(batch), [1, -1, 1])) * width + sorted_ids
    flat = array_ops.reshape(t, array_ops.stack([max_time * batch * width, -1]))
    ordered = array_ops.reshape(array_ops.gather(flat, array_ops.reshape(rows, [-1])),
                                array_ops.shape(t))
    ordered.set_shape(t.shape)
    return ordered


class BeamSearchDecoderState(collections.namedtuple("BeamSearchDecoderState", (
        "cell_state", "log_probs", "finished", "lengths", "accumulated_attention_probs"))):
    """The search's state: the cell state and, per ``[batch, beam]``, the total
    log-probability, the finished flag, the int64 length and (with a coverage penalty, else
    ``()``) the accumulated attention."""

    __slots__ = ()


class BeamSearchDecoderOutput(collections.namedtuple("BeamSearchDecoderOutput",
                                                     ("scores", "predicted_ids", "parent_ids"))):
    """One step's ``[batch, beam]`` scores, chosen token ids and the beams they extend."""

    __slots__ = ()


class FinalBeamSearchDecoderOutput(collections.namedtuple(
        "FinalBeamDecoderOutput", ("predicted_ids", "beam_search_decoder_output"))):
    """The backtracked ids of every beam, best first, and the per-step outputs."""

    __slots__ = ()


FinalBeamDecoderOutput = FinalBeamSearchDecoderOutput


def _check_rank_known(t: Tensor) -> None:
    if t.shape.ndims is None:
        raise ValueError(f"Expected tensor ({t}) to have known rank, but ndims == None.")


def _gather_beams(indices: Tensor, source: Tensor, batch_size: Tensor, width: Any) -> Tensor:
    """``source[b, indices[b, j], ...]`` for ``[batch, width, ...]`` `source`."""
    offsets = array_ops.expand_dims(array_ops.range(batch_size) * width, 1)
    flat = array_ops.reshape(source, array_ops.concat([[-1], array_ops.shape(source)[2:]], 0))
    picked = array_ops.gather(flat, array_ops.reshape(indices + offsets, [-1]))
    out = array_ops.reshape(picked, array_ops.concat(
        [array_ops.shape(indices), array_ops.shape(source)[2:]], 0))
    out.set_shape(indices.shape.concatenate(source.shape[2:]))
    return out


def _static_weight(weight: Any) -> Any:
    return constant_value(weight) if isinstance(weight, Tensor) else weight


def _attention_probs(cell_state: Any, coverage_penalty_weight: Any) -> Tensor | None:
    """The attention cell states' alignments (averaged over mechanisms and wrappers), or None
    without a coverage penalty."""
    if _static_weight(coverage_penalty_weight) == 0.0:
        return None
    if isinstance(cell_state, AttentionWrapperState):
        states = [cell_state]
    elif isinstance(cell_state, tuple):
        states = [s for s in cell_state if isinstance(s, AttentionWrapperState)]
    else:
        states = []
    if not states:
        raise ValueError("coverage_penalty_weight must be 0.0 if no cell is attentional.")
    probs = []
    for state in states:
        alignments = state.alignments
        probs.append(_mean(list(alignments)) if isinstance(alignments, tuple) else alignments)
    return _mean(probs)


def _mean(tensors: list[Tensor]) -> Tensor:
    if len(tensors) == 1:
        return tensors[0]
    return math_ops.reduce_mean(array_ops.stack(tensors, -1), -1)


def _length_penalty(lengths: Tensor, weight: Any) -> Any:
    """``((5 + lengths) / 6) ** weight``, or 1.0 when `weight` is statically zero."""
    weight = convert_to_tensor(weight, name="penalty_factor")
    weight.set_shape(())
    if constant_value(weight) == 0:
        return 1.0
    return ((5.0 + math_ops.cast(lengths, dtypes.float32)) ** weight) / (6.0 ** weight)


def _scores(log_probs: Tensor, lengths: Tensor, length_penalty_weight: Any,
            coverage_penalty_weight: Any, finished: Tensor,
            accumulated_attention: Tensor | None) -> Tensor:
    penalty = _length_penalty(lengths, length_penalty_weight)
    scores = log_probs / (math_ops.cast(penalty, log_probs.dtype)
                          if isinstance(penalty, Tensor) else penalty)
    weight = convert_to_tensor(coverage_penalty_weight, name="coverage_penalty_weight")
    if weight.shape.ndims != 0:
        raise ValueError(f"coverage_penalty_weight should be a scalar, but saw shape: "
                         f"{weight.shape}")
    if constant_value(weight) == 0.0:
        return scores
    # Memory positions no step attended to are padding: they must not count as uncovered.
    coverage = array_ops.where(math_ops.equal(accumulated_attention, 0.0),
                               array_ops.ones_like(accumulated_attention), accumulated_attention)
    coverage = math_ops.reduce_sum(math_ops.log(math_ops.minimum(coverage, 1.0)), 2)
    coverage = coverage * math_ops.cast(finished, coverage.dtype) * \
        math_ops.cast(weight, coverage.dtype)
    return scores + array_ops.expand_dims(coverage, 2)


def _mask_finished(log_probs: Tensor, end_token: Tensor, finished: Tensor) -> Tensor:
    """`log_probs` with every finished beam's row replaced by all mass on `end_token`."""
    vocab_size = array_ops.shape(log_probs)[2]
    end_row = array_ops.one_hot(end_token, vocab_size, dtype=log_probs.dtype, on_value=0.0,
                                off_value=log_probs.dtype.min)
    end_rows = array_ops.tile(array_ops.reshape(end_row, [1, 1, -1]),
                              array_ops.concat([array_ops.shape(finished), [1]], 0))
    mask = array_ops.tile(array_ops.expand_dims(finished, 2),
                          array_ops.stack([1, 1, vocab_size]))
    return array_ops.where(mask, end_rows, log_probs)


class BeamSearchDecoder(Decoder):
    """Beam search over `cell` (see the module docstring); use it with `dynamic_decode`."""

    def __init__(self, cell: Any, embedding: Any, start_tokens: Any, end_token: Any,
                 initial_state: Any, beam_width: int, output_layer: Any = None,
                 length_penalty_weight: Any = 0.0, coverage_penalty_weight: Any = 0.0,
                 reorder_tensor_arrays: bool = True) -> None:
        _check_cell("cell", cell)
        if output_layer is not None and not callable(output_layer):
            raise TypeError(f"output_layer must be a Layer, received: {type(output_layer)}")
        if not isinstance(beam_width, (int, np.integer)) or beam_width < 1:
            raise ValueError(f"beam_width must be a positive Python int, saw: {beam_width!r}")
        self._cell = cell
        self._output_layer = output_layer
        self._embedding_fn: Callable[[Tensor], Any] = embedding if callable(embedding) else (
            lambda ids: nn_ops.embedding_lookup(embedding, ids))
        start_tokens = convert_to_tensor(start_tokens, dtype=dtypes.int32, name="start_tokens")
        if start_tokens.shape.ndims != 1:
            raise ValueError("start_tokens must be a vector")
        self._end_token = convert_to_tensor(end_token, dtype=dtypes.int32, name="end_token")
        if self._end_token.shape.ndims != 0:
            raise ValueError("end_token must be a scalar")
        self._batch_size = array_ops.size(start_tokens)
        self._beam_width = int(beam_width)
        self._length_penalty_weight = length_penalty_weight
        self._coverage_penalty_weight = coverage_penalty_weight
        self._reorder_tensor_arrays = reorder_tensor_arrays
        self._initial_cell_state = _map(self._maybe_split_batch_beams, initial_state)
        tiled_starts = array_ops.tile(array_ops.expand_dims(start_tokens, 1),
                                      [1, self._beam_width])
        self._start_inputs = self._embedding_fn(tiled_starts)
        self._finished = array_ops.one_hot(
            array_ops.zeros(array_ops.stack([self._batch_size]), dtype=dtypes.int32),
            depth=self._beam_width, on_value=False, off_value=True, dtype=dtypes.bool_)

    @property
    def batch_size(self) -> Tensor:
        return self._batch_size

    @property
    def tracks_own_finished(self) -> bool:
        # Beams are reshuffled every step, so dynamic_decode's or-ing of flags would be wrong.
        return True

    def _rnn_output_size(self) -> Any:
        size = self._cell.output_size
        return size if self._output_layer is None else _layer_output_size(self._output_layer,
                                                                          size)

    def _dtype(self) -> dtypes.DType:
        return _flatten(self._initial_cell_state)[0].dtype

    @property
    def output_size(self) -> BeamSearchDecoderOutput:
        width = TensorShape([self._beam_width])
        return BeamSearchDecoderOutput(scores=width, predicted_ids=width, parent_ids=width)

    @property
    def output_dtype(self) -> BeamSearchDecoderOutput:
        return BeamSearchDecoderOutput(
            scores=_map(lambda _: self._dtype(), self._rnn_output_size()),
            predicted_ids=dtypes.int32, parent_ids=dtypes.int32)

    def _static_batch(self) -> int | None:
        static = constant_value(self._batch_size)
        return None if static is None else int(static)

    def _split_batch_beams(self, t: Tensor) -> Tensor:
        """``[batch * beam, ...]`` -> ``[batch, beam, ...]``."""
        static = self._static_batch()
        expected = TensorShape([static, self._beam_width]).concatenate(t.shape[1:])
        rows = t.shape[0]
        if rows is not None and (rows % self._beam_width or (
                static is not None and rows != static * self._beam_width)):
            raise ValueError(
                "Unexpected behavior when reshaping between beam width and batch size. The "
                f"tensor has shape: {t.shape}. We expected it to reshape to (batch_size, "
                f"beam_width, depth) == {expected}. Perhaps you forgot to create a zero_state "
                "with batch_size=encoder_batch_size * beam_width?")
        out = array_ops.reshape(t, array_ops.concat(
            [array_ops.stack([self._batch_size, self._beam_width]), array_ops.shape(t)[1:]], 0))
        out.set_shape(expected)
        return out

    def _merge_batch_beams(self, t: Tensor) -> Tensor:
        """``[batch, beam, ...]`` -> ``[batch * beam, ...]``."""
        static = self._static_batch()
        out = array_ops.reshape(t, array_ops.concat(
            [array_ops.stack([self._batch_size * self._beam_width]), array_ops.shape(t)[2:]],
            0))
        out.set_shape(TensorShape([None if static is None else static * self._beam_width])
                      .concatenate(t.shape[2:]))
        return out

    def _maybe_split_batch_beams(self, t: Any) -> Any:
        if isinstance(t, TensorArray):
            return t
        t = convert_to_tensor(t)
        _check_rank_known(t)
        return self._split_batch_beams(t) if t.shape.ndims >= 1 else t

    def _maybe_merge_batch_beams(self, t: Any) -> Any:
        if isinstance(t, TensorArray):
            return t
        _check_rank_known(t)
        return self._merge_batch_beams(t) if t.shape.ndims >= 2 else t

    def _maybe_gather_beams(self, parents: Tensor, t: Any) -> Any:
        if isinstance(t, TensorArray):
            return t
        _check_rank_known(t)
        if t.shape.ndims < 2:
            return t
        return _gather_beams(parents, t, self._batch_size, self._beam_width)

    def initialize(self, name: str | None = None) -> tuple[Tensor, Any, BeamSearchDecoderState]:
        dtype = self._dtype()
        log_probs = array_ops.one_hot(
            array_ops.zeros(array_ops.stack([self._batch_size]), dtype=dtypes.int32),
            depth=self._beam_width, on_value=convert_to_tensor(0.0, dtype=dtype),
            off_value=convert_to_tensor(-np.inf, dtype=dtype), dtype=dtype)
        attention = _attention_probs(self._initial_cell_state, self._coverage_penalty_weight)
        state = BeamSearchDecoderState(
            cell_state=self._initial_cell_state, log_probs=log_probs, finished=self._finished,
            lengths=array_ops.zeros(array_ops.stack([self._batch_size, self._beam_width]),
                                    dtype=dtypes.int64),
            accumulated_attention_probs=() if attention is None else attention)
        return self._finished, self._start_inputs, state

    def step(self, time: Any, inputs: Any, state: BeamSearchDecoderState,
             name: str | None = None) -> tuple[Any, Any, Any, Any]:
        with name_scope(name, "BeamSearchDecoderStep", _tensors([time, inputs, state])):
            cell_outputs, next_cell_state = self._cell(
                _map(self._merge_batch_beams, inputs),
                _map(self._maybe_merge_batch_beams, state.cell_state))
            cell_outputs = _map(self._split_batch_beams, cell_outputs)
            next_cell_state = _map(self._maybe_split_batch_beams, next_cell_state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            output, next_state = self._search_step(cell_outputs, next_cell_state, state)
            next_inputs = self._embedding_fn(output.predicted_ids)
        return output, next_state, next_inputs, next_state.finished

    def _search_step(self, logits: Tensor, next_cell_state: Any,
                     state: BeamSearchDecoderState) -> tuple[BeamSearchDecoderOutput,
                                                             BeamSearchDecoderState]:
        """Scores every continuation and keeps the `beam_width` best of each batch entry."""
        batch_size, width, end_token = self._batch_size, self._beam_width, self._end_token
        finished = state.finished
        continuing = math_ops.logical_not(finished)
        step_log_probs = _mask_finished(nn_ops.log_softmax(logits), end_token, finished)
        total = array_ops.expand_dims(state.log_probs, 2) + step_log_probs
        vocab_size = _dim(logits, -1)
        grows = array_ops.one_hot(array_ops.fill(array_ops.stack([batch_size, width]), end_token),
                                  vocab_size, on_value=np.int64(0), off_value=np.int64(1),
                                  dtype=dtypes.int64)
        grows = grows * array_ops.expand_dims(math_ops.cast(continuing, dtypes.int64), 2)
        candidate_lengths = array_ops.expand_dims(state.lengths, 2) + grows
        accumulated = None
        attention = _attention_probs(next_cell_state, self._coverage_penalty_weight)
        if attention is not None:
            accumulated = state.accumulated_attention_probs + attention * \
                array_ops.expand_dims(math_ops.cast(continuing, attention.dtype), 2)
        scores = _scores(total, candidate_lengths, self._length_penalty_weight,
                         self._coverage_penalty_weight, finished, accumulated)
        static_batch = self._static_batch()
        best_scores, flat_ids = nn_ops.top_k(
            array_ops.reshape(scores, array_ops.stack([batch_size, -1])), k=width)
        best_scores.set_shape([static_batch, width])
        flat_ids.set_shape([static_batch, width])
        word_ids = math_ops.floormod(flat_ids, vocab_size)
        parents = math_ops.floor_div(flat_ids, vocab_size)
        log_probs = _gather_beams(
            flat_ids, array_ops.reshape(total, array_ops.stack([batch_size, -1])),
            batch_size, width * vocab_size)
        parent_finished = _gather_beams(parents, finished, batch_size, width)
        lengths = _gather_beams(parents, state.lengths, batch_size, width) + math_ops.cast(
            math_ops.logical_not(parent_finished), dtypes.int64)
        next_state = BeamSearchDecoderState(
            cell_state=_map(lambda t: self._maybe_gather_beams(parents, t), next_cell_state),
            log_probs=log_probs,
            finished=math_ops.logical_or(parent_finished, math_ops.equal(word_ids, end_token)),
            lengths=lengths,
            accumulated_attention_probs=() if accumulated is None else _gather_beams(
                parents, accumulated, batch_size, width))
        return BeamSearchDecoderOutput(best_scores, word_ids, parents), next_state

    def finalize(self, outputs: BeamSearchDecoderOutput, final_state: BeamSearchDecoderState,
                 sequence_lengths: Any) -> tuple[FinalBeamSearchDecoderOutput,
                                                 BeamSearchDecoderState]:
        """The backtracked ids; `sequence_lengths` is unused (the state's lengths count)."""
        max_lengths = math_ops.cast(math_ops.reduce_max(final_state.lengths, axis=1),
                                    dtypes.int32)
        predicted_ids = gather_tree(outputs.predicted_ids, outputs.parent_ids, max_lengths,
                                    self._end_token)
        if self._reorder_tensor_arrays:
            final_state = final_state._replace(cell_state=_map(
                lambda t: self._maybe_sort_array_beams(t, outputs.parent_ids,
                                                       final_state.lengths),
                final_state.cell_state))
        return FinalBeamSearchDecoderOutput(predicted_ids, outputs), final_state

    def _maybe_sort_array_beams(self, t: Any, parent_ids: Tensor, lengths: Tensor) -> Any:
        """A TensorArray of ``[batch * beam, ...]`` (or ``[batch, beam, ...]``) elements,
        stacked and reordered along the final beams; anything else unchanged."""
        if not isinstance(t, TensorArray):
            return t
        shape = t.element_shape
        if shape.ndims is None or shape.ndims < 1:
            _log.warning("The TensorArray %s in the cell state is not amenable to sorting "
                         "based on the beam search result: its elements need a known shape "
                         "of rank at least 1, saw %s", t.flow.name, shape)
            return t
        static = self._static_batch()
        if static is not None and shape[0] is not None and not (
                shape[0] == static * self._beam_width or (
                    shape.ndims >= 2 and shape[0] == static and shape[1] == self._beam_width)):
            return t
        return gather_tree_from_array(t.stack(), parent_ids, lengths)
