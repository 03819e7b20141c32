"""Gradient functions of the convolutions beyond Conv2D: the depthwise convolution, and Conv2D's
two backprops (so ``conv2d_transpose``, built on ``Conv2DBackpropInput``, is differentiable), as
TF's ``nn_grad.py``.

Contract: each function is ``fn(op, *grads) -> [gradient or None per input]`` and passes the
forward op's attrs on. Shape inputs (``input_sizes``, ``filter_sizes``) get no gradient. A
backprop is linear in each of its tensor inputs, so its gradients are the forward convolution
and the other backprop. `convolution_grads` builds these functions for any convolution family
(2-D, 3-D, depthwise) from its three op names; `max_pool_backprop_grads` those of a max pool's
two backprops, each the other's gradient.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.api import array_ops
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.plugins.standard_ops.depthwise import DEPTHWISE_ATTRS
from tensorweave.plugins.standard_ops.grad_util import shape
from tensorweave.plugins.standard_ops.nn import CONV2D_ATTRS

Grads = list[Tensor | None]
GradFn = Callable[[Operation, Tensor], Grads]


def op_attrs(op: Operation, names: dict[str, Any]) -> dict[str, Any]:
    """`op`'s values of the attrs `names`, to pass on to the ops of its gradient."""
    return {k: op.get_attr(k) for k in names}


def convolution_grads(forward: str, backprop_input: str, backprop_filter: str,
                      names: dict[str, Any]) -> dict[str, GradFn]:
    """The gradient functions of the convolution `forward` and of its two backprops, keyed by
    op name; `names` are the attrs the three ops share."""

    def forward_grad(op: Operation, grad: Tensor) -> Grads:
        image, kernel = op.inputs
        attrs = op_attrs(op, names)
        return [apply(backprop_input, [shape(image), kernel, grad], attrs),
                apply(backprop_filter, [image, shape(kernel), grad], attrs)]

    def backprop_input_grad(op: Operation, grad: Tensor) -> Grads:
        _, kernel, dy = op.inputs
        attrs = op_attrs(op, names)
        return [None, apply(backprop_filter, [grad, shape(kernel), dy], attrs),
                apply(forward, [grad, kernel], attrs)]

    def backprop_filter_grad(op: Operation, grad: Tensor) -> Grads:
        image, _, dy = op.inputs
        attrs = op_attrs(op, names)
        return [apply(backprop_input, [shape(image), grad, dy], attrs), None,
                apply(forward, [image, grad], attrs)]

    return {forward: forward_grad, backprop_input: backprop_input_grad,
            backprop_filter: backprop_filter_grad}


def max_pool_backprop_grads(backprop: str, backprop_grad: str,
                            names: dict[str, Any]) -> dict[str, GradFn]:
    """The gradient functions of a max pool's backprops `backprop` and `backprop_grad` (inputs
    ``orig_input, orig_output, grad``), keyed by op name: each is the other applied to the
    incoming gradient, the pooling choice held fixed so the pooled tensors get zeros; `names`
    are the attrs the two ops share."""

    def through(other: str) -> GradFn:
        def fn(op: Operation, grad: Tensor) -> Grads:
            image, pooled, _ = op.inputs
            return [array_ops.zeros_like(image), array_ops.zeros_like(pooled),
                    apply(other, [image, pooled, grad], op_attrs(op, names))]

        return fn

    return {backprop: through(backprop_grad), backprop_grad: through(backprop)}


def register_gradients(registry: Any) -> None:
    depthwise = convolution_grads("DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
                                  "DepthwiseConv2dNativeBackpropFilter", DEPTHWISE_ATTRS)
    conv2d = convolution_grads("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter",
                               CONV2D_ATTRS)
    # Conv2D's own gradient is registered with the other core nn ops (nn_grad); the depthwise
    # backprops' with the other second-order gradients (nn_grad_grad).
    registry.add("DepthwiseConv2dNative", depthwise["DepthwiseConv2dNative"])
    registry.add("Conv2DBackpropInput", conv2d["Conv2DBackpropInput"])
    registry.add("Conv2DBackpropFilter", conv2d["Conv2DBackpropFilter"])
