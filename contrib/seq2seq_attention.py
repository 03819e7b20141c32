"""``tf.contrib.seq2seq``'s attention: `BahdanauAttention`, `LuongAttention` and the
`AttentionWrapper` cell that applies them at every step.

Contract: a mechanism is built over a ``[batch, max_time, ...]`` `memory`; entries past
``memory_sequence_length`` are zeroed in the memory and their scores replaced by
`score_mask_value` (-inf by default) before `probability_fn` (softmax by default), so they get
no weight. Its keys are ``memory_layer(memory)``: a bias-free Dense layer named
``memory_layer`` created where the mechanism is constructed. Calling it with a query returns
``(alignments, next_state)``, ``[batch, max_time]`` each. Luong's score is ``q . k`` (times the
scalar ``attention_g``, initialised to 1, with `scale`); Bahdanau's is
``sum(attention_v * tanh(keys + query_layer(q)))``, with `normalize` the weight-normalised
``attention_g * v / |v|`` and a bias ``attention_b``. Their variables live under
``<cell scope>/luong_attention`` and ``<cell scope>/bahdanau_attention`` (the query layer too).

`AttentionWrapper` feeds ``cell_input_fn(inputs, previous attention)`` (concatenation by
default) to its cell, scores the cell output against each mechanism, and takes the context
``alignments @ memory``; with an attention layer (``attention_layer``, bias-free, over
``concat([cell_output, context])``) the attention is that layer's output, else the context.
Several mechanisms' attentions are concatenated. It outputs the attention (or, without
`output_attention`, the cell output) and an `AttentionWrapperState`; with `alignment_history`
the state carries a TensorArray of every step's alignments. Names, defaults and construction
errors follow TF 1.15.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.api import array_ops, init_ops, math_ops, nn_ops
from tensorweave.api.control_flow_ops import _flatten, _pack_as, identity
from tensorweave.api.layers import Dense
from tensorweave.api.rnn_cell import RNNCell, _zeros
from tensorweave.api.scopes import name_scope
from tensorweave.api.tensor_array import TensorArray
from tensorweave.api.variable_scope import get_variable, variable_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "AttentionMechanism", "AttentionWrapper", "AttentionWrapperState", "BahdanauAttention",
    "LuongAttention", "hardmax",
]


def hardmax(logits: Any, name: str | None = None) -> Tensor:
    """One-hot of the argmax of the last axis, in the logits' dtype."""
    with name_scope(name, "Hardmax", [logits]):
        logits = convert_to_tensor(logits, name="logits")
        depth = logits.shape[-1] if logits.shape.ndims and logits.shape[-1] is not None \
            else array_ops.shape(logits)[-1]
        return array_ops.one_hot(math_ops.argmax(logits, -1), depth, dtype=logits.dtype)


def _prepare_memory(memory: Any, memory_sequence_length: Any,
                    check_inner_dims_defined: bool) -> Tensor:
    """`memory` as a tensor with the entries past each sequence's length zeroed."""
    memory = convert_to_tensor(memory, name="memory")
    if check_inner_dims_defined and memory.shape.ndims is not None \
            and not memory.shape[2:].is_fully_defined():
        raise ValueError(f"Expected memory {memory.name} to have fully defined inner dims, but "
                         f"saw shape: {memory.shape}")
    if memory_sequence_length is None:
        return memory
    lengths = convert_to_tensor(memory_sequence_length, name="memory_sequence_length")
    mask = array_ops.sequence_mask(lengths, maxlen=array_ops.shape(memory)[1],
                                   dtype=memory.dtype)
    rank = memory.shape.ndims
    if rank is None:
        raise ValueError("memory must have a known rank")
    mask = array_ops.reshape(mask, array_ops.concat(
        [array_ops.shape(mask), array_ops.ones([rank - 2], dtypes.int32)], 0))
    out = memory * mask
    out.set_shape(memory.shape)
    return out


