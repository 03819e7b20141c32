"""Kernels for elementwise math, comparisons, logic, casts, reductions, scans and matmul.

Contract: every kernel returns exactly the node's output dtype (numpy upcasts sums of small
ints, means, float16 accumulations; `_exact` casts back). Integer division and modulo by zero
raise `InvalidArgumentError` as TF does, floats give inf/NaN silently. Shape mismatches that
static inference could not catch raise `InvalidArgumentError` with TF's wording. inf/NaN come
silently: the executor runs every step with numpy's floating-point warnings off.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels import special

Fn = Callable[..., Any]


def _exact(ctx: KernelContext, value: Any) -> Any:
    return value if value.dtype == ctx.out_np else value.astype(ctx.out_np)


def _dims(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _broadcastable(*shapes: Sequence[int]) -> bool:
    n = max(len(s) for s in shapes)
    for dims in zip(*([1] * (n - len(s)) + list(s) for s in shapes)):
        if len({d for d in dims if d != 1}) > 1:
            return False
    return True


def _invalid(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def elementwise(fn: Fn) -> Fn:
    """A kernel applying ``fn(ctx, *arrays)``, with TF's broadcast error and exact dtype."""
    ufunc = getattr(fn, "ufunc", None)
    if ufunc is not None:  # the commonest kernels, called directly: one Python frame per call

        def kernel(ctx: KernelContext, *inputs: Any) -> Any:
            try:
                result = getattr(ctx.xp, ufunc)(*inputs)
            except ValueError:
                error = _incompatible(ctx, inputs)
                if error is None:
                    raise
                raise error from None
            out = ctx.output_dtypes[0].np_type
            return result if result.dtype == out else result.astype(out)

        def bind(ctx: KernelContext, input_dtypes: list[Any]) -> Fn | None:
            return _direct_ufunc(ctx.xp, ufunc, tuple(input_dtypes), ctx.output_dtypes[0])

        kernel.bind = bind  # type: ignore[attr-defined]
    else:

        def kernel(ctx: KernelContext, *inputs: Any) -> Any:
            try:
                result = fn(ctx, *inputs)
            except ValueError:
                error = _incompatible(ctx, inputs)
                if error is None:
                    raise
                raise error from None
            return _exact(ctx, result)

    kernel.__name__ = fn.__name__
    return kernel


@functools.lru_cache(maxsize=1024)
def _direct_ufunc(xp: Any, name: str, input_dtypes: tuple[Any, ...], output: Any) -> Fn | None:
    """The ufunc `name` of `xp` if it is the kernel for these dtypes, else None."""
    # The result's dtype follows from the inputs' alone (numpy's NEP 50): where it is the
    # node's, the ufunc itself is the kernel. An array module without `resolve_dtypes` (cupy)
    # keeps the kernel.
    fn = getattr(xp, name)
    resolve = getattr(fn, "resolve_dtypes", None)
    if resolve is None or len(input_dtypes) != fn.nin:
        return None
    try:
        out = resolve((*(xp.dtype(d.np_type) for d in input_dtypes), None))[-1]
    except (TypeError, ValueError):
        return None
    return fn if out == output.np_type else None


def _incompatible(ctx: KernelContext, inputs: tuple[Any, ...]) -> Exception | None:
    """TF's error for inputs whose shapes do not broadcast; None if they do."""
    shapes = [x.shape for x in inputs]
    if _broadcastable(*shapes):
        return None
    return _invalid(ctx, "Incompatible shapes: " + " vs. ".join(map(_dims, shapes)))


def _ufunc(name: str) -> Fn:
    def fn(ctx: KernelContext, *inputs: Any) -> Any:
        return getattr(ctx.xp, name)(*inputs)

    fn.__name__ = name
    fn.ufunc = name  # type: ignore[attr-defined]  # `elementwise` calls it directly
    return fn


# -- division family ------------------------------------------------------------------------


def _is_int(x: Any) -> bool:
    return x.dtype.kind in "iu"


def _check_divisor(ctx: KernelContext, x: Any, y: Any) -> None:
    # TF checks each computed element, so an empty broadcast result never fails.
    if x.size and ctx.xp.any(y == 0):
        raise _invalid(ctx, "Integer division by zero")


def _truncated_quotient(ctx: KernelContext, x: Any, y: Any) -> Any:
    xp = ctx.xp
    # x - fmod(x, y) is an exact multiple of y, so floor division of it truncates x / y.
    return xp.floor_divide(xp.subtract(x, xp.fmod(x, y)), y)


