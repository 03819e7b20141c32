"""Gradient functions of the convolutions beyond Conv2D: the depthwise convolution, and Conv2D's
two backprops (so ``conv2d_transpose``, built on ``Conv2DBackpropInput``, is differentiable), as
TF's ``nn_grad.py``.

Contract: each function is ``fn(op, *grads) -> [gradient or None per input]`` and passes the
forward op's attrs on. Shape inputs (``input_sizes``, ``filter_sizes``) get no gradient. A
backprop is linear in each of its tensor inputs, so its gradients are the forward convolution
and the other backprop.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_builder import apply
from tensorweave.plugins.standard_ops.depthwise import DEPTHWISE_ATTRS
from tensorweave.plugins.standard_ops.grad_util import shape
from tensorweave.plugins.standard_ops.nn import CONV2D_ATTRS

Grads = list[Tensor | None]


def _attrs(op: Operation, names: dict[str, Any]) -> dict[str, Any]:
    return {k: op.get_attr(k) for k in names}


def _depthwise_grad(op: Operation, grad: Tensor) -> Grads:
    image, kernel = op.inputs
    attrs = _attrs(op, DEPTHWISE_ATTRS)
    return [apply("DepthwiseConv2dNativeBackpropInput", [shape(image), kernel, grad], attrs),
            apply("DepthwiseConv2dNativeBackpropFilter", [image, shape(kernel), grad], attrs)]


def _conv2d_backprop_input_grad(op: Operation, grad: Tensor) -> Grads:
    _, kernel, dy = op.inputs
    attrs = _attrs(op, CONV2D_ATTRS)
    return [None, apply("Conv2DBackpropFilter", [grad, shape(kernel), dy], attrs),
            apply("Conv2D", [grad, kernel], attrs)]


def _conv2d_backprop_filter_grad(op: Operation, grad: Tensor) -> Grads:
    image, _, dy = op.inputs
    attrs = _attrs(op, CONV2D_ATTRS)
    return [apply("Conv2DBackpropInput", [shape(image), grad, dy], attrs), None,
            apply("Conv2D", [image, grad], attrs)]


def register(registry: Any) -> None:
    registry.add("DepthwiseConv2dNative", _depthwise_grad)
    registry.add("Conv2DBackpropInput", _conv2d_backprop_input_grad)
    registry.add("Conv2DBackpropFilter", _conv2d_backprop_filter_grad)
