"""Gradients of the CTC ops: ``CTCLoss`` passes on the gradient it computed (its second output)
scaled by the incoming loss gradient, as TF's ``_CTCLossGrad``; the decoders are not
differentiable.

Contract: a gradient arriving at ``CTCLoss``'s ``gradient`` output (a second derivative of the
loss) raises `LookupError` with the message of TF's ``prevent_gradient`` there, since the fused
op has no derivative of its own gradient.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops
from tensorweave.api.gradients import is_zero_fill
from tensorweave.engine.graph.graph import Operation, Tensor

SECOND_DERIVATIVE = ("Gradient explicitly disabled. Reason: Currently there is no way to take "
                     "the second  derivative of ctc_loss due to the fused implementation's "
                     "interaction  with tf.gradients()")


def _ctc_loss_grad(op: Operation, grad_loss: Tensor,
                   grad_grad: Tensor | None) -> list[Tensor | None]:
    if grad_grad is not None and not is_zero_fill(grad_grad):
        raise LookupError(SECOND_DERIVATIVE)
    return [array_ops.expand_dims(grad_loss, -1) * op.outputs[1], None, None, None]


def register_gradients(registry: Any) -> None:
    registry.add("CTCLoss", _ctc_loss_grad)
    registry.add("CTCGreedyDecoder", None)
    registry.add("CTCBeamSearchDecoder", None)
