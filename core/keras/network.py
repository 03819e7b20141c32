"""`Network`: a Keras layer made of layers, the part of ``tw.keras.Model`` that is not
training: the functional graph, subclassing, weights, `summary`, `get_layer` and weight files.

Contract: ``Network(inputs, outputs)`` (a functional model) walks back from `outputs` through
the `Node`s the layers recorded to the `Input` tensors in `inputs`; an input it reaches that is
not in `inputs` is a "Graph disconnected" `ValueError`. Its `layers` are the input layers, then
every layer in the order the graph computes them. Calling it on new tensors replays those nodes,
so the new outputs share the weights. A subclass that passes no inputs defines `call` instead
and tracks the layers assigned to its attributes; its `inputs` and `outputs` are set the first
time it is given data (`_set_inputs`).

`weights` are every layer's weights, layer by layer, then weights the network created itself;
`trainable_weights` is empty when the network is not trainable. `save_weights` writes a
tensorweave checkpoint (``tw.train.Saver``'s format) keyed by position: ``layer_with_weights-
<i>/<name>`` for the i-th layer that has weights, so `load_weights` restores into any model of
the same architecture, whatever its layers are called.
"""

from __future__ import annotations

import inspect
import os
from typing import Any

from tensorweave.api import base_layer as tf_base_layer
from tensorweave.api.variables import Variable
from tensorweave.engine.graph.graph import Graph, Tensor
from tensorweave.keras import backend
from tensorweave.keras.base_layer import Layer, Node, dedup, flatten, has_history, pack_like
from tensorweave.keras.core_layers import InputLayer
from tensorweave.keras.summary import print_summary
from tensorweave.train.saver import Saver

__all__ = ["Network"]


def _network_nodes(inputs: list[Tensor], outputs: list[Tensor]) -> list[Node]:
    """The nodes that compute `outputs` from `inputs`, each after the nodes it reads."""
    ordered: list[Node] = []
    visited: set[int] = set()
    accessed: list[str] = []

    def visit(tensor: Tensor) -> None:
        layer, node_index, _ = tensor._keras_history
        node = layer._inbound_nodes[node_index]
        if id(node) in visited:
            return
        if isinstance(layer, InputLayer) and not any(tensor is x for x in inputs):
            raise ValueError(f"Graph disconnected: cannot obtain value for tensor {tensor} at "
                             f'layer "{layer.name}". The following previous layers were '
                             f"accessed without issue: {accessed}")
        for x in node.input_tensors:
            if has_history(x):
                visit(x)
        visited.add(id(node))
        ordered.append(node)
        accessed.append(layer.name)

    for x in outputs:
        visit(x)
    return ordered


