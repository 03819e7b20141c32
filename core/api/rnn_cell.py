"""``tw.nn.rnn_cell``: recurrent cells, as ``tf.compat.v1.nn.rnn_cell``.

Contract: a cell maps ``(inputs, state)`` to ``(output, new_state)`` for one time step; its
variables are created by `get_variable` on the first call, under a variable scope named after
the cell (``basic_lstm_cell``, made unique within the enclosing scope, or the `scope` argument
of that first call) and reused by every later call, so a cell called inside a loop body, or once
per time step, shares one set of weights. Variable names, shapes, initializers and the gate
equations are TF1's (``kernel`` over ``concat([inputs, h])``, ``bias`` zeros; GRU ``gates/*``
and ``candidate/*`` with gate bias ones; LSTM gates ordered i, j, f, o with `forget_bias` added
to f). Wrappers (`MultiRNNCell`, `DropoutWrapper`, `ResidualWrapper`) call their cells inside
their own scopes as TF does (``multi_rnn_cell/cell_0/...``; the dropout and residual wrappers add
none). A cell's `reuse` argument is accepted and has no effect: a cell always reuses its own
variables after its first call.
"""

from __future__ import annotations

import collections
import numbers
import zlib
from collections.abc import Callable
from typing import Any

from tensorweave.api import array_ops, init_ops, math_ops, nn_ops
from tensorweave.api.base_layer import Layer
from tensorweave.api.control_flow_ops import _flatten, _pack_as
from tensorweave.api.scopes import name_scope
from tensorweave.api.variable_scope import variable_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor, constant_value
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "BasicLSTMCell", "BasicRNNCell", "DropoutWrapper", "GRUCell", "LSTMCell", "LSTMStateTuple",
    "MultiRNNCell", "RNNCell", "ResidualWrapper",
]


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """An LSTM's state: the cell state `c` and the output `h`."""

    __slots__ = ()

    @property
    def dtype(self) -> dtypes.DType:
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


def _input_depth(inputs_shape: Any) -> int:
    depth = TensorShape(inputs_shape)
    if depth.ndims is None or depth[-1] is None:
        raise ValueError(f"Expected inputs.shape[-1] to be known, saw shape: {depth}")
    return depth[-1]


class RNNCell(Layer):
    """The base class, a `Layer`: subclasses define `state_size`, `output_size` and
    ``call(inputs, state)``; `build(inputs_shape)` creates their variables on the first call."""

    @property
    def state_size(self) -> Any:
        """An int, a TensorShape or a nested structure of them, per batch element."""
        raise NotImplementedError(f"{type(self).__name__} must define state_size")

    @property
    def output_size(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define output_size")

    def call(self, inputs: Any, state: Any) -> tuple[Any, Any]:
        raise NotImplementedError(f"{type(self).__name__} must define call")

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Any, Any]:
        """``(output, new_state)`` for one step; variables are created on the first call."""
        with self._scoped(scope, inputs):
            return self._call_built(inputs, state)

    def _call_built(self, inputs: Any, state: Any) -> tuple[Any, Any]:
        if not self.built:
            self.build(convert_to_tensor(_flatten(inputs)[0]).shape)
            self.built = True
        return self.call(inputs, state)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        """Zeros shaped like `state_size`, with a leading `batch_size` dimension."""
        with name_scope(f"{type(self).__name__}ZeroState", values=[batch_size]):
            return _zeros(self.state_size, batch_size, dtypes.as_dtype(dtype))


def _zeros(size: Any, batch_size: Any, dtype: dtypes.DType) -> Any:
    def one(s: Any) -> Tensor:
        dims = TensorShape(s).as_list() if isinstance(s, TensorShape) else [s]
        static = constant_value(batch_size) if isinstance(batch_size, Tensor) else batch_size
        out = array_ops.zeros(array_ops.stack([batch_size, *dims]), dtype=dtype)
        out.set_shape([None if static is None else int(static), *dims])
        return out

    return _pack_as(size, [one(s) for s in _flatten(size)])


def _linear(args: list[Tensor], kernel: Any, bias: Any) -> Tensor:
    x = args[0] if len(args) == 1 else array_ops.concat(args, 1)
    return nn_ops.bias_add(math_ops.matmul(x, kernel), bias)


