"""Gradients of the fused elementwise derivative ops ``SigmoidGrad``, ``TanhGrad``,
``SqrtGrad``, ``RsqrtGrad`` and ``ReciprocalGrad``, so their forward ops are twice
differentiable, as TF's ``math_grad.py``.

Contract: each op computes ``dy * f'(y)`` from the forward op's output `y` and the incoming
gradient `dy` (inputs ``(y, dy)``); its gradient is ``[grad * dy * d f'(y)/dy, grad * f'(y)]``,
the second written with the op itself where TF does. `y` is the forward output, so the first
gradient is the derivative through `y` as a tensor, as in TF.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply

Grads = list[Tensor | None]


def _sigmoid_grad_grad(op: Operation, grad: Tensor) -> Grads:
    y, dy = op.inputs  # dy * y * (1 - y)
    scaled = grad * dy
    return [scaled - 2.0 * scaled * y, apply("SigmoidGrad", [y, grad])]


def _tanh_grad_grad(op: Operation, grad: Tensor) -> Grads:
    y, dy = op.inputs  # dy * (1 - y^2)
    return [grad * -2.0 * dy * y, apply("TanhGrad", [y, grad])]


def _sqrt_grad_grad(op: Operation, grad: Tensor) -> Grads:
    y, _ = op.inputs  # dy * 0.5 / y
    over_y = grad / y
    return [-over_y * op.outputs[0], 0.5 * over_y]


def _rsqrt_grad_grad(op: Operation, grad: Tensor) -> Grads:
    y, dy = op.inputs  # dy * -0.5 * y^3
    return [-1.5 * grad * dy * y * y, apply("RsqrtGrad", [y, grad])]


def _reciprocal_grad_grad(op: Operation, grad: Tensor) -> Grads:
    y, dy = op.inputs  # -dy * y^2
    return [-2.0 * grad * dy * y, apply("ReciprocalGrad", [y, grad])]


def register_gradients(registry: Any) -> None:
    registry.add("SigmoidGrad", _sigmoid_grad_grad)
    registry.add("TanhGrad", _tanh_grad_grad)
    registry.add("SqrtGrad", _sqrt_grad_grad)
    registry.add("RsqrtGrad", _rsqrt_grad_grad)
    registry.add("ReciprocalGrad", _reciprocal_grad_grad)
