"""Gradient functions of the math ops: elementwise arithmetic, reductions, scans, casts and
matmul, as TF's ``math_grad.py``.

Contract: each function is ``fn(op, grad) -> [gradient or None per input]``. Broadcasting binary
ops sum each operand's gradient back to its shape. Comparisons, predicates, logical ops,
``ArgMax``/``ArgMin`` and the integer-valued ops (floor division, rounding) are registered as not
differentiable. For complex inputs the gradients follow TF's convention (``grad * conj(f'(x))``
for the holomorphic ops, see `_holomorphic`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.api import array_ops, array_ops_extra, math_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant
from tensorweave.engine.graph.graph import Operation, Tensor, constant_value
from tensorweave.engine.graph.op_builder import apply
from tensorweave.plugins.standard_ops.grad_util import (
    broadcast_back,
    normalized_axes,
    reduced_shape,
    shape,
    unbroadcast,
)

NOT_DIFFERENTIABLE = (
    "Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual", "LogicalAnd",
    "LogicalOr", "LogicalNot", "IsNan", "IsInf", "IsFinite", "ArgMax", "ArgMin", "All", "Any",
    "FloorDiv", "TruncateDiv", "TruncateMod", "Floor", "Ceil", "Round", "Rint",
)

Grads = list[Tensor | None]


# -- binary, with broadcasting -------------------------------------------------------------------


def _binary(local: Callable[[Tensor, Tensor, Tensor, Operation], tuple[Any, Any]]) -> Any:
    """A gradient from the elementwise partials ``(gx, gy)``, reduced to each operand's shape."""

    def grad_fn(op: Operation, grad: Tensor) -> Grads:
        x, y = op.inputs
        gx, gy = local(x, y, grad, op)
        return list(unbroadcast(x, y, gx, gy))

    return grad_fn


def _pow_y(x: Tensor, y: Tensor, grad: Tensor, op: Operation) -> Tensor:
    # d(x**y)/dy = x**y * log(x), taken as 0 where x <= 0 (x == 0 if complex: TF's choice).
    positive = math_ops.not_equal(x, 0) if x.dtype.is_complex else math_ops.greater(x, 0)
    safe_x = array_ops.where(positive, x, array_ops.ones_like(x))
    log_x = array_ops.where(positive, math_ops.log(safe_x), array_ops.zeros_like(x))
    return grad * op.outputs[0] * log_x


def _real_div_grad(x: Tensor, y: Tensor, grad: Tensor) -> tuple[Tensor, Tensor]:
    # TF's _RealDivGrad, with RealDiv ops (named so); `_holomorphic` conjugates complex ones
    return (apply("RealDiv", [grad, y]),
            grad * apply("RealDiv", [apply("RealDiv", [-x, y]), y]))


def _squared_difference_grad(x: Tensor, y: Tensor, grad: Tensor) -> tuple[Tensor, Tensor]:
    # TF's _SquaredDifferenceGrad, its ops in its order: scalar_mul(2, grad) * (x - y) after
    # the incoming gradient, and its negation for y
    with grad.graph.control_dependencies([grad]):
        x_grad = apply("Mul", [constant(2.0, grad.dtype, name="scalar"), grad]) * (x - y)
    return x_grad, -x_grad


def _not_zero(x: Tensor) -> Tensor:
    return math_ops.cast(math_ops.not_equal(x, 0), x.dtype)


def _max_min(select_x: Callable[[Tensor, Tensor], Tensor]) -> Any:
    def local(x: Tensor, y: Tensor, grad: Tensor, op: Operation) -> tuple[Any, Any]:
        # TF's _MaximumMinimumGrad, its ops in its order (SelectV2s)
        zeros = array_ops.zeros_like(grad)
        mask = select_x(x, y)
        return array_ops.where_v2(mask, grad, zeros), array_ops.where_v2(mask, zeros, grad)

    return local


