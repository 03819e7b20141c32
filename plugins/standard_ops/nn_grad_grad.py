"""Gradients of the nn backprop ops, so gradients of gradients (double backprop: gradient
penalties, Hessians) flow through activations, bias, pooling and depthwise convolutions, as
TF's ``nn_grad.py``.

Contract: each function is ``fn(op, *grads) -> [gradient or None per input]``, with `grad` the
gradient of the backprop op's output. An activation backprop ``g * f'(x)`` is linear in `g`, so
its `g` gradient is the same backprop applied to `grad`; its `x` gradient is ``g * grad *
f''(x)``: zero for the piecewise-linear activations, as TF returns. ``MaxPoolGrad`` and
``MaxPoolGradGrad`` are each other's gradient in their third input (the pooling choice is held
fixed, so the first two inputs get zeros); ``AvgPoolGrad``'s is the average pool of `grad`; the
depthwise backprops follow the convolution pattern of `conv_grad`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.plugins.standard_ops.conv_grad import (
    convolution_grads,
    max_pool_backprop_grads,
    op_attrs,
)
from tensorweave.plugins.standard_ops.depthwise import DEPTHWISE_ATTRS
from tensorweave.plugins.standard_ops.grad_util import shape
from tensorweave.plugins.standard_ops.nn import POOL_ATTRS

Grads = list[Tensor | None]


def _linear_in_gradients(op: Operation, grad: Tensor) -> Grads:
    """ReluGrad, Relu6Grad, LeakyReluGrad: piecewise linear, so no curvature in `features`."""
    x = op.inputs[1]
    attrs = {"alpha": op.get_attr("alpha")} if op.type == "LeakyReluGrad" else None
    return [apply(op.type, [grad, x], attrs), array_ops.zeros_like(x)]


def _through_output(op: Operation, grad: Tensor) -> Grads:
    """EluGrad, SeluGrad ``(g, y)``: below zero the derivative is ``y + c``, so its slope in
    `y` is 1 there and 0 above."""
    g, y = op.inputs
    curvature = array_ops.where(y < 0, grad * g, array_ops.zeros_like(y))
    return [apply(op.type, [grad, y]), curvature]


def _softplus_grad_grad(op: Operation, grad: Tensor) -> Grads:
    # softplus'(x) = sigmoid(x); sigmoid'(x) = 1 / (e^-x + 2 + e^x), which stays finite.
    g, x = op.inputs
    second = 1.0 / (math_ops.exp(-x) + 2.0 + math_ops.exp(x))
    return [apply("SoftplusGrad", [grad, x]), grad * g * second]


def _bias_add_grad_grad(op: Operation, grad: Tensor) -> Grads:
    """BiasAddGrad sums over every axis but the channel one; its gradient spreads `grad` back."""
    dy = op.inputs[0]
    kept = grad  # NHWC: [C] broadcasts against [..., C] as it is
    if op.get_attr("data_format") == "NCHW":
        # [C, 1, ..., 1] broadcasts against [N, C, H, ...].
        ones = array_ops.ones([array_ops.rank(dy) - 2], dtype=dtypes.int32)
        kept = array_ops.reshape(grad, array_ops.concat([shape(grad), ones], 0))
    return [array_ops.broadcast_to(kept, shape(dy))]


def _avg_pool_grad_grad(op: Operation, grad: Tensor) -> Grads:
    return [None, apply("AvgPool", [grad], op_attrs(op, POOL_ATTRS))]


def register_gradients(registry: Any) -> None:
    for name in ("ReluGrad", "Relu6Grad", "LeakyReluGrad"):
        registry.add(name, _linear_in_gradients)
    for name in ("EluGrad", "SeluGrad"):
        registry.add(name, _through_output)
    registry.add("SoftplusGrad", _softplus_grad_grad)
    registry.add("BiasAddGrad", _bias_add_grad_grad)
    for name, fn in max_pool_backprop_grads("MaxPoolGrad", "MaxPoolGradGrad",
                                            POOL_ATTRS).items():
        registry.add(name, fn)
    registry.add("AvgPoolGrad", _avg_pool_grad_grad)
    depthwise = convolution_grads("DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
                                  "DepthwiseConv2dNativeBackpropFilter", DEPTHWISE_ATTRS)
    for name in ("DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter"):
        registry.add(name, depthwise[name])
