"""The gradient of ``RandomGamma`` with respect to `alpha`, as TF's ``random_grad.py``:
implicit reparameterization (Figurnov et al., 2018) through the ``RandomGammaGrad`` op.

Contract: a sample tensor has shape ``shape + alpha.shape``; the derivative of each sample with
respect to its own alpha element comes from ``RandomGammaGrad(alpha, sample)`` (alpha given
leading unit dimensions to broadcast), and the incoming gradient times it is summed over the
``len(shape)`` leading sample dimensions. `shape` gets no gradient.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.plugins.standard_ops.grad_util import shape

Grads = list[Tensor | None]


def _random_gamma_grad(op: Operation, grad: Tensor) -> Grads:
    sample_shape, alpha = op.inputs
    leading = array_ops.size(sample_shape, out_type=dtypes.int32)
    unit = array_ops.ones(array_ops.reshape(leading, [1]), dtype=dtypes.int32)
    broadcastable = array_ops.reshape(alpha, array_ops.concat([unit, shape(alpha)], 0))
    partial = apply("RandomGammaGrad", [broadcastable, op.outputs[0]])
    return [None, math_ops.reduce_sum(grad * partial, array_ops.range(leading))]


def register_gradients(registry: Any) -> None:
    registry.add("RandomGamma", _random_gamma_grad)