BINARY: dict[str, Callable[..., tuple[Any, Any]]] = {
    "AddV2": lambda x, y, g, op: (g, g),
    "Add": lambda x, y, g, op: (g, g),
    "Sub": lambda x, y, g, op: (g, -g),
    "Mul": lambda x, y, g, op: (apply("Mul", [g, y]), apply("Mul", [x, g])),  # named as TF
    "RealDiv": lambda x, y, g, op: _real_div_grad(x, y, g),
    "Div": lambda x, y, g, op: (g / y, g * (-x / y / y)),
    "DivNoNan": lambda x, y, g, op: (math_ops.div_no_nan(g, y),
                                     g * math_ops.div_no_nan(math_ops.div_no_nan(-x, y), y)),
    "MulNoNan": lambda x, y, g, op: (math_ops.multiply_no_nan(g, y),
                                     math_ops.multiply_no_nan(x, g)),
    "Pow": lambda x, y, g, op: (g * y * math_ops.pow(x, y - 1), _pow_y(x, y, g, op)),
    "SquaredDifference": lambda x, y, g, op: _squared_difference_grad(x, y, g),
    "Maximum": _max_min(math_ops.greater_equal),
    "Minimum": _max_min(math_ops.less_equal),
    "Xlogy": lambda x, y, g, op: (g * math_ops.xlogy(_not_zero(x), y),
                                  g * math_ops.xdivy(x, y)),
    "Xdivy": lambda x, y, g, op: (g * math_ops.xdivy(_not_zero(x), y),
                                  g * math_ops.xdivy(-x, y * y)),
    "FloorMod": lambda x, y, g, op: (g, g * -math_ops.floor_div(x, y)),
    # TF's gradient: the step toward x2 moves with x1 and does not depend on x2.
    "NextAfter": lambda x, y, g, op: (g, array_ops.zeros_like(g)),
    "Atan2": lambda y, x, g, op: (g * x / (x * x + y * y), g * -y / (x * x + y * y)),
}


# -- unary ---------------------------------------------------------------------------------------


def _through_output(grad_op: str) -> Any:
    """Gradients TF computes from the op's output by a fused ``*Grad`` op."""
    return lambda op, grad: [apply(grad_op, [op.outputs[0], grad])]


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

UNARY: dict[str, Callable[[Tensor, Tensor, Tensor], Tensor]] = {
    "Neg": lambda x, y, g: -g,
    "Abs": lambda x, y, g: g * math_ops.sign(x),
    "Square": lambda x, y, g: _square_grad(x, g),
    "Exp": lambda x, y, g: g * y,
    "Expm1": lambda x, y, g: g * math_ops.exp(x),
    "Log": lambda x, y, g: g * math_ops.reciprocal(x),
    "Log1p": lambda x, y, g: g * math_ops.reciprocal(1.0 + x),
    "Sin": lambda x, y, g: g * math_ops.cos(x),
    "Cos": lambda x, y, g: -g * math_ops.sin(x),
    "Tan": lambda x, y, g: g * math_ops.square(math_ops.reciprocal(math_ops.cos(x))),
    "Asin": lambda x, y, g: g * math_ops.rsqrt(1.0 - x * x),
    "Acos": lambda x, y, g: -g * math_ops.rsqrt(1.0 - x * x),
    "Atan": lambda x, y, g: g * math_ops.reciprocal(1.0 + x * x),
    "Sinh": lambda x, y, g: g * math_ops.cosh(x),
    "Cosh": lambda x, y, g: g * math_ops.sinh(x),
    "Asinh": lambda x, y, g: g / math_ops.cosh(y),
    "Acosh": lambda x, y, g: g / math_ops.sinh(y),
    "Atanh": lambda x, y, g: g * math_ops.reciprocal(1.0 - x * x),
    "Erf": lambda x, y, g: g * _TWO_OVER_SQRT_PI * math_ops.exp(-x * x),
    "Erfc": lambda x, y, g: g * -_TWO_OVER_SQRT_PI * math_ops.exp(-x * x),
    "Sign": lambda x, y, g: array_ops.zeros_like(x),
}


def _square_grad(x: Tensor, grad: Tensor) -> Tensor:
    # TF's _SquareGrad: grad * (x * 2), its Mul ops named so, after the incoming gradient
    with x.graph.control_dependencies([grad]):
        return apply("Mul", [grad, apply("Mul", [x, constant(2.0, x.dtype)])])


def _unary(local: Callable[[Tensor, Tensor, Tensor], Tensor]) -> Any:
    return lambda op, grad: [local(op.inputs[0], op.outputs[0], grad)]


