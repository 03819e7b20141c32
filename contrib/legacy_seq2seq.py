"""``tf.contrib.legacy_seq2seq``: TF1's list-of-steps sequence-to-sequence models, decoders and
sequence losses.

Contract: sequences are Python lists with one ``[batch, ...]`` tensor per step (symbol ids are
``[batch]`` int tensors); models return ``(outputs, state)`` with one output per decoder input.
Variable scopes and names are TF 1.15's, so checkpoints line up: ``rnn_decoder`` (the cell in
it), ``basic_rnn_seq2seq/{rnn,rnn_decoder}``, ``combined_tied_rnn_seq2seq/tied_rnn_seq2seq``,
``embedding_rnn_seq2seq/{rnn/embedding_wrapper,embedding_rnn_decoder}``, and the attention
decoder's ``AttnW_<head>``/``AttnV_<head>``, input ``kernel``/``bias``, ``Attention_<head>/*``
and ``AttnOutputProjection/*``. The untied seq2seq models run their encoder on a deep copy of
`cell` (its own variables). With a ``loop_function`` (``feed_previous``), every decoder input
after the first (the "GO" symbol) is made from the previous output: the embedding of its
argmax, after `output_projection` ``(W, b)`` when given. A boolean-tensor `feed_previous`
builds both decoders, sharing variables, and picks one with `cond` at run time. The losses are
the weighted sparse softmax cross entropy per step, summed over time (divided by the summed
weights, plus 1e-12, with `average_across_timesteps`) and, for `sequence_loss`, averaged over
the batch; `model_with_buckets` builds one model per ``(encoder length, decoder length)``
bucket, all sharing variables.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from tensorweave.api import array_ops, math_ops, nn_ops
from tensorweave.api.control_flow_ops import _flatten, _pack_as, cond
from tensorweave.api.gradients import stop_gradient
from tensorweave.api.rnn import static_rnn
from tensorweave.api.rnn_cell import RNNCell
from tensorweave.api.scopes import name_scope
from tensorweave.api.variable_scope import get_variable, get_variable_scope, variable_scope
from tensorweave.contrib.rnn import EmbeddingWrapper, OutputProjectionWrapper, linear
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor

__all__ = [
    "attention_decoder", "basic_rnn_seq2seq", "embedding_attention_decoder",
    "embedding_attention_seq2seq", "embedding_rnn_decoder", "embedding_rnn_seq2seq",
    "embedding_tied_rnn_seq2seq", "model_with_buckets", "one2many_rnn_seq2seq",
    "rnn_decoder", "sequence_loss", "sequence_loss_by_example", "tied_rnn_seq2seq",
]

LoopFunction = Callable[[Any, int], Any]


def _extract_argmax_and_embed(embedding: Any, output_projection: Any = None,
                              update_embedding: bool = True) -> LoopFunction:
    """A loop function feeding back the embedding of the previous output's argmax."""

    def loop_function(prev: Any, _: int) -> Tensor:
        if output_projection is not None:
            prev = nn_ops.xw_plus_b(prev, output_projection[0], output_projection[1])
        emb_prev = nn_ops.embedding_lookup(embedding, math_ops.argmax(prev, 1))
        return emb_prev if update_embedding else stop_gradient(emb_prev)

    return loop_function


def rnn_decoder(decoder_inputs: list[Any], initial_state: Any, cell: RNNCell,
                loop_function: LoopFunction | None = None,
                scope: Any = None) -> tuple[list[Any], Any]:
    """`cell` run from `initial_state` over `decoder_inputs` (or, after the first, over
    ``loop_function(previous output, step)``)."""
    with variable_scope(scope or "rnn_decoder"):
        state, outputs, prev = initial_state, [], None
        for i, inp in enumerate(decoder_inputs):
            if loop_function is not None and prev is not None:
                with variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            if i > 0:
                get_variable_scope().reuse_variables()
            output, state = cell(inp, state)
            outputs.append(output)
            if loop_function is not None:
                prev = output
    return outputs, state


