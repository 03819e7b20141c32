"""``tf.contrib.rnn``: TF1's contrib names for the recurrent cells and the static and stacked
bidirectional RNNs.

Contract: the cells, wrappers and `static_rnn` are ``tw.nn.rnn_cell``'s and ``tw.nn``'s own
objects. `LSTMBlockCell` is `LSTMCell` under TF's block-cell signature (``use_peephole``, no
projection, state always a tuple, scope ``lstm_cell``): the same gates and variables
(``kernel``, ``bias``, peepholes ``w_i_diag``/``w_f_diag``/``w_o_diag``), a non-positive
`cell_clip` meaning no clipping as in TF's kernel. `static_bidirectional_rnn` runs `static_rnn`
forward under ``<scope or "bidirectional_rnn">/fw`` and over the reversed inputs (each sequence
within its length) under ``.../bw``, and returns ``(outputs, state_fw, state_bw)`` where each
step's output is ``concat([fw, bw], 1)``. The stacked variants feed each layer's concatenated
outputs to the next, layer ``i`` under ``<scope or "stack_bidirectional_rnn">/cell_i`` (the
dynamic one adds TF's ``bidirectional_rnn/`` below it, the static one does not), and return
``(outputs, states_fw, states_bw)`` with one state per layer.

The contrib-only cells follow TF 1.15's maths and variable names: `GRUBlockCell` is `GRUCell`
with TF's odd block names (gate kernel ``w_c``, gate bias ``b_ru``, candidate kernel ``w_ru``,
candidate bias ``b_c``), `GRUBlockCellV2` `GRUCell`'s ``gates/*`` and ``candidate/*``, both in
scope ``gru_cell``. `LayerNormBasicLSTMCell` normalizes each gate (``input``, ``transform``,
``forget``, ``output``) and the new cell state (``state``) over the units, each with its own
``gamma``/``beta``, and drops out the candidate ``tanh(j)``; with layer norm it has no bias.
`LSTMBlockFusedCell` runs a whole time-major sequence (``[time, batch, depth]``) with
`LSTMBlockCell`'s maths in scope ``lstm_fused_cell``. `UGRNNCell` gates a candidate into the
state with one ``kernel`` over ``[inputs, state]``. The projection and embedding wrappers own a
scope (``output_projection_wrapper``, ...) in which they create ``kernel``/``bias`` or
``embedding`` and call their cell; `HighwayWrapper` adds its ``carry_w``/``carry_b`` (and
``transform_*``) in the caller's scope, as TF's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from tensorweave.api import array_ops, init_ops, math_ops, nn_ops
from tensorweave.api.control_flow_ops import _flatten, _pack_as
from tensorweave.api.rnn import (
    _check_cell,
    _reverse,
    _sequence_length,
    bidirectional_dynamic_rnn,
    static_rnn,
)
from tensorweave.api.rnn_cell import (
    BasicLSTMCell,
    BasicRNNCell,
    DropoutWrapper,
    GRUCell,
    LSTMCell,
    LSTMStateTuple,
    MultiRNNCell,
    ResidualWrapper,
    RNNCell,
    _CellHolder,
    _input_depth,
    _Wrapper,
)
from tensorweave.api.variable_scope import get_variable, get_variable_scope, variable_scope
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor

__all__ = [
    "BasicLSTMCell", "BasicRNNCell", "DropoutWrapper", "EmbeddingWrapper", "GRUBlockCell",
    "GRUBlockCellV2", "GRUCell", "HighwayWrapper", "InputProjectionWrapper", "LSTMBlockCell",
    "LSTMBlockFusedCell", "LSTMCell", "LSTMStateTuple", "LayerNormBasicLSTMCell", "MultiRNNCell",
    "OutputProjectionWrapper", "RNNCell", "ResidualWrapper", "UGRNNCell",
    "stack_bidirectional_dynamic_rnn", "stack_bidirectional_rnn", "static_bidirectional_rnn",
    "static_rnn",
]


class LSTMBlockCell(LSTMCell):
    """TF's fused-kernel LSTM cell: `LSTMCell`'s maths and variables, TF's block signature."""

    def __init__(self, num_units: int, forget_bias: float = 1.0, cell_clip: float | None = None,
                 use_peephole: bool = False, dtype: Any = None, reuse: Any = None,
                 name: str = "lstm_cell") -> None:
        super().__init__(num_units, use_peepholes=use_peephole,
                         cell_clip=cell_clip if cell_clip is not None and cell_clip > 0 else None,
                         forget_bias=forget_bias, reuse=reuse, name=name, dtype=dtype)