THROUGH_OUTPUT = {"Sigmoid": "SigmoidGrad", "Tanh": "TanhGrad", "Sqrt": "SqrtGrad",
                  "Rsqrt": "RsqrtGrad", "Reciprocal": "ReciprocalGrad", "Inv": "ReciprocalGrad"}
# the same derivatives for complex inputs, whose fused *Grad ops tensorweave keeps real-only
THROUGH_OUTPUT_COMPLEX: dict[str, Callable[[Tensor, Tensor, Tensor], Tensor]] = {
    "Tanh": lambda x, y, g: g * (1 - y * y),
    "Sqrt": lambda x, y, g: g * 0.5 / y,
    "Rsqrt": lambda x, y, g: g * -0.5 * y * y * y,
    "Reciprocal": lambda x, y, g: -g * y * y,
    "Inv": lambda x, y, g: -g * y * y,
}


def _conj(t: Tensor) -> Tensor:
    return apply("Conj", [t]) if t.dtype.is_complex else t


def _holomorphic(grad_fn: Any, complex_local: Any = None) -> Any:
    """TF's convention for a complex input: the gradient is ``grad * conj(f'(x))``, which is the
    real formula applied to ``conj(grad)``, conjugated (`complex_local` replaces the formula)."""

    def fn(op: Operation, grad: Tensor) -> Grads:
        if not op.inputs[0].dtype.is_complex:
            return grad_fn(op, grad)
        local = grad_fn if complex_local is None else _unary(complex_local)
        return [None if g is None else _conj(g) for g in local(op, _conj(grad))]

    return fn


# -- reductions and scans ------------------------------------------------------------------------


