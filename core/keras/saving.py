"""Whole Keras models as files: architecture as JSON (`model_config`, ``Model.to_json``,
`model_from_config`, `model_from_json`) and `save_model` / `load_model`.

Contract: a model's config is TF's layout: ``{"class_name": "Sequential", "config": {"name",
"layers": [layer configs]}}`` (an `InputLayer` first when the first layer does not carry the
input shape), or, for a functional model, ``{"class_name": "Model", "config": {"name",
"layers": [{"class_name", "config", "name", "inbound_nodes"}], "input_layers",
"output_layers"}}`` where each inbound node is a list of ``[layer name, node index, tensor
index, call keyword arguments]`` and node indices count a layer's calls inside the model. A
layer's config is its `get_config`; nested models are configured the same way. A layer keeps
its name unless variables of the default graph already use it (then ``<name>_<n>``). Layer
classes are looked up in ``tw.keras.layers``, then `custom_objects` (which also replaces
matching names in the configs, for custom activations or losses). Subclassed models have no
config (`NotImplementedError`, as in TF).

`save_model(model, path)` writes tensorweave's format, not TF's: a directory holding
``model.json`` (``{"model_config", "training_config"}``; the training config is the compiled
loss, metrics, optimizer config and sample-weight mode, None for an uncompiled model) and the
weights as a ``save_weights`` checkpoint ``weights``; the optimizer's state (slots) is not saved.
`load_model` rebuilds the model in the default graph, restores its weights and compiles it
again (unless ``compile=False``). HDF5 needs h5py, which tensorweave does not use: a path ending
in ``.h5``/``.hdf5``/``.keras`` or ``save_format="h5"`` is TF's `ImportError`; a path that is a
file (an HDF5 file written by TF) cannot be loaded either. ``save_format="tf"`` writes this
directory format, not a SavedModel.
"""

from __future__ import annotations

import json
import os
from typing import Any

from tensorweave.keras import backend, optimizers
from tensorweave.keras import layers as layers_module
from tensorweave.keras.base_layer import Layer, flatten, pack_like
from tensorweave.keras.core_layers import InputLayer
from tensorweave.keras.sequential import Sequential
from tensorweave.keras.serialization import resolve_custom_objects, serialize_value
from tensorweave.keras.training import Model

__all__ = ["load_model", "model_config", "model_from_config", "model_from_json",
           "save_model"]

_HDF5_SUFFIXES = (".h5", ".hdf5", ".keras")
_CONFIG_FILE = "model.json"
_WEIGHTS = "weights"


# -- configs ------------------------------------------------------------------------------------


def _input_layer_config(layer: InputLayer) -> dict[str, Any]:
    return {"class_name": "InputLayer", "config": {
        "batch_input_shape": list(layer._batch_input_shape), "dtype": layer.dtype.name,
        "sparse": False, "name": layer.name}}


def _layer_config(layer: Layer) -> dict[str, Any]:
    if isinstance(layer, Model):
        return model_config(layer)
    if isinstance(layer, InputLayer):
        return _input_layer_config(layer)
    return {"class_name": type(layer).__name__, "config": layer.get_config()}


def _sequential_config(model: Sequential) -> dict[str, Any]:
    configs = [_layer_config(layer) for layer in model.layers]
    first = model.layers[0] if model.layers else None
    if model.inputs and (first is None or first._batch_input_shape is None):
        configs.insert(0, _input_layer_config(model.inputs[0]._keras_history[0]))
    return {"class_name": "Sequential", "config": {"name": model.name, "layers": configs}}


def _functional_config(model: Model) -> dict[str, Any]:
    positions: dict[int, int] = {}  # id(node) -> its index among its layer's model nodes
    counts: dict[int, int] = {}
    for node in model._nodes:
        positions[id(node)] = counts.get(id(node.layer), 0)
        counts[id(node.layer)] = positions[id(node)] + 1

    def reference(tensor: Any) -> list[Any]:
        layer, index, tensor_index = tensor._keras_history
        return [layer.name, positions[id(layer._inbound_nodes[index])], tensor_index]

    configs = []
    for layer in model.layers:
        nodes = [n for n in model._nodes if n.layer is layer and not isinstance(layer,
                                                                                  InputLayer)]
        inbound = [[[*reference(x), serialize_value(n.arguments, f"{layer.name}'s call")]
                    for x in n.input_tensors] for n in nodes]
        configs.append({**_layer_config(layer), "name": layer.name, "inbound_nodes": inbound})
    return {"class_name": "Model", "config": {
        "name": model.name, "layers": configs,
        "input_layers": [reference(x) for x in model.inputs],
        "output_layers": [reference(x) for x in model.outputs]}}


def model_config(model: Model) -> dict[str, Any]:
    """``{"class_name", "config"}`` of a Sequential or functional `model`."""
    if isinstance(model, Sequential):
        return _sequential_config(model)
    if not model._is_graph_network:
        raise NotImplementedError("Subclassed models have no config: only Sequential and "
                                  "functional models can be serialized as JSON or saved whole.")
    return _functional_config(model)


# -- from configs -------------------------------------------------------------------------------


def _layer_class(name: str, custom_objects: dict[str, Any]) -> Any:
    if name in custom_objects:
        return custom_objects[name]
    found = getattr(layers_module, name, None)
    if isinstance(found, type) and issubclass(found, Layer):
        return found
    raise ValueError(f"Unknown layer: {name}")


def _layer_from_config(config: dict[str, Any], custom_objects: dict[str, Any]) -> Any:
    if config["class_name"] in ("Sequential", "Model"):
        return model_from_config(config, custom_objects)
    arguments = resolve_custom_objects(config["config"], custom_objects)
    if "name" in arguments:  # kept, unless the default graph's variables already use it
        arguments["name"] = backend.unused_scope_name(arguments["name"])
    cls = _layer_class(config["class_name"], custom_objects)
    if cls is InputLayer:
        return InputLayer(**arguments)
    return cls.from_config(arguments)


