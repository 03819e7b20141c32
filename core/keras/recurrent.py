"""Keras's recurrent layers `SimpleRNN`, `GRU` and `LSTM` (TF 1.15's, not the CuDNN-backed v2
ones), run over time by ``tw.nn.dynamic_rnn``.

Contract: each layer owns Keras's three weights, ``kernel`` ``(input_dim, gates * units)``,
``recurrent_kernel`` ``(units, gates * units)`` (orthogonal by default) and ``bias``
``(gates * units)``, with Keras's gate order (GRU: z, r, h with ``reset_after=False``; LSTM: i,
f, c, o, the forget bias starting at 1 with `unit_forget_bias`) and activations (``tanh``, and
``hard_sigmoid`` for the gates). Inputs are ``(batch, time, features)``. The output is the last
step's (``(batch, units)``) or, with `return_sequences`, every step's (``(batch, time,
units)``); `return_state` appends the final states (LSTM: ``h`` then ``c``). `go_backwards`
runs over the reversed sequence. Input and recurrent dropout are not supported.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.api.rnn import dynamic_rnn
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.keras import activations, initializers
from tensorweave.keras.base_layer import Layer

__all__ = ["GRU", "LSTM", "SimpleRNN"]


class _Cell:
    """One step of `layer` with the layer's weights, in the shape ``tw.nn.dynamic_rnn`` calls
    cells: ``(inputs, state) -> (output, new_state)``."""

    def __init__(self, layer: _RNN) -> None:
        self.layer = layer

    @property
    def state_size(self) -> Any:
        units = self.layer.units
        return (units, units) if isinstance(self.layer, LSTM) else units

    @property
    def output_size(self) -> int:
        return self.layer.units

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        zeros = array_ops.zeros(array_ops.stack([batch_size, self.layer.units]), dtype=dtype)
        zeros.set_shape([None, self.layer.units])
        return (zeros, zeros) if isinstance(self.layer, LSTM) else zeros

    def __call__(self, inputs: Tensor, state: Any) -> tuple[Tensor, Any]:
        return self.layer.step(inputs, state)


class _RNN(Layer):
    """Keras's recurrent layer machinery; subclasses set `_GATES` and define `step`."""

    _GATES: int

    def __init__(self, units: int, activation: Any = "tanh",
                 recurrent_activation: Any = "hard_sigmoid", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform",
                 recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, recurrent_regularizer: Any = None,
                 bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, recurrent_constraint: Any = None,
                 bias_constraint: Any = None, dropout: float = 0.0,
                 recurrent_dropout: float = 0.0, return_sequences: bool = False,
                 return_state: bool = False, go_backwards: bool = False, stateful: bool = False,
                 unroll: bool = False, **kwargs: Any) -> None:
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if dropout or recurrent_dropout:
            raise ValueError("tensorweave's Keras recurrent layers do not support dropout or "
                             "recurrent_dropout")
        if stateful:
            raise ValueError("tensorweave's Keras recurrent layers do not support "
                             "stateful=True")
        self.units = int(units)
        if self.units < 1:
            raise ValueError(f"Received an invalid value for `units`, expected a positive "
                             f"integer, got {units}.")
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = use_bias
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards, self.unroll = go_backwards, unroll
        self._kernel_args = (initializers.get(kernel_initializer), kernel_regularizer,
                             kernel_constraint)
        self._recurrent_args = (initializers.get(recurrent_initializer), recurrent_regularizer,
                                recurrent_constraint)
        self._bias_args = (initializers.get(bias_initializer), bias_regularizer,
                           bias_constraint)

    def _checked(self, inputs: Any) -> Tensor:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is not None and rank != 3:
            raise ValueError(f"Input 0 of layer {self.name} is incompatible with the layer: "
                             f"expected ndim=3, found ndim={rank}. Full shape received: "
                             f"{inputs.shape.as_list()}")
        return inputs

    def _bias_initializer(self) -> Any:
        return self._bias_args[0]

    def build(self, input_shape: Any) -> None:
        input_dim = input_shape[-1]
        if input_dim is None:
            raise ValueError("The last dimension of the inputs to a recurrent layer should be "
                             "defined. Found `None`.")
        width = self._GATES * self.units

        def weight(name: str, shape: list[int], args: tuple[Any, Any, Any],
                   initializer: Any) -> Any:
            return self.add_weight(name, shape, initializer=initializer, regularizer=args[1],
                                   constraint=args[2])

        self.kernel = weight("kernel", [input_dim, width], self._kernel_args,
                             self._kernel_args[0])
        self.recurrent_kernel = weight("recurrent_kernel", [self.units, width],
                                       self._recurrent_args, self._recurrent_args[0])
        self.bias = weight("bias", [width], self._bias_args, self._bias_initializer()) \
            if self.use_bias else None

    def _input_projection(self, inputs: Tensor) -> Tensor:
        projected = math_ops.matmul(inputs, self.kernel)
        return projected if self.bias is None else projected + self.bias

    def step(self, inputs: Tensor, state: Any) -> tuple[Tensor, Any]:
        raise NotImplementedError

    def call(self, inputs: Tensor, training: Any = None, initial_state: Any = None) -> Any:
        if self.go_backwards:
            inputs = array_ops.reverse(inputs, [1])
        outputs, state = dynamic_rnn(_Cell(self), inputs, initial_state=initial_state,
                                     dtype=self._dtype)
        states = list(state) if isinstance(state, tuple) else [state]
        output = outputs if self.return_sequences else states[0]
        return [output, *states] if self.return_state else output


