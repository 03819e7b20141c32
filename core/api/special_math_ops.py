"""Special functions: ``lgamma``, ``digamma``, ``polygamma``, ``zeta``, ``igamma``,
``igammac``, ``betainc``, ``lbeta`` and the Bessel functions ``bessel_i0e``, ``bessel_i1e``,
``bessel_i0``, ``bessel_i1``.

Contract: names, signatures and defaults are ``tf.compat.v1``'s. `__all__` lists the names TF1
exports at top level (``tf.lgamma`` ... ``tf.lbeta``); the Bessel functions exist only under
``tw.math``. Operands of the multi-input functions convert as binary math ops do: a Python value
takes the dtype of a tensor operand, so two tensors of different dtypes raise `TypeError` at
construction. ``lbeta``, ``bessel_i0`` and ``bessel_i1`` are TF's composites, built under a
name scope named after themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.api import math_ops
from tensorweave.api.scopes import name_scope
from tensorweave.engine.graph.constant_op import convert_to_tensor, is_tensor_like
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import apply

__all__ = ["betainc", "digamma", "igamma", "igammac", "lbeta", "lgamma", "polygamma", "zeta"]


def _unary(op: str, py_name: str) -> Callable[..., Tensor]:
    def fn(x: Any, name: str | None = None) -> Tensor:
        return apply(op, [x], name=name or op)

    fn.__name__ = fn.__qualname__ = py_name
    fn.__doc__ = f"Elementwise `{op}` of `x`."
    return fn


def _binary(op: str, py_name: str, first: str, second: str) -> Callable[..., Tensor]:
    def fn(x: Any, y: Any, name: str | None = None) -> Tensor:
        return apply(op, list(math_ops.binary_inputs(x, y)), name=name or op)

    fn.__name__ = fn.__qualname__ = py_name
    fn.__doc__ = f"Elementwise `{op}` of `{first}` and `{second}`, with broadcasting."
    return fn


lgamma = _unary("Lgamma", "lgamma")
digamma = _unary("Digamma", "digamma")
bessel_i0e = _unary("BesselI0e", "bessel_i0e")
bessel_i1e = _unary("BesselI1e", "bessel_i1e")
polygamma = _binary("Polygamma", "polygamma", "a", "x")
zeta = _binary("Zeta", "zeta", "x", "q")
igamma = _binary("Igamma", "igamma", "a", "x")
igammac = _binary("Igammac", "igammac", "a", "x")


def betainc(a: Any, b: Any, x: Any, name: str | None = None) -> Tensor:
    """Regularized incomplete beta I_x(a, b). Non-scalar operands must share one shape."""
    operands = [a, b, x]
    first = next((v for v in operands if is_tensor_like(v)), None)
    dtype = None if first is None else convert_to_tensor(first).dtype
    tensors = [convert_to_tensor(v, dtype=None if is_tensor_like(v) else dtype)
               for v in operands]
    return apply("Betainc", tensors, name=name or "Betainc")


def lbeta(x: Any, name: str | None = None) -> Tensor:
    """log |Beta(z)| with z the last dimension of `x`: sum(lgamma(z)) - lgamma(sum(z)); an empty
    last dimension gives -inf (the empty sum is 0 and lgamma(0) = inf)."""
    with name_scope(name, "lbeta", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        log_prod_gamma = math_ops.reduce_sum(lgamma(x), axis=[-1])
        log_gamma_sum = lgamma(math_ops.reduce_sum(x, axis=[-1]))
        return apply("Sub", [log_prod_gamma, log_gamma_sum], name=scope)


def bessel_i0(x: Any, name: str | None = None) -> Tensor:
    """The modified Bessel function I0, as exp(|x|) * bessel_i0e(x)."""
    with name_scope(name, "bessel_i0", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return apply("Mul", [math_ops.exp(math_ops.abs(x)), bessel_i0e(x)], name=scope)


def bessel_i1(x: Any, name: str | None = None) -> Tensor:
    """The modified Bessel function I1, as exp(|x|) * bessel_i1e(x)."""
    with name_scope(name, "bessel_i1", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return apply("Mul", [math_ops.exp(math_ops.abs(x)), bessel_i1e(x)], name=scope)