class BasicRNNCell(RNNCell):
    """``output = new_state = activation(W [inputs, state] + b)``."""

    def __init__(self, num_units: int, activation: Callable[..., Any] | None = None,
                 reuse: Any = None, name: str | None = None, dtype: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._activation = activation or nn_ops.tanh

    @property
    def state_size(self) -> int:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, inputs_shape: Any) -> None:
        input_depth = _input_depth(inputs_shape)
        self._kernel = self.add_variable("kernel", [input_depth + self._num_units,
                                                    self._num_units])
        self._bias = self.add_variable("bias", [self._num_units],
                                       initializer=init_ops.zeros_initializer())

    def call(self, inputs: Any, state: Any) -> tuple[Tensor, Tensor]:
        output = self._activation(_linear([inputs, state], self._kernel, self._bias))
        return output, output


class GRUCell(RNNCell):
    """Gated recurrent unit (Cho et al. 2014): ``r, u = sigmoid(W_g [x, h] + b_g)``,
    ``c = activation(W_c [x, r * h] + b_c)``, ``h' = u * h + (1 - u) * c``."""

    def __init__(self, num_units: int, activation: Callable[..., Any] | None = None,
                 reuse: Any = None, kernel_initializer: Any = None,
                 bias_initializer: Any = None, name: str | None = None, dtype: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._activation = activation or nn_ops.tanh
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self) -> int:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, inputs_shape: Any) -> None:
        input_depth, n = _input_depth(inputs_shape), self._num_units
        self._gate_kernel = self.add_variable("gates/kernel", [input_depth + n, 2 * n],
                                              initializer=self._kernel_initializer)
        self._gate_bias = self.add_variable(
            "gates/bias", [2 * n], initializer=self._bias_initializer
            or init_ops.constant_initializer(1.0))
        self._candidate_kernel = self.add_variable("candidate/kernel", [input_depth + n, n],
                                                   initializer=self._kernel_initializer)
        self._candidate_bias = self.add_variable(
            "candidate/bias", [n], initializer=self._bias_initializer
            or init_ops.zeros_initializer())

    def call(self, inputs: Any, state: Any) -> tuple[Tensor, Tensor]:
        value = nn_ops.sigmoid(_linear([inputs, state], self._gate_kernel, self._gate_bias))
        r, u = array_ops.split(value, 2, axis=1)
        candidate = _linear([inputs, r * state], self._candidate_kernel, self._candidate_bias)
        c = self._activation(candidate)
        new_h = u * state + (1 - u) * c
        return new_h, new_h


def _lstm_state(state: Any, num_units: int, state_is_tuple: bool) -> tuple[Any, Any]:
    if state_is_tuple:
        return state
    return array_ops.split(state, [num_units, -1], axis=1)


class BasicLSTMCell(RNNCell):
    """LSTM without peepholes or projection: gates ``i, j, f, o`` from
    ``W [inputs, h] + b``; ``c' = c * sigmoid(f + forget_bias) + sigmoid(i) * activation(j)``,
    ``h' = activation(c') * sigmoid(o)``."""

    def __init__(self, num_units: int, forget_bias: float = 1.0, state_is_tuple: bool = True,
                 activation: Callable[..., Any] | None = None, reuse: Any = None,
                 name: str | None = None, dtype: Any = None, **kwargs: Any) -> None:
        super().__init__(name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or nn_ops.tanh

    @property
    def state_size(self) -> Any:
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, inputs_shape: Any) -> None:
        input_depth, n = _input_depth(inputs_shape), self._num_units
        self._kernel = self.add_variable("kernel", [input_depth + n, 4 * n])
        self._bias = self.add_variable("bias", [4 * n], initializer=init_ops.zeros_initializer())

    def call(self, inputs: Any, state: Any) -> tuple[Tensor, Any]:
        c, h = _lstm_state(state, self._num_units, self._state_is_tuple)
        i, j, f, o = array_ops.split(_linear([inputs, h], self._kernel, self._bias), 4, axis=1)
        forget = nn_ops.sigmoid(f + float(self._forget_bias))
        new_c = c * forget + nn_ops.sigmoid(i) * self._activation(j)
        new_h = self._activation(new_c) * nn_ops.sigmoid(o)
        if self._state_is_tuple:
            return new_h, LSTMStateTuple(new_c, new_h)
        return new_h, array_ops.concat([new_c, new_h], 1)