def basic_rnn_seq2seq(encoder_inputs: list[Any], decoder_inputs: list[Any], cell: RNNCell,
                      dtype: Any = dtypes.float32, scope: Any = None) -> tuple[list[Any], Any]:
    """Encode with a copy of `cell`, decode with `cell` from the encoder's final state."""
    with variable_scope(scope or "basic_rnn_seq2seq"):
        _, enc_state = static_rnn(copy.deepcopy(cell), encoder_inputs, dtype=dtype)
        return rnn_decoder(decoder_inputs, enc_state, cell)


def tied_rnn_seq2seq(encoder_inputs: list[Any], decoder_inputs: list[Any], cell: RNNCell,
                     loop_function: LoopFunction | None = None, dtype: Any = dtypes.float32,
                     scope: Any = None) -> tuple[list[Any], Any]:
    """`basic_rnn_seq2seq` with one set of weights for the encoder and the decoder."""
    with variable_scope("combined_tied_rnn_seq2seq"):
        scope = scope or "tied_rnn_seq2seq"
        _, enc_state = static_rnn(cell, encoder_inputs, dtype=dtype, scope=scope)
        get_variable_scope().reuse_variables()
        return rnn_decoder(decoder_inputs, enc_state, cell, loop_function=loop_function,
                           scope=scope)


def _check_projection(output_projection: Any, num_symbols: int, dtype: Any) -> None:
    if output_projection is None:
        return
    weights = convert_to_tensor(output_projection[0], dtype=dtype)
    weights.shape.assert_is_compatible_with([None, num_symbols])
    biases = convert_to_tensor(output_projection[1], dtype=dtype)
    biases.shape.assert_is_compatible_with([num_symbols])


def embedding_rnn_decoder(decoder_inputs: list[Any], initial_state: Any, cell: RNNCell,
                          num_symbols: int, embedding_size: int, output_projection: Any = None,
                          feed_previous: bool = False, update_embedding_for_previous: bool = True,
                          scope: Any = None) -> tuple[list[Any], Any]:
    """`rnn_decoder` over the ``embedding`` rows of the symbol ids in `decoder_inputs`; with
    `feed_previous`, a greedy decoder."""
    with variable_scope(scope or "embedding_rnn_decoder") as vs:
        _check_projection(output_projection, num_symbols, vs.dtype)
        embedding = get_variable("embedding", [num_symbols, embedding_size])
        loop_function = _extract_argmax_and_embed(
            embedding, output_projection, update_embedding_for_previous) \
            if feed_previous else None
        emb_inp = [nn_ops.embedding_lookup(embedding, i) for i in decoder_inputs]
        return rnn_decoder(emb_inp, initial_state, cell, loop_function=loop_function)


def _decode_either_way(feed_previous: Any, decode: Callable[[bool], tuple[list[Any], Any]],
                       num_outputs: int) -> tuple[list[Any], Any]:
    """Both decoders (the one feeding previous outputs first, creating the variables), chosen
    at run time by the boolean tensor `feed_previous`."""
    structure: list[Any] = []

    def branch(feed: bool) -> list[Any]:
        with variable_scope(get_variable_scope(), reuse=None if feed else True):
            outputs, state = decode(feed)
        structure[:] = [state]
        return list(outputs) + _flatten(state)

    both = cond(feed_previous, lambda: branch(True), lambda: branch(False), strict=True)
    return list(both[:num_outputs]), _pack_as(structure[0], list(both[num_outputs:]))