def div(ctx: KernelContext, x: Any, y: Any) -> Any:
    if _is_int(x):
        _check_divisor(ctx, x, y)
        return _truncated_quotient(ctx, x, y)
    return ctx.xp.true_divide(x, y)


def floor_div(ctx: KernelContext, x: Any, y: Any) -> Any:
    if _is_int(x):
        _check_divisor(ctx, x, y)
        return ctx.xp.floor_divide(x, y)
    return ctx.xp.floor(ctx.xp.true_divide(x, y))


def floor_mod(ctx: KernelContext, x: Any, y: Any) -> Any:
    if _is_int(x):
        _check_divisor(ctx, x, y)
    return ctx.xp.remainder(x, y)


def truncate_div(ctx: KernelContext, x: Any, y: Any) -> Any:
    if _is_int(x):
        _check_divisor(ctx, x, y)
        return _truncated_quotient(ctx, x, y)
    return ctx.xp.trunc(ctx.xp.true_divide(x, y))


def truncate_mod(ctx: KernelContext, x: Any, y: Any) -> Any:
    if _is_int(x):
        _check_divisor(ctx, x, y)
    return ctx.xp.fmod(x, y)


def squared_difference(ctx: KernelContext, x: Any, y: Any) -> Any:
    d = ctx.xp.subtract(x, y)
    # TF's functor is (x - y) * conj(x - y): |x - y|^2 for complex numbers
    return ctx.xp.multiply(d, ctx.xp.conj(d) if d.dtype.kind == "c" else d)


def xlogy(ctx: KernelContext, x: Any, y: Any) -> Any:
    return ctx.xp.where(x == 0, 0, x * ctx.xp.log(y))


def xdivy(ctx: KernelContext, x: Any, y: Any) -> Any:
    return ctx.xp.where(x == 0, 0, x / y)


def div_no_nan(ctx: KernelContext, x: Any, y: Any) -> Any:
    return ctx.xp.where(y == 0, 0, x / y)


def mul_no_nan(ctx: KernelContext, x: Any, y: Any) -> Any:
    return ctx.xp.where(y == 0, 0, x * y)


# -- unary ----------------------------------------------------------------------------------


def round_half_even(ctx: KernelContext, x: Any) -> Any:
    return x if _is_int(x) else ctx.xp.round(x)


def rsqrt(ctx: KernelContext, x: Any) -> Any:
    return ctx.xp.reciprocal(ctx.xp.sqrt(x))


def sigmoid(ctx: KernelContext, x: Any) -> Any:
    xp = ctx.xp
    e = xp.exp(-xp.abs(x))  # never overflows
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))


def erf(ctx: KernelContext, x: Any) -> Any:
    return special.erf(ctx.xp, x)


def erfc(ctx: KernelContext, x: Any) -> Any:
    return special.erfc(ctx.xp, x)


def cast(ctx: KernelContext, x: Any) -> Any:
    xp, out = ctx.xp, ctx.out_np
    if x.dtype.kind == "c" and xp.dtype(out).kind != "c":
        # TF keeps the real part (a complex is true when either part is nonzero)
        x = x != 0 if xp.dtype(out).kind == "b" else x.real
    result = x.astype(out)
    narrowing = (x.dtype.kind == "f" and result.dtype.kind == "f"
                 and result.dtype.itemsize < x.dtype.itemsize)
    if ctx.attrs.get("Truncate") and narrowing:
        # Round toward zero: step back one ulp wherever rounding to nearest went outward.
        outward = xp.abs(result.astype(x.dtype)) > xp.abs(x)
        result = xp.where(outward, xp.nextafter(result, xp.zeros((), out)), result)
    return result


# -- comparisons ----------------------------------------------------------------------------


def _equality(name: str) -> Fn:
    def fn(ctx: KernelContext, x: Any, y: Any) -> Any:
        if not ctx.attrs.get("incompatible_shape_error", True) and not _broadcastable(
                x.shape, y.shape):
            return ctx.xp.asarray(name == "not_equal")
        return getattr(ctx.xp, name)(x, y)

    fn.__name__ = name
    return fn


# -- reductions -----------------------------------------------------------------------------


