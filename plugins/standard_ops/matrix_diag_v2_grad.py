"""Gradients of ``MatrixDiagV2``, ``MatrixDiagPartV2`` and ``MatrixSetDiagV2``, as TF 1.15's
``array_grad.py``: the band read back from, or written into, the incoming gradient. ``k``, the
sizes and ``padding_value`` get none."""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply

Grads = list[Tensor | None]


def _zero(like: Tensor) -> Tensor:
    return array_ops.zeros([], dtype=like.dtype)


def _diag_grad(op: Operation, grad: Tensor) -> Grads:
    part = apply("MatrixDiagPartV2", [grad, op.inputs[1], _zero(grad)])
    return [part, None, None, None, None]


def _diag_part_grad(op: Operation, grad: Tensor) -> Grads:
    zeros = array_ops.zeros_like(op.inputs[0])
    return [apply("MatrixSetDiagV2", [zeros, grad, op.inputs[1]]), None, None]


def _set_diag_grad(op: Operation, grad: Tensor) -> Grads:
    cleared = apply("MatrixSetDiagV2", [grad, array_ops.zeros_like(op.inputs[1]), op.inputs[2]])
    part = apply("MatrixDiagPartV2", [grad, op.inputs[2], _zero(grad)])
    return [cleared, part, None]


def register_gradients(registry: Any) -> None:
    registry.add("MatrixDiagV2", _diag_grad)
    registry.add("MatrixDiagPartV2", _diag_part_grad)
    registry.add("MatrixSetDiagV2", _set_diag_grad)
