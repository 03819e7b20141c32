"""Gradients of the scatter ops: none for the variable updates, as in TF (they update state;
their outputs are not differentiable); TF's for ``TensorScatterUpdate``/``Add``/``Sub``: the
updates get the gradient gathered at their indices (negated for ``Sub``), the tensor the
gradient itself, with the replaced positions zeroed for ``Update``."""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.plugins.standard_ops.scatter import ALL_OPS


def _tensor_scatter_grad(op: Operation, grad: Tensor) -> list[Tensor | None]:
    _, indices, updates = op.inputs
    gathered = array_ops.gather_nd(grad, indices)
    if op.type == "TensorScatterUpdate":
        zeros = array_ops.zeros_like(updates)
        return [apply("TensorScatterUpdate", [grad, indices, zeros]), None, gathered]
    if op.type == "TensorScatterSub":
        gathered = math_ops.negative(gathered)
    return [grad, None, gathered]


def register_gradients(registry: Any) -> None:
    for name in ALL_OPS:
        registry.add(name, None)
    for name in ("TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub"):
        registry.add(name, _tensor_scatter_grad)
