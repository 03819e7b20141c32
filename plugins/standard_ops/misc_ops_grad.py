"""Gradients of the utility ops of ``misc_ops``: ``CheckNumerics`` checks the incoming gradient
(TF's ``_CheckNumericsGrad`` message), ``IdentityN`` and ``GuaranteeConst`` pass it through, and
the clock, file and string ops are not differentiable."""

from __future__ import annotations

from typing import Any

from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply

GRADIENT_CHECK_PREFIX = "Not a number (NaN) or infinity (Inf) values detected in gradient. "


def _check_numerics_grad(op: Operation, grad: Tensor) -> list[Tensor]:
    message = GRADIENT_CHECK_PREFIX + op.get_attr("message")
    return [apply("CheckNumerics", [grad], {"message": message})]


def _pass_through(op: Operation, *grads: Tensor) -> list[Tensor]:
    return list(grads)


def register_gradients(registry: Any) -> None:
    registry.add("CheckNumerics", _check_numerics_grad)
    registry.add("IdentityN", _pass_through)
    registry.add("GuaranteeConst", _pass_through)
    for name in ("SerializeTensor", "ParseTensor", "Timestamp", "MatchingFiles",
                 "DecodeCompressed"):
        registry.add(name, None)
