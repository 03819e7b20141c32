"""``tw.test``: gradient checking, as ``tf.compat.v1.test``.

Contract: `compute_gradient(x, x_shape, y, y_shape)` returns ``(theoretical, numerical)``
Jacobians, each of shape ``(x_size, y_size)`` (a list of such pairs when `x` is a list): the
theoretical one from ``tw.gradients`` (column ``j`` is the gradient of ``y`` flattened at ``j``),
the numerical one by central differences of step `delta` on each element of ``x``. Values of
``x`` come from `x_init_value` or uniform ``[0, 1)`` samples, and are fed to ``x``, so ``x`` can
be any tensor. Runs in the default session, or in a temporary one when there is none.
`compute_gradient_error` is the largest absolute difference over all entries.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from tensorweave.api.control_flow_ops import identity
from tensorweave.api.gradients import gradients
from tensorweave.api.indexed_slices import IndexedSlicesValue
from tensorweave.engine.client.session import Session, get_default_session
from tensorweave.engine.graph.constant_op import constant
from tensorweave.engine.graph.graph import Tensor

__all__ = ["compute_gradient", "compute_gradient_error"]

Jacobians = tuple[np.ndarray, np.ndarray]


@contextlib.contextmanager
def _session(graph: Any) -> Iterator[Any]:
    session = get_default_session()
    if session is not None and session.graph is graph:
        yield session
        return
    with Session(graph=graph) as session:
        yield session


def _float_type(dtype: Any) -> type:
    return dtype.np_type if dtype.is_floating else np.float64


def _theoretical(session: Any, x: Tensor, x_data: np.ndarray, dx: Tensor | None,
                 dy: Tensor, y_shape: Sequence[int], feeds: dict) -> np.ndarray:
    y_size = int(np.prod(y_shape))
    jacobian = np.zeros((x_data.size, y_size), dtype=_float_type(x.dtype))
    if dx is None:
        return jacobian
    seed = np.zeros(y_size, dtype=dy.dtype.np_type)
    for j in range(y_size):
        seed[:] = 0
        seed[j] = 1
        value = session.run(dx, {**feeds, x: x_data, dy: seed.reshape(y_shape)})
        if isinstance(value, IndexedSlicesValue):  # rows at indices, repeated ones summed
            dense = np.zeros(x_data.shape, jacobian.dtype)
            np.add.at(dense, value.indices, value.values)
            value = dense
        jacobian[:, j] = np.reshape(value, -1)
    return jacobian


def _numerical(session: Any, x: Tensor, x_data: np.ndarray, y: Tensor,
               y_shape: Sequence[int], delta: float, feeds: dict) -> np.ndarray:
    y_size = int(np.prod(y_shape))
    jacobian = np.zeros((x_data.size, y_size), dtype=_float_type(x.dtype))
    flat = x_data.reshape(-1)
    for i in range(flat.size):
        plus, minus = flat.copy(), flat.copy()
        plus[i] += delta
        minus[i] -= delta
        y_plus = session.run(y, {**feeds, x: plus.reshape(x_data.shape)})
        y_minus = session.run(y, {**feeds, x: minus.reshape(x_data.shape)})
        diff = np.asarray(y_plus, dtype=np.float64) - np.asarray(y_minus, dtype=np.float64)
        jacobian[i, :] = np.reshape(diff, -1) / (2 * delta)
    return jacobian


def _init_value(x: Tensor, x_shape: Sequence[int], value: Any) -> np.ndarray:
    if value is not None:
        data = np.asarray(value, dtype=x.dtype.np_type)
        if list(data.shape) != list(x_shape):
            raise ValueError(f"x_init_value has shape {list(data.shape)}, expected "
                             f"{list(x_shape)}")
        return data
    return np.random.random_sample(x_shape).astype(x.dtype.np_type)


def compute_gradient(x: Any, x_shape: Any, y: Tensor, y_shape: Sequence[int],
                     x_init_value: Any = None, delta: float = 1e-3, init_targets: Any = None,
                     extra_feed_dict: dict | None = None) -> Jacobians | list[Jacobians]:
    """Theoretical and numerical Jacobians of `y` with respect to `x`; see the module
    docstring."""
    many = isinstance(x, (list, tuple))
    xs = list(x) if many else [x]
    shapes = list(x_shape) if many else [x_shape]
    inits = list(x_init_value) if many and x_init_value is not None else [x_init_value] * len(xs)
    if len(shapes) != len(xs) or len(inits) != len(xs):
        raise ValueError("x, x_shape and x_init_value must have the same length")
    graph = y.graph
    with graph.as_default():
        dy_seed = constant(np.ones(y_shape, dtype=y.dtype.np_type), name="dy_seed")
        # The identity keeps dy fetchable apart from the fed seed (dx may be dy itself).
        dxs = gradients(y, xs, grad_ys=identity(dy_seed))
    feeds = dict(extra_feed_dict or {})
    out: list[Jacobians] = []
    with _session(graph) as session:
        if init_targets is not None:
            session.run(init_targets)
        datas = [_init_value(xi, s, v) for xi, s, v in zip(xs, shapes, inits)]
        for i, (xi, data, dx) in enumerate(zip(xs, datas, dxs)):
            fed = {**feeds, **{o: d for j, (o, d) in enumerate(zip(xs, datas)) if j != i}}
            out.append((_theoretical(session, xi, data, dx, dy_seed, y_shape, fed),
                        _numerical(session, xi, data, y, y_shape, delta, fed)))
    return out if many else out[0]


def compute_gradient_error(x: Any, x_shape: Any, y: Tensor, y_shape: Sequence[int],
                           x_init_value: Any = None, delta: float = 1e-3,
                           init_targets: Any = None,
                           extra_feed_dict: dict | None = None) -> float:
    """The largest absolute difference between theoretical and numerical Jacobians; NaN if
    either has a NaN (Python's `max` would skip it and report agreement)."""
    result = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets,
                              extra_feed_dict)
    pairs = result if isinstance(result, list) else [result]
    differences = [np.abs(t - n).ravel() for t, n in pairs]
    return float(np.max(np.concatenate([[0.0], *differences])))
