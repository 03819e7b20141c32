"""Gradient functions of the nn ops: activations, softmax and cross-entropies, L2 loss, bias,
convolution and pooling, as TF's ``nn_grad.py``.

Contract: each function is ``fn(op, *grads) -> [gradient or None per input]``. Activations use
the fused ``*Grad`` ops of `tensorweave.plugins.standard_ops.grad_ops`; convolution and pooling
use TF's backprop ops with the forward op's attrs. The cross-entropy ops differentiate their loss
output, from the backprop they already computed, and also their second output when it received
a gradient. Labels get a gradient in the dense cross-entropy, as in TF, and none in the sparse
one.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops, nn_ops
from tensorweave.api.gradients import is_zero_fill
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.plugins.standard_ops.grad_util import shape, unbroadcast
from tensorweave.plugins.standard_ops.nn import CONV2D_ATTRS, LRN_ATTRS, POOL_ATTRS

Grads = list[Tensor | None]

ACTIVATIONS = {
    "Relu": ("ReluGrad", "input"), "Relu6": ("Relu6Grad", "input"),
    "Softplus": ("SoftplusGrad", "input"), "Softsign": ("SoftsignGrad", "input"),
    "Elu": ("EluGrad", "output"), "Selu": ("SeluGrad", "output"),
}


def _activation(grad_op: str, source: str) -> Any:
    def grad_fn(op: Operation, grad: Tensor) -> Grads:
        t = op.inputs[0] if source == "input" else op.outputs[0]
        return [apply(grad_op, [grad, t])]

    return grad_fn


def _leaky_relu_grad(op: Operation, grad: Tensor) -> Grads:
    return [apply("LeakyReluGrad", [grad, op.inputs[0]], {"alpha": op.get_attr("alpha")})]


def _softmax_grad(op: Operation, grad: Tensor) -> Grads:
    y = op.outputs[0]
    return [(grad - math_ops.reduce_sum(grad * y, -1, keepdims=True)) * y]


def _log_softmax_grad(op: Operation, grad: Tensor) -> Grads:
    return [grad - math_ops.reduce_sum(grad, -1, keepdims=True) * math_ops.exp(op.outputs[0])]


def _xent_logits_grad(op: Operation, grad_loss: Tensor, grad_grad: Tensor | None) -> Tensor:
    grad = array_ops.expand_dims(grad_loss, -1) * op.outputs[1]
    if grad_grad is not None and not is_zero_fill(grad_grad):
        softmax = nn_ops.softmax(op.inputs[0])
        along = math_ops.reduce_sum(grad_grad * softmax, -1, keepdims=True)
        grad = grad + (grad_grad - along) * softmax
    return grad


def _softmax_xent_grad(op: Operation, grad_loss: Tensor, grad_grad: Tensor | None) -> Grads:
    logits, labels = op.inputs
    logits_grad = _xent_logits_grad(op, grad_loss, grad_grad)
    # TF's _BroadcastMul(grad_loss, -log_softmax(logits)), its ops in TF's order
    minus_log_softmax = -nn_ops.log_softmax(logits)
    labels_grad = array_ops.expand_dims(grad_loss, -1) * minus_log_softmax
    if _shape_list(logits) != _shape_list(labels):
        # The op broadcast one operand (labels of one row for all rows): sum back to it.
        return list(unbroadcast(logits, labels, logits_grad, labels_grad))
    return [logits_grad, labels_grad]


def _shape_list(t: Tensor) -> list[int | None] | None:
    return t.shape.as_list() if t.shape.ndims is not None else None


def _sparse_softmax_xent_grad(op: Operation, grad_loss: Tensor,
                              grad_grad: Tensor | None) -> Grads:
    return [_xent_logits_grad(op, grad_loss, grad_grad), None]


def _l2_loss_grad(op: Operation, grad: Tensor) -> Grads:
    return [op.inputs[0] * grad]


def _bias_add_grad(op: Operation, grad: Tensor) -> Grads:
    data_format = op.get_attr("data_format")
    return [grad, apply("BiasAddGrad", [grad], {"data_format": data_format})]


def _conv2d_grad(op: Operation, grad: Tensor) -> Grads:
    image, kernel = op.inputs
    attrs = {k: op.get_attr(k) for k in CONV2D_ATTRS}
    return [apply("Conv2DBackpropInput", [shape(image), kernel, grad], attrs),
            apply("Conv2DBackpropFilter", [image, shape(kernel), grad], attrs)]


def _max_pool_grad(op: Operation, grad: Tensor) -> Grads:
    attrs = {k: op.get_attr(k) for k in POOL_ATTRS}
    return [apply("MaxPoolGrad", [op.inputs[0], op.outputs[0], grad], attrs)]


def _max_pool_v2_grad(op: Operation, grad: Tensor) -> Grads:
    image, ksize, strides = op.inputs
    attrs = {k: op.get_attr(k) for k in ("padding", "data_format")}
    return [apply("MaxPoolGradV2", [image, op.outputs[0], grad, ksize, strides], attrs),
            None, None]


def _avg_pool_grad(op: Operation, grad: Tensor) -> Grads:
    attrs = {k: op.get_attr(k) for k in POOL_ATTRS}
    return [apply("AvgPoolGrad", [shape(op.inputs[0]), grad], attrs)]


def _lrn_grad(op: Operation, grad: Tensor) -> list[Tensor]:
    attrs = {k: op.get_attr(k) for k in LRN_ATTRS}
    return [apply("LRNGrad", [grad, op.inputs[0], op.outputs[0]], attrs)]


def register_gradients(registry: Any) -> None:
    registry.add("InTopKV2", None)
    for name, (grad_op, source) in ACTIVATIONS.items():
        registry.add(name, _activation(grad_op, source))
    for name, fn in {
        "LeakyRelu": _leaky_relu_grad, "Softmax": _softmax_grad,
        "LogSoftmax": _log_softmax_grad, "SoftmaxCrossEntropyWithLogits": _softmax_xent_grad,
        "SparseSoftmaxCrossEntropyWithLogits": _sparse_softmax_xent_grad,
        "L2Loss": _l2_loss_grad, "BiasAdd": _bias_add_grad, "Conv2D": _conv2d_grad,
        "MaxPool": _max_pool_grad, "MaxPoolV2": _max_pool_v2_grad, "AvgPool": _avg_pool_grad,
        "LRN": _lrn_grad,
    }.items():
        registry.add(name, fn)
