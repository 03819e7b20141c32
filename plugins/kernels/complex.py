"""Kernels of the complex-number ops: ``Complex``, ``Real``, ``Imag``, ``Angle``,
``ComplexAbs``, ``Conj`` and ``ConjugateTranspose``.

Contract: results have exactly the node's output dtype and are fresh C-contiguous arrays (a
part of a complex array is a strided view of it). ``Complex`` broadcasts with TF's error
wording; ``ConjugateTranspose`` validates `perm` as ``Transpose`` does.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels.array import transpose
from tensorweave.plugins.kernels.math import elementwise


def complex_(ctx: KernelContext, real: Any, imag: Any) -> Any:
    xp = ctx.xp
    real, imag = xp.broadcast_arrays(real, imag)
    # filled part by part: real + 1j * imag would turn an infinite imag into a NaN real part
    out = xp.empty(real.shape, ctx.out_np)
    out.real = real
    out.imag = imag
    return out


def _part(name: str) -> Any:
    def kernel(ctx: KernelContext, z: Any) -> Any:
        return ctx.xp.ascontiguousarray(getattr(ctx.xp, name)(z), dtype=ctx.out_np)

    kernel.__name__ = name
    return kernel


def conj(ctx: KernelContext, z: Any) -> Any:
    return ctx.xp.conj(z)


def conjugate_transpose(ctx: KernelContext, x: Any, perm: Any) -> Any:
    return ctx.xp.ascontiguousarray(ctx.xp.conj(transpose(ctx, x, perm)))


def register(registry: Any, device_type: str) -> None:
    registry.add("Complex", device_type, elementwise(complex_))
    for op, name in (("Real", "real"), ("Imag", "imag"), ("Angle", "angle"),
                     ("ComplexAbs", "abs")):
        registry.add(op, device_type, _part(name))
    registry.add("Conj", device_type, conj)
    registry.add("ConjugateTranspose", device_type, conjugate_transpose)
