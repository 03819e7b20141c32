"""Kernels of ``RandomGamma`` and ``RandomPoissonV2``: numpy's samplers on the node's seeded
generator (see `tensorweave.plugins.kernels.random`), drawn on the host.

Contract: the samples of parameter element ``j`` fill ``out[..., j]``; alpha 0 gives 0; a
negative alpha, or a negative rate with a float output, gives NaN rather than an exception.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels.random import _dims, _draw


def _parameter(ctx: KernelContext, value: Any) -> np.ndarray:
    return np.asarray(ctx.device.to_host(value), dtype=np.float64)


def random_gamma(ctx: KernelContext, shape: Any, alpha: Any) -> Any:
    dims, a = _dims(ctx, shape), _parameter(ctx, alpha)
    valid = a >= 0

    def draw(gen: np.random.Generator) -> np.ndarray:
        samples = gen.standard_gamma(np.where(valid, a, 1.0), size=dims + a.shape)
        return np.where(valid, samples, np.nan)

    return _draw(ctx, draw)


def random_poisson(ctx: KernelContext, shape: Any, rate: Any) -> Any:
    dims, lam = _dims(ctx, shape), _parameter(ctx, rate)
    valid = lam >= 0

    def draw(gen: np.random.Generator) -> np.ndarray:
        samples = gen.poisson(np.where(valid, lam, 0.0), size=dims + lam.shape)
        if np.issubdtype(ctx.out_np, np.integer):
            return samples
        return np.where(valid, samples.astype(np.float64), np.nan)

    return _draw(ctx, draw)


def register(registry: Any, device_type: str) -> None:
    registry.add("RandomGamma", device_type, random_gamma)
    registry.add("RandomPoissonV2", device_type, random_poisson)
