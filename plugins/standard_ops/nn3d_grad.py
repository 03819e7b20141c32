"""Gradient functions of the 3-D convolution and pooling ops, with the maths of TF's
``nn_grad.py``.

Contract: each function is ``fn(op, *grads) -> [gradient or None per input]`` and passes the
forward op's attrs on. Shape inputs get no gradient. The convolution and its backprops are linear
in each tensor input, so each one's gradients are the other two (`conv_grad.convolution_grads`).
``MaxPool3DGrad`` and ``MaxPool3DGradGrad`` are linear in their incoming gradient and piecewise
constant in the pooled tensors, which get zeros.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.plugins.standard_ops.conv_grad import (
    convolution_grads,
    max_pool_backprop_grads,
    op_attrs,
)
from tensorweave.plugins.standard_ops.grad_util import shape
from tensorweave.plugins.standard_ops.nn3d import CONV3D_ATTRS, POOL3D_ATTRS

Grads = list[Tensor | None]

_CONV3D_GRADS = convolution_grads("Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2",
                                  CONV3D_ATTRS)


def _avg_pool3d_grad(op: Operation, grad: Tensor) -> Grads:
    return [apply("AvgPool3DGrad", [shape(op.inputs[0]), grad], op_attrs(op, POOL3D_ATTRS))]


def _avg_pool3d_grad_grad(op: Operation, grad: Tensor) -> Grads:
    return [None, apply("AvgPool3D", [grad], op_attrs(op, POOL3D_ATTRS))]


def _max_pool3d_grad(op: Operation, grad: Tensor) -> Grads:
    image, output = op.inputs[0], op.outputs[0]
    return [apply("MaxPool3DGrad", [image, output, grad], op_attrs(op, POOL3D_ATTRS))]


def register_gradients(registry: Any) -> None:
    for name, fn in {
        **_CONV3D_GRADS, "AvgPool3D": _avg_pool3d_grad, "AvgPool3DGrad": _avg_pool3d_grad_grad,
        "MaxPool3D": _max_pool3d_grad,
        **max_pool_backprop_grads("MaxPool3DGrad", "MaxPool3DGradGrad", POOL3D_ATTRS),
    }.items():
        registry.add(name, fn)