def _reverse_steps(steps: list[Any], lengths: Any) -> list[Any]:
    """A list of per-step values reversed in time; with `lengths`, each sequence only within its
    first ``length`` steps (the steps are stacked time-major and reversed as one tensor)."""
    if lengths is None:
        return list(reversed(steps))
    flat_steps = [[convert_to_tensor(x) for x in _flatten(step)] for step in steps]
    columns = []
    for i in range(len(flat_steps[0])):
        stacked = array_ops.stack([step[i] for step in flat_steps])
        columns.append(array_ops.unstack(_reverse(stacked, lengths), num=len(steps)))
    return [_pack_as(steps[t], [column[t] for column in columns]) for t in range(len(steps))]


def static_bidirectional_rnn(cell_fw: Any, cell_bw: Any, inputs: Any,
                             initial_state_fw: Any = None, initial_state_bw: Any = None,
                             dtype: Any = None, sequence_length: Any = None,
                             scope: Any = None) -> tuple[list[Any], Any, Any]:
    """``(outputs, output_state_fw, output_state_bw)``; see the module docstring."""
    _check_cell("cell_fw", cell_fw)
    _check_cell("cell_bw", cell_bw)
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("inputs must be a list")
    if not inputs:
        raise ValueError("inputs must not be empty")
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype,
                                             sequence_length, scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            lengths = _sequence_length(sequence_length)
            reversed_out, state_bw = static_rnn(cell_bw, _reverse_steps(list(inputs), lengths),
                                                initial_state_bw, dtype, sequence_length,
                                                scope=bw_scope)
    output_bw = _reverse_steps(reversed_out, lengths)
    outputs = [_pack_as(fw, [array_ops.concat([f, b], 1)
                             for f, b in zip(_flatten(fw), _flatten(bw))])
               for fw, bw in zip(output_fw, output_bw)]
    return outputs, state_fw, state_bw


def _check_stack(cells_fw: Any, cells_bw: Any, initial_states_fw: Any,
                 initial_states_bw: Any) -> None:
    if not cells_fw:
        raise ValueError("Must specify at least one fw cell for BidirectionalRNN.")
    if not cells_bw:
        raise ValueError("Must specify at least one bw cell for BidirectionalRNN.")
    if not isinstance(cells_fw, list):
        raise ValueError("cells_fw must be a list of RNNCells (one per layer).")
    if not isinstance(cells_bw, list):
        raise ValueError("cells_bw must be a list of RNNCells (one per layer).")
    if len(cells_fw) != len(cells_bw):
        raise ValueError("Forward and Backward cells must have the same depth.")
    for states, side in ((initial_states_fw, "fw"), (initial_states_bw, "bw")):
        if states is not None and (not isinstance(states, list)
                                   or len(states) != len(cells_fw)):
            raise ValueError(f"initial_states_{side} must be a list of state tensors (one per "
                             "layer).")


def _layer_state(states: Any, i: int) -> Any:
    return states[i] if states else None


