"""Math ops: elementwise arithmetic, comparisons, logic, casts, reductions, scans and matmul.

Contract: every function has ``tf.compat.v1``'s name, signature and defaults (`__all__` lists
the top-level ones; ``divide_no_nan``, ``multiply_no_nan``, ``reduce_std`` and
``reduce_variance`` exist only under ``tw.math``) and builds its ops with `op_builder.apply`.
Binary operands go through `binary_inputs` (a Python value or numpy array takes the other
operand's dtype when that one is a tensor, and becomes a constant named ``x`` or ``y`` in the
op's name scope, as TF names it: ``mul/y``), so mixing two tensors of different dtypes raises
`TypeError` at construction and incompatible static shapes raise `ValueError`.
Functions TF writes as composites (``truediv`` of integers, ``div``, ``logical_xor``,
``saturate_cast``, ``count_nonzero``, ``reduce_logsumexp``, ``tensordot``, ...) build the same
ops under a name scope named after themselves. Reductions take ``axis=None`` as "all axes" and
accept TF1's ``keep_dims`` and ``reduction_indices`` aliases. The elementwise functions,
``truediv``, ``cast`` and the reductions are `dispatch.dispatchable` (ragged tensors register
there from `tensorweave.api.ragged_ops`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tensorweave.api import dispatch
from tensorweave.api.deprecation import deprecated_argument_lookup
from tensorweave.api.indexed_slices import IndexedSlices
from tensorweave.api.scopes import colocate_with, name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor, is_tensor_like
from tensorweave.engine.graph.graph import Tensor, get_default_graph
from tensorweave.engine.graph.op_builder import apply

__all__ = [
    "abs", "acos", "acosh", "add", "add_n", "arg_max", "arg_min", "argmax", "argmin", "asin",
    "asinh", "atan", "atan2", "atanh", "cast", "ceil", "clip_by_global_norm", "clip_by_norm",
    "clip_by_value", "cos", "cosh", "count_nonzero", "cumprod", "cumsum", "div", "div_no_nan",
    "divide", "equal", "erf", "erfc", "exp", "expm1", "floor", "floor_div", "floordiv", "floormod",
    "global_norm", "greater", "greater_equal", "is_finite", "is_inf", "is_nan", "less",
    "less_equal", "log", "log1p", "log_sigmoid", "logical_and", "logical_not", "logical_or",
    "logical_xor",
    "matmul", "maximum", "minimum", "mod", "multiply", "negative", "not_equal", "pow", "realdiv",
    "reciprocal", "reduce_all", "reduce_any", "reduce_euclidean_norm", "reduce_logsumexp",
    "reduce_max", "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum", "rint", "round",
    "rsqrt", "saturate_cast", "scalar_mul", "sigmoid", "sign", "sin", "sinh", "sqrt", "square",
    "squared_difference", "subtract", "tan", "tanh", "tensordot", "to_double", "to_float",
    "to_int32", "to_int64", "truediv", "truncatediv", "truncatemod", "xdivy", "xlogy",
]


def binary_inputs(x: Any, y: Any, names: tuple[str | None, str | None] = (None, None),
                  ) -> tuple[Tensor, Tensor]:
    """Convert a binary op's operands: a Python value takes the other operand's dtype; one
    made a constant is named by `names` (TF's ``x`` and ``y``, in the op's name scope)."""
    if is_tensor_like(y) and not is_tensor_like(x):
        y = convert_to_tensor(y)
        return _like(x, y, names[0]), y
    x = convert_to_tensor(x, name=names[0])
    return x, _like(y, x, names[1])


def _like(value: Any, other: Tensor, name: str | None = None) -> Tensor:
    """`value` as a tensor, in `other`'s dtype and graph unless it is a tensor itself."""
    if is_tensor_like(value):
        return convert_to_tensor(value)
    graph = get_default_graph()  # a function graph being built keeps its constants inside
    if not graph.encloses(other.graph):
        graph = other.graph
    with graph.as_default():
        return convert_to_tensor(value, dtype=other.dtype, name=name)


