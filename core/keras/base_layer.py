"""The Keras `Layer`: ``tw.layers.Layer`` with Keras's naming, input-shape arguments, weights as
numpy, and the call records (`Node`) that the functional API is built from.

Contract: a Keras layer is named when it is constructed: its `name`, or its class name in snake
case made unique in the default graph (``dense``, ``dense_1``; see `backend.unique_object_name`),
and that name is its variable scope, so its weights are ``dense/kernel``, ``dense/bias``.
``input_shape`` / ``batch_input_shape`` / ``input_dim`` (and ``batch_size``) record the shape a
model's first layer expects (``batch_input_shape``). Calling a layer on tensors that come from
Keras layers (they carry ``_keras_history``: ``(layer, node_index, tensor_index)``) appends a
`Node` to the layer's inbound nodes and marks each output with its history; a functional `Model`
replays those nodes. A layer whose `call` takes `training` gets None unless the caller passes it,
and Keras layers read `backend.learning_phase()` then. `add_weight` resolves Keras's initializer,
regularizer and constraint identifiers, and the constructor the ``activity_regularizer``'s. A
layer remembers its constructor's arguments (``_init_arguments``) for `models.clone_model`;
`get_config` gives them as JSON and `from_config` builds a layer from them.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from tensorweave.api import base_layer
from tensorweave.api.base_layer import snake_case
from tensorweave.api.variables import Variable
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.keras import backend, constraints, initializers, regularizers
from tensorweave.keras.serialization import serialize_arguments

__all__ = ["Layer", "Node", "flatten", "has_history", "pack_like"]


@attrs.define
class Node:
    """One call of `layer`: its Keras input tensors (`listed` if passed as a list), its
    outputs, the keyword arguments it was called with (replayed by a functional model) and the
    update ops the call created."""

    layer: Layer
    input_tensors: list[Any]
    output_tensors: list[Tensor]
    arguments: dict[str, Any]
    updates: list[Any]
    listed: bool = False

    @property
    def inbound(self) -> list[tuple[Layer, int, int]]:
        """``(layer, node_index, tensor_index)`` of every input that has a Keras history."""
        return [t._keras_history for t in self.input_tensors if has_history(t)]


def flatten(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in flatten(v)]
    return [value]


def pack_like(structure: Any, flat: list[Any]) -> Any:
    """`flat` in the shape of `structure`: a single value, or a list."""
    return flat[0] if not isinstance(structure, (list, tuple)) else list(flat)


def has_history(value: Any) -> bool:
    return isinstance(value, Tensor) and hasattr(value, "_keras_history")


def _shape_tuple(shape: TensorShape) -> tuple[int | None, ...] | None:
    return None if shape.ndims is None else tuple(shape.as_list())


class Layer(base_layer.Layer):
    """The base of Keras layers and models; see the module docstring."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Layer:
        layer = super().__new__(cls)
        # What `models.clone_model` builds a fresh copy of the layer from.
        layer._init_arguments = (args, dict(kwargs))
        return layer

    def __init__(self, trainable: bool = True, name: str | None = None, dtype: Any = None,
                 **kwargs: Any) -> None:
        batch_input_shape = kwargs.pop("batch_input_shape", None)
        input_shape = kwargs.pop("input_shape", None)
        input_dim = kwargs.pop("input_dim", None)
        batch_size = kwargs.pop("batch_size", None)
        if input_shape is None and input_dim is not None:
            input_shape = (input_dim,)
        if batch_input_shape is None and input_shape is not None:
            batch_input_shape = (batch_size, *tuple(input_shape))
        self._batch_input_shape = None if batch_input_shape is None else \
            tuple(batch_input_shape)
        if kwargs.get("activity_regularizer") is not None:
            kwargs["activity_regularizer"] = regularizers.get(kwargs["activity_regularizer"])
        if name:
            backend.observe_object_name(name, snake_case(type(self).__name__))
        name = name or backend.unique_object_name(snake_case(type(self).__name__))
        kwargs.setdefault("_scope", name)
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)
        self._inbound_nodes: list[Node] = []

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        arguments = dict(kwargs)
        updates_before = len(self._updates)
        outputs = super().__call__(inputs, *args, **kwargs)
        if any(has_history(t) for t in flatten(inputs)) and not args:
            node = Node(self, flatten(inputs), flatten(outputs), arguments,
                        self._updates[updates_before:], isinstance(inputs, (list, tuple)))
            self._inbound_nodes.append(node)
            index = len(self._inbound_nodes) - 1
            for i, tensor in enumerate(node.output_tensors):
                tensor._keras_history = (self, index, i)
        return outputs

    def add_weight(self, name: str | None = None, shape: Any = None, dtype: Any = None,
                   initializer: Any = None, regularizer: Any = None,
                   trainable: bool | None = None, constraint: Any = None,
                   **kwargs: Any) -> Variable:
        """``tw.layers.Layer.add_weight`` with Keras's identifiers for initializers,
        regularizers and constraints (``"uniform"``, ``"l2"``, ``"non_neg"``, config dicts)."""
        return super().add_weight(name, shape, dtype, initializers.get(initializer),
                                  regularizers.get(regularizer), trainable,
                                  constraints.get(constraint), **kwargs)

    # -- configuration -------------------------------------------------------------------------

    def get_config(self) -> dict[str, Any]:
        """The constructor's arguments by name, as JSON (see `serialization`), with the layer's
        `name` and `trainable` as they are now."""
        args, kwargs = self._init_arguments
        config = serialize_arguments(type(self).__init__, args, kwargs)
        config.update(name=self.name, trainable=self.trainable)
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Layer:
        return cls(**config)

    # -- shapes of the first call --------------------------------------------------------------

    def _node(self, what: str) -> Node:
        if not self._inbound_nodes:
            raise AttributeError(f"Layer {self.name} is not connected, no input to return."
                                 if what == "input" else
                                 f"Layer {self.name} has no inbound nodes.")
        return self._inbound_nodes[0]

    @property
    def input(self) -> Any:
        tensors = self._node("input").input_tensors
        return tensors[0] if len(tensors) == 1 else list(tensors)

    @property
    def output(self) -> Any:
        tensors = self._node("output").output_tensors
        return tensors[0] if len(tensors) == 1 else list(tensors)

    @property
    def input_shape(self) -> Any:
        shapes = [_shape_tuple(t.shape) for t in self._node("input").input_tensors]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shape(self) -> Any:
        """The output shape(s) of the layer's calls; AttributeError if they differ."""
        self._node("output")
        shapes = {tuple(_shape_tuple(t.shape) for t in node.output_tensors)
                  for node in self._inbound_nodes}
        if len(shapes) > 1:
            raise AttributeError(f'The layer "{self.name}" has multiple inbound nodes, with '
                                 "different output shapes.")
        (found,) = shapes
        return found[0] if len(found) == 1 else list(found)

    # -- weights as numpy ----------------------------------------------------------------------

    def get_weights(self) -> list[np.ndarray]:
        """The values of `weights`, in order."""
        return backend.batch_get_value(self.weights)

    def set_weights(self, weights: list[Any]) -> None:
        """Assign `weights` (numpy arrays, in the order of `weights`)."""
        params = self.weights
        if len(params) != len(weights):
            raise ValueError(f'You called `set_weights(weights)` on layer "{self.name}" with a '
                             f"weight list of length {len(weights)}, but the layer was "
                             f"expecting {len(params)} weights. Provided weights: "
                             f"{str(weights)[:50]}...")
        backend.batch_set_value(list(zip(params, weights)))


def dedup(weights: list[Variable]) -> list[Variable]:
    """`weights` without repeats, first occurrence kept."""
    seen: set[int] = set()
    out = []
    for w in weights:
        if id(w) not in seen:
            seen.add(id(w))
            out.append(w)
    return out