def _functional_from_config(config: dict[str, Any], custom_objects: dict[str, Any]) -> Model:
    produced: dict[str, list[list[Any]]] = {}  # layer name -> the outputs of each of its nodes
    pending = []
    for entry in config["layers"]:
        layer = _layer_from_config(entry, custom_objects)
        if isinstance(layer, InputLayer):
            produced[entry["name"]] = [[layer.output]]
        pending += [(entry["name"], layer, node) for node in entry["inbound_nodes"]]

    def tensor(ref: list[Any]) -> Any:
        name, node_index, tensor_index = ref[:3]
        nodes = produced.get(name, [])
        return nodes[node_index][tensor_index] if node_index < len(nodes) else None

    while pending:  # a node runs once the nodes it reads have run
        ready = [item for item in pending if all(tensor(ref) is not None for ref in item[2])]
        if not ready:
            raise ValueError("The model config's inbound nodes cannot all be computed")
        name, layer, node = ready[0]
        pending.remove(ready[0])
        inputs = [tensor(ref) for ref in node]
        outputs = layer(inputs if len(inputs) > 1 else inputs[0], **(node[0][3] or {}))
        produced.setdefault(name, []).append(flatten(outputs))
    inputs = [tensor(ref) for ref in config["input_layers"]]
    outputs = [tensor(ref) for ref in config["output_layers"]]
    return Model(pack_like(inputs if len(inputs) > 1 else inputs[0], inputs),
                 pack_like(outputs if len(outputs) > 1 else outputs[0], outputs),
                 name=config["name"])


def model_from_config(config: dict[str, Any], custom_objects: dict[str, Any] | None = None
                      ) -> Model:
    """A new model (fresh weights, in the default graph) from `model_config`'s output."""
    custom_objects = custom_objects or {}
    if config.get("class_name") == "Sequential":
        return Sequential([_layer_from_config(c, custom_objects)
                           for c in config["config"]["layers"]], name=config["config"]["name"])
    if config.get("class_name") == "Model":
        return _functional_from_config(config["config"], custom_objects)
    raise ValueError(f"Unknown model class: {config.get('class_name')}")


def model_from_json(json_string: str, custom_objects: dict[str, Any] | None = None) -> Model:
    return model_from_config(json.loads(json_string), custom_objects)


# -- whole models -------------------------------------------------------------------------------


def _refuse_hdf5(filepath: str, save_format: str | None, verb: str) -> None:
    if save_format not in (None, "tf", "h5"):
        raise ValueError(f"Unknown format: {save_format}")
    if save_format == "h5" or filepath.endswith(_HDF5_SUFFIXES) or os.path.isfile(filepath):
        raise ImportError(f"`{verb}` requires h5py. tensorweave does not read or write HDF5: "
                          "it saves a model as a directory (give a path without an .h5 "
                          "suffix).")


def _name_of(fn: Any, what: str) -> Any:
    return fn if isinstance(fn, str) else serialize_value(fn, what)


def _training_config(model: Model) -> dict[str, Any] | None:
    if not model._compiled:
        return None
    optimizer = model.optimizer
    if not hasattr(optimizer, "get_config"):
        raise TypeError(f"Cannot save the optimizer {optimizer!r}: only Keras optimizers "
                        "(tw.keras.optimizers) have a config; save with "
                        "include_optimizer=False")
    return {"loss": _name_of(model.loss, "the loss"),
            "metrics": [_name_of(m, "a metric") for m in model._metric_specs],
            "optimizer_config": {"class_name": type(optimizer).__name__,
                                 "config": optimizer.get_config()},
            "sample_weight_mode": model.sample_weight_mode}


def save_model(model: Model, filepath: Any, overwrite: bool = True,
               include_optimizer: bool = True, save_format: str | None = None) -> None:
    """Write `model` to the directory `filepath` (see the module docstring)."""
    filepath = os.fspath(filepath)
    _refuse_hdf5(filepath, save_format, "save_model")
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(f"{filepath} exists and overwrite is False")
    contents = {"model_config": model_config(model),
                "training_config": _training_config(model) if include_optimizer else None}
    text = json.dumps(contents)
    os.makedirs(filepath, exist_ok=True)
    model.save_weights(os.path.join(filepath, _WEIGHTS))
    with open(os.path.join(filepath, _CONFIG_FILE), "w") as f:
        f.write(text)


def load_model(filepath: Any, custom_objects: dict[str, Any] | None = None,
               compile: bool = True) -> Model:  # noqa: A002 - Keras's argument name
    """The model `save_model` wrote to `filepath`, with its weights, compiled as it was."""
    filepath = os.fspath(filepath)
    _refuse_hdf5(filepath, None, "load_model")
    config_path = os.path.join(filepath, _CONFIG_FILE)
    if not os.path.exists(config_path):
        raise OSError(f"SavedModel file does not exist at: {filepath}/{{saved_model.pbtxt|"
                      f"saved_model.pb}} (and no tensorweave {_CONFIG_FILE} either)")
    with open(config_path) as f:
        contents = json.load(f)
    custom_objects = custom_objects or {}
    model = model_from_config(contents["model_config"], custom_objects)
    model.load_weights(os.path.join(filepath, _WEIGHTS))
    training = contents["training_config"]
    if compile and training is not None:
        model.compile(optimizers.get(training["optimizer_config"]),
                      resolve_custom_objects(training["loss"], custom_objects),
                      metrics=resolve_custom_objects(training["metrics"], custom_objects),
                      sample_weight_mode=training["sample_weight_mode"])
    return model