def embedding_rnn_seq2seq(encoder_inputs: list[Any], decoder_inputs: list[Any], cell: RNNCell,
                          num_encoder_symbols: int, num_decoder_symbols: int,
                          embedding_size: int, output_projection: Any = None,
                          feed_previous: Any = False, dtype: Any = None,
                          scope: Any = None) -> tuple[list[Any], Any]:
    """Embedded encoder (a copy of `cell`) and embedded decoder; without `output_projection`
    the decoder's outputs are projected to `num_decoder_symbols` logits."""
    with variable_scope(scope or "embedding_rnn_seq2seq") as vs:
        if dtype is not None:
            vs.set_dtype(dtype)
        else:
            dtype = vs.dtype
        encoder_cell = EmbeddingWrapper(copy.deepcopy(cell), embedding_classes=num_encoder_symbols,
                                        embedding_size=embedding_size)
        _, encoder_state = static_rnn(encoder_cell, encoder_inputs, dtype=dtype)
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols)

        def decode(feed: bool, update: bool = True) -> tuple[list[Any], Any]:
            return embedding_rnn_decoder(decoder_inputs, encoder_state, cell,
                                         num_decoder_symbols, embedding_size,
                                         output_projection=output_projection,
                                         feed_previous=feed,
                                         update_embedding_for_previous=update)

        if isinstance(feed_previous, bool):
            return decode(feed_previous)
        return _decode_either_way(feed_previous, lambda feed: decode(feed, False),
                                  len(decoder_inputs))


def embedding_tied_rnn_seq2seq(encoder_inputs: list[Any], decoder_inputs: list[Any],
                               cell: RNNCell, num_symbols: int, embedding_size: int,
                               num_decoder_symbols: int | None = None,
                               output_projection: Any = None, feed_previous: Any = False,
                               dtype: Any = None, scope: Any = None) -> tuple[list[Any], Any]:
    """`tied_rnn_seq2seq` over one shared ``embedding`` of encoder and decoder symbols."""
    with variable_scope(scope or "embedding_tied_rnn_seq2seq", dtype=dtype) as vs:
        dtype = vs.dtype
        _check_projection(output_projection, num_symbols, dtype)
        embedding = get_variable("embedding", [num_symbols, embedding_size], dtype=dtype)
        emb_encoder_inputs = [nn_ops.embedding_lookup(embedding, x) for x in encoder_inputs]
        emb_decoder_inputs = [nn_ops.embedding_lookup(embedding, x) for x in decoder_inputs]
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols or num_symbols)

        def decode(feed: bool, update: bool = True) -> tuple[list[Any], Any]:
            loop_function = _extract_argmax_and_embed(embedding, output_projection, update) \
                if feed else None
            return tied_rnn_seq2seq(emb_encoder_inputs, emb_decoder_inputs, cell,
                                    loop_function=loop_function, dtype=dtype)

        if isinstance(feed_previous, bool):
            return decode(feed_previous)
        return _decode_either_way(feed_previous, lambda feed: decode(feed, False),
                                  len(decoder_inputs))


