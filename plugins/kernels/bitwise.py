"""Kernels of the bitwise ops (see `tensorweave.plugins.standard_ops.bitwise`).

Contract: results have the input dtype (``PopulationCount``: uint8). Shift amounts are clamped
to ``[0, bits - 1]`` as TF's kernels do, so a shift by the width or more (or by a negative
amount) is defined: ``LeftShift`` shifts the bits as unsigned (a signed result may wrap to
negative), ``RightShift`` is arithmetic for signed types. ``PopulationCount`` has kernels for
int8..int64, uint8 and uint16 only, as TF 1.x registers it; uint32/uint64 find no kernel.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels.math import elementwise

POPULATION_COUNT_TYPES = dtypes.INTEGERS


def _clamped_shift(ctx: KernelContext, y: Any) -> Any:
    bits = ctx.xp.dtype(ctx.out_np).itemsize * 8
    return ctx.xp.clip(y, 0, bits - 1)


def left_shift(ctx: KernelContext, x: Any, y: Any) -> Any:
    return ctx.xp.left_shift(x, _clamped_shift(ctx, y))


def right_shift(ctx: KernelContext, x: Any, y: Any) -> Any:
    return ctx.xp.right_shift(x, _clamped_shift(ctx, y))


def invert(ctx: KernelContext, x: Any) -> Any:
    return ctx.xp.invert(x)


def population_count(ctx: KernelContext, x: Any) -> Any:
    xp = ctx.xp
    nbits = x.dtype.itemsize * 8
    as_bytes = xp.ascontiguousarray(x).reshape(-1).view(xp.uint8)
    bits = xp.unpackbits(as_bytes).reshape(-1, nbits)
    return bits.sum(axis=1, dtype=xp.uint8).reshape(x.shape)


def _ufunc(name: str) -> Any:
    def fn(ctx: KernelContext, x: Any, y: Any) -> Any:
        return getattr(ctx.xp, name)(x, y)

    fn.__name__ = name
    return fn


def register(registry: Any, device_type: str) -> None:
    for op, name in (("BitwiseAnd", "bitwise_and"), ("BitwiseOr", "bitwise_or"),
                     ("BitwiseXor", "bitwise_xor")):
        registry.add(op, device_type, elementwise(_ufunc(name)))
    registry.add("LeftShift", device_type, elementwise(left_shift))
    registry.add("RightShift", device_type, elementwise(right_shift))
    registry.add("Invert", device_type, invert)
    registry.add("PopulationCount", device_type, population_count,
                 dtypes=POPULATION_COUNT_TYPES)
