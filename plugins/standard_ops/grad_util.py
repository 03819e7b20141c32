"""Graph-building helpers shared by the gradient functions.

Contract: shapes are int32 vectors. When the static shapes involved are fully known the helpers
compute axes and shapes in Python and emit constants; otherwise they build the same computation
from ``Shape``/``BroadcastGradientArgs`` ops, so gradients also work for tensors whose shapes are
only known at run time (a ``[None, 10]`` placeholder).
"""

from __future__ import annotations

import numpy as np

from tensorweave.api import array_ops, math_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant
from tensorweave.engine.graph.graph import Tensor, constant_value
from tensorweave.engine.graph.op_builder import make_op


def shape(t: Tensor) -> Tensor:
    return array_ops.shape(t, out_type=dtypes.int32)


def _broadcast_axes(sx: list[int], sy: list[int]) -> tuple[list[int], list[int]]:
    n = max(len(sx), len(sy))
    px, py = [1] * (n - len(sx)) + sx, [1] * (n - len(sy)) + sy
    rx = [i for i, (a, b) in enumerate(zip(px, py)) if a == 1 and b != 1 or i < n - len(sx)]
    ry = [i for i, (a, b) in enumerate(zip(px, py)) if b == 1 and a != 1 or i < n - len(sy)]
    return rx, ry


def sum_to(grad: Tensor, axes: Tensor | list[int], target: Tensor) -> Tensor:
    """`grad` summed over `axes`, reshaped to `target`'s shape."""
    if not isinstance(axes, list) or axes:
        grad = math_ops.reduce_sum(grad, axes)
    if grad.shape.is_fully_defined() and target.shape.is_fully_defined() \
            and grad.shape.as_list() == target.shape.as_list():
        return grad
    return array_ops.reshape(grad, shape(target))


def unbroadcast(x: Tensor, y: Tensor, gx: Tensor | None,
                gy: Tensor | None) -> tuple[Tensor | None, Tensor | None]:
    """Gradients of a broadcasting binary op, each summed back to its operand's shape."""
    sx, sy = x.shape, y.shape
    if sx.is_fully_defined() and sy.is_fully_defined():
        rx, ry = _broadcast_axes(sx.as_list(), sy.as_list())
    else:
        op = make_op("BroadcastGradientArgs", [shape(x), shape(y)])
        rx, ry = op.outputs
    return (None if gx is None else sum_to(gx, rx, x),
            None if gy is None else sum_to(gy, ry, y))


def normalized_axes(x: Tensor, axes: Tensor) -> Tensor | list[int]:
    """Reduction axes as non-negative ints: a list when known statically, else a tensor."""
    value = constant_value(axes)
    rank = x.shape.ndims
    if value is not None and rank is not None:
        return sorted({int(a) % max(rank, 1) for a in np.reshape(value, -1)})
    axes = math_ops.cast(array_ops.reshape(axes, [-1]), dtypes.int32)
    return math_ops.floormod(axes, array_ops.rank(x))


def reduced_shape(x: Tensor, axes: Tensor) -> Tensor:
    """The shape of a reduction of `x` over `axes` with ``keep_dims=True``."""
    normalized = normalized_axes(x, axes)
    if isinstance(normalized, list):
        if x.shape.is_fully_defined():
            dims = x.shape.as_list()
            return constant([1 if i in normalized else d for i, d in enumerate(dims)],
                            dtypes.int32)
        keep = np.ones(x.shape.ndims, dtype=np.int32)
        keep[normalized] = 0
        keep_t = constant(keep)
    else:
        hot = array_ops.one_hot(normalized, array_ops.rank(x), dtype=dtypes.int32)
        keep_t = 1 - math_ops.minimum(math_ops.reduce_sum(hot, 0), 1)
    return shape(x) * keep_t + (1 - keep_t)


def broadcast_back(grad: Tensor, x: Tensor, axes: Tensor) -> Tensor:
    """The gradient of a reduction over `axes`, given as `grad`, spread over `x`'s shape."""
    kept = array_ops.reshape(grad, reduced_shape(x, axes))
    return array_ops.broadcast_to(kept, shape(x))