def attention_decoder(decoder_inputs: list[Any], initial_state: Any, attention_states: Any,
                      cell: RNNCell, output_size: int | None = None, num_heads: int = 1,
                      loop_function: LoopFunction | None = None, dtype: Any = None,
                      scope: Any = None,
                      initial_state_attention: bool = False) -> tuple[list[Any], Any]:
    """RNN decoder attending over `attention_states` (``[batch, length, size]``, Vinyals et
    al. 2015): each step runs the cell on ``linear([input] + previous reads)``, reads each head
    ``sum_t softmax_t(v . tanh(W h_t + U state)) h_t``, and outputs
    ``linear([cell output] + reads)`` of `output_size` (default the cell's)."""
    if not decoder_inputs:
        raise ValueError("Must provide at least 1 input to attention decoder.")
    if num_heads < 1:
        raise ValueError("With less than 1 heads, use a non-attention decoder.")
    attention_states = convert_to_tensor(attention_states)
    if attention_states.shape.ndims != 3 or attention_states.shape[2] is None:
        raise ValueError(f"Shape[2] of attention_states must be known: "
                         f"{attention_states.shape}")
    if output_size is None:
        output_size = cell.output_size
    with variable_scope(scope or "attention_decoder", dtype=dtype) as vs:
        dtype = vs.dtype
        batch_size = array_ops.shape(decoder_inputs[0])[0]
        attn_length = attention_states.shape[1]
        if attn_length is None:
            attn_length = array_ops.shape(attention_states)[1]
        attn_size = attention_states.shape[2]
        hidden = array_ops.reshape(attention_states, [-1, attn_length, 1, attn_size])
        flat_states = array_ops.reshape(attention_states, [-1, attn_size])
        hidden_features, v = [], []
        for a in range(num_heads):
            # TF's 1x1 convolution of the states, as the matmul it is
            k = get_variable(f"AttnW_{a}", [1, 1, attn_size, attn_size])
            features = math_ops.matmul(flat_states, array_ops.reshape(k, [attn_size, attn_size]))
            hidden_features.append(array_ops.reshape(features,
                                                     [-1, attn_length, 1, attn_size]))
            v.append(get_variable(f"AttnV_{a}", [attn_size]))

        def attention(query: Any) -> list[Tensor]:
            query = array_ops.concat(_flatten(query), 1) if isinstance(query, (list, tuple)) \
                else query
            reads = []
            for a in range(num_heads):
                with variable_scope(f"Attention_{a}"):
                    y = array_ops.reshape(linear(query, attn_size, True), [-1, 1, 1, attn_size])
                    s = math_ops.reduce_sum(v[a] * math_ops.tanh(hidden_features[a] + y), [2, 3])
                    weights = nn_ops.softmax(s)
                    d = math_ops.reduce_sum(
                        array_ops.reshape(weights, [-1, attn_length, 1, 1]) * hidden, [1, 2])
                    reads.append(array_ops.reshape(d, [-1, attn_size]))
            return reads

        attns = []
        for _ in range(num_heads):
            zeros = array_ops.zeros(array_ops.stack([batch_size, attn_size]), dtype=dtype)
            zeros.set_shape([None, attn_size])
            attns.append(zeros)
        state = initial_state
        if initial_state_attention:
            attns = attention(initial_state)
        outputs, prev = [], None
        for i, inp in enumerate(decoder_inputs):
            if i > 0:
                get_variable_scope().reuse_variables()
            if loop_function is not None and prev is not None:
                with variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            inp = convert_to_tensor(inp)
            input_size = inp.shape.with_rank(2)[1]
            if input_size is None:
                raise ValueError(f"Could not infer input size from input: {inp.name}")
            x = linear([inp, *attns], input_size, True)
            cell_output, state = cell(x, state)
            if i == 0 and initial_state_attention:
                with variable_scope(get_variable_scope(), reuse=True):
                    attns = attention(state)
            else:
                attns = attention(state)
            with variable_scope("AttnOutputProjection"):
                output = linear([cell_output, *attns], output_size, True)
            if loop_function is not None:
                prev = output
            outputs.append(output)
    return outputs, state


def embedding_attention_decoder(decoder_inputs: list[Any], initial_state: Any,
                                attention_states: Any, cell: RNNCell, num_symbols: int,
                                embedding_size: int, num_heads: int = 1,
                                output_size: int | None = None, output_projection: Any = None,
                                feed_previous: bool = False,
                                update_embedding_for_previous: bool = True, dtype: Any = None,
                                scope: Any = None, initial_state_attention: bool = False
                                ) -> tuple[list[Any], Any]:
    """`attention_decoder` over the ``embedding`` rows of the symbol ids in
    `decoder_inputs`; with `feed_previous`, a greedy decoder."""
    if output_size is None:
        output_size = cell.output_size
    if output_projection is not None:
        biases = convert_to_tensor(output_projection[1], dtype=dtype)
        biases.shape.assert_is_compatible_with([num_symbols])
    with variable_scope(scope or "embedding_attention_decoder", dtype=dtype):
        embedding = get_variable("embedding", [num_symbols, embedding_size])
        loop_function = _extract_argmax_and_embed(
            embedding, output_projection, update_embedding_for_previous) \
            if feed_previous else None
        emb_inp = [nn_ops.embedding_lookup(embedding, i) for i in decoder_inputs]
        return attention_decoder(emb_inp, initial_state, attention_states, cell,
                                 output_size=output_size, num_heads=num_heads,
                                 loop_function=loop_function,
                                 initial_state_attention=initial_state_attention)


