"""Kernels of the discrete Fourier transforms (``FFT*``, ``IFFT*``, ``RFFT*``, ``IRFFT*``) on
the array module's ``fft`` (``numpy.fft``, ``cupy.fft``).

Contract: each transforms the innermost 1, 2 or 3 dims and returns exactly the node's dtype
(``numpy.fft`` computes in double precision). ``fft_length`` crops or zero-pads the inner dims as
TF does; a negative ``fft_length`` raises `InvalidArgumentError`, and a transform with nothing
to transform (an empty input or a zero length) gives zeros of the result's shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext

RANKS = {"": 1, "2D": 2, "3D": 3}


def _axes(ctx: KernelContext, x: Any, rank: int) -> tuple[int, ...]:
    if x.ndim < rank:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"Input must have rank of at least {rank} but got: {x.ndim}")
    return tuple(range(x.ndim - rank, x.ndim))


def _complex(rank: int, inverse: bool) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, x: Any) -> Any:
        axes = _axes(ctx, x, rank)
        if x.size == 0:
            return ctx.xp.zeros(x.shape, ctx.out_np)
        fn = ctx.xp.fft.ifftn if inverse else ctx.xp.fft.fftn
        return fn(x, axes=axes).astype(ctx.out_np, copy=False)

    return kernel


def _real(rank: int, inverse: bool) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, x: Any, fft_length: Any) -> Any:
        axes = _axes(ctx, x, rank)
        lengths = [int(n) for n in fft_length.reshape(-1).tolist()]
        if any(n < 0 for n in lengths):
            raise errors.InvalidArgumentError(
                ctx.node_name, ctx.op, f"fft_length must be non-negative, got {lengths}")
        inner = [*lengths[:-1], lengths[-1] if inverse else lengths[-1] // 2 + 1]
        if not lengths[-1]:
            inner[-1] = 0
        shape = (*x.shape[:-rank], *inner)
        xp = ctx.xp
        if 0 in shape or 0 in x.shape:
            return xp.zeros(shape, ctx.out_np)
        fn = xp.fft.irfftn if inverse else xp.fft.rfftn
        return fn(x, s=lengths, axes=axes).astype(ctx.out_np, copy=False)

    return kernel


def register(registry: Any, device_type: str) -> None:
    for suffix, rank in RANKS.items():
        registry.add(f"FFT{suffix}", device_type, _complex(rank, inverse=False), expensive=True)
        registry.add(f"IFFT{suffix}", device_type, _complex(rank, inverse=True), expensive=True)
        registry.add(f"RFFT{suffix}", device_type, _real(rank, inverse=False), expensive=True)
        registry.add(f"IRFFT{suffix}", device_type, _real(rank, inverse=True), expensive=True)
