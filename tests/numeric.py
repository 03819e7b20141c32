"""Central differences, the reference for the gradient tests of Python-level models."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def numeric_grad(f: Callable[[np.ndarray], float], x: np.ndarray,
                 eps: float = 1e-5) -> np.ndarray:
    """d f / d x by central differences of step `eps`, one element of `x` at a time."""
    out = np.zeros_like(x, dtype=np.float64)
    for index in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[index] = eps
        out[index] = (f(x + d) - f(x - d)) / (2 * eps)
    return out