def _axes(ctx: KernelContext, rank: int, axes: Any) -> tuple[int, ...]:
    out: list[int] = []
    for axis in axes.reshape(-1).tolist():
        if not -rank <= axis < rank:
            raise _invalid(ctx, f"Invalid reduction dimension ({axis} for input with {rank} "
                                f"dimension(s)")
        if axis % rank not in out:
            out.append(axis % rank)
    return tuple(out)


def _accumulator(x: Any) -> Any:
    """dtype to accumulate in: float16 sums lose too much precision in float16."""
    return "float32" if x.dtype.kind == "f" and x.dtype.itemsize < 4 else x.dtype


def _reduction(body: Callable[[KernelContext, Any, tuple[int, ...], bool], Any]) -> Fn:
    def kernel(ctx: KernelContext, x: Any, axes: Any) -> Any:
        ax = _axes(ctx, x.ndim, axes)
        keep = bool(ctx.attrs.get("keep_dims", False))
        return _exact(ctx, body(ctx, x, ax, keep))

    kernel.__name__ = body.__name__
    return kernel


def reduce_sum(ctx: KernelContext, x: Any, ax: tuple[int, ...], keep: bool) -> Any:
    return ctx.xp.sum(x, axis=ax, keepdims=keep, dtype=_accumulator(x))


def reduce_prod(ctx: KernelContext, x: Any, ax: tuple[int, ...], keep: bool) -> Any:
    return ctx.xp.prod(x, axis=ax, keepdims=keep, dtype=_accumulator(x))


def reduce_mean(ctx: KernelContext, x: Any, ax: tuple[int, ...], keep: bool) -> Any:
    xp = ctx.xp
    if not _is_int(x):
        return xp.mean(x, axis=ax, keepdims=keep, dtype=_accumulator(x))
    total = xp.sum(x, axis=ax, keepdims=keep, dtype="int64")
    count = 1
    for a in ax:
        count *= x.shape[a]
    if count == 0:
        return xp.zeros_like(total)
    # TF divides integers in C, truncating toward zero.
    return xp.sign(total) * xp.floor_divide(xp.abs(total), count)


def reduce_euclidean_norm(ctx: KernelContext, x: Any, ax: tuple[int, ...], keep: bool) -> Any:
    xp = ctx.xp
    wide = x.astype("float64") if _is_int(x) else x.astype(_accumulator(x))
    squares = wide * xp.conj(wide) if wide.dtype.kind == "c" else wide * wide
    return xp.sqrt(xp.sum(squares, axis=ax, keepdims=keep))


def _extreme(name: str) -> Callable[[KernelContext, Any, tuple[int, ...], bool], Any]:
    def body(ctx: KernelContext, x: Any, ax: tuple[int, ...], keep: bool) -> Any:
        xp = ctx.xp
        if any(x.shape[a] == 0 for a in ax):
            # TF reduces an empty range to the reduction's identity: -inf/lowest for max.
            dims = [1 if i in ax else d for i, d in enumerate(x.shape) if keep or i not in ax]
            if x.dtype.kind == "f":
                identity = float("-inf") if name == "amax" else float("inf")
            else:
                info = xp.iinfo(x.dtype)
                identity = info.min if name == "amax" else info.max
            return xp.full(dims, identity, dtype=x.dtype)
        return getattr(xp, name)(x, axis=ax, keepdims=keep)

    body.__name__ = name
    return body


def _logical_reduction(name: str) -> Callable[[KernelContext, Any, tuple[int, ...], bool], Any]:
    def body(ctx: KernelContext, x: Any, ax: tuple[int, ...], keep: bool) -> Any:
        return getattr(ctx.xp, name)(x, axis=ax, keepdims=keep)

    body.__name__ = name
    return body


def _axis(ctx: KernelContext, rank: int, value: Any, what: str) -> int:
    axis = int(value)
    if not -rank <= axis < rank:
        raise _invalid(ctx, f"Expected {what} in the range [{-rank}, {rank}), but got {axis}")
    return axis % rank


def _arg_reduction(name: str) -> Fn:
    def kernel(ctx: KernelContext, x: Any, dimension: Any) -> Any:
        axis = _axis(ctx, x.ndim, dimension, "dimension")
        if x.shape[axis] == 0:
            raise _invalid(ctx, f"Reduction axis {axis} is empty in shape {_dims(x.shape)}")
        return getattr(ctx.xp, name)(x, axis=axis).astype(ctx.out_np)

    kernel.__name__ = name
    return kernel