class LSTMCell(RNNCell):
    """LSTM with optional peepholes (``w_f_diag``, ``w_i_diag``, ``w_o_diag``), cell clipping
    and an output projection (``projection/kernel``, `num_proj` units, clipped to `proj_clip`).
    `num_unit_shards` and `num_proj_shards` (deprecated in TF) must be None."""

    def __init__(self, num_units: int, use_peepholes: bool = False,
                 cell_clip: float | None = None, initializer: Any = None,
                 num_proj: int | None = None, proj_clip: float | None = None,
                 num_unit_shards: Any = None, num_proj_shards: Any = None,
                 forget_bias: float = 1.0, state_is_tuple: bool = True,
                 activation: Callable[..., Any] | None = None, reuse: Any = None,
                 name: str | None = None, dtype: Any = None, **kwargs: Any) -> None:
        super().__init__(name=name, dtype=dtype, **kwargs)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise ValueError("num_unit_shards and num_proj_shards are not supported by "
                             "tensorweave (they are deprecated in TF)")
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or nn_ops.tanh

    @property
    def state_size(self) -> Any:
        n, m = self._num_units, self._num_proj or self._num_units
        return LSTMStateTuple(n, m) if self._state_is_tuple else n + m

    @property
    def output_size(self) -> int:
        return self._num_proj or self._num_units

    def build(self, inputs_shape: Any) -> None:
        input_depth = _input_depth(inputs_shape)
        n, m = self._num_units, self._num_proj or self._num_units
        self._kernel = self.add_variable("kernel", [input_depth + m, 4 * n],
                                         initializer=self._initializer)
        self._bias = self.add_variable("bias", [4 * n], initializer=init_ops.zeros_initializer())
        if self._use_peepholes:
            self._w_f_diag = self.add_variable("w_f_diag", [n], initializer=self._initializer)
            self._w_i_diag = self.add_variable("w_i_diag", [n], initializer=self._initializer)
            self._w_o_diag = self.add_variable("w_o_diag", [n], initializer=self._initializer)
        if self._num_proj is not None:
            self._proj_kernel = self.add_variable("projection/kernel", [n, self._num_proj],
                                                  initializer=self._initializer)

    def call(self, inputs: Any, state: Any) -> tuple[Tensor, Any]:
        c_prev, m_prev = _lstm_state(state, self._num_units, self._state_is_tuple)
        i, j, f, o = array_ops.split(_linear([inputs, m_prev], self._kernel, self._bias), 4,
                                     axis=1)
        fb = float(self._forget_bias)
        if self._use_peepholes:
            c = (nn_ops.sigmoid(f + fb + self._w_f_diag * c_prev) * c_prev
                 + nn_ops.sigmoid(i + self._w_i_diag * c_prev) * self._activation(j))
        else:
            c = nn_ops.sigmoid(f + fb) * c_prev + nn_ops.sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = math_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = nn_ops.sigmoid(o + self._w_o_diag * c) * self._activation(c)
        else:
            m = nn_ops.sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = math_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        if self._state_is_tuple:
            return m, LSTMStateTuple(c, m)
        return m, array_ops.concat([c, m], 1)


class MultiRNNCell(RNNCell):
    """Cells stacked: each one's output is the next one's input; cell ``i`` runs in the
    variable scope ``cell_i``."""

    def __init__(self, cells: Any, state_is_tuple: bool = True) -> None:
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not isinstance(cells, (list, tuple)):
            raise TypeError(f"cells must be a list or tuple, but saw: {cells}.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple

    @property
    def state_size(self) -> Any:
        sizes = tuple(cell.state_size for cell in self._cells)
        return sizes if self._state_is_tuple else sum(sizes)

    @property
    def output_size(self) -> Any:
        return self._cells[-1].output_size

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with name_scope(f"{type(self).__name__}ZeroState", values=[batch_size]):
            if self._state_is_tuple:
                return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
            return _zeros(self.state_size, batch_size, dtypes.as_dtype(dtype))

    def _call_built(self, inputs: Any, state: Any) -> tuple[Any, Any]:
        output, new_states, start = inputs, [], 0
        for i, cell in enumerate(self._cells):
            with variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    cur_state = state[i]
                else:
                    size = cell.state_size
                    cur_state = array_ops.slice(state, [0, start], [-1, size])
                    start += size
                output, new_state = cell(output, cur_state)
            new_states.append(new_state)
        if self._state_is_tuple:
            return output, tuple(new_states)
        return output, array_ops.concat(new_states, 1)


class _CellHolder(RNNCell):
    """A cell around another, `_cell`, with that cell's sizes and zero state; `_not_a_cell` is
    the TypeError a subclass raises for a `cell` that is no RNNCell."""

    _not_a_cell = "The parameter cell is not a RNNCell: {cell!r}"

    def __init__(self, cell: RNNCell) -> None:
        super().__init__()
        if not isinstance(cell, RNNCell):
            raise TypeError(self._not_a_cell.format(cell=cell))
        self._cell = cell

    @property
    def state_size(self) -> Any:
        return self._cell.state_size

    @property
    def output_size(self) -> Any:
        return self._cell.output_size

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with name_scope(f"{type(self).__name__}ZeroState", values=[batch_size]):
            return self._cell.zero_state(batch_size, dtype)


class _Wrapper(_CellHolder):
    """A cell around another, calling it in the caller's variable scope."""

    @property
    def wrapped_cell(self) -> RNNCell:
        return self._cell

    @property
    def trainable_weights(self) -> list[Any]:
        return self._cell.trainable_weights

    @property
    def non_trainable_weights(self) -> list[Any]:
        return self._cell.non_trainable_weights


def _keep_prob(value: Any, what: str) -> Any:
    if isinstance(value, numbers.Real) and not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"Parameter {what} must be between 0 and 1: {value}")
    return value


