"""Keras's merge layers: `Concatenate` (along `axis`) and `Add` (elementwise sum), each taking a
list of at least two tensors."""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.keras.base_layer import Layer

__all__ = ["Add", "Concatenate", "add", "concatenate"]


def _tensor_list(inputs: Any, layer: str) -> list[Tensor]:
    if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
        raise ValueError(f"A `{layer}` layer should be called on a list of at least 2 inputs")
    return [convert_to_tensor(x) for x in inputs]


class Concatenate(Layer):
    """The inputs joined along `axis`; every other dimension must match."""

    def __init__(self, axis: int = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = axis

    def _checked(self, inputs: Any) -> list[Tensor]:
        tensors = _tensor_list(inputs, "Concatenate")
        shapes = [t.shape for t in tensors]
        if all(s.ndims is not None for s in shapes):
            rank = shapes[0].ndims
            axis = self.axis % rank if rank else 0
            reduced = {tuple(d for i, d in enumerate(s.as_list()) if i != axis and i != 0)
                       for s in shapes}
            if len({s.ndims for s in shapes}) > 1 or len(reduced) > 1:
                raise ValueError("A `Concatenate` layer requires inputs with matching shapes "
                                 "except for the concat axis. Got inputs shapes: "
                                 f"{[tuple(s.as_list()) for s in shapes]}")
        return tensors

    def call(self, inputs: list[Tensor]) -> Tensor:
        return array_ops.concat(inputs, self.axis)


class Add(Layer):
    """The elementwise sum of the inputs (same shapes)."""

    def _checked(self, inputs: Any) -> list[Tensor]:
        tensors = _tensor_list(inputs, "Add")
        shapes = {tuple(t.shape.as_list()[1:]) for t in tensors if t.shape.ndims is not None}
        if len(shapes) > 1:
            raise ValueError("Operands could not be broadcast together with shapes "
                             + " ".join(str(s) for s in sorted(shapes, key=str)))
        return tensors

    def call(self, inputs: list[Tensor]) -> Tensor:
        return math_ops.add_n(inputs)


def concatenate(inputs: list[Any], axis: int = -1, **kwargs: Any) -> Tensor:
    """A `Concatenate` layer applied to `inputs`."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def add(inputs: list[Any], **kwargs: Any) -> Tensor:
    """An `Add` layer applied to `inputs`."""
    return Add(**kwargs)(inputs)
