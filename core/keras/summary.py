"""`print_summary`: Keras's ``model.summary()`` table: one row per layer with its name and
class, output shape and parameter count ("Connected to" as well for functional models that are
not a plain stack), then the total, trainable and non-trainable parameter counts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["print_summary"]


def _row(fields: list[Any], positions: list[int], print_fn: Callable[[str], Any]) -> None:
    line = ""
    for i, field in enumerate(fields):
        if i > 0:
            line = line[:-1] + " "
        line += str(field)
        line = line[:positions[i]]
        line += " " * (positions[i] - len(line))
    print_fn(line)


def _output_shape(layer: Any) -> Any:
    try:
        return layer.output_shape
    except AttributeError:
        return "multiple"


def _count(layer: Any) -> int:
    return layer.count_params() if layer.built else 0


def _count_weights(weights: list[Any]) -> int:
    return sum(int(w.shape.num_elements()) for w in weights)


def _sequential_like(model: Any) -> bool:
    if type(model).__name__ == "Sequential" or not model._is_graph_network:
        return True
    nodes = [n for n in model._nodes if n.input_tensors]
    layers = [n.layer for n in nodes]
    return all(len(n.input_tensors) == 1 for n in nodes) and len(set(map(id, layers))) == \
        len(layers)


def print_summary(model: Any, line_length: int | None = None,
                  positions: list[float] | None = None,
                  print_fn: Callable[[str], Any] | None = None) -> None:
    """Print `model`'s summary table with `print_fn` (default: `print`)."""
    print_fn = print_fn or print
    sequential = _sequential_like(model)
    if sequential:
        line_length = line_length or 65
        positions = positions or [0.45, 0.85, 1.0]
        header = ["Layer (type)", "Output Shape", "Param #"]
    else:
        line_length = line_length or 98
        positions = positions or [0.33, 0.55, 0.67, 1.0]
        header = ["Layer (type)", "Output Shape", "Param #", "Connected to"]
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]
    network_nodes = {id(n) for n in model._nodes}

    print_fn(f'Model: "{model.name}"')
    print_fn("_" * line_length)
    _row(header, positions, print_fn)
    print_fn("=" * line_length)
    layers = model.layers
    for i, layer in enumerate(layers):
        fields = [f"{layer.name} ({type(layer).__name__})", _output_shape(layer), _count(layer)]
        if sequential:
            _row(fields, positions, print_fn)
        else:
            connections = [
                f"{inbound.name}[{node_index}][{tensor_index}]"
                for node in layer._inbound_nodes if id(node) in network_nodes
                for inbound, node_index, tensor_index in node.inbound]
            _row([*fields, connections[0] if connections else ""], positions, print_fn)
            for connection in connections[1:]:
                _row(["", "", "", connection], positions, print_fn)
        print_fn(("=" if i == len(layers) - 1 else "_") * line_length)
    trainable = _count_weights(model.trainable_weights)
    non_trainable = _count_weights(model.non_trainable_weights)
    print_fn(f"Total params: {trainable + non_trainable:,}")
    print_fn(f"Trainable params: {trainable:,}")
    print_fn(f"Non-trainable params: {non_trainable:,}")
    print_fn("_" * line_length)
