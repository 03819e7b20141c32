"""Kernels for the random ops.

Contract: each node owns one numpy `Generator` (PCG64), kept in ``ctx.state`` and seeded from
its ``(seed, seed2)`` attrs, so a seeded node yields the same sequence in every new session and
a fresh number on every run; ``seed == seed2 == 0`` seeds from OS entropy. Numbers are drawn on
the host, under a per-node lock (a `Generator` is not thread-safe and concurrent steps may share
the node), and moved with ``ctx.device.from_host``, so the same kernels serve every device.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext

_SEED_MASK = (1 << 64) - 1
_HALF_BITS = 11  # float16 carries 11 significant bits: k / 2**11 is exact and below 1


def _generator(ctx: KernelContext) -> tuple[np.random.Generator, threading.Lock]:
    state = ctx.state
    gen = state.get("generator")
    if gen is None:
        seed, seed2 = int(ctx.attrs["seed"]), int(ctx.attrs["seed2"])
        entropy = None if seed == seed2 == 0 else [seed & _SEED_MASK, seed2 & _SEED_MASK]
        # setdefault is atomic: two first runs racing still share one generator.
        gen = state.setdefault("generator", np.random.default_rng(entropy))
    return gen, state.setdefault("lock", threading.Lock())


def _dims(ctx: KernelContext, shape: Any) -> tuple[int, ...]:
    host = np.asarray(ctx.device.to_host(shape))
    if host.ndim != 1:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"shape must be a vector of {{int32,int64}}, got shape "
                                   f"{list(host.shape)}")
    dims = tuple(int(d) for d in host)
    for d in dims:
        if d < 0:
            raise errors.InvalidArgumentError(ctx.node_name, ctx.op,
                                              f"Dimension {d} must be >= 0")
    return dims


def _draw(ctx: KernelContext, fn: Callable[[np.random.Generator], np.ndarray]) -> Any:
    gen, lock = _generator(ctx)
    with lock:
        values = fn(gen)
    return ctx.device.from_host(np.asarray(values, dtype=ctx.out_np))


def _float_type(ctx: KernelContext) -> type:
    """The dtype numpy can draw in for the output: float16 is drawn as float32."""
    return np.float64 if ctx.out_np is np.float64 else np.float32


def standard_normal(ctx: KernelContext, shape: Any) -> Any:
    dims = _dims(ctx, shape)
    return _draw(ctx, lambda gen: gen.standard_normal(dims, dtype=_float_type(ctx)))


def _uniform(gen: np.random.Generator, dims: tuple[int, ...], out: type) -> np.ndarray:
    if out is np.float16:  # rounding a float32 draw could reach 1.0
        return gen.integers(0, 1 << _HALF_BITS, dims) * (1.0 / (1 << _HALF_BITS))
    return gen.random(dims, dtype=out)


def uniform(ctx: KernelContext, shape: Any) -> Any:
    dims = _dims(ctx, shape)
    return _draw(ctx, lambda gen: _uniform(gen, dims, ctx.out_np))


def _truncated(gen: np.random.Generator, dims: tuple[int, ...], dtype: type) -> np.ndarray:
    values = gen.standard_normal(dims, dtype=dtype)
    outside = np.abs(values) > 2
    while outside.any():  # TF re-draws every value more than 2 standard deviations out
        values[outside] = gen.standard_normal(int(outside.sum()), dtype=dtype)
        outside = np.abs(values) > 2
    return values


def truncated_normal(ctx: KernelContext, shape: Any) -> Any:
    dims = _dims(ctx, shape)
    return _draw(ctx, lambda gen: _truncated(gen, dims, _float_type(ctx)))


def uniform_int(ctx: KernelContext, shape: Any, minval: Any, maxval: Any) -> Any:
    dims = _dims(ctx, shape)
    lo, hi = int(ctx.device.to_host(minval)), int(ctx.device.to_host(maxval))
    if lo >= hi:
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op,
                                          f"Need minval < maxval: {lo} >= {hi}")
    return _draw(ctx, lambda gen: gen.integers(lo, hi, dims, dtype=ctx.out_np))


def shuffle(ctx: KernelContext, value: Any) -> Any:
    if value.ndim == 0 or value.shape[0] <= 1:
        return value
    gen, lock = _generator(ctx)
    with lock:
        order = gen.permutation(value.shape[0])
    return value[ctx.device.from_host(order)]


def register(registry: Any, device_type: str) -> None:
    """Register this module's kernels for `device_type`."""
    registry.add("RandomStandardNormal", device_type, standard_normal)
    registry.add("RandomUniform", device_type, uniform)
    registry.add("TruncatedNormal", device_type, truncated_normal)
    registry.add("RandomUniformInt", device_type, uniform_int)
    registry.add("RandomShuffle", device_type, shuffle)
