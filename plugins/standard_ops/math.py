"""OpDefs for elementwise math, comparisons, logic, casts, reductions, scans and matmul.

Contract: op names, input names, attrs (with TF's defaults) and allowed dtypes follow TensorFlow's
op registry, restricted to tensorweave's dtypes. Binary elementwise ops broadcast numpy-style and
raise `ValueError` at construction when static shapes cannot broadcast; reductions and `ArgMax`
resolve their axis input when it is known at construction time; `MatMul` is rank-2 only and
`BatchMatMulV2` broadcasts batch dimensions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import (
    broadcast,
    broadcast_shape,
    unchanged,
    with_rank,
    with_rank_at_least,
    with_rank_at_most,
)

FLOATS = dtypes.FLOATS
NUMERIC = dtypes.NUMERIC
SIGNED = NUMERIC - {dtypes.uint8, dtypes.uint16}
FLOATS_AND_WIDE_INTS = FLOATS | {dtypes.int32, dtypes.int64}
ALL = frozenset(dtypes.ALL)
INDEX = dtypes.INDEX
COMPLEX = dtypes.COMPLEX
# TF's BINARY_MORE, UNARY and UNARY_COMPLEX lists: the real ones above plus complex64/128
NUMBERS = NUMERIC | COMPLEX
FLOATS_AND_COMPLEX = FLOATS | COMPLEX

BINARY: dict[str, frozenset[dtypes.DType]] = {
    "Add": NUMBERS, "AddV2": NUMBERS, "Sub": NUMBERS, "Mul": NUMBERS, "Div": NUMBERS,
    "RealDiv": FLOATS_AND_COMPLEX, "FloorDiv": NUMERIC, "FloorMod": NUMERIC,
    "TruncateDiv": NUMERIC, "TruncateMod": FLOATS_AND_WIDE_INTS, "Pow": SIGNED | COMPLEX,
    "SquaredDifference": FLOATS_AND_WIDE_INTS | COMPLEX,
    "Maximum": NUMERIC, "Minimum": NUMERIC, "Xlogy": FLOATS_AND_COMPLEX,
    "Xdivy": FLOATS_AND_COMPLEX, "DivNoNan": FLOATS_AND_COMPLEX, "MulNoNan": FLOATS_AND_COMPLEX,
    "NextAfter": frozenset({dtypes.float32, dtypes.float64}),
}

UNARY: dict[str, frozenset[dtypes.DType]] = {
    "Neg": SIGNED | COMPLEX, "Abs": SIGNED, "Sign": SIGNED | COMPLEX, "Round": SIGNED,
    "Square": NUMBERS,
    **{name: FLOATS for name in (
        "Rint", "Floor", "Ceil", "Asin", "Acos", "Atan", "Sigmoid", "Erf", "Erfc")},
    **{name: FLOATS_AND_COMPLEX for name in (
        "Sqrt", "Rsqrt", "Exp", "Expm1", "Log", "Log1p", "Sin", "Cos", "Tan", "Sinh", "Cosh",
        "Tanh", "Asinh", "Acosh", "Atanh", "Reciprocal", "Inv")},
}

PREDICATES = ("IsNan", "IsInf", "IsFinite")
COMPARISONS = ("Less", "LessEqual", "Greater", "GreaterEqual")
REDUCTIONS = ("Sum", "Mean", "Prod", "Max", "Min", "EuclideanNorm")
# TF's op defs name the axes input reduction_indices (so a constant one is
# ``Sum/reduction_indices``); its Python API and raw_ops call it axis
REDUCTION_API = {"reduction_indices": "axis"}
COMPLEX_REDUCTIONS = frozenset({"Sum", "Mean", "Prod", "EuclideanNorm"})
SCANS = ("Cumsum", "Cumprod")

T = {"T": REQUIRED}
REDUCTION_ATTRS = {"keep_dims": False, "Tidx": REQUIRED}


def _equality(ctx: InferContext) -> list[TensorSpec]:
    if ctx.attr("incompatible_shape_error"):
        return broadcast(dtypes.bool_)(ctx)
    try:
        shape = broadcast_shape(ctx, ctx.shape(0), ctx.shape(1))
    except ValueError:
        shape = TensorShape(None)  # the kernel answers a scalar for incompatible shapes
    return [TensorSpec(dtypes.bool_, shape)]


def _predicate(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(dtypes.bool_, ctx.shape(0))]


def _cast(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(ctx.attr("DstT"), ctx.shape(0))]


def reduced_shape(ctx: InferContext, dtype: dtypes.DType) -> TensorSpec:
    """Static result of reducing input 0 over the axes in input 1 (TF's ReductionShape)."""
    shape, keep = ctx.shape(0), ctx.attr("keep_dims")
    with_rank_at_most(ctx, 1, 1)
    axes = ctx.constant_value(1)
    if shape.ndims is None or axes is None:
        rank = shape.ndims if keep else None
        return TensorSpec(dtype, TensorShape(None if rank is None else [None] * rank))
    rank = shape.ndims
    reduced = set()
    for axis in np.asarray(axes).reshape(-1).tolist():
        if not -rank <= axis < rank:
            raise ctx.shape_error(
                f"Invalid reduction dimension {axis} for input with {rank} dimensions.")
        reduced.add(axis % rank)
    dims = shape.dims
    if keep:
        return TensorSpec(dtype, [1 if i in reduced else d for i, d in enumerate(dims)])
    return TensorSpec(dtype, [d for i, d in enumerate(dims) if i not in reduced])


def _reduction(ctx: InferContext) -> list[TensorSpec]:
    return [reduced_shape(ctx, ctx.dtype(0))]


def _arg_reduction(ctx: InferContext) -> list[TensorSpec]:
    shape, out = ctx.shape(0), ctx.attr("output_type")
    with_rank(ctx, 1, 0)
    axis = ctx.constant_value(1)
    if shape.ndims is None:
        return [TensorSpec(out, TensorShape(None))]
    rank = shape.ndims
    if axis is None:
        return [TensorSpec(out, [None] * max(rank - 1, 0))]
    axis = int(axis)
    if not -rank <= axis < rank:
        raise ctx.shape_error(
            f"Expected dimension in the range [{-rank}, {rank}), but got {axis}")
    return [TensorSpec(out, [d for i, d in enumerate(shape.dims) if i != axis % rank])]


def _scan(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 1, 0)
    return [ctx.inputs[0]]


def _clip(ctx: InferContext) -> list[TensorSpec]:
    t = ctx.shape(0)
    for i in (1, 2):
        bound = ctx.shape(i)
        if bound.ndims not in (None, 0) and not bound.is_compatible_with(t):
            raise ctx.shape_error(
                "clip_value_min and clip_value_max must be scalars or have the same shape as t")
    return [ctx.inputs[0]]


def _add_n(ctx: InferContext) -> list[TensorSpec]:
    shape = TensorShape(None)
    for spec in ctx.inputs:
        other = spec.shape
        if shape.ndims is not None and other.ndims is not None:
            if shape.ndims != other.ndims:
                raise ctx.shape_error(
                    f"Shapes must be equal rank, but are {shape.ndims} and {other.ndims}")
            for i, (a, b) in enumerate(zip(shape.dims, other.dims)):
                if a is not None and b is not None and a != b:
                    raise ctx.shape_error(
                        f"Dimension {i} in both shapes must be equal, but are {a} and {b}")
        shape = shape.merge_with(other)
    return [TensorSpec(ctx.dtype(0), shape)]


def _matrix_dims(shape: TensorShape, transpose: bool) -> tuple[int | None, int | None]:
    rows, cols = (None, None) if shape.ndims is None else shape.dims[-2:]
    return (cols, rows) if transpose else (rows, cols)


def _matmul(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 2)
    with_rank(ctx, 1, 2)
    m, k = _matrix_dims(ctx.shape(0), ctx.attr("transpose_a"))
    k2, n = _matrix_dims(ctx.shape(1), ctx.attr("transpose_b"))
    if k is not None and k2 is not None and k != k2:
        raise ctx.shape_error(f"Dimensions must be equal, but are {k} and {k2}")
    return [TensorSpec(ctx.dtype(0), [m, n])]


def _batch_matmul(ctx: InferContext) -> list[TensorSpec]:
    with_rank_at_least(ctx, 0, 2)
    with_rank_at_least(ctx, 1, 2)
    x, y = ctx.shape(0), ctx.shape(1)
    m, k = _matrix_dims(x, ctx.attr("adj_x"))
    k2, n = _matrix_dims(y, ctx.attr("adj_y"))
    if k is not None and k2 is not None and k != k2:
        raise ctx.shape_error(f"Dimensions must be equal, but are {k} and {k2}")
    if x.ndims is None or y.ndims is None:
        return [TensorSpec(ctx.dtype(0), TensorShape(None))]
    batch = broadcast_shape(ctx, TensorShape(x.dims[:-2]), TensorShape(y.dims[:-2]))
    return [TensorSpec(ctx.dtype(0), [*batch.dims, m, n])]


def _elementwise(registry: Any, name: str, inputs: list[str], infer: Callable[..., Any],
                 allowed: frozenset[dtypes.DType], **attrs: Any) -> None:
    registry.op(name, inputs, infer, attrs={**T, **attrs}, type_constraints={"T": allowed})


def register(registry: Any) -> None:
    for name, allowed in BINARY.items():
        _elementwise(registry, name, ["x:T", "y:T"], broadcast(), allowed)
    _elementwise(registry, "Atan2", ["y:T", "x:T"], broadcast(), FLOATS)
    for name, allowed in UNARY.items():
        _elementwise(registry, name, ["x:T"], unchanged, allowed)
    for name in PREDICATES:
        _elementwise(registry, name, ["x:T"], _predicate, FLOATS)
    for name in COMPARISONS:
        _elementwise(registry, name, ["x:T", "y:T"], broadcast(dtypes.bool_), NUMERIC)
    for name in ("Equal", "NotEqual"):
        _elementwise(registry, name, ["x:T", "y:T"], _equality, ALL | {dtypes.string},
                     incompatible_shape_error=True)
    for name in ("LogicalAnd", "LogicalOr"):
        registry.op(name, ["x:bool", "y:bool"], broadcast(dtypes.bool_))
    registry.op("LogicalNot", ["x:bool"], unchanged)
    registry.op("Cast", ["x:SrcT"], _cast,
                attrs={"SrcT": REQUIRED, "DstT": REQUIRED, "Truncate": False},
                type_constraints={"SrcT": ALL, "DstT": ALL})

    for name in REDUCTIONS:
        registry.op(name, ["input:T", "reduction_indices:Tidx"], _reduction,
                    attrs={**T, **REDUCTION_ATTRS}, api_names=REDUCTION_API,
                    type_constraints={"T": NUMBERS if name in COMPLEX_REDUCTIONS else NUMERIC,
                                      "Tidx": INDEX})
    for name in ("All", "Any"):
        registry.op(name, ["input:bool", "reduction_indices:Tidx"], _reduction,
                    attrs=REDUCTION_ATTRS, type_constraints={"Tidx": INDEX},
                    api_names=REDUCTION_API)
    for name in ("ArgMax", "ArgMin"):
        registry.op(name, ["input:T", "dimension:Tidx"], _arg_reduction,
                    attrs={**T, "Tidx": REQUIRED, "output_type": dtypes.int64},
                    type_constraints={"T": ALL, "Tidx": INDEX, "output_type": INDEX})
    for name in SCANS:
        registry.op(name, ["x:T", "axis:Tidx"], _scan,
                    attrs={**T, "Tidx": REQUIRED, "exclusive": False, "reverse": False},
                    type_constraints={"T": NUMBERS, "Tidx": INDEX})

    registry.op("AddN", ["inputs:*T"], _add_n, attrs={**T, "N": REQUIRED},
                type_constraints={"T": NUMBERS})
    registry.op("ClipByValue", ["t:T", "clip_value_min:T", "clip_value_max:T"], _clip,
                attrs=T, type_constraints={"T": NUMERIC})
    registry.op("MatMul", ["a:T", "b:T"], _matmul,
                attrs={**T, "transpose_a": False, "transpose_b": False},
                type_constraints={"T": FLOATS_AND_WIDE_INTS | COMPLEX})
    registry.op("BatchMatMulV2", ["x:T", "y:T"], _batch_matmul,
                attrs={**T, "adj_x": False, "adj_y": False},
                type_constraints={"T": FLOATS_AND_WIDE_INTS | {dtypes.int16} | COMPLEX})
