"""Gradient functions of the special-function ops, as TF 1.15's ``math_grad.py``.

Contract: each function is ``fn(op, grad) -> [gradient or None per input]``; broadcasting ops
sum each gradient back to its operand's shape. Where TF has no derivative the gradient is None:
the order of ``Polygamma`` and the first argument of ``Zeta``, and ``a``, ``b`` of ``Betainc``.
``IgammaGradA`` has no gradient (a second derivative in ``a`` raises `LookupError`, as in TF).
The ``Betainc`` derivative in ``x`` uses ``xlogy`` so that it is finite rather than NaN at
x = 0 for a = 1 and at x = 1 for b = 1 (TF 2's form of the same expression).
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops, special_math_ops
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.plugins.standard_ops.grad_util import unbroadcast

Grads = list[Tensor | None]


def _lgamma_grad(op: Operation, grad: Tensor) -> Grads:
    return [grad * special_math_ops.digamma(op.inputs[0])]


def _digamma_grad(op: Operation, grad: Tensor) -> Grads:
    return [grad * special_math_ops.polygamma(1, op.inputs[0])]


def _polygamma_grad(op: Operation, grad: Tensor) -> Grads:
    n, x = op.inputs
    return list(unbroadcast(n, x, None, grad * special_math_ops.polygamma(n + 1, x)))


def _zeta_grad(op: Operation, grad: Tensor) -> Grads:
    x, q = op.inputs
    return list(unbroadcast(x, q, None, grad * -x * special_math_ops.zeta(x + 1, q)))


def _igamma_partials(op: Operation, grad: Tensor) -> tuple[Tensor, Tensor]:
    a, x = op.inputs
    partial_a = apply("IgammaGradA", [a, x])
    # the density x^(a-1) e^-x / Gamma(a), in log space since Gamma(a) overflows early
    partial_x = math_ops.exp(-x + (a - 1) * math_ops.log(x) - special_math_ops.lgamma(a))
    return grad * partial_a, grad * partial_x


def _igamma_grad(op: Operation, grad: Tensor) -> Grads:
    ga, gx = _igamma_partials(op, grad)
    return list(unbroadcast(op.inputs[0], op.inputs[1], ga, gx))


def _igammac_grad(op: Operation, grad: Tensor) -> Grads:
    ga, gx = _igamma_partials(op, grad)
    return list(unbroadcast(op.inputs[0], op.inputs[1], -ga, -gx))


def _betainc_grad(op: Operation, grad: Tensor) -> Grads:
    a, b, x = op.inputs
    lgamma = special_math_ops.lgamma
    log_beta = lgamma(a) + lgamma(b) - lgamma(a + b)
    partial_x = math_ops.exp(math_ops.xlogy(b - 1, 1 - x) + math_ops.xlogy(a - 1, x) - log_beta)
    _, gx = unbroadcast(op.outputs[0], x, None, grad * partial_x)
    return [None, None, gx]


def _bessel_i0e_grad(op: Operation, grad: Tensor) -> Grads:
    x, y = op.inputs[0], op.outputs[0]
    return [grad * (special_math_ops.bessel_i1e(x) - math_ops.sign(x) * y)]


def _bessel_i1e_grad(op: Operation, grad: Tensor) -> Grads:
    x, y = op.inputs[0], op.outputs[0]
    # the general form divides by x; its limit at 0 is 1/2
    general = special_math_ops.bessel_i0e(x) - y * (math_ops.sign(x) + math_ops.reciprocal(x))
    at_zero = array_ops.ones_like(x) * 0.5
    return [grad * array_ops.where(math_ops.equal(x, 0), at_zero, general)]


GRADIENTS: dict[str, Any] = {
    "Lgamma": _lgamma_grad, "Digamma": _digamma_grad, "Polygamma": _polygamma_grad,
    "Zeta": _zeta_grad, "Igamma": _igamma_grad, "Igammac": _igammac_grad,
    "Betainc": _betainc_grad, "BesselI0e": _bessel_i0e_grad, "BesselI1e": _bessel_i1e_grad,
}


def register_gradients(registry: Any) -> None:
    for name, fn in GRADIENTS.items():
        registry.add(name, fn)