def stack_bidirectional_rnn(cells_fw: list[Any], cells_bw: list[Any], inputs: Any,
                            initial_states_fw: Any = None, initial_states_bw: Any = None,
                            dtype: Any = None, sequence_length: Any = None,
                            scope: Any = None) -> tuple[list[Any], tuple[Any, ...],
                                                        tuple[Any, ...]]:
    """Layers of `static_bidirectional_rnn`; see the module docstring."""
    _check_stack(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    states_fw, states_bw, layer = [], [], inputs
    with variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with variable_scope(f"cell_{i}") as cell_scope:
                layer, state_fw, state_bw = static_bidirectional_rnn(
                    cell_fw, cell_bw, layer, _layer_state(initial_states_fw, i),
                    _layer_state(initial_states_bw, i), dtype, sequence_length,
                    scope=cell_scope)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return layer, tuple(states_fw), tuple(states_bw)


def stack_bidirectional_dynamic_rnn(cells_fw: list[Any], cells_bw: list[Any], inputs: Any,
                                    initial_states_fw: Any = None, initial_states_bw: Any = None,
                                    dtype: Any = None, sequence_length: Any = None,
                                    parallel_iterations: int | None = None,
                                    time_major: bool = False, scope: Any = None,
                                    swap_memory: bool = False) -> tuple[Any, tuple[Any, ...],
                                                                        tuple[Any, ...]]:
    """Layers of `bidirectional_dynamic_rnn`, each layer's two outputs concatenated on the last
    axis; see the module docstring."""
    _check_stack(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    states_fw, states_bw, layer = [], [], inputs
    with variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with variable_scope(f"cell_{i}"):
                outputs, (state_fw, state_bw) = bidirectional_dynamic_rnn(
                    cell_fw, cell_bw, layer, sequence_length=sequence_length,
                    initial_state_fw=_layer_state(initial_states_fw, i),
                    initial_state_bw=_layer_state(initial_states_bw, i), dtype=dtype,
                    parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                    time_major=time_major)
                layer = array_ops.concat(outputs, 2)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return layer, tuple(states_fw), tuple(states_bw)


def linear(args: Any, output_size: int, bias: bool, bias_initializer: Any = None,
           kernel_initializer: Any = None) -> Tensor:
    """TF's ``rnn_cell_impl._linear``: ``concat(args, 1) @ kernel (+ bias)``, with ``kernel``
    (``[total depth, output_size]``) and ``bias`` (zeros by default) got in the current
    variable scope."""
    values = list(args) if isinstance(args, (list, tuple)) else [args]
    if not values:
        raise ValueError("`args` must be specified")
    values = [convert_to_tensor(v) for v in values]
    total = 0
    for v in values:
        if v.shape.ndims != 2:
            raise ValueError(f"linear is expecting 2D arguments: {[x.shape for x in values]}")
        if v.shape[1] is None:
            raise ValueError(f"linear expects shape[1] to be provided for shape {v.shape}, "
                             f"but saw {v.shape[1]}")
        total += v.shape[1]
    dtype = values[0].dtype
    kernel = get_variable("kernel", [total, output_size], dtype=dtype,
                          initializer=kernel_initializer)
    x = values[0] if len(values) == 1 else array_ops.concat(values, 1)
    out = math_ops.matmul(x, kernel)
    if not bias:
        return out
    biases = get_variable("bias", [output_size], dtype=dtype,
                          initializer=bias_initializer or init_ops.zeros_initializer())
    return nn_ops.bias_add(out, biases)


class GRUBlockCell(GRUCell):
    """TF's fused-kernel GRU: `GRUCell`'s maths under the block op's variable names."""

    _names = ("w_c", "b_ru", "w_ru", "b_c")

    def __init__(self, num_units: int | None = None, cell_size: int | None = None,
                 reuse: Any = None, name: str = "gru_cell") -> None:
        if (cell_size is None) == (num_units is None):
            raise ValueError("Exactly one of num_units or cell_size must be provided.")
        super().__init__(num_units if num_units is not None else cell_size, reuse=reuse,
                         name=name)

    def build(self, inputs_shape: Any) -> None:
        input_depth, n = _input_depth(inputs_shape), self._num_units
        gate_w, gate_b, cand_w, cand_b = self._names
        self._gate_kernel = self.add_variable(gate_w, [input_depth + n, 2 * n])
        self._gate_bias = self.add_variable(gate_b, [2 * n],
                                            initializer=init_ops.constant_initializer(1.0))
        self._candidate_kernel = self.add_variable(cand_w, [input_depth + n, n])
        self._candidate_bias = self.add_variable(cand_b, [n],
                                                 initializer=init_ops.zeros_initializer())


class GRUBlockCellV2(GRUBlockCell):
    """`GRUBlockCell` with `GRUCell`'s variable names (``gates/kernel``, ...)."""

    _names = ("gates/kernel", "gates/bias", "candidate/kernel", "candidate/bias")


def _keep_all(keep_prob: Any) -> bool:
    return isinstance(keep_prob, (int, float)) and float(keep_prob) >= 1.0


class LayerNormBasicLSTMCell(RNNCell):
    """`BasicLSTMCell` with layer normalization and recurrent dropout (Ba et al. 2016,
    Semeniuta et al. 2016); see the module docstring."""

    def __init__(self, num_units: int, forget_bias: float = 1.0, input_size: Any = None,
                 activation: Callable[..., Any] | None = None, layer_norm: bool = True,
                 norm_gain: float = 1.0, norm_shift: float = 0.0,
                 dropout_keep_prob: Any = 1.0, dropout_prob_seed: int | None = None,
                 reuse: Any = None) -> None:
        super().__init__()
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._activation = activation or nn_ops.tanh
        self._layer_norm = layer_norm
        self._norm_gain = norm_gain
        self._norm_shift = norm_shift
        self._keep_prob = dropout_keep_prob
        self._seed = dropout_prob_seed

    @property
    def state_size(self) -> LSTMStateTuple:
        return LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self) -> int:
        return self._num_units

    def _norm(self, x: Tensor, scope: str) -> Tensor:
        with variable_scope(scope):
            gamma = get_variable("gamma", x.shape[-1:], dtype=x.dtype,
                                 initializer=init_ops.constant_initializer(self._norm_gain))
            beta = get_variable("beta", x.shape[-1:], dtype=x.dtype,
                                initializer=init_ops.constant_initializer(self._norm_shift))
        # contrib.layers.layer_norm over the units, with its epsilon
        mean, variance = nn_ops.moments(x, [1], keep_dims=True)
        return nn_ops.batch_normalization(x, mean, variance, beta, gamma, 1e-12)

    def call(self, inputs: Any, state: Any) -> tuple[Tensor, LSTMStateTuple]:
        c, h = state
        args = array_ops.concat([inputs, h], 1)
        n = 4 * self._num_units
        out = math_ops.matmul(args, get_variable("kernel", [args.shape[-1], n],
                                                 dtype=args.dtype))
        if not self._layer_norm:
            out = nn_ops.bias_add(out, get_variable("bias", [n], dtype=args.dtype))
        i, j, f, o = array_ops.split(out, 4, axis=1)
        if self._layer_norm:
            i, j = self._norm(i, "input"), self._norm(j, "transform")
            f, o = self._norm(f, "forget"), self._norm(o, "output")
        g = self._activation(j)
        if not _keep_all(self._keep_prob):
            g = nn_ops.dropout(g, keep_prob=self._keep_prob, seed=self._seed)
        new_c = c * nn_ops.sigmoid(f + float(self._forget_bias)) + nn_ops.sigmoid(i) * g
        if self._layer_norm:
            new_c = self._norm(new_c, "state")
        new_h = self._activation(new_c) * nn_ops.sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)