def embedding_attention_seq2seq(encoder_inputs: list[Any], decoder_inputs: list[Any],
                                cell: RNNCell, num_encoder_symbols: int,
                                num_decoder_symbols: int, embedding_size: int,
                                encoder_cell: RNNCell | None = None, num_heads: int = 1,
                                output_projection: Any = None, feed_previous: Any = False,
                                dtype: Any = None, scope: Any = None,
                                initial_state_attention: bool = False
                                ) -> tuple[list[Any], Any]:
    """Embedded encoder (`encoder_cell`, default a copy of `cell`) whose outputs the embedded
    attention decoder reads; without `output_projection` the decoder gives
    `num_decoder_symbols` logits."""
    with variable_scope(scope or "embedding_attention_seq2seq", dtype=dtype) as vs:
        dtype = vs.dtype
        encoder_cell = EmbeddingWrapper(
            encoder_cell if encoder_cell is not None else copy.deepcopy(cell),
            embedding_classes=num_encoder_symbols, embedding_size=embedding_size)
        encoder_outputs, encoder_state = static_rnn(encoder_cell, encoder_inputs, dtype=dtype)
        top_states = [array_ops.reshape(e, [-1, 1, cell.output_size]) for e in encoder_outputs]
        attention_states = array_ops.concat(top_states, 1)
        output_size = None
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols)
            output_size = num_decoder_symbols

        def decode(feed: bool, update: bool = True) -> tuple[list[Any], Any]:
            return embedding_attention_decoder(
                decoder_inputs, encoder_state, attention_states, cell, num_decoder_symbols,
                embedding_size, num_heads=num_heads, output_size=output_size,
                output_projection=output_projection, feed_previous=feed,
                update_embedding_for_previous=update,
                initial_state_attention=initial_state_attention)

        if isinstance(feed_previous, bool):
            return decode(feed_previous)
        return _decode_either_way(feed_previous, lambda feed: decode(feed, False),
                                  len(decoder_inputs))


def one2many_rnn_seq2seq(encoder_inputs: list[Any], decoder_inputs_dict: dict[Any, list[Any]],
                         enc_cell: RNNCell, dec_cells_dict: dict[Any, RNNCell],
                         num_encoder_symbols: int, num_decoder_symbols_dict: dict[Any, int],
                         embedding_size: int, feed_previous: Any = False, dtype: Any = None,
                         scope: Any = None) -> tuple[dict[Any, list[Any]], dict[Any, Any]]:
    """One embedded encoder, one embedded decoder per task (``one2many_decoder_<name>``),
    each projecting to its own number of symbols; ``(outputs_dict, state_dict)``."""
    if not isinstance(enc_cell, RNNCell):
        raise TypeError(f"enc_cell is not an RNNCell: {type(enc_cell)}")
    if set(dec_cells_dict) != set(decoder_inputs_dict):
        raise ValueError("keys of dec_cells_dict != keys of decodre_inputs_dict")
    for dec_cell in dec_cells_dict.values():
        if not isinstance(dec_cell, RNNCell):
            raise TypeError(f"dec_cell is not an RNNCell: {type(dec_cell)}")
    outputs_dict, state_dict = {}, {}
    with variable_scope(scope or "one2many_rnn_seq2seq", dtype=dtype) as vs:
        dtype = vs.dtype
        enc_cell = EmbeddingWrapper(enc_cell, embedding_classes=num_encoder_symbols,
                                    embedding_size=embedding_size)
        _, encoder_state = static_rnn(enc_cell, encoder_inputs, dtype=dtype)
        for name, decoder_inputs in decoder_inputs_dict.items():
            num_symbols = num_decoder_symbols_dict[name]
            with variable_scope(f"one2many_decoder_{name}"):
                dec_cell = OutputProjectionWrapper(dec_cells_dict[name], num_symbols)

                def decode(feed: bool, inputs: list[Any] = decoder_inputs,
                           cell: RNNCell = dec_cell, n: int = num_symbols
                           ) -> tuple[list[Any], Any]:
                    return embedding_rnn_decoder(inputs, encoder_state, cell, n,
                                                 embedding_size, feed_previous=feed)

                if isinstance(feed_previous, bool):
                    outputs, state = decode(feed_previous)
                else:
                    outputs, state = _decode_either_way(feed_previous, decode,
                                                        len(decoder_inputs))
            outputs_dict[name] = outputs
            state_dict[name] = state
    return outputs_dict, state_dict


