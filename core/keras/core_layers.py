"""Keras's core layers: `InputLayer` / `Input`, `Dense`, `Dropout`, `Flatten`, `Activation`,
`Reshape`. Dense, Dropout and Flatten are ``tw.layers``' with Keras's arguments (activation and
initializer names, ``"glorot_uniform"`` kernels) and Keras's training default: a `Dropout`
called without `training` follows `backend.learning_phase()`."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.api import array_ops
from tensorweave.api import layers as tf_layers
from tensorweave.api.state_ops import placeholder
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Tensor
from tensorweave.keras import activations, backend, initializers
from tensorweave.keras.base_layer import Layer, Node

__all__ = ["Activation", "Dense", "Dropout", "Flatten", "Input", "InputLayer", "Reshape"]


class InputLayer(Layer):
    """The entry point of a model: a placeholder named after the layer, of shape
    ``(batch_size, *input_shape)``."""

    def __init__(self, input_shape: Any = None, batch_size: int | None = None,
                 dtype: Any = None, input_tensor: Tensor | None = None, sparse: bool = False,
                 name: str | None = None, **kwargs: Any) -> None:
        if sparse:
            raise ValueError("tensorweave's Keras InputLayer does not support sparse inputs")
        batch_input_shape = kwargs.pop("batch_input_shape", None)
        if batch_input_shape is None and input_shape is not None:
            batch_input_shape = (batch_size, *tuple(input_shape))
        if batch_input_shape is None and input_tensor is None:
            raise ValueError("An Input layer should be passed either a `batch_input_shape` or "
                             "an `input_shape`.")
        name = name or f"input_{backend.get_uid('input')}"
        super().__init__(name=name, dtype=dtype, **kwargs)
        if input_tensor is None:
            dtype = dtypes.as_dtype(dtype or backend.floatx())
            input_tensor = placeholder(dtype, list(batch_input_shape), name=name)
        self._dtype = input_tensor.dtype
        self._batch_input_shape = tuple(input_tensor.shape.as_list()) \
            if input_tensor.shape.ndims is not None else None
        self.built = True
        self._inbound_nodes.append(Node(self, [], [input_tensor], {}, []))
        input_tensor._keras_history = (self, 0, 0)


def Input(shape: Any = None, batch_size: int | None = None, name: str | None = None,
          dtype: Any = None, sparse: bool = False, tensor: Tensor | None = None,
          batch_shape: Any = None) -> Tensor:
    """A Keras tensor: the placeholder of a new `InputLayer`. `shape` excludes the batch
    dimension; `batch_shape` includes it."""
    if shape is None and batch_shape is None and tensor is None:
        raise ValueError("Please provide to Input either a `shape` or a `tensor` argument. "
                         "Note that `shape` does not include the batch dimension.")
    layer = InputLayer(input_shape=None if shape is None else tuple(shape),
                       batch_size=batch_size, dtype=dtype, input_tensor=tensor, sparse=sparse,
                       name=name, batch_input_shape=batch_shape)
    return layer.output


class Dense(tf_layers.Dense, Layer):
    """``activation(inputs @ kernel + bias)``, as Keras's ``Dense``."""

    def __init__(self, units: int, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any) -> None:
        tf_layers.Dense.__init__(
            self, units, activations.get(activation), use_bias,
            initializers.get(kernel_initializer), initializers.get(bias_initializer),
            kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
            bias_constraint, **kwargs)


class Dropout(tf_layers.Dropout, Layer):
    """Drops a `rate` fraction of the inputs in training (scaling the rest by
    ``1 / (1 - rate)``); the identity otherwise."""

    def __init__(self, rate: float, noise_shape: Any = None, seed: int | None = None,
                 **kwargs: Any) -> None:
        tf_layers.Dropout.__init__(self, rate, noise_shape, seed, **kwargs)

    def call(self, inputs: Tensor, training: Any = None) -> Tensor:
        if training is None:
            training = backend.learning_phase()
        return tf_layers.Dropout.call(self, inputs, training)


class Flatten(tf_layers.Flatten, Layer):
    """The inputs reshaped to ``(batch, everything else)``."""

    def __init__(self, data_format: str | None = None, **kwargs: Any) -> None:
        tf_layers.Flatten.__init__(self, data_format or "channels_last", **kwargs)


class Activation(Layer):
    """`activation` (a name or a callable) applied to the inputs."""

    def __init__(self, activation: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs: Tensor) -> Tensor:
        return self.activation(inputs)


class Reshape(Layer):
    """The inputs reshaped to ``(batch, *target_shape)``; one entry may be -1."""

    def __init__(self, target_shape: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)
        if sum(d == -1 for d in self.target_shape) > 1:
            raise ValueError("Can only specify one unknown dimension.")

    def call(self, inputs: Tensor) -> Tensor:
        static = inputs.shape[1:]
        target = list(self.target_shape)
        if static.is_fully_defined():
            known = int(np.prod([d for d in target if d != -1]))
            total = static.num_elements()
            if (-1 in target and (known == 0 or total % known)) or \
                    (-1 not in target and known != total):
                raise ValueError("total size of new array must be unchanged")
            if -1 in target:
                target[target.index(-1)] = total // known
        batch = array_ops.shape(inputs)[0]
        outputs = array_ops.reshape(inputs, array_ops.stack([batch, *target]))
        outputs.set_shape([inputs.shape[0], *[None if d == -1 else d for d in target]])
        return outputs