class SimpleRNN(_RNN):
    """``h = activation(x @ kernel + h @ recurrent_kernel + bias)``."""

    _GATES = 1

    def __init__(self, units: int, activation: Any = "tanh", **kwargs: Any) -> None:
        super().__init__(units, activation=activation, **kwargs)

    def step(self, inputs: Tensor, state: Tensor) -> tuple[Tensor, Tensor]:
        h = self.activation(self._input_projection(inputs)
                            + math_ops.matmul(state, self.recurrent_kernel))
        return h, h


class GRU(_RNN):
    """Keras's GRU with ``reset_after=False``: ``z``, ``r`` gates, candidate
    ``activation(x W_h + (r * h) U_h)``, ``h = z * h + (1 - z) * candidate``."""

    _GATES = 3

    def step(self, inputs: Tensor, state: Tensor) -> tuple[Tensor, Tensor]:
        u = self.units
        x_z, x_r, x_h = array_ops.split(self._input_projection(inputs), 3, axis=1)
        rk_zr = self.recurrent_kernel[:, :2 * u]
        h_z, h_r = array_ops.split(math_ops.matmul(state, rk_zr), 2, axis=1)
        z = self.recurrent_activation(x_z + h_z)
        r = self.recurrent_activation(x_r + h_r)
        candidate = self.activation(x_h + math_ops.matmul(r * state,
                                                          self.recurrent_kernel[:, 2 * u:]))
        h = z * state + (1.0 - z) * candidate
        return h, h


class LSTM(_RNN):
    """Keras's LSTM: gates i, f, c, o over ``x @ kernel + h @ recurrent_kernel + bias``,
    ``c = f * c + i * activation(c_gate)``, ``h = o * activation(c)``; state ``(h, c)``."""

    _GATES = 4

    def __init__(self, units: int, unit_forget_bias: bool = True, **kwargs: Any) -> None:
        super().__init__(units, **kwargs)
        self.unit_forget_bias = unit_forget_bias

    def _bias_initializer(self) -> Any:
        initializer = self._bias_args[0]
        if not self.unit_forget_bias:
            return initializer
        units = self.units

        def forget_one(shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
            return array_ops.concat([initializer([units], dtype=dtype),
                                     array_ops.ones([units], dtype=dtype),
                                     initializer([2 * units], dtype=dtype)], 0)

        return forget_one

    def step(self, inputs: Tensor, state: tuple[Tensor, Tensor]
             ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        h, c = state
        z = self._input_projection(inputs) + math_ops.matmul(h, self.recurrent_kernel)
        z_i, z_f, z_c, z_o = array_ops.split(z, 4, axis=1)
        i = self.recurrent_activation(z_i)
        f = self.recurrent_activation(z_f)
        c = f * c + i * self.activation(z_c)
        h = self.recurrent_activation(z_o) * self.activation(c)
        return h, (h, c)