# -- scans ----------------------------------------------------------------------------------


def _scan(name: str, identity: int) -> Fn:
    def kernel(ctx: KernelContext, x: Any, axis_value: Any) -> Any:
        xp = ctx.xp
        axis = _axis(ctx, x.ndim, axis_value, "scan axis")
        reverse = ctx.attrs.get("reverse", False)
        if reverse:
            x = xp.flip(x, axis)
        result = getattr(xp, name)(x, axis=axis, dtype=_accumulator(x))
        if ctx.attrs.get("exclusive", False):
            head = list(result.shape)
            head[axis] = 1
            body = [slice(None)] * result.ndim
            body[axis] = slice(0, -1)
            result = xp.concatenate(
                [xp.full(head, identity, dtype=result.dtype), result[tuple(body)]], axis=axis)
        if reverse:
            result = xp.flip(result, axis)
        return _exact(ctx, result)

    kernel.__name__ = name
    return kernel


# -- lists, clipping, matmul ----------------------------------------------------------------


# An AddN of at least this many inputs of at most _STACKED_ELEMENTS elements in all adds them
# in one accumulate over their stack: the same additions in the same order (left to right, as
# TF's kernel), in three array calls instead of one per input.
_STACKED_INPUTS = 8
_STACKED_ELEMENTS = 1 << 14


def add_n(ctx: KernelContext, *inputs: Any) -> Any:
    first = inputs[0]
    for i, value in enumerate(inputs[1:], start=1):
        if value.shape != first.shape:
            raise _invalid(ctx, f"Inputs to operation {ctx.node_name} of type AddN must have the "
                                f"same size and shape.  Input 0: {_dims(first.shape)} != input "
                                f"{i}: {_dims(value.shape)}")
    n, xp = len(inputs), ctx.xp
    if n >= _STACKED_INPUTS and first.ndim and n * first.size <= _STACKED_ELEMENTS \
            and hasattr(xp.add, "accumulate"):
        stacked = xp.concatenate(inputs).reshape(n, *first.shape)
        return _exact(ctx, xp.add.accumulate(stacked, axis=0, dtype=stacked.dtype)[-1].copy())
    return _exact(ctx, functools.reduce(xp.add, inputs))


def clip_by_value(ctx: KernelContext, t: Any, lo: Any, hi: Any) -> Any:
    for name, bound in (("clip_value_min", lo), ("clip_value_max", hi)):
        if bound.shape not in ((), t.shape):
            raise _invalid(ctx, f"{name} must be either a scalar or have the same shape as t. "
                                f"{name}.shape = {_dims(bound.shape)}, t.shape = "
                                f"{_dims(t.shape)}")
    return _exact(ctx, ctx.xp.maximum(ctx.xp.minimum(t, hi), lo))


def _size_error(ctx: KernelContext, a: Any, b: Any) -> errors.InvalidArgumentError:
    return _invalid(ctx, f"Matrix size-incompatible: In[0]: {_dims(a.shape)}, In[1]: "
                         f"{_dims(b.shape)}")


def matmul(ctx: KernelContext, a: Any, b: Any) -> Any:
    for i, m in enumerate((a, b)):
        if m.ndim != 2:
            raise _invalid(ctx, f"In[{i}] is not a matrix. Instead it has shape {_dims(m.shape)}")
    x = a.T if ctx.attrs.get("transpose_a") else a
    y = b.T if ctx.attrs.get("transpose_b") else b
    if x.shape[1] != y.shape[0]:
        raise _size_error(ctx, a, b)
    return _exact(ctx, ctx.xp.matmul(x, y))


def _adjoint(xp: Any, m: Any) -> Any:
    m = xp.swapaxes(m, -1, -2)
    return xp.conj(m) if m.dtype.kind == "c" else m


def batch_matmul(ctx: KernelContext, a: Any, b: Any) -> Any:
    xp = ctx.xp
    for i, m in enumerate((a, b)):
        if m.ndim < 2:
            raise _invalid(ctx, f"In[{i}] ndims must be >= 2: {m.ndim}")
    x = _adjoint(xp, a) if ctx.attrs.get("adj_x") else a
    y = _adjoint(xp, b) if ctx.attrs.get("adj_y") else b
    if x.shape[-1] != y.shape[-2]:
        raise _size_error(ctx, a, b)
    if not _broadcastable(x.shape[:-2], y.shape[:-2]):
        raise _invalid(ctx, f"In[0] and In[1] must have compatible batch dimensions: "
                            f"{_dims(a.shape)} vs. {_dims(b.shape)}")
    return _exact(ctx, xp.matmul(x, y))