def sequence_loss_by_example(logits: list[Any], targets: list[Any], weights: list[Any],
                             average_across_timesteps: bool = True,
                             softmax_loss_function: Callable[..., Any] | None = None,
                             name: str | None = None) -> Tensor:
    """Per example: ``sum_t weight_t * crossent(logits_t, target_t)``, divided by
    ``sum_t weight_t + 1e-12`` with `average_across_timesteps`; ``softmax_loss_function(
    labels=, logits=)`` replaces the sparse softmax cross entropy."""
    if len(targets) != len(logits) or len(weights) != len(logits):
        raise ValueError("Lengths of logits, weights, and targets must be the same "
                         f"{len(logits)}, {len(weights)}, {len(targets)}.")
    with name_scope(name, "sequence_loss_by_example", [*logits, *targets, *weights]):
        log_perps = []
        for logit, target, weight in zip(logits, targets, weights):
            if softmax_loss_function is None:
                crossent = nn_ops.sparse_softmax_cross_entropy_with_logits(
                    labels=array_ops.reshape(target, [-1]), logits=logit)
            else:
                crossent = softmax_loss_function(labels=target, logits=logit)
            log_perps.append(crossent * weight)
        total = math_ops.add_n(log_perps)
        if average_across_timesteps:
            total /= math_ops.add_n(weights) + 1e-12
    return total


def sequence_loss(logits: list[Any], targets: list[Any], weights: list[Any],
                  average_across_timesteps: bool = True, average_across_batch: bool = True,
                  softmax_loss_function: Callable[..., Any] | None = None,
                  name: str | None = None) -> Tensor:
    """`sequence_loss_by_example` summed over the batch, divided by the batch size with
    `average_across_batch`."""
    with name_scope(name, "sequence_loss", [*logits, *targets, *weights]):
        cost = math_ops.reduce_sum(sequence_loss_by_example(
            logits, targets, weights, average_across_timesteps=average_across_timesteps,
            softmax_loss_function=softmax_loss_function))
        if not average_across_batch:
            return cost
        batch_size = array_ops.shape(targets[0])[0]
        return cost / math_ops.cast(batch_size, cost.dtype)


def model_with_buckets(encoder_inputs: list[Any], decoder_inputs: list[Any],
                       targets: list[Any], weights: list[Any], buckets: list[tuple[int, int]],
                       seq2seq: Callable[[list[Any], list[Any]], tuple[list[Any], Any]],
                       softmax_loss_function: Callable[..., Any] | None = None,
                       per_example_loss: bool = False,
                       name: str | None = None) -> tuple[list[list[Any]], list[Tensor]]:
    """``seq2seq`` on each bucket's prefix of the inputs (variables shared from the second on)
    and its loss; ``(outputs per bucket, losses per bucket)``."""
    if len(encoder_inputs) < buckets[-1][0]:
        raise ValueError(f"Length of encoder_inputs ({len(encoder_inputs)}) must be at least "
                         f"that of last bucket ({buckets[-1][0]}).")
    if len(targets) < buckets[-1][1]:
        raise ValueError(f"Length of targets ({len(targets)}) must be at least that of last "
                         f"bucket ({buckets[-1][1]}).")
    if len(weights) < buckets[-1][1]:
        raise ValueError(f"Length of weights ({len(weights)}) must be at least that of last "
                         f"bucket ({buckets[-1][1]}).")
    loss_fn = sequence_loss_by_example if per_example_loss else sequence_loss
    outputs, losses = [], []
    with name_scope(name, "model_with_buckets",
                    [*encoder_inputs, *decoder_inputs, *targets, *weights]):
        for j, (enc_len, dec_len) in enumerate(buckets):
            with variable_scope(get_variable_scope(), reuse=True if j > 0 else None):
                bucket_outputs, _ = seq2seq(encoder_inputs[:enc_len], decoder_inputs[:dec_len])
                outputs.append(bucket_outputs)
                losses.append(loss_fn(bucket_outputs, targets[:dec_len], weights[:dec_len],
                                      softmax_loss_function=softmax_loss_function))
    return outputs, losses
