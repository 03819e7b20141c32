"""Kernels of TF's special-function ops: ``Lgamma``, ``Digamma``, ``Polygamma``, ``Zeta``,
``Igamma``, ``Igammac``, ``IgammaGradA``, ``Betainc``, ``BesselI0e``, ``BesselI1e``.

Contract: the numerics live in `special_functions` (float64, vectorized over ``ctx.xp``); these
kernels broadcast their operands (an incompatible pair raises `InvalidArgumentError` with TF's
"Incompatible shapes" wording) and return exactly the node's dtype. ``Betainc`` does not
broadcast, as TF: its non-scalar operands must share one shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels import special_functions as sf
from tensorweave.plugins.kernels.math import elementwise


def _unary(fn: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, x: Any) -> Any:
        return fn(ctx.xp, x)

    kernel.__name__ = fn.__name__
    return kernel


def _binary(fn: Callable[[Any, Any, Any], Any]) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, x: Any, y: Any) -> Any:
        return fn(ctx.xp, x, y)

    kernel.__name__ = fn.__name__
    return kernel


def _dims(shape: tuple[int, ...]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def betainc(ctx: KernelContext, a: Any, b: Any, x: Any) -> Any:
    named = {"a": a, "b": b, "x": x}
    names = list(named)
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            s1, s2 = named[first].shape, named[second].shape
            if s1 and s2 and s1 != s2:
                raise errors.InvalidArgumentError(
                    ctx.node_name, ctx.op,
                    f"Shapes of {first} and {second} are inconsistent: "
                    f"{_dims(s1)} vs. {_dims(s2)}")
    return sf.betainc(ctx.xp, a, b, x).astype(ctx.out_np, copy=False)


KERNELS: dict[str, Callable[..., Any]] = {
    "Lgamma": _unary(sf.lgamma),
    "Digamma": _unary(sf.digamma),
    "BesselI0e": _unary(sf.bessel_i0e),
    "BesselI1e": _unary(sf.bessel_i1e),
    "Polygamma": _binary(sf.polygamma),
    "Zeta": _binary(sf.zeta),
    "Igamma": _binary(sf.igamma),
    "Igammac": _binary(sf.igammac),
    "IgammaGradA": _binary(sf.igamma_grad_a),
}


def register(registry: Any, device_type: str) -> None:
    for op, fn in KERNELS.items():
        registry.add(op, device_type, elementwise(fn))
    registry.add("Betainc", device_type, betainc)