class Network(Layer):
    """A layer of layers; see the module docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        inputs = kwargs.pop("inputs", args[0] if args else None)
        outputs = kwargs.pop("outputs", args[1] if len(args) > 1 else None)
        self._tracked_layers: list[tf_base_layer.Layer] = []
        self.inputs: list[Tensor] = []
        self.outputs: list[Tensor] = []
        self._input_names: list[str] = []
        self._output_names: list[str] = []
        self._nodes: list[Node] = []
        self._model_updates: list[Any] = []
        self._is_graph_network = False
        self._saver: Saver | None = None
        super().__init__(**kwargs)
        if inputs is not None or outputs is not None:
            if inputs is None or outputs is None:
                raise ValueError("A functional Model needs both `inputs` and `outputs`.")
            self._init_graph_network(inputs, outputs)

    def __setattr__(self, name: str, value: Any) -> None:
        candidates = value if isinstance(value, (list, tuple)) else [value]
        tracked = self.__dict__.get("_tracked_layers")
        if tracked is not None:
            for item in candidates:
                if isinstance(item, tf_base_layer.Layer) and all(item is not t for t in tracked):
                    tracked.append(item)
        super().__setattr__(name, value)

    # -- the functional graph ------------------------------------------------------------------

    def _init_graph_network(self, inputs: Any, outputs: Any) -> None:
        flat_inputs, flat_outputs = flatten(inputs), flatten(outputs)
        for x in flat_inputs:
            if not has_history(x) or not isinstance(x._keras_history[0], InputLayer):
                raise ValueError("Input tensors to a Model must come from `tf.keras.Input`. "
                                 f"Received: {x} (missing previous layer metadata).")
        for x in flat_outputs:
            if not has_history(x):
                raise ValueError("Output tensors to a Model must be the output of a TensorFlow "
                                 f"`Layer` (thus holding past layer metadata). Found: {x}")
        self._nodes = _network_nodes(flat_inputs, flat_outputs)
        # As TF's, a graph network's first inbound node is itself from its inputs to its
        # outputs, so `input_shape`/`output_shape` answer; a rebuilt Sequential replaces it.
        own = Node(self, list(flat_inputs), list(flat_outputs), {}, [])
        if self._inbound_nodes and self._inbound_nodes[0] is getattr(self, "_own_node", None):
            self._inbound_nodes[0] = own
        else:
            self._inbound_nodes.insert(0, own)
        self._own_node = own
        self._input_structure, self._output_structure = inputs, outputs
        self.inputs, self.outputs = flat_inputs, flat_outputs
        self._input_names = [x._keras_history[0].name for x in flat_inputs]
        self._output_names = [x._keras_history[0].name for x in flat_outputs]
        self._model_updates = dedup([u for node in self._nodes for u in node.updates])
        self._is_graph_network = True
        self._saver = None
        self.built = True

    def _set_inputs(self, inputs: Any) -> None:
        """Build a subclassed network on `inputs` (placeholders): its outputs are its call on
        them."""
        updates_before = len(self._updates)
        outputs = self(inputs)
        self._input_structure, self._output_structure = inputs, outputs
        self.inputs, self.outputs = flatten(inputs), flatten(outputs)
        self._input_names = [f"input_{i + 1}" for i in range(len(self.inputs))]
        self._output_names = [f"output_{i + 1}" for i in range(len(self.outputs))]
        self._model_updates = self._updates[updates_before:]
        self._saver = None

    def call(self, inputs: Any, training: Any = None, mask: Any = None) -> Any:
        """The network's outputs for `inputs`, by replaying its nodes (functional models)."""
        if not self._is_graph_network:
            raise NotImplementedError(f"Model {self.name} must define `call` (a subclassed "
                                      "model) or be built from `inputs` and `outputs`.")
        flat = flatten(inputs)
        if len(flat) != len(self.inputs):
            raise ValueError(f"Model {self.name} expects {len(self.inputs)} input(s), but it "
                             f"received {len(flat)} input tensors.")
        values = {id(x): y for x, y in zip(self.inputs, flat)}
        for node in self._nodes:
            if isinstance(node.layer, InputLayer):
                continue
            args = [values.get(id(x), x) for x in node.input_tensors]
            kwargs = dict(node.arguments)
            if training is not None and _takes_training(node.layer):
                kwargs["training"] = training
            outputs = node.layer(args if node.listed else args[0], **kwargs)
            for x, y in zip(node.output_tensors, flatten(outputs)):
                values[id(x)] = y
        return pack_like(self._output_structure, [values[id(x)] for x in self.outputs])

    @property
    def graph(self) -> Graph:
        return self.outputs[0].graph

    # -- layers and weights ------------------------------------------------------------------

    @property
    def layers(self) -> list[tf_base_layer.Layer]:
        if not self._is_graph_network:
            return list(self._tracked_layers)
        layers = [x._keras_history[0] for x in self.inputs]
        for node in self._nodes:
            if all(node.layer is not layer for layer in layers):
                layers.append(node.layer)
        return layers

    def get_layer(self, name: str | None = None, index: int | None = None) -> Any:
        """The layer called `name`, or at position `index` of `layers`."""
        layers = self.layers
        if index is not None:
            if len(layers) <= index:
                raise ValueError(f"Was asked to retrieve layer at index {index} but model only "
                                 f"has {len(layers)} layers.")
            return layers[index]
        if name is None:
            raise ValueError("Provide either a layer name or layer index.")
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}")

    def _own(self, weights: list[Variable]) -> list[Variable]:
        """Of `weights` the network tracked itself, those no layer of it owns."""
        owned = {id(w) for layer in self.layers for w in layer.weights}
        return [w for w in weights if id(w) not in owned]

    @property
    def weights(self) -> list[Variable]:
        return dedup([w for layer in self.layers for w in layer.weights]
                     + self._own(self._trainable_weights + self._non_trainable_weights))

    @property
    def trainable_weights(self) -> list[Variable]:
        if not self.trainable:
            return []
        return dedup([w for layer in self.layers for w in layer.trainable_weights]
                     + self._own(self._trainable_weights))

    @property
    def non_trainable_weights(self) -> list[Variable]:
        trainable = {id(w) for w in self.trainable_weights}
        return [w for w in self.weights if id(w) not in trainable]

    @property
    def losses(self) -> list[Any]:
        return dedup([x for layer in self.layers for x in layer.losses] + self._losses)

    @property
    def updates(self) -> list[Any]:
        return dedup([u for layer in self.layers for u in layer.updates] + self._updates)

    def count_params(self) -> int:
        return sum(int(w.shape.num_elements()) for w in self.weights)

    def summary(self, line_length: int | None = None, positions: list[float] | None = None,
                print_fn: Any = None) -> None:
        """Print a table of the layers, their output shapes and parameter counts."""
        if not self.built or (not self.inputs and not self._tracked_layers):
            raise ValueError("This model has not yet been built. Build the model first by "
                             "calling `build()` or calling `fit()` with some data, or specify "
                             "an `input_shape` argument in the first layer(s) for automatic "
                             "build.")
        print_summary(self, line_length, positions, print_fn)

    # -- weight files ------------------------------------------------------------------------

    def _checkpoint_keys(self) -> dict[str, Variable]:
        keys: dict[str, Variable] = {}
        with_weights = [layer for layer in self.layers if layer.weights]
        for i, layer in enumerate(with_weights):
            names = [w.op.name.rsplit("/", 1)[-1] for w in layer.weights]
            unique = len(set(names)) == len(names)
            for j, (short, w) in enumerate(zip(names, layer.weights)):
                keys[f"layer_with_weights-{i}/{short if unique else f'{j}_{short}'}"] = w
        return keys

    def _weights_saver(self) -> Saver:
        if self._saver is None:
            with self.graph.as_default():
                self._saver = Saver(self._checkpoint_keys(), max_to_keep=None,
                                    name="keras_weights")
        return self._saver

    def save_weights(self, filepath: str) -> None:
        """Write the weights to the checkpoint `filepath` (see the module docstring); its
        directory is created if missing, as TF's checkpoint writer does."""
        os.makedirs(os.path.dirname(filepath) or ".", exist_ok=True)
        self._weights_saver().save(backend.get_session(self.graph), filepath,
                                   write_meta_graph=False)

    def load_weights(self, filepath: str) -> None:
        """Restore weights written by `save_weights` from a model of the same architecture."""
        self._weights_saver().restore(backend.get_session(self.graph), filepath)


def _takes_training(layer: Any) -> bool:
    return "training" in inspect.signature(layer.call).parameters
