"""``tw.keras.Sequential``: a `Model` that is a stack of layers, each called on the previous
one's output.

Contract: `add` appends a layer. Once the first layer knows its input shape (``input_shape`` /
``batch_input_shape`` / ``input_dim``, or an `InputLayer` added first), the model has an input,
``<first layer name>_input``, and every added layer is called at once, so the model is a
functional network of its layers; without a shape, the model is built from the first data
`fit`/`evaluate`/`predict` get, or by `build(input_shape)`. `layers` excludes the input layer.
Each layer must have one output tensor.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from tensorweave.engine.graph.graph import get_default_graph
from tensorweave.keras.base_layer import Layer, flatten
from tensorweave.keras.core_layers import Input, InputLayer
from tensorweave.keras.training import Model, _input_dtype

__all__ = ["Sequential"]


class Sequential(Model):
    """A linear stack of layers; see the module docstring."""

    def __init__(self, layers: list[Layer] | None = None, name: str | None = None) -> None:
        super().__init__(name=name)
        self._stack: list[Any] = []
        for layer in layers or []:
            self.add(layer)

    @property
    def layers(self) -> list[Any]:
        return list(self._stack)

    def add(self, layer: Any) -> None:
        """Append `layer` (see the module docstring)."""
        if not isinstance(layer, Layer):
            raise TypeError(f"The added layer must be an instance of class Layer. Found: "
                            f"{layer}")
        if isinstance(layer, InputLayer):
            if self._stack or self.inputs:
                raise ValueError("An InputLayer can only be the first layer of a Sequential "
                                 "model.")
            self._init_graph_network(layer.output, layer.output)
            return
        self._stack.append(layer)
        if self.outputs:
            self._connect(self.inputs[0], layer(self.outputs[0]))
        elif len(self._stack) == 1 and layer._batch_input_shape is not None:
            self._build_on(Input(batch_shape=layer._batch_input_shape, dtype=layer.dtype,
                                 name=f"{layer.name}_input"))

    def _connect(self, inputs: Any, outputs: Any) -> None:
        if len(flatten(outputs)) != 1:
            raise TypeError("All layers in a Sequential model should have a single output "
                            "tensor. For multi-output layers, use the functional API.")
        self._init_graph_network(inputs, outputs)

    def _build_on(self, inputs: Any) -> None:
        outputs = inputs
        for layer in self._stack:
            outputs = layer(outputs)
            if len(flatten(outputs)) != 1:
                raise TypeError("All layers in a Sequential model should have a single output "
                                "tensor. For multi-output layers, use the functional API.")
        self._connect(inputs, outputs)

    def build(self, input_shape: Any = None) -> None:
        """Give the model an input of `input_shape` (batch dimension included)."""
        if self.inputs:
            return
        if input_shape is None:
            raise ValueError("You must provide an `input_shape` argument.")
        if not self._stack:
            raise TypeError("Sequential model cannot be built: model is empty. Add some "
                            "layers first.")
        with get_default_graph().as_default():
            self._build_on(Input(batch_shape=tuple(input_shape),
                                 name=f"{self._stack[0].name}_input"))

    def _build_from_arrays(self, arrays: list[np.ndarray]) -> None:
        if len(arrays) != 1:
            raise ValueError("A Sequential model takes one input array.")
        self._build_on(Input(batch_shape=(None, *arrays[0].shape[1:]),
                             dtype=_input_dtype(arrays[0]), name=f"{self._stack[0].name}_input"))

    def call(self, inputs: Any, training: Any = None, mask: Any = None) -> Any:
        outputs = inputs
        for layer in self._stack:
            kwargs = {"training": training} if training is not None and \
                "training" in _parameters(layer) else {}
            outputs = layer(outputs, **kwargs)
        return outputs


def _parameters(layer: Any) -> Any:
    return inspect.signature(layer.call).parameters