class DropoutWrapper(_Wrapper):
    """Dropout on the cell's inputs, outputs and new state (each kept with its probability;
    a keep probability of exactly 1.0 adds no op). `variational_recurrent` (one mask per
    sequence) is not supported. By default the state's dropout skips an LSTM's `c`, as TF's
    default ``dropout_state_filter_visitor``."""

    def __init__(self, cell: RNNCell, input_keep_prob: Any = 1.0, output_keep_prob: Any = 1.0,
                 state_keep_prob: Any = 1.0, variational_recurrent: bool = False,
                 input_size: Any = None, dtype: Any = None, seed: int | None = None,
                 dropout_state_filter_visitor: Callable[[Any], bool] | None = None) -> None:
        super().__init__(cell)
        if variational_recurrent:
            raise ValueError("DropoutWrapper(variational_recurrent=True) is not supported by "
                             "tensorweave")
        self._input_keep_prob = _keep_prob(input_keep_prob, "input_keep_prob")
        self._output_keep_prob = _keep_prob(output_keep_prob, "output_keep_prob")
        self._state_keep_prob = _keep_prob(state_keep_prob, "state_keep_prob")
        self._seed = seed
        self._state_filter = dropout_state_filter_visitor

    def _dropout(self, values: Any, keep_prob: Any, salt: str, keep: Any = None) -> Any:
        if isinstance(keep_prob, numbers.Real) and float(keep_prob) == 1.0:
            return values
        flat = _flatten(values)
        mask = _flatten(keep) if keep is not None else [True] * len(flat)
        # each dropout gets its own seed derived from the wrapper's, deterministically
        seed = None if self._seed is None else (self._seed + zlib.crc32(salt.encode())) % 2**31
        return _pack_as(values, [nn_ops.dropout(v, keep_prob=keep_prob, seed=seed) if m else v
                                 for v, m in zip(flat, mask)])

    def _state_mask(self, state: Any) -> Any:
        if self._state_filter is not None:
            return _pack_as(state, [bool(self._state_filter(s)) for s in _flatten(state)])

        def visit(s: Any) -> Any:
            if isinstance(s, LSTMStateTuple):
                return LSTMStateTuple(False, True)
            if isinstance(s, (list, tuple)):
                return type(s)(visit(x) for x in s)
            return True

        return visit(state)

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Any, Any]:
        inputs = self._dropout(inputs, self._input_keep_prob, "input")
        output, new_state = self._cell(inputs, state, scope=scope)
        new_state = self._dropout(new_state, self._state_keep_prob, "state",
                                  self._state_mask(new_state))
        return self._dropout(output, self._output_keep_prob, "output"), new_state


class ResidualWrapper(_Wrapper):
    """The cell's output plus its input (or ``residual_fn(inputs, outputs)``)."""

    def __init__(self, cell: RNNCell, residual_fn: Callable[[Any, Any], Any] | None = None
                 ) -> None:
        super().__init__(cell)
        self._residual_fn = residual_fn

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Any, Any]:
        output, new_state = self._cell(inputs, state, scope=scope)
        if self._residual_fn is not None:
            return self._residual_fn(inputs, output), new_state
        return _pack_as(inputs, [x + y for x, y in zip(_flatten(inputs), _flatten(output))]), \
            new_state