def _mask_score(score: Tensor, memory_sequence_length: Any, score_mask_value: Any) -> Tensor:
    if memory_sequence_length is None:
        return score
    mask = array_ops.sequence_mask(memory_sequence_length, maxlen=array_ops.shape(score)[1])
    return array_ops.where(mask, score, score_mask_value * array_ops.ones_like(score))


class AttentionMechanism:
    """The base of the attention mechanisms (TF's marker class)."""

    @property
    def alignments_size(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define alignments_size")

    @property
    def state_size(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define state_size")


class _BaseAttentionMechanism(AttentionMechanism):
    """Memory, keys and masking shared by the mechanisms; see the module docstring."""

    def __init__(self, query_layer: Dense | None, memory: Any,
                 probability_fn: Callable[[Tensor, Any], Tensor], memory_sequence_length: Any,
                 memory_layer: Dense | None, score_mask_value: Any, name: str) -> None:
        if not callable(probability_fn):
            raise TypeError(f"probability_fn must be callable, saw type: {type(probability_fn)}")
        self._query_layer = query_layer
        self._memory_layer = memory_layer
        self.dtype = memory_layer.dtype if memory_layer is not None else None
        with name_scope(name, "BaseAttentionMechanismInit", _flatten(memory)):
            self._values = _prepare_memory(memory, memory_sequence_length, True)
            self._keys = self._memory_layer(self._values) if self._memory_layer is not None \
                else self._values
            if self.dtype is None:
                self.dtype = self._values.dtype
            if score_mask_value is None:
                score_mask_value = np.array(-np.inf, self._keys.dtype.as_numpy_dtype)
            lengths = None if memory_sequence_length is None else convert_to_tensor(
                memory_sequence_length)
            self._probability_fn = lambda score, state: probability_fn(
                _mask_score(score, lengths, score_mask_value), state)
            self._batch_size = self._keys.shape[0] if self._keys.shape[0] is not None \
                else array_ops.shape(self._keys)[0]
            self._alignments_size = self._keys.shape[1] if self._keys.shape[1] is not None \
                else array_ops.shape(self._keys)[1]

    @property
    def memory_layer(self) -> Dense | None:
        return self._memory_layer

    @property
    def query_layer(self) -> Dense | None:
        return self._query_layer

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def keys(self) -> Tensor:
        return self._keys

    @property
    def batch_size(self) -> Any:
        return self._batch_size

    @property
    def alignments_size(self) -> Any:
        return self._alignments_size

    @property
    def state_size(self) -> Any:
        return self._alignments_size

    def initial_alignments(self, batch_size: Any, dtype: Any) -> Tensor:
        """Zeros, ``[batch_size, max_time]``."""
        return _zeros(self._alignments_size, batch_size, dtypes.as_dtype(dtype))

    def initial_state(self, batch_size: Any, dtype: Any) -> Tensor:
        return self.initial_alignments(batch_size, dtype)


def _probability_fn(probability_fn: Callable[[Tensor], Tensor] | None
                    ) -> Callable[[Tensor, Any], Tensor]:
    fn = probability_fn or nn_ops.softmax
    return lambda score, _: fn(score)


class LuongAttention(_BaseAttentionMechanism):
    """Multiplicative attention (Luong et al. 2015): ``score = q . memory_layer(m)``."""

    def __init__(self, num_units: int, memory: Any, memory_sequence_length: Any = None,
                 scale: bool = False, probability_fn: Callable[[Tensor], Tensor] | None = None,
                 score_mask_value: Any = None, dtype: Any = None,
                 custom_key_value_fn: Any = None, name: str = "LuongAttention") -> None:
        if custom_key_value_fn is not None:
            raise ValueError("custom_key_value_fn is not supported by tensorweave")
        dtype = dtypes.float32 if dtype is None else dtype
        super().__init__(
            None, memory, _probability_fn(probability_fn), memory_sequence_length,
            Dense(num_units, name="memory_layer", use_bias=False, dtype=dtype),
            score_mask_value, name)
        self._num_units = num_units
        self._scale = scale
        self._name = name

    def __call__(self, query: Any, state: Any) -> tuple[Tensor, Tensor]:
        """``(alignments, next_state)`` for `query` (``[batch, num_units]``)."""
        query = convert_to_tensor(query, name="query")
        with variable_scope(None, "luong_attention", [query]):
            gain = get_variable("attention_g", shape=(), dtype=query.dtype,
                                initializer=init_ops.ones_initializer()) if self._scale else None
            score = _luong_score(query, self._keys, gain)
        alignments = self._probability_fn(score, state)
        return alignments, alignments


def _luong_score(query: Tensor, keys: Tensor, gain: Any) -> Tensor:
    depth, key_units = query.shape[-1], keys.shape[-1]
    if depth != key_units or depth is None:
        raise ValueError(
            "Incompatible or unknown inner dimensions between query and keys.  Query "
            f"({query.name}) has units: {depth}.  Keys ({keys.name}) have units: {key_units}.  "
            f"Perhaps you need to set num_units to the keys' dimension ({key_units})?")
    score = math_ops.matmul(array_ops.expand_dims(query, 1), keys, transpose_b=True)
    score = array_ops.squeeze(score, [1])
    return score if gain is None else gain * score


class BahdanauAttention(_BaseAttentionMechanism):
    """Additive attention (Bahdanau et al. 2015):
    ``score = sum(v * tanh(memory_layer(m) + query_layer(q)))``."""

    def __init__(self, num_units: int, memory: Any, memory_sequence_length: Any = None,
                 normalize: bool = False,
                 probability_fn: Callable[[Tensor], Tensor] | None = None,
                 score_mask_value: Any = None, dtype: Any = None,
                 custom_key_value_fn: Any = None, name: str = "BahdanauAttention") -> None:
        if custom_key_value_fn is not None:
            raise ValueError("custom_key_value_fn is not supported by tensorweave")
        dtype = dtypes.float32 if dtype is None else dtype
        super().__init__(
            Dense(num_units, name="query_layer", use_bias=False, dtype=dtype), memory,
            _probability_fn(probability_fn), memory_sequence_length,
            Dense(num_units, name="memory_layer", use_bias=False, dtype=dtype),
            score_mask_value, name)
        self._num_units = num_units
        self._normalize = normalize
        self._name = name

    def __call__(self, query: Any, state: Any) -> tuple[Tensor, Tensor]:
        """``(alignments, next_state)`` for `query` (``[batch, query_depth]``)."""
        query = convert_to_tensor(query, name="query")
        with variable_scope(None, "bahdanau_attention", [query]):
            processed = self._query_layer(query) if self._query_layer is not None else query
            score = _bahdanau_score(processed, self._keys, self._normalize)
        alignments = self._probability_fn(score, state)
        return alignments, alignments


def _bahdanau_score(processed_query: Tensor, keys: Tensor, normalize: bool) -> Tensor:
    dtype = processed_query.dtype
    num_units = keys.shape[2]
    if num_units is None:
        raise ValueError(f"The keys' last dimension must be known, saw shape: {keys.shape}")
    query = array_ops.expand_dims(processed_query, 1)
    v = get_variable("attention_v", [num_units], dtype=dtype)
    if not normalize:
        return math_ops.reduce_sum(v * math_ops.tanh(keys + query), [2])
    g = get_variable("attention_g", shape=(), dtype=dtype,
                     initializer=init_ops.constant_initializer(math.sqrt(1.0 / num_units)))
    b = get_variable("attention_b", [num_units], dtype=dtype,
                     initializer=init_ops.zeros_initializer())
    normed_v = g * v * math_ops.rsqrt(math_ops.reduce_sum(math_ops.square(v)))
    return math_ops.reduce_sum(normed_v * math_ops.tanh(keys + query + b), [2])


class AttentionWrapperState(collections.namedtuple("AttentionWrapperState", (
        "cell_state", "attention", "time", "alignments", "alignment_history",
        "attention_state"))):
    """The state of an `AttentionWrapper`: the wrapped cell's state, the last attention, the
    step, the last alignments, their history (a TensorArray, or ``()``) and each mechanism's
    state."""

    __slots__ = ()

    def clone(self, **kwargs: Any) -> AttentionWrapperState:
        """This state with the given fields replaced; a replacing tensor takes the static
        shape of the one it replaces (TF's ``with_same_shape``, so an incompatible one raises
        `ValueError`)."""
        new = self._replace(**kwargs)
        old_leaves, new_leaves = _flatten(self), _flatten(new)
        if len(old_leaves) == len(new_leaves):
            for old, value in zip(old_leaves, new_leaves):
                if isinstance(old, Tensor) and isinstance(value, Tensor):
                    value.set_shape(old.shape)
        return new


def _output_size(layer: Any) -> int:
    if hasattr(layer, "compute_output_shape"):
        return TensorShape(layer.compute_output_shape(TensorShape([None, None])))[-1]
    return layer.units


class AttentionWrapper(RNNCell):
    """A cell with attention over one or several mechanisms; see the module docstring."""

    def __init__(self, cell: RNNCell, attention_mechanism: Any,
                 attention_layer_size: Any = None, alignment_history: bool = False,
                 cell_input_fn: Callable[[Any, Any], Any] | None = None,
                 output_attention: bool = True, initial_cell_state: Any = None,
                 name: str | None = None, attention_layer: Any = None,
                 attention_fn: Callable[..., Any] | None = None) -> None:
        super().__init__(name=name)
        self._is_multi = isinstance(attention_mechanism, (list, tuple))
        mechanisms = list(attention_mechanism) if self._is_multi else [attention_mechanism]
        for m in mechanisms:
            if not isinstance(m, AttentionMechanism):
                raise TypeError("attention_mechanism must contain only instances of "
                                f"AttentionMechanism, saw type: {type(m).__name__}")
        if cell_input_fn is not None and not callable(cell_input_fn):
            raise TypeError(f"cell_input_fn must be callable, saw type: {type(cell_input_fn)}")
        if attention_layer_size is not None and attention_layer is not None:
            raise ValueError("Only one of attention_layer_size and attention_layer should be "
                             "set")
        self._layers: list[Any] | None = None
        if attention_layer_size is not None:
            sizes = list(attention_layer_size) if isinstance(attention_layer_size,
                                                             (list, tuple)) \
                else [attention_layer_size]
            if len(sizes) != len(mechanisms):
                raise ValueError(
                    "If provided, attention_layer_size must contain exactly one integer per "
                    f"attention_mechanism, saw: {len(sizes)} vs {len(mechanisms)}")
            self._layers = [Dense(size, name="attention_layer", use_bias=False, dtype=m.dtype)
                            for size, m in zip(sizes, mechanisms)]
            self._attention_layer_size = sum(sizes)
        elif attention_layer is not None:
            self._layers = list(attention_layer) if isinstance(attention_layer,
                                                               (list, tuple)) \
                else [attention_layer]
            if len(self._layers) != len(mechanisms):
                raise ValueError(
                    "If provided, attention_layer must contain exactly one layer per "
                    f"attention_mechanism, saw: {len(self._layers)} vs {len(mechanisms)}")
            self._attention_layer_size = sum(_output_size(layer) for layer in self._layers)
        else:
            self._attention_layer_size = sum(m.values.shape[-1] for m in mechanisms)
        self._cell = cell
        self._mechanisms = mechanisms
        self._cell_input_fn = cell_input_fn or (
            lambda inputs, attention: array_ops.concat([inputs, attention], -1))
        self._output_attention = output_attention
        self._alignment_history = alignment_history
        self._attention_fn = attention_fn or _compute_attention
        self._initial_cell_state = initial_cell_state

    def _item_or_tuple(self, seq: Any) -> Any:
        items = tuple(seq)
        return items if self._is_multi else items[0]

    @property
    def output_size(self) -> Any:
        return self._attention_layer_size if self._output_attention else self._cell.output_size

    @property
    def state_size(self) -> AttentionWrapperState:
        return AttentionWrapperState(
            cell_state=self._cell.state_size, time=TensorShape([]),
            attention=self._attention_layer_size,
            alignments=self._item_or_tuple(m.alignments_size for m in self._mechanisms),
            attention_state=self._item_or_tuple(m.state_size for m in self._mechanisms),
            alignment_history=self._item_or_tuple(
                m.alignments_size if self._alignment_history else () for m in self._mechanisms))

    def zero_state(self, batch_size: Any, dtype: Any) -> AttentionWrapperState:
        """The initial state: `initial_cell_state` (or the cell's zero state), zero
        attention and alignments, time 0 and empty alignment histories."""
        with name_scope(f"{type(self).__name__}ZeroState", values=[batch_size]):
            cell_state = self._initial_cell_state if self._initial_cell_state is not None \
                else self._cell.zero_state(batch_size, dtype)
            cell_state = _pack_as(cell_state, [identity(s, name="checked_cell_state")
                                               for s in _flatten(cell_state)])
            alignments = [m.initial_alignments(batch_size, dtype) for m in self._mechanisms]
            return AttentionWrapperState(
                cell_state=cell_state, time=array_ops.zeros([], dtype=dtypes.int32),
                attention=_zeros(self._attention_layer_size, batch_size, dtypes.as_dtype(dtype)),
                alignments=self._item_or_tuple(alignments),
                attention_state=self._item_or_tuple(
                    m.initial_state(batch_size, dtype) for m in self._mechanisms),
                alignment_history=self._item_or_tuple(
                    TensorArray(dtype, size=0, dynamic_size=True, element_shape=a.shape)
                    if self._alignment_history else () for a in alignments))

    def call(self, inputs: Any, state: Any) -> tuple[Any, AttentionWrapperState]:
        if not isinstance(state, AttentionWrapperState):
            raise TypeError("Expected state to be instance of AttentionWrapperState. Received "
                            f"type {type(state)} instead.")
        cell_inputs = self._cell_input_fn(inputs, state.attention)
        cell_output, next_cell_state = self._cell(cell_inputs, state.cell_state)
        if self._is_multi:
            previous_states, previous_histories = state.attention_state, state.alignment_history
        else:
            previous_states, previous_histories = [state.attention_state], \
                [state.alignment_history]
        attentions, all_alignments, states, histories = [], [], [], []
        for i, mechanism in enumerate(self._mechanisms):
            attention, alignments, next_state = self._attention_fn(
                mechanism, cell_output, previous_states[i],
                self._layers[i] if self._layers else None)
            history = previous_histories[i].write(state.time, alignments) \
                if self._alignment_history else ()
            attentions.append(attention)
            all_alignments.append(alignments)
            states.append(next_state)
            histories.append(history)
        attention = array_ops.concat(attentions, 1)
        next_state = AttentionWrapperState(
            time=state.time + 1, cell_state=next_cell_state, attention=attention,
            attention_state=self._item_or_tuple(states),
            alignments=self._item_or_tuple(all_alignments),
            alignment_history=self._item_or_tuple(histories))
        return (attention if self._output_attention else cell_output), next_state


def _compute_attention(mechanism: Any, cell_output: Tensor, attention_state: Any,
                       attention_layer: Any) -> tuple[Tensor, Tensor, Any]:
    """``(attention, alignments, next_attention_state)`` for one mechanism."""
    alignments, next_state = mechanism(cell_output, state=attention_state)
    context = math_ops.matmul(array_ops.expand_dims(alignments, 1), mechanism.values)
    context = array_ops.squeeze(context, [1])
    if attention_layer is None:
        return context, alignments, next_state
    return attention_layer(array_ops.concat([cell_output, context], 1)), alignments, next_state