class UGRNNCell(RNNCell):
    """Update-gate RNN (Collins et al. 2017): ``g, c = split(W [x, h] + b)``,
    ``h' = sigmoid(g + forget_bias) * h + (1 - sigmoid(...)) * activation(c)``."""

    def __init__(self, num_units: int, initializer: Any = None, forget_bias: float = 1.0,
                 activation: Callable[..., Any] | None = None, reuse: Any = None) -> None:
        super().__init__()
        self._num_units = num_units
        self._initializer = initializer
        self._forget_bias = forget_bias
        self._activation = activation or nn_ops.tanh

    @property
    def state_size(self) -> int:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units

    def call(self, inputs: Any, state: Any) -> tuple[Tensor, Tensor]:
        with variable_scope(get_variable_scope(), initializer=self._initializer):
            gates = linear([inputs, state], 2 * self._num_units, True)
        g_act, c_act = array_ops.split(gates, 2, axis=1)
        g = nn_ops.sigmoid(g_act + float(self._forget_bias))
        new_state = g * state + (1.0 - g) * self._activation(c_act)
        return new_state, new_state


class LSTMBlockFusedCell(LSTMBlockCell):
    """`LSTMBlockCell` over a whole time-major sequence: ``cell(inputs, initial_state=None,
    dtype=None, sequence_length=None)`` gives ``(outputs, LSTMStateTuple(c, h))``, outputs
    zero and the state held past each sequence's length."""

    def __init__(self, num_units: int, forget_bias: float = 1.0, cell_clip: float | None = None,
                 use_peephole: bool = False, reuse: Any = None, dtype: Any = None,
                 name: str = "lstm_fused_cell") -> None:
        super().__init__(num_units, forget_bias, cell_clip, use_peephole, dtype, reuse, name)

    def __call__(self, inputs: Any, initial_state: Any = None, dtype: Any = None,
                 sequence_length: Any = None, scope: Any = None) -> tuple[Tensor, Any]:
        from tensorweave.api.rnn import dynamic_rnn

        inputs = convert_to_tensor(inputs)
        if inputs.shape.ndims != 3:
            raise ValueError(f"LSTMBlockFusedCell expects inputs of rank 3 "
                             f"[time, batch, depth], saw {inputs.shape}")
        with self._scoped(scope, inputs):
            if not self.built:
                self.build(inputs.shape[1:])
                self.built = True
            step = _BuiltStep(self)
            return dynamic_rnn(step, inputs, sequence_length=sequence_length,
                               initial_state=initial_state, dtype=dtype or inputs.dtype,
                               time_major=True)


class _BuiltStep(_CellHolder):
    """One step of an already built cell, for a loop that must not open the cell's scope."""

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        # the cell's own zero state, under no name scope of this step's
        return self._cell.zero_state(batch_size, dtype)

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Any, Any]:
        return self._cell.call(inputs, state)


class _ScopedWrapper(_CellHolder):
    """A cell around another that owns a variable scope and calls the cell inside it."""

    _not_a_cell = "The parameter cell is not RNNCell."