def _binary(op: str, py_name: str, default_name: str | None = None) -> Callable[..., Tensor]:
    def fn(x: Any, y: Any, name: str | None = None) -> Tensor:
        # in the op's name scope, so a Python operand is named as TF names it (mul/y)
        with name_scope(name, default_name or op, [x, y]) as scope:
            a, b = binary_inputs(x, y, ("x", "y"))
            return apply(op, [a, b], name=scope)

    fn.__name__ = fn.__qualname__ = py_name
    fn.__doc__ = f"Elementwise `{op}` of `x` and `y`, with broadcasting."
    return dispatch.dispatchable(fn)


def _unary(op: str, py_name: str) -> Callable[..., Tensor]:
    def fn(x: Any, name: str | None = None) -> Tensor:
        return apply(op, [x], name=name or op)

    fn.__name__ = fn.__qualname__ = py_name
    fn.__doc__ = f"Elementwise `{op}` of `x`."
    return dispatch.dispatchable(fn)


# -- arithmetic -----------------------------------------------------------------------------

add = _binary("AddV2", "add", "Add")
subtract = _binary("Sub", "subtract")
multiply = _binary("Mul", "multiply")
realdiv = _binary("RealDiv", "realdiv")
floor_div = _binary("FloorDiv", "floor_div")
floordiv = _binary("FloorDiv", "floordiv", "floordiv")
floormod = mod = _binary("FloorMod", "floormod")
truncatediv = _binary("TruncateDiv", "truncatediv")
truncatemod = _binary("TruncateMod", "truncatemod")
pow = _binary("Pow", "pow")  # noqa: A001 - TF's name
squared_difference = _binary("SquaredDifference", "squared_difference")
maximum = _binary("Maximum", "maximum")
minimum = _binary("Minimum", "minimum")
xlogy = _binary("Xlogy", "xlogy")
xdivy = _binary("Xdivy", "xdivy")
div_no_nan = divide_no_nan = _binary("DivNoNan", "div_no_nan", "div_no_nan")
multiply_no_nan = _binary("MulNoNan", "multiply_no_nan")
nextafter = _binary("NextAfter", "nextafter")