def _sum_grad(op: Operation, grad: Tensor) -> Grads:
    """TF's ``_SumGrad``: with static axes and rank, ``Reshape`` then ``Tile`` (over the input's
    shape when reducing all axes in order; over constant multiples when the input's shape is
    fully known); otherwise ``Reshape`` to the reduced shape (kept dims) from ``Shape`` and
    ``DynamicStitch``, then ``BroadcastTo``."""
    x, axes = op.inputs
    value = constant_value(axes)
    if x.shape.ndims is not None and value is not None:
        dims = x.shape.as_list()
        if np.array_equal(value, np.arange(len(dims))):
            grad = array_ops.reshape(grad, [1] * len(dims))
            multiples = shape(x) if None in dims else constant(dims, dtypes.int32)
            return [array_ops.tile(grad, multiples), None]
        if None not in dims:
            kept = list(dims)
            for axis in np.reshape(value, -1):
                kept[int(axis)] = 1
            grad = array_ops.reshape(grad, kept)
            return [array_ops.tile(grad, [d // max(k, 1) for d, k in zip(dims, kept)]), None]
    input_shape = shape(x)
    if not op.get_attr("keep_dims"):
        grad = array_ops.reshape(grad, _reduced_shape(input_shape, axes))
    return [array_ops.broadcast_to(grad, input_shape), None]


def _reduced_shape(input_shape: Tensor, axes: Tensor) -> Tensor:
    """`input_shape` with the reduced `axes` set to 1, as TF's ``math_ops.reduced_shape``
    computes it at run time."""
    rank = array_ops.size(input_shape)
    axes = (math_ops.cast(axes, dtypes.int32) + rank) % rank
    axes_shape = array_ops.shape(axes)
    return array_ops_extra.dynamic_stitch(
        [array_ops.range(rank), axes], [input_shape, array_ops.ones(axes_shape, dtypes.int32)])


def _mean_grad(op: Operation, grad: Tensor) -> Grads:
    """TF's ``_MeanGrad``: `_sum_grad` divided by the count of elements each output element
    averages, a constant when the shapes are static."""
    x, axes = op.inputs
    sum_grad = _sum_grad(op, grad)[0]
    y = op.outputs[0]
    if x.shape.is_fully_defined() and y.shape.is_fully_defined():
        count = x.shape.num_elements() // max(y.shape.num_elements(), 1)
        factor = constant(count, sum_grad.dtype)
    else:
        input_shape = shape(x)
        rank = array_ops.size(input_shape)
        axes = (math_ops.cast(axes, rank.dtype) + rank) % rank
        factor = math_ops.reduce_prod(array_ops.gather(input_shape, axes))
    return [sum_grad / math_ops.cast(factor, sum_grad.dtype), None]


def _min_max_grad(op: Operation, grad: Tensor) -> Grads:
    """Shared equally by the elements that attain the extremum, as TF's ``_MinOrMaxGrad``:
    each ``Reshape`` to the reduced shape (kept dims) takes its own constant when the shapes
    are static."""
    x, axes = op.inputs
    input_shape = shape(x)
    y = op.outputs[0]
    if not op.get_attr("keep_dims"):
        kept = _kept_dims(x, input_shape, axes)
        y, grad = array_ops.reshape(y, kept), array_ops.reshape(grad, kept)
    else:
        kept = shape(y)
    indicators = math_ops.cast(math_ops.equal(y, x), grad.dtype)
    selected = array_ops.reshape(math_ops.reduce_sum(indicators, axes), kept)
    return [indicators / selected * grad, None]


def _kept_dims(x: Tensor, input_shape: Tensor, axes: Tensor) -> Any:
    """The shape of a reduction of `x` (shaped `input_shape`) over `axes` with kept dims (TF's
    ``math_ops.reduced_shape``): a list when `x`'s shape and `axes` are static, else a
    tensor."""
    value = constant_value(axes)
    if x.shape.is_fully_defined() and value is not None:
        kept = x.shape.as_list()
        for axis in np.reshape(value, -1):
            kept[int(axis)] = 1
        return kept
    return _reduced_shape(input_shape, axes)


def _prod_grad(op: Operation, grad: Tensor) -> Grads:
    """TF's: the product of all other elements, by exclusive cumulative products from both
    sides over the reduced axes brought to the front (no division, so zeros are exact)."""
    x, axes = op.inputs
    grad = broadcast_back(grad, x, axes)
    reduced = normalized_axes(x, axes)
    if isinstance(reduced, list):
        reduced = constant(reduced, dtypes.int32)
    return _prod_from_axes(x, grad, reduced, array_ops.rank(x))


def _prod_from_axes(x: Tensor, grad: Tensor, reduced: Tensor, rank: Tensor) -> Grads:
    hot = array_ops.one_hot(reduced, rank, dtype=dtypes.int32)
    is_reduced = math_ops.greater(math_ops.reduce_sum(hot, 0), 0)
    other = math_ops.cast(array_ops.reshape(array_ops.where(math_ops.logical_not(is_reduced)),
                                            [-1]), dtypes.int32)
    reduced = math_ops.cast(array_ops.reshape(array_ops.where(is_reduced), [-1]), dtypes.int32)
    perm = array_ops.concat([reduced, other], 0)
    x_shape = shape(x)
    reduced_num = math_ops.reduce_prod(array_ops.gather(x_shape, reduced))
    other_num = math_ops.reduce_prod(array_ops.gather(x_shape, other))
    permuted = array_ops.transpose(x, perm)
    matrix = array_ops.reshape(permuted, array_ops.stack([reduced_num, other_num]))
    left = math_ops.cumprod(matrix, axis=0, exclusive=True)
    right = math_ops.cumprod(matrix, axis=0, exclusive=True, reverse=True)
    others = array_ops.reshape(left * right, shape(permuted))
    back = array_ops.transpose(others, array_ops.invert_permutation(perm))
    return [grad * array_ops.reshape(back, x_shape), None]


def _euclidean_norm_grad(op: Operation, grad: Tensor) -> Grads:
    x, axes = op.inputs
    kept = reduced_shape(x, axes)
    norm = array_ops.reshape(op.outputs[0], kept)
    return [math_ops.div_no_nan(x, norm) * array_ops.reshape(grad, kept), None]


def _cumsum_grad(op: Operation, grad: Tensor) -> Grads:
    return [math_ops.cumsum(grad, op.inputs[1], exclusive=op.get_attr("exclusive"),
                            reverse=not op.get_attr("reverse")), None]


def _cumprod_grad(op: Operation, grad: Tensor) -> Grads:
    """TF's, valid where x has no zeros."""
    x, axis = op.inputs
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    prod = math_ops.cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = math_ops.cumsum(prod * grad, axis, exclusive=exclusive, reverse=not reverse)
    return [out / x, None]


# -- the rest ------------------------------------------------------------------------------------


def _add_n_grad(op: Operation, grad: Tensor) -> Grads:
    return [grad] * len(op.inputs)


def _cast_grad(op: Operation, grad: Tensor) -> Grads:
    src, dst = op.get_attr("SrcT"), op.get_attr("DstT")
    if (src.is_floating or src.is_complex) and (dst.is_floating or dst.is_complex):
        return [math_ops.cast(grad, src)]
    return [None]


def _clip_grad(op: Operation, grad: Tensor) -> Grads:
    x, low, high = op.inputs
    below, above = math_ops.less(x, low), math_ops.greater(x, high)
    zeros = array_ops.zeros_like(grad)
    gx = array_ops.where(math_ops.logical_or(below, above), zeros, grad)
    _, g_low = unbroadcast(x, low, None, array_ops.where(below, grad, zeros))
    _, g_high = unbroadcast(x, high, None, array_ops.where(above, grad, zeros))
    return [gx, g_low, g_high]


def _matmul_grad(op: Operation, grad: Tensor) -> Grads:
    a, b = op.inputs
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    mm = math_ops.matmul
    if not ta and not tb:
        return [mm(grad, b, transpose_b=True), mm(a, grad, transpose_a=True)]
    if not ta:
        return [mm(grad, b), mm(grad, a, transpose_a=True)]
    if not tb:
        return [mm(b, grad, transpose_b=True), mm(a, grad)]
    return [mm(b, grad, transpose_a=True, transpose_b=True),
            mm(grad, a, transpose_a=True, transpose_b=True)]


def _batch_matmul(x: Tensor, y: Tensor, adj_x: bool, adj_y: bool) -> Tensor:
    return apply("BatchMatMulV2", [x, y], {"adj_x": adj_x, "adj_y": adj_y})


def _batch_matmul_grad(op: Operation, grad: Tensor) -> Grads:
    x, y = op.inputs
    ax, ay = op.get_attr("adj_x"), op.get_attr("adj_y")
    if not ax and not ay:
        gx, gy = _batch_matmul(grad, y, False, True), _batch_matmul(x, grad, True, False)
    elif not ax:
        gx, gy = _batch_matmul(grad, y, False, False), _batch_matmul(grad, x, True, False)
    elif not ay:
        gx, gy = _batch_matmul(y, grad, False, True), _batch_matmul(x, grad, False, False)
    else:
        gx, gy = _batch_matmul(y, grad, True, True), _batch_matmul(grad, x, True, True)
    return [_sum_batch(gx, x), _sum_batch(gy, y)]


def _sum_batch(grad: Tensor, target: Tensor) -> Tensor:
    """`grad` with the batch dimensions that `target` was broadcast along summed away."""
    if grad.shape.is_fully_defined() and target.shape.is_fully_defined() \
            and grad.shape.as_list() == target.shape.as_list():
        return grad
    batch_grad = array_ops.strided_slice(shape(grad), [0], [-2])
    batch_target = array_ops.strided_slice(shape(target), [0], [-2])
    rx, _ = apply("BroadcastGradientArgs", [batch_target, batch_grad]).op.outputs
    return array_ops.reshape(math_ops.reduce_sum(grad, rx), shape(target))


def register_gradients(registry: Any) -> None:
    for name in NOT_DIFFERENTIABLE:
        registry.add(name, None)
    for name, local in BINARY.items():
        registry.add(name, _holomorphic(_binary(local)))
    for name, local in UNARY.items():
        registry.add(name, _holomorphic(_unary(local)))
    for name, grad_op in THROUGH_OUTPUT.items():
        registry.add(name, _holomorphic(_through_output(grad_op),
                                        THROUGH_OUTPUT_COMPLEX.get(name)))
    for name, fn in {
        "Sum": _sum_grad, "Mean": _mean_grad, "Max": _min_max_grad, "Min": _min_max_grad,
        "Prod": _holomorphic(_prod_grad), "EuclideanNorm": _euclidean_norm_grad,
        "Cumsum": _cumsum_grad, "Cumprod": _holomorphic(_cumprod_grad), "AddN": _add_n_grad,
        "Cast": _cast_grad,
        "ClipByValue": _clip_grad, "MatMul": _holomorphic(_matmul_grad),
        "BatchMatMulV2": _batch_matmul_grad,
    }.items():
        registry.add(name, fn)