class OutputProjectionWrapper(_ScopedWrapper):
    """The cell's output through ``output @ kernel + bias`` (then `activation`)."""

    def __init__(self, cell: Any, output_size: int, activation: Callable[..., Any] | None = None,
                 reuse: Any = None) -> None:
        super().__init__(cell)
        if output_size < 1:
            raise ValueError(f"Parameter output_size must be > 0: {output_size}.")
        self._output_size = output_size
        self._activation = activation

    @property
    def output_size(self) -> int:
        return self._output_size

    def call(self, inputs: Any, state: Any) -> tuple[Tensor, Any]:
        output, new_state = self._cell(inputs, state)
        projected = linear(output, self._output_size, True)
        if self._activation is not None:
            projected = self._activation(projected)
        return projected, new_state


class InputProjectionWrapper(_ScopedWrapper):
    """The cell run on ``inputs @ kernel + bias`` (then `activation`), `num_proj` wide."""

    def __init__(self, cell: Any, num_proj: int, activation: Callable[..., Any] | None = None,
                 input_size: Any = None, reuse: Any = None) -> None:
        super().__init__(cell)
        self._num_proj = num_proj
        self._activation = activation

    def call(self, inputs: Any, state: Any) -> tuple[Any, Any]:
        projected = linear(inputs, self._num_proj, True)
        if self._activation is not None:
            projected = self._activation(projected)
        return self._cell(projected, state)


class EmbeddingWrapper(_ScopedWrapper):
    """The cell run on the ``embedding`` rows of integer `inputs` (``[batch]`` or
    ``[batch, 1]``); the table, ``[embedding_classes, embedding_size]`` of the state's dtype,
    defaults to uniform in ``[-sqrt(3), sqrt(3)]`` (variance 1) unless the scope has an
    initializer."""

    def __init__(self, cell: Any, embedding_classes: int, embedding_size: int,
                 initializer: Any = None, reuse: Any = None) -> None:
        super().__init__(cell)
        if embedding_classes <= 0 or embedding_size <= 0:
            raise ValueError("Both embedding_classes and embedding_size must be > 0: "
                             f"{embedding_classes}, {embedding_size}.")
        self._embedding_classes = embedding_classes
        self._embedding_size = embedding_size
        self._initializer = initializer

    def call(self, inputs: Any, state: Any) -> tuple[Any, Any]:
        initializer = self._initializer or get_variable_scope().initializer or \
            init_ops.random_uniform_initializer(-math.sqrt(3), math.sqrt(3))
        embedding = get_variable("embedding", [self._embedding_classes, self._embedding_size],
                                 initializer=initializer,
                                 dtype=convert_to_tensor(_flatten(state)[0]).dtype)
        embedded = nn_ops.embedding_lookup(embedding, array_ops.reshape(inputs, [-1]))
        return self._cell(embedded, state)


class HighwayWrapper(_Wrapper):
    """Highway connection (Srivastava et al. 2015) around a cell whose output has its input's
    shape: ``carry = sigmoid(x @ carry_w + carry_b)``, ``out = x * carry + y * transform``
    where ``transform`` is ``1 - carry`` or its own gate."""

    def __init__(self, cell: RNNCell, couple_carry_transform_gates: bool = True,
                 carry_bias_init: float = 1.0) -> None:
        super().__init__(cell)
        self._couple = couple_carry_transform_gates
        self._carry_bias_init = carry_bias_init

    def _gate(self, x: Tensor, prefix: str, bias: float) -> Tensor:
        depth = x.shape.with_rank(2)[1]
        weights = get_variable(f"{prefix}_w", [depth, depth], dtype=x.dtype)
        biases = get_variable(f"{prefix}_b", [depth], dtype=x.dtype,
                              initializer=init_ops.constant_initializer(bias))
        return nn_ops.sigmoid(nn_ops.xw_plus_b(x, weights, biases))

    def _highway(self, x: Tensor, y: Tensor) -> Tensor:
        carry = self._gate(x, "carry", self._carry_bias_init)
        transform = 1 - carry if self._couple else \
            self._gate(x, "transform", -self._carry_bias_init)
        return x * carry + y * transform

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Any, Any]:
        outputs, new_state = self._cell(inputs, state, scope=scope)
        flat_in = [convert_to_tensor(x) for x in _flatten(inputs)]
        flat_out = _flatten(outputs)
        if len(flat_in) != len(flat_out):
            raise ValueError("HighwayWrapper: the cell's outputs must have its inputs' "
                             "structure")
        for x, y in zip(flat_in, flat_out):
            x.shape.assert_is_compatible_with(y.shape)
        return _pack_as(outputs, [self._highway(x, y) for x, y in zip(flat_in, flat_out)]), \
            new_state
