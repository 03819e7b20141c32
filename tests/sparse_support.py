"""Shared helpers of the sparse-op tests: running several fetches at once and a random
sparsity pattern with the dense array it makes."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import tensorweave as tw


def run(*fetches: object, feed: dict | None = None) -> list:
    """The values of `fetches`, in a fresh session of the default graph."""
    with tw.Session() as sess:
        return sess.run(list(fetches), feed)


def random_sparse(rng: np.random.Generator, shape: tuple[int, ...], density: float,
                  dtype: type, draw: Callable[[int], np.ndarray]
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted indices of about `density` of `shape`'s cells (drawn with `rng`), their values
    ``draw(count)`` as `dtype` and the dense array they make."""
    mask = rng.random(shape) < density
    indices = np.argwhere(mask).astype(np.int64)
    values = draw(len(indices)).astype(dtype)
    dense = np.zeros(shape, dtype)
    dense[tuple(indices.T)] = values
    return indices, values, dense
