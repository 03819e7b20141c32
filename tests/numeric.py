"""Shared numeric test helpers: running fetches in a fresh session, central differences (the
reference for the gradient tests of Python-level models and of a graph's scalar loss),
numerical gradient checks of ops and TF's SAME/VALID window geometry for the loop-based
convolution and pooling references."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import tensorweave as tw


def run(fetches: Any, feed_dict: Any = None) -> Any:
    """`fetches` evaluated in a fresh session of the default graph."""
    with tw.Session() as sess:
        return sess.run(fetches, feed_dict)


def numeric_grad(f: Callable[[np.ndarray], float], x: np.ndarray,
                 eps: float = 1e-5) -> np.ndarray:
    """d f / d x by central differences of step `eps`, one element of `x` at a time."""
    out = np.zeros_like(x, dtype=np.float64)
    for index in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[index] = eps
        out[index] = (f(x + d) - f(x - d)) / (2 * eps)
    return out


def fetched_numeric_grad(loss: tw.Tensor, x: tw.Tensor, x0: np.ndarray,
                         eps: float = 1e-6) -> np.ndarray:
    """d loss / d x at ``x = x0`` by central differences of step `eps`, each side a run of the
    graph's scalar `loss` with `x0`, one element moved, fed to `x`."""
    out = np.zeros_like(x0)
    with tw.Session() as sess:
        for idx in np.ndindex(x0.shape):
            up, down = x0.copy(), x0.copy()
            up[idx] += eps
            down[idx] -= eps
            out[idx] = (sess.run(loss, {x: up}) - sess.run(loss, {x: down})) / (2 * eps)
    return out


def gradient_error(rng: np.random.Generator, fn: Callable[..., Any], shapes: list[list[int]],
                   dtype: Any = tw.float64, delta: float = 1e-5,
                   out_shape: list[int] | None = None, dynamic: bool = False) -> float:
    """``tw.test.compute_gradient_error`` of `fn` applied to placeholders of `shapes` (of
    unknown dimensions when `dynamic`, which needs `out_shape`), at points drawn uniformly
    from [-1, 1) with `rng`; `out_shape` defaults to the result's static shape."""
    xs = [tw.placeholder(dtype, [None] * len(s) if dynamic else s) for s in shapes]
    y = fn(*xs)
    inits = [rng.uniform(-1, 1, s).astype(dtype.as_numpy_dtype) for s in shapes]
    return tw.test.compute_gradient_error(
        xs, shapes, y, y.shape.as_list() if out_shape is None else out_shape,
        x_init_value=inits, delta=delta)


def window_geometry(size: int, window: int, stride: int, rate: int,
                    padding: str) -> tuple[int, int]:
    """(output size, padding before) of one spatial dimension, by TF's SAME/VALID rule."""
    effective = (window - 1) * rate + 1
    if padding == "SAME":
        out = -(-size // stride)
        return out, max((out - 1) * stride + effective - size, 0) // 2
    return (size - effective) // stride + 1, 0