def reciprocal_no_nan(x: Any, name: str | None = None) -> Tensor:
    """``1 / x``, with 0 where `x` is 0 (TF's ``div_no_nan(1, x)``)."""
    with name_scope(name, "reciprocal_no_nan", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        one = constant(np.ones((), x.dtype.np_type), name="one")
        return apply("DivNoNan", [one, x], name=scope)

# int8/int16/uint8/uint16 divide in float32 and int32/int64 in float64, as TF's table says.
_TRUEDIV_FLOAT = {dtypes.int8: dtypes.float32, dtypes.int16: dtypes.float32,
                  dtypes.uint8: dtypes.float32, dtypes.uint16: dtypes.float32,
                  dtypes.int32: dtypes.float64,
                  dtypes.int64: dtypes.float64}


def _same_dtype(x: Tensor, y: Tensor) -> None:
    if x.dtype != y.dtype:
        raise TypeError(f"x and y must have the same dtype, got {x.dtype!r} != {y.dtype!r}.")


@dispatch.dispatchable
def truediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Python 3 division: integers are cast to floating point first."""
    with name_scope(name, "truediv", [x, y]) as scope:
        a, b = binary_inputs(x, y, ("x", "y"))
        _same_dtype(a, b)
        target = _TRUEDIV_FLOAT.get(a.dtype)
        if target is not None:
            a, b = cast(a, target), cast(b, target)
        return apply("RealDiv", [a, b], name=scope)


@dispatch.dispatchable
def divide(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y`` with Python 3 semantics (`truediv`)."""
    return truediv(x, y, name=name)


def div(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Python 2 division: floor division for integers, real division for floats and complex
    numbers."""
    with name_scope(name, "div", [x, y]) as scope:
        a, b = binary_inputs(x, y, ("x", "y"))
        _same_dtype(a, b)
        real = a.dtype.is_floating or a.dtype.is_complex
        return apply("RealDiv" if real else "FloorDiv", [a, b], name=scope)


def scalar_mul(scalar: Any, x: Any, name: str | None = None) -> Tensor:
    """`scalar` (a 0-d value) times `x`."""
    x = convert_to_tensor(x)
    with x.graph.as_default():
        s = convert_to_tensor(scalar, dtype=x.dtype)
    if s.shape.ndims != 0:
        raise ValueError(f"Only scalar multiply works, got shape {s.shape}")
    return apply("Mul", [s, x], name=name or "Mul")


@dispatch.dispatchable
def add_n(inputs: Sequence[Any], name: str | None = None) -> Tensor:
    """Elementwise sum of same-shaped, same-dtype tensors (no broadcasting)."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype and "
                         "shape")
    tensors = [convert_to_tensor(v) for v in inputs]
    if len(tensors) == 1:
        return apply("Identity", tensors, name=name or "Identity")
    return apply("AddN", [tensors], name=name or "AddN")


# -- unary ----------------------------------------------------------------------------------

@dispatch.dispatchable
def abs(x: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """Elementwise absolute value; the magnitude (`ComplexAbs`, real-valued) of a complex `x`."""
    x = convert_to_tensor(x)
    if x.dtype.is_complex:
        return apply("ComplexAbs", [x], {"Tout": x.dtype.real_dtype}, name=name or "Abs")
    return apply("Abs", [x], name=name or "Abs")


negative = _unary("Neg", "negative")
sign = _unary("Sign", "sign")
rint = _unary("Rint", "rint")
floor = _unary("Floor", "floor")
ceil = _unary("Ceil", "ceil")
sqrt = _unary("Sqrt", "sqrt")
rsqrt = _unary("Rsqrt", "rsqrt")
square = _unary("Square", "square")
exp = _unary("Exp", "exp")
expm1 = _unary("Expm1", "expm1")
log = _unary("Log", "log")
log1p = _unary("Log1p", "log1p")
sin = _unary("Sin", "sin")
cos = _unary("Cos", "cos")
tan = _unary("Tan", "tan")
asin = _unary("Asin", "asin")
acos = _unary("Acos", "acos")
atan = _unary("Atan", "atan")
sinh = _unary("Sinh", "sinh")
cosh = _unary("Cosh", "cosh")
tanh = _unary("Tanh", "tanh")
asinh = _unary("Asinh", "asinh")
acosh = _unary("Acosh", "acosh")
atanh = _unary("Atanh", "atanh")
sigmoid = _unary("Sigmoid", "sigmoid")
reciprocal = _unary("Reciprocal", "reciprocal")
erf = _unary("Erf", "erf")
erfc = _unary("Erfc", "erfc")
is_nan = _unary("IsNan", "is_nan")
is_inf = _unary("IsInf", "is_inf")
is_finite = _unary("IsFinite", "is_finite")


def log_sigmoid(x: Any, name: str | None = None) -> Tensor:
    """``log(1 / (1 + exp(-x)))``, computed stably as ``-softplus(-x)``."""
    with name_scope(name, "LogSigmoid", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return apply("Neg", [apply("Softplus", [apply("Neg", [x])])], name=scope)


@dispatch.dispatchable
def round(x: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """Round half to even; integers are returned unchanged."""
    x = convert_to_tensor(x)
    return x if x.dtype.is_integer else apply("Round", [x], name=name or "Round")


@dispatch.dispatchable
def atan2(y: Any, x: Any, name: str | None = None) -> Tensor:
    """Elementwise arctangent of ``y / x``, using the signs of both to pick the quadrant."""
    a, b = binary_inputs(y, x)
    return apply("Atan2", [a, b], name=name or "Atan2")


# -- comparisons and logic ------------------------------------------------------------------

equal = _binary("Equal", "equal")
not_equal = _binary("NotEqual", "not_equal")
less = _binary("Less", "less")
less_equal = _binary("LessEqual", "less_equal")
greater = _binary("Greater", "greater")
greater_equal = _binary("GreaterEqual", "greater_equal")
logical_and = _binary("LogicalAnd", "logical_and")
logical_or = _binary("LogicalOr", "logical_or")
logical_not = _unary("LogicalNot", "logical_not")


@dispatch.dispatchable
def logical_xor(x: Any, y: Any, name: str = "LogicalXor") -> Tensor:
    """``(x | y) & ~(x & y)``, TF's composite."""
    a, b = binary_inputs(x, y)
    return apply("LogicalAnd", [logical_or(a, b), logical_not(logical_and(a, b))], name=name)


# -- casts ----------------------------------------------------------------------------------


@dispatch.dispatchable
def cast(x: Any, dtype: Any, name: str | None = None) -> Tensor:
    """`x` as `dtype`; a tensor that already has it is returned as is."""
    target = dtypes.as_dtype(dtype)
    if isinstance(x, Tensor) and x.dtype == target:
        return x
    x = convert_to_tensor(x)
    if x.dtype == target:
        return x
    return apply("Cast", [x], {"DstT": target}, name=name or "Cast")


def to_float(x: Any, name: str = "ToFloat") -> Tensor:
    return cast(x, dtypes.float32, name=name)


def to_double(x: Any, name: str = "ToDouble") -> Tensor:
    return cast(x, dtypes.float64, name=name)


def to_int32(x: Any, name: str = "ToInt32") -> Tensor:
    return cast(x, dtypes.int32, name=name)


def to_int64(x: Any, name: str = "ToInt64") -> Tensor:
    return cast(x, dtypes.int64, name=name)


def saturate_cast(value: Any, dtype: Any, name: str | None = None) -> Tensor:
    """Cast, first clamping `value` into `dtype`'s range so nothing wraps around."""
    with name_scope(name, "saturate_cast", [value]) as scope:
        value = convert_to_tensor(value)
        target = dtypes.as_dtype(dtype)
        if value.dtype.min < target.min:
            value = maximum(value, constant(target.min, dtype=value.dtype), name="min")
        if value.dtype.max > target.max:
            value = minimum(value, constant(target.max, dtype=value.dtype), name="max")
        return cast(value, target, name=scope)


# -- reductions -----------------------------------------------------------------------------


def _reduction_args(axis: Any, reduction_indices: Any, keepdims: Any,
                    keep_dims: Any) -> tuple[Any, bool]:
    """`axis` and `keepdims`, each given under its name or its TF1 alias."""
    axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    return axis, bool(keepdims)


def _all_axes(x: Tensor) -> Any:
    """TF's ``_ReductionDims`` for ``axis=None``: a constant (``Const``, ahead of the op) when
    the rank is known and not 0 (TF 2.x's test is the rank's truth), else ``range(rank(x))``."""
    if x.shape.ndims:
        return constant(np.arange(x.shape.ndims, dtype=np.int32))
    with x.graph.as_default():
        rank = apply("Rank", [x]) if x.shape.ndims is None else constant(
            np.int32(0), name="Rank")
        return apply("Range", [0, rank, 1], name="range")


def _index_value(axis: Any) -> Any:
    """`axis` for an index input: an empty list is int32, as TF's attr default makes it."""
    if is_tensor_like(axis):
        return axis
    value = np.asarray(axis)
    return value.astype(np.int32) if value.size == 0 else axis


def _reduce(op: str, input_tensor: Any, axis: Any, keepdims: Any, name: str | None,
            reduction_indices: Any, keep_dims: Any) -> Tensor:
    axis, keepdims = _reduction_args(axis, reduction_indices, keepdims, keep_dims)
    # All/Any take bool only, so a Python value (an empty list too) converts as bool, as TF's
    # op-def conversion does.
    logical = op in ("All", "Any") and not is_tensor_like(input_tensor)
    x = convert_to_tensor(input_tensor, dtype=dtypes.bool_ if logical else None)
    axes = _all_axes(x) if axis is None else _index_value(axis)
    out = apply(op, [x, axes], {"keep_dims": keepdims}, name=name or op)
    if axis is None and not keepdims:
        out.set_shape([])
    return out


def _reduction(op: str, py_name: str) -> Callable[..., Tensor]:
    def fn(input_tensor: Any, axis: Any = None, keepdims: bool | None = None,
           name: str | None = None, reduction_indices: Any = None,
           keep_dims: bool | None = None) -> Tensor:
        return _reduce(op, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)

    fn.__name__ = fn.__qualname__ = py_name
    fn.__doc__ = (f"`{op}` of `input_tensor` over `axis` (all axes if None); reduced axes are "
                  "dropped unless `keepdims`.")
    return dispatch.dispatchable(fn)


reduce_sum = _reduction("Sum", "reduce_sum")
reduce_mean = _reduction("Mean", "reduce_mean")
reduce_max = _reduction("Max", "reduce_max")
reduce_min = _reduction("Min", "reduce_min")
reduce_prod = _reduction("Prod", "reduce_prod")
reduce_all = _reduction("All", "reduce_all")
reduce_any = _reduction("Any", "reduce_any")


def reduce_euclidean_norm(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                          name: str | None = None) -> Tensor:
    """``sqrt(sum(x**2))`` over `axis`."""
    return _reduce("EuclideanNorm", input_tensor, axis, keepdims, name, None, None)


def reduce_logsumexp(input_tensor: Any, axis: Any = None, keepdims: bool | None = None,
                     name: str | None = None, reduction_indices: Any = None,
                     keep_dims: bool | None = None) -> Tensor:
    """``log(sum(exp(x)))`` over `axis`, shifted by the (finite) max so nothing overflows."""
    axis, keepdims = _reduction_args(axis, reduction_indices, keepdims, keep_dims)
    with name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor)
        raw_max = reduce_max(x, axis, keepdims=True)
        # An infinite max would turn x - max into NaN: shift by 0 there instead.
        finite = cast(is_finite(raw_max), x.dtype)
        shift = apply("StopGradient", [multiply_no_nan(raw_max, finite)])
        summed = reduce_sum(exp(subtract(x, shift)), axis, keepdims=keepdims)
        # Summing the kept size-1 axes drops them exactly when the result drops them.
        offset = shift if keepdims else reduce_sum(shift, axis)
        return apply("AddV2", [log(summed), offset], name=scope)


def reduce_variance(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                    name: str | None = None) -> Tensor:
    """Variance over `axis` (floating point only): ``mean(square(x - mean(x)))``."""
    with name_scope(name, "reduce_variance", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor)
        if x.dtype.is_integer:
            raise TypeError("Input must be either real or complex")
        deviations = square(subtract(x, reduce_mean(x, axis, keepdims=True)))
        return reduce_mean(deviations, axis, keepdims=keepdims, name=scope)


def reduce_std(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """Standard deviation over `axis` (floating point only)."""
    with name_scope(name, "reduce_std", [input_tensor]) as scope:
        return sqrt(reduce_variance(input_tensor, axis, keepdims=keepdims), name=scope)


def count_nonzero(input_tensor: Any = None, axis: Any = None, keepdims: bool | None = None,
                  dtype: Any = dtypes.int64, name: str | None = None,
                  reduction_indices: Any = None, keep_dims: bool | None = None,
                  input: Any = None) -> Tensor:  # noqa: A002 - TF's name
    """The number of non-zero elements over `axis`, as `dtype`."""
    input_tensor = deprecated_argument_lookup("input_tensor", input_tensor, "input", input)
    axis, keepdims = _reduction_args(axis, reduction_indices, keepdims, keep_dims)
    with name_scope(name, "count_nonzero", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor)
        # TF's zero of a string tensor is the empty string.
        zero = constant(b"" if x.dtype == dtypes.string else np.zeros((), x.dtype.np_type))
        nonzero = cast(not_equal(x, zero), dtypes.int64)
        return cast(reduce_sum(nonzero, axis, keepdims=keepdims), dtype, name=scope)


def _arg_reduction(op: str, py_name: str) -> Callable[..., Tensor]:
    def fn(input: Any, axis: Any = None, name: str | None = None,  # noqa: A002 - TF's name
           dimension: Any = None, output_type: Any = dtypes.int64) -> Tensor:
        axis = deprecated_argument_lookup("axis", axis, "dimension", dimension)
        return apply(op, [input, 0 if axis is None else axis],
                     {"output_type": dtypes.as_dtype(output_type)}, name=name or op)

    fn.__name__ = fn.__qualname__ = py_name
    fn.__doc__ = f"Index of the {py_name[3:]} along `axis` (default 0), as `output_type`."
    return fn


argmax = _arg_reduction("ArgMax", "argmax")
argmin = _arg_reduction("ArgMin", "argmin")


def arg_max(input: Any, dimension: Any, output_type: Any = dtypes.int64,  # noqa: A002
            name: str | None = None) -> Tensor:
    """TF1's raw ``arg_max``: `argmax` with a required `dimension`."""
    return argmax(input, dimension, name=name, output_type=output_type)


def arg_min(input: Any, dimension: Any, output_type: Any = dtypes.int64,  # noqa: A002
            name: str | None = None) -> Tensor:
    """TF1's raw ``arg_min``: `argmin` with a required `dimension`."""
    return argmin(input, dimension, name=name, output_type=output_type)


def _scan(op: str, py_name: str) -> Callable[..., Tensor]:
    def fn(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False,
           name: str | None = None) -> Tensor:
        return apply(op, [x, axis], {"exclusive": exclusive, "reverse": reverse},
                     name=name or op)

    fn.__name__ = fn.__qualname__ = py_name
    fn.__doc__ = f"Running `{op}` of `x` along `axis`."
    return fn


cumsum = _scan("Cumsum", "cumsum")
cumprod = _scan("Cumprod", "cumprod")


@dispatch.dispatchable
def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any,
                  name: str | None = None) -> Tensor:
    """``max(min(t, clip_value_max), clip_value_min)``; the result keeps `t`'s shape."""
    with name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        t = convert_to_tensor(t)
        lo, hi = _like(clip_value_min, t), _like(clip_value_max, t)
        if all(b.shape.ndims == 0 or b.shape.is_compatible_with(t.shape) for b in (lo, hi)):
            return apply("ClipByValue", [t, lo, hi], name=scope)
        # Broadcasting bounds: TF's composite, which refuses to grow t's shape.
        clipped = minimum(t, hi)
        t.shape.merge_with(clipped.shape)
        clipped = maximum(clipped, lo, name=scope)
        t.shape.merge_with(clipped.shape)
        return clipped


def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None,
                 name: str | None = None) -> Tensor | IndexedSlices:
    """`t` scaled so that its L2 norm over `axes` (all if None) is at most `clip_norm`:
    ``t * clip_norm / max(l2norm(t), clip_norm)``. An `IndexedSlices` is clipped by the norm
    of its values (repeated indices are not summed first), as in TF."""
    with name_scope(name, "clip_by_norm", [t, clip_norm]) as scope:
        values = convert_to_tensor(_values(t), name="t")
        l2sum = reduce_sum(multiply(values, values), axes, keepdims=True)
        # TF's two-sided where: sqrt only sees positive sums, so no NaN gradient at zero.
        positive = greater(l2sum, 0)
        safe = apply("Select", [positive, l2sum, apply("OnesLike", [l2sum])])
        l2norm = apply("Select", [positive, sqrt(safe), l2sum])
        intermediate = multiply(values, clip_norm)
        values.shape.merge_with(intermediate.shape)  # clip_norm must not broadcast t's shape
        clipped = apply("Identity", [truediv(intermediate, maximum(l2norm, clip_norm))],
                        name=scope)
        return IndexedSlices(clipped, t.indices, t.dense_shape) \
            if isinstance(t, IndexedSlices) else clipped


def _tensor_list(t_list: Any) -> list[Any]:
    if not isinstance(t_list, Sequence) or isinstance(t_list, str):
        raise TypeError("t_list should be a sequence")
    return list(t_list)


def global_norm(t_list: Any, name: str | None = None) -> Tensor:
    """``sqrt(sum(l2norm(t) ** 2 for t in t_list))``; None entries are skipped, and an
    `IndexedSlices` counts by its values."""
    t_list = _tensor_list(t_list)
    with name_scope(name, "global_norm", [t for t in t_list if t is not None]) as scope:
        values = [convert_to_tensor(_values(t), name=f"t_{i}") for i, t in enumerate(t_list)
                  if t is not None]
        halves = []
        for v in values:
            with colocate_with(v):
                halves.append(apply("L2Loss", [v]))
        half_squared = reduce_sum(apply("Pack", [halves], {"axis": 0}))
        two = constant(2.0, half_squared.dtype)
        return sqrt(multiply(half_squared, two), name=scope[:-1])


def _values(t: Any) -> Any:
    return t.values if isinstance(t, IndexedSlices) else t


def clip_by_global_norm(t_list: Any, clip_norm: Any, use_norm: Any = None,
                        name: str | None = None) -> tuple[list[Any], Tensor]:
    """Scale every tensor of `t_list` by ``clip_norm / max(global_norm, clip_norm)``; returns
    the clipped list (None entries kept, an `IndexedSlices` clipped in its values) and the
    global norm. A non-finite norm makes every result NaN, as in TF."""
    t_list = _tensor_list(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    with name_scope(name, "clip_by_global_norm",
                    [t for t in t_list if t is not None] + [clip_norm]) as scope:
        use_norm = convert_to_tensor(use_norm)
        clip = _like(clip_norm, use_norm)
        one = constant(1.0, use_norm.dtype)
        scale = multiply(clip, minimum(truediv(one, use_norm), truediv(one, clip)))
        # use_norm - use_norm is 0 for a finite norm and NaN otherwise.
        scale = add(scale, subtract(use_norm, use_norm))
        clipped: list[Any] = []
        for i, t in enumerate(t_list):
            if t is None:
                clipped.append(None)
                continue
            v = convert_to_tensor(_values(t), name=f"t_{i}")
            with colocate_with(v):
                v = apply("Identity", [multiply(v, cast(scale, v.dtype))],
                          name=f"{scope[:-1]}_{i}")
            clipped.append(IndexedSlices(v, t.indices, t.dense_shape)
                           if isinstance(t, IndexedSlices) else v)
        return clipped, use_norm


# -- matrix products ------------------------------------------------------------------------


def matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False,
           adjoint_a: bool = False, adjoint_b: bool = False, a_is_sparse: bool = False,
           b_is_sparse: bool = False, name: str | None = None) -> Tensor:
    """Matrix product; inputs of rank > 2 (or unknown rank) are batches (`BatchMatMulV2`).

    The adjoint is the conjugate transpose; the sparsity hints are accepted and ignored.
    """
    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_b and adjoint_b can be True.")
    x, y = binary_inputs(a, b)
    flip_a, flip_b = transpose_a or adjoint_a, transpose_b or adjoint_b
    batch = any(t.shape.ndims is None or t.shape.ndims > 2 for t in (x, y))
    if x.dtype.is_complex:
        # BatchMatMulV2's adj_* conjugate and MatMul's transpose_* do not: conjugate first where
        # the flag's meaning differs from the one asked for
        x = apply("Conj", [x]) if (transpose_a if batch else adjoint_a) else x
        y = apply("Conj", [y]) if (transpose_b if batch else adjoint_b) else y
    if batch:
        return apply("BatchMatMulV2", [x, y], {"adj_x": flip_a, "adj_y": flip_b},
                     name=name or "MatMul")
    return apply("MatMul", [x, y], {"transpose_a": flip_a, "transpose_b": flip_b},
                 name=name or "MatMul")


def _contraction_axes(a: Tensor, b: Tensor, axes: Any) -> tuple[list[int], list[int]]:
    rank_a, rank_b = a.shape.ndims, b.shape.ndims
    if rank_a is None or rank_b is None:
        raise ValueError("tensordot needs inputs of known rank.")
    if isinstance(axes, (int, np.integer)):
        if axes < 0:
            raise ValueError("'axes' must be at least 0.")
        if axes > rank_a:
            raise ValueError(f"'axes' must not be larger than the number of dimensions of "
                             f"tensor {a}.")
        return list(range(rank_a - axes, rank_a)), list(range(axes))
    if isinstance(axes, Tensor) or len(axes) != 2:
        raise ValueError("'axes' must be an integer or have length 2.")
    a_axes, b_axes = (list(np.atleast_1d(np.asarray(v, dtype=np.int64)).tolist())
                      for v in axes)
    if len(a_axes) != len(b_axes):
        raise ValueError(f"Different number of contraction axes 'a' and 'b', {len(a_axes)} != "
                         f"{len(b_axes)}.")
    return [i % rank_a for i in a_axes], [i % rank_b for i in b_axes]


def _as_matrix(x: Tensor, axes: list[int], contract_first: bool) -> tuple[Tensor, Any]:
    """`x` transposed and reshaped to [free, contracted] (or [contracted, free]), and its free
    dims: a list of ints when static, else a 1-D int32 tensor."""
    rank = x.shape.ndims
    free = [i for i in range(rank) if i not in axes]
    perm = axes + free if contract_first else free + axes
    if perm != list(range(rank)):
        x = apply("Transpose", [x, np.asarray(perm, dtype=np.int32)])
    n = len(axes)
    contract_idx = list(range(n) if contract_first else range(rank - n, rank))
    free_idx = list(range(n, rank) if contract_first else range(rank - n))
    if x.shape.is_fully_defined():
        dims = x.shape.as_list()
        free_dims: Any = [dims[i] for i in free_idx]
        sizes = [int(np.prod([dims[i] for i in idx], dtype=np.int64))
                 for idx in (contract_idx, free_idx)]
        if not contract_first:
            sizes.reverse()
        if dims == sizes:
            return x, free_dims
        return apply("Reshape", [x, np.asarray(sizes, dtype=np.int32)]), free_dims
    shape = apply("Shape", [x])
    free_dims = apply("GatherV2", [shape, np.asarray(free_idx, np.int32), 0])
    contract_dims = apply("GatherV2", [shape, np.asarray(contract_idx, np.int32), 0])
    pair = [reduce_prod(contract_dims), reduce_prod(free_dims)]
    if not contract_first:
        pair.reverse()
    return apply("Reshape", [x, apply("Pack", [pair], {"axis": 0})]), free_dims


def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> Tensor:
    """Sum over the `axes` of `a` and `b` (an int N: the last N of `a` with the first N of `b`;
    or a pair of axis lists), as a transpose + reshape + matmul composite."""
    with name_scope(name, "Tensordot", [a, b]) as scope:
        a, b = convert_to_tensor(a), convert_to_tensor(b)
        a_axes, b_axes = _contraction_axes(a, b, axes)
        a_mat, a_free = _as_matrix(a, a_axes, contract_first=False)
        b_mat, b_free = _as_matrix(b, b_axes, contract_first=True)
        product = matmul(a_mat, b_mat)
        if isinstance(a_free, list) and isinstance(b_free, list):
            out_shape: Any = a_free + b_free
            if product.shape.dims is not None and list(product.shape.dims) == out_shape:
                return product
            return apply("Reshape", [product, np.asarray(out_shape, dtype=np.int32)], name=scope)
        parts = [np.asarray(d, np.int32) if isinstance(d, list) else d for d in (a_free, b_free)]
        return apply("Reshape", [product, apply("ConcatV2", [parts, 0])], name=scope)

