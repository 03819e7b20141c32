"""``tw.keras.models``: `Model`, `Sequential`, `clone_model`, and (from `saving`) `save_model`,
`load_model`, `model_from_config` and `model_from_json`.

Contract: ``clone_model(model, input_tensors=None, clone_function=None)`` builds, in the default
graph, a model of the same architecture as a `Sequential` or functional `model`, with new
layers (new, freshly initialized weights), each made by `clone_function` (default: the layer's
class called again with its constructor's arguments and its name, made unique among the graph's
variable scopes, so in a fresh graph the clone's variables have the original's names) and a
nested model cloned the same way. Its inputs are new placeholders shaped like the model's, or
`input_tensors` (one per input, in order; tensors without a Keras history are wrapped in an
`InputLayer` named like the original input). Layers shared between calls stay shared. A
subclassed model is a `ValueError`, as in TF.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.keras import backend
from tensorweave.keras.base_layer import Layer, flatten, has_history, pack_like
from tensorweave.keras.core_layers import Input, InputLayer
from tensorweave.keras.saving import load_model, model_from_config, model_from_json, save_model
from tensorweave.keras.sequential import Sequential
from tensorweave.keras.training import Model

__all__ = ["Model", "Sequential", "clone_model", "load_model", "model_from_config",
           "model_from_json", "save_model"]


def _clone_layer(layer: Layer) -> Layer:
    args, kwargs = layer._init_arguments
    return type(layer)(*args, **{**kwargs, "name": backend.unused_scope_name(layer.name)})


def _inputs_like(model: Model, input_tensors: Any) -> list[Any]:
    """The clone's input tensors: `input_tensors` wrapped as Keras inputs, or new
    placeholders."""
    layers = [x._keras_history[0] for x in model.inputs]
    if input_tensors is None:
        return [Input(batch_shape=layer._batch_input_shape, dtype=layer.dtype, name=layer.name)
                for layer in layers]
    tensors = flatten(input_tensors)
    if len(tensors) != len(layers):
        raise ValueError(f"To clone {model.name}, `input_tensors` must hold "
                         f"{len(layers)} tensor(s); it holds {len(tensors)}.")
    return [t if has_history(t) else Input(tensor=t, name=layer.name)
            for t, layer in zip(tensors, layers)]


def _clone_sequential(model: Sequential, input_tensors: Any,
                      clone: Callable[[Layer], Layer]) -> Sequential:
    layers = [_cloned(layer, clone) for layer in model.layers]
    if not model.inputs:
        return Sequential(layers, name=model.name)
    (first,) = _inputs_like(model, input_tensors)
    return Sequential([first._keras_history[0], *layers], name=model.name)


def _clone_functional(model: Model, input_tensors: Any,
                      clone: Callable[[Layer], Layer]) -> Model:
    inputs = _inputs_like(model, input_tensors)
    values = {id(x): y for x, y in zip(model.inputs, inputs)}
    clones: dict[int, Layer] = {}
    for node in model._nodes:
        if isinstance(node.layer, InputLayer):
            continue
        layer = clones.get(id(node.layer))
        if layer is None:
            layer = clones[id(node.layer)] = _cloned(node.layer, clone)
        args = [values.get(id(x), x) for x in node.input_tensors]
        outputs = layer(args if node.listed else args[0], **node.arguments)
        for x, y in zip(node.output_tensors, flatten(outputs)):
            values[id(x)] = y
    return Model(pack_like(model._input_structure, inputs),
                 pack_like(model._output_structure, [values[id(x)] for x in model.outputs]),
                 name=model.name)


def _cloned(layer: Layer, clone: Callable[[Layer], Layer]) -> Layer:
    return clone_model(layer, clone_function=clone) if isinstance(layer, Model) else \
        clone(layer)


def clone_model(model: Model, input_tensors: Any = None,
                clone_function: Callable[[Layer], Layer] | None = None) -> Model:
    """A new model with `model`'s architecture; see the module docstring."""
    clone = clone_function or _clone_layer
    if isinstance(model, Sequential):
        return _clone_sequential(model, input_tensors, clone)
    if not isinstance(model, Model) or not model._is_graph_network:
        raise ValueError("Expected `model` argument to be a functional `Model` instance, but "
                         f"got a subclass model instead: {model}")
    return _clone_functional(model, input_tensors, clone)
