"""Gradient functions of max pooling with argmax and of morphological dilation, with the maths
of TF's ``nn_grad.py``.

Contract: each function is ``fn(op, *grads) -> [gradient or None per input]`` and passes the
forward op's attrs on. The argmax output and argmax inputs are indices and get no gradient; the
pooled input of the argmax gradient ops only fixes a shape and gets zeros.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.plugins.standard_ops.nn_extra import ARGMAX_ATTRS, DILATION_ATTRS

Grads = list[Tensor | None]


def _attrs(op: Operation, names: dict[str, Any]) -> dict[str, Any]:
    return {k: op.get_attr(k) for k in names}


def _max_pool_with_argmax_grad(op: Operation, grad: Tensor, _argmax_grad: Any) -> Grads:
    attrs = _attrs(op, ARGMAX_ATTRS)
    return [apply("MaxPoolGradWithArgmax", [op.inputs[0], grad, op.outputs[1]], attrs)]


def _argmax_grad_op(grad_op: str) -> Any:
    def grad_fn(op: Operation, grad: Tensor) -> Grads:
        image, _, argmax = op.inputs
        attrs = _attrs(op, ARGMAX_ATTRS)
        return [array_ops.zeros_like(image), apply(grad_op, [image, grad, argmax], attrs), None]

    return grad_fn


def _dilation2d_grad(op: Operation, grad: Tensor) -> Grads:
    image, kernel = op.inputs
    attrs = _attrs(op, DILATION_ATTRS)
    return [apply("Dilation2DBackpropInput", [image, kernel, grad], attrs),
            apply("Dilation2DBackpropFilter", [image, kernel, grad], attrs)]


def register_gradients(registry: Any) -> None:
    registry.add("MaxPoolWithArgmax", _max_pool_with_argmax_grad)
    registry.add("MaxPoolGradWithArgmax", _argmax_grad_op("MaxPoolGradGradWithArgmax"))
    registry.add("MaxPoolGradGradWithArgmax", _argmax_grad_op("MaxPoolGradWithArgmax"))
    registry.add("Dilation2D", _dilation2d_grad)