# -- registration ---------------------------------------------------------------------------

ELEMENTWISE: dict[str, Fn] = {
    "Add": _ufunc("add"), "AddV2": _ufunc("add"), "Sub": _ufunc("subtract"),
    "Mul": _ufunc("multiply"), "Maximum": _ufunc("maximum"), "Minimum": _ufunc("minimum"),
    "SquaredDifference": squared_difference,
    "Neg": _ufunc("negative"), "Abs": _ufunc("absolute"), "Sign": _ufunc("sign"),
    "Round": round_half_even, "Rint": _ufunc("rint"), "Floor": _ufunc("floor"),
    "Ceil": _ufunc("ceil"), "Square": _ufunc("square"), "Sin": _ufunc("sin"),
    "Cos": _ufunc("cos"), "Atan": _ufunc("arctan"), "Tanh": _ufunc("tanh"),
    "Asinh": _ufunc("arcsinh"), "Sigmoid": sigmoid,
    "IsNan": _ufunc("isnan"), "IsInf": _ufunc("isinf"), "IsFinite": _ufunc("isfinite"),
    "Less": _ufunc("less"), "LessEqual": _ufunc("less_equal"), "Greater": _ufunc("greater"),
    "GreaterEqual": _ufunc("greater_equal"), "Equal": _equality("equal"),
    "NotEqual": _equality("not_equal"), "LogicalAnd": _ufunc("logical_and"),
    "LogicalOr": _ufunc("logical_or"), "LogicalNot": _ufunc("logical_not"),
}

DIVISION_AND_TRANSCENDENTAL: dict[str, Fn] = {
    "RealDiv": _ufunc("true_divide"), "Div": div, "FloorDiv": floor_div, "FloorMod": floor_mod,
    "TruncateDiv": truncate_div, "TruncateMod": truncate_mod, "Pow": _ufunc("power"),
    "Atan2": _ufunc("arctan2"), "Xlogy": xlogy, "Xdivy": xdivy, "DivNoNan": div_no_nan,
    "MulNoNan": mul_no_nan, "NextAfter": _ufunc("nextafter"), "Sqrt": _ufunc("sqrt"),
    "Rsqrt": rsqrt, "Exp": _ufunc("exp"),
    "Expm1": _ufunc("expm1"), "Log": _ufunc("log"), "Log1p": _ufunc("log1p"), "Tan": _ufunc("tan"),
    "Asin": _ufunc("arcsin"), "Acos": _ufunc("arccos"), "Sinh": _ufunc("sinh"),
    "Cosh": _ufunc("cosh"), "Acosh": _ufunc("arccosh"), "Atanh": _ufunc("arctanh"),
    "Reciprocal": _ufunc("reciprocal"), "Inv": _ufunc("reciprocal"), "Erf": erf, "Erfc": erfc,
    "Cast": cast,
}

REDUCTIONS: dict[str, Fn] = {
    "Sum": _reduction(reduce_sum), "Prod": _reduction(reduce_prod),
    "Mean": _reduction(reduce_mean),
    "EuclideanNorm": _reduction(reduce_euclidean_norm),
    "Max": _reduction(_extreme("amax")), "Min": _reduction(_extreme("amin")),
    "All": _reduction(_logical_reduction("all")), "Any": _reduction(_logical_reduction("any")),
    "ArgMax": _arg_reduction("argmax"), "ArgMin": _arg_reduction("argmin"),
    "Cumsum": _scan("cumsum", 0), "Cumprod": _scan("cumprod", 1),
    "AddN": add_n, "ClipByValue": clip_by_value,
}


def register(registry: Any, device_type: str) -> None:
    for op, fn in ELEMENTWISE.items():
        registry.add(op, device_type, elementwise(fn))
    for op, fn in DIVISION_AND_TRANSCENDENTAL.items():
        registry.add(op, device_type, elementwise(fn))
    for op, fn in REDUCTIONS.items():
        registry.add(op, device_type, fn)
    registry.add("MatMul", device_type, matmul, expensive=True)
    registry.add("BatchMatMulV2", device_type, batch_matmul, expensive=True)
