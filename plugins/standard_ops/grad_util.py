"""Graph-building helpers shared by the gradient functions.

Contract: shapes are int32 vectors. When the static shapes decide them the helpers compute
axes and shapes in Python and emit constants; otherwise they build the same computation from
``Shape``/``BroadcastGradientArgs`` ops, so gradients also work for tensors whose shapes are
only known at run time (a ``[None, 10]`` placeholder). `unbroadcast` builds the ops TF's
``math_grad._ReduceGradientArgs`` builds, so a gradient graph has TF's nodes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.api import array_ops, math_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant
from tensorweave.engine.graph.graph import Tensor, constant_value
from tensorweave.engine.graph.op_builder import make_op
from tensorweave.engine.tensor_shape import TensorShape


def shape(t: Tensor) -> Tensor:
    return array_ops.shape(t, out_type=dtypes.int32)


def _inferred_axes(x: TensorShape, y: TensorShape) -> tuple[list[int], list[int]] | None:
    """The axes a broadcasting binary op of operands shaped `x` and `y` may have broadcast each
    over, when the static shapes decide it (TF's ``_InferGradientReductionAxes``): a dim that
    is 1 against one that is not; ``None`` when a rank, or a dim against an unknown one that
    is not 1, is unknown."""
    if x.ndims is None or y.ndims is None:
        return None
    n = max(x.ndims, y.ndims)
    px = [1] * (n - x.ndims) + x.as_list()
    py = [1] * (n - y.ndims) + y.as_list()
    rx: list[int] = []
    ry: list[int] = []
    for axis, (a, b) in enumerate(zip(px, py)):
        if a == 1 and b != 1:
            rx.append(axis)
        elif b == 1 and a != 1:
            ry.append(axis)
        elif a is None or b is None:
            return None
    return rx, ry


def _reduce_to(grad: Tensor | None, target: Tensor, axes: Any, must_reduce: bool) -> Any:
    """`grad` summed over `axes` (kept) and reshaped to `target` (TF's
    ``_ReduceGradientArg``), or as it is when nothing was broadcast."""
    if grad is None or not must_reduce:
        return grad
    return array_ops.reshape(math_ops.reduce_sum(grad, axes, keepdims=True), target)


def unbroadcast(x: Tensor, y: Tensor, gx: Tensor | None,
                gy: Tensor | None) -> tuple[Tensor | None, Tensor | None]:
    """Gradients of a broadcasting binary op, each summed back to its operand's shape, with
    TF's ops (``_ReduceGradientArgs``): ``Shape`` of each operand (constants when static),
    the reduction axes in Python when the static shapes decide them, else from
    ``BroadcastGradientArgs``, then ``Sum`` and ``Reshape`` for an operand that was
    broadcast."""
    if gx is None and gy is None:
        return None, None
    sx, sy = shape(x), shape(y)
    axes = _inferred_axes(x.shape, y.shape)
    if axes is None:
        rx, ry = make_op("BroadcastGradientArgs", [sx, sy]).outputs
        return _reduce_to(gx, sx, rx, True), _reduce_to(gy, sy, ry, True)
    (rx, ry), (nx, ny) = axes, (x.shape.ndims, y.shape.ndims)
    return (_reduce_to(gx, sx, rx, bool(rx) or nx < ny),
            _reduce_to(gy, sy, ry, bool(ry) or ny < nx))


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
