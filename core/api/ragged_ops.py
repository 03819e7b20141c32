"""Ops on `RaggedTensor`s, as ``tf.ragged`` and TF 1.15's ragged dispatch define them.

Contract: ``constant``, ``placeholder``, ``ragged_range`` (``tw.ragged.range``) and
``map_flat_values`` follow ``tf.ragged``. The
reductions (``reduce_sum``, ``reduce_mean``, ``reduce_max``, ``reduce_min``, ``reduce_prod``,
``reduce_all``, ``reduce_any``), ``concat`` and ``gather`` take ragged or dense inputs; importing
this module registers them, and the elementwise math of `math_ops`, as dispatch handlers of the
public functions (`tensorweave.api.dispatch`), so ``tw.reduce_sum(rt, axis=1)``,
``tw.concat([a, b], 0)``, ``tw.gather(rt, i)``, ``tw.math.exp(rt)`` and ``rt + 1`` work as in
TF. Supported, each checked at construction (`ValueError` otherwise):

- elementwise: ragged with ragged of the same ragged rank (identical row partitions, checked at
  run time), or with a dense value that broadcasts against the uniform inner dimensions;
- reductions: ``axis=None`` or any axes (Python ints), with ``keepdims``; reducing an outer
  axis of a ragged_rank > 1 tensor combines its inner rows item by item
  (`tensorweave.api.ragged_math_ops.segment_aggregate`). ``reduce_mean`` divides the sum
  by the count (`truediv`, so integers give floats) and gives NaN for an empty row;
  ``reduce_max``/``reduce_min`` of an empty row give the dtype's lowest/highest value, as
  TF's unsorted segment reductions;
- ``concat`` along axis 0, axis 1 (rows joined, all inputs with the same number of rows),
  a deeper ragged axis (inputs with identical outer row partitions, checked at run time) and
  the uniform inner axes; dense inputs become ragged first;
- ``gather`` of rows (axis 0) by dense indices of any rank or by ragged indices.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tensorweave.api import array_ops, check_ops, control_flow_ops, dispatch, math_ops, string_ops
from tensorweave.api.deprecation import deprecated_argument_lookup
from tensorweave.api.ragged_math_ops import segment_aggregate
from tensorweave.api.ragged_tensor import (
    RaggedTensor,
    RaggedTensorValue,
    row_splits_to_segment_ids,
)
from tensorweave.api.scopes import control_dependencies, name_scope
from tensorweave.api.state_ops import placeholder as dense_placeholder
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant as dense_constant
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.engine.tensor_shape import TensorShape

__all__ = ["RaggedTensor", "RaggedTensorValue"]


# -- construction -------------------------------------------------------------------------------

def constant(pylist: Any, dtype: Any = None, ragged_rank: int | None = None,
             inner_shape: Sequence[int] | None = None, name: str | None = None,
             row_splits_dtype: Any = dtypes.int64) -> RaggedTensor | Tensor:
    """The `RaggedTensor` of a nested Python list; a dense `Tensor` when it has fewer than two
    levels (or ``ragged_rank=0``). Scalars must all sit at the same depth (`ValueError`)."""
    row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
    if isinstance(pylist, (RaggedTensor, RaggedTensorValue)):
        raise TypeError("pylist may not be a RaggedTensor or RaggedTensorValue.")
    with name_scope(name, "RaggedConstant"):
        if not isinstance(pylist, (list, tuple)) and np.ndim(pylist) == 0:
            if ragged_rank not in (None, 0):
                raise ValueError(f"Invalid pylist={pylist!r}: incompatible with "
                                 f"ragged_rank={ragged_rank}")
            if inner_shape:
                raise ValueError(f"Invalid pylist={pylist!r}: incompatible with "
                                 f"dim(inner_shape)={len(inner_shape)}")
            return dense_constant(pylist, dtype)
        if ragged_rank is not None and ragged_rank < 0:
            raise ValueError(f"Invalid ragged_rank={ragged_rank!r}: must be nonnegative")
        scalar_depth, max_depth = _scalar_and_max_depth(pylist)
        if scalar_depth is not None and max_depth > scalar_depth:
            raise ValueError(f"Invalid pylist={pylist!r}: empty list nesting is greater than "
                             f"scalar value nesting")
        if inner_shape is not None and ragged_rank is not None:
            expected = ragged_rank + len(inner_shape) + 1
            if (scalar_depth is not None and expected != scalar_depth) \
                    or (scalar_depth is None and expected < max_depth):
                raise ValueError(f"Invalid pylist={pylist!r}: incompatible with ragged_rank="
                                 f"{ragged_rank} and dim(inner_shape)={len(inner_shape)}")
        if ragged_rank == 0 or (ragged_rank is None and (
                max_depth < 2 or inner_shape is not None and max_depth - len(inner_shape) < 2)):
            return dense_constant(pylist, dtype, shape=inner_shape)
        if inner_shape is None:
            inner_shape = () if ragged_rank is None else _inner_shape(pylist, ragged_rank)
        if ragged_rank is None:
            depth = max_depth - 1 if scalar_depth is None else scalar_depth - 1 - len(inner_shape)
            ragged_rank = max(1, depth)
        nested_splits = []
        values = list(pylist)
        for _ in range(ragged_rank):
            splits = [0]
            flattened: list[Any] = []
            for row in values:
                if not isinstance(row, (list, tuple)) and np.ndim(row) == 0:
                    raise ValueError(f"pylist has scalar values at depth {len(nested_splits) + 1}"
                                     f", but ragged_rank={ragged_rank} requires deeper values")
                splits.append(splits[-1] + len(row))
                flattened.extend(row)
            nested_splits.append(splits)
            values = flattened
        result: Any = dense_constant(values, dtype, shape=(len(values), *inner_shape),
                                     name="values")
        for splits in reversed(nested_splits):
            result = RaggedTensor(result, dense_constant(splits, row_splits_dtype),
                                  internal=True)
        return result


def _scalar_and_max_depth(pylist: Any) -> tuple[int | None, int]:
    """The depth of the scalars in `pylist` (None with none) and of its deepest list."""
    if not isinstance(pylist, (list, tuple)) and np.ndim(pylist) == 0:
        return 0, 0
    scalar_depth = None
    max_depth = 1
    for child in pylist:
        child_scalar, child_max = _scalar_and_max_depth(child)
        if child_scalar is not None:
            if scalar_depth is not None and scalar_depth != child_scalar + 1:
                raise ValueError("all scalar values must have the same nesting depth")
            scalar_depth = child_scalar + 1
        max_depth = max(max_depth, child_max + 1)
    return scalar_depth, max_depth


def _inner_shape(pylist: Any, ragged_rank: int) -> tuple[int, ...]:
    """The uniform shape of the values below `ragged_rank` levels (`ValueError` if uneven)."""
    values = list(pylist)
    for depth in range(ragged_rank):
        if any(not isinstance(v, (list, tuple)) and np.ndim(v) == 0 for v in values):
            raise ValueError(f"pylist has scalar values depth {depth + 1}, but ragged_rank="
                             f"{ragged_rank} requires scalar value depth greater than "
                             f"{ragged_rank}")
        values = [x for v in values for x in v]

    def shape_of(item: Any) -> tuple[int, ...]:
        if not isinstance(item, (list, tuple)) and np.ndim(item) == 0:
            return ()
        return (len(item), *shape_of(item[0])) if len(item) else (0,)

    def check(item: Any, shape: tuple[int, ...]) -> None:
        nested = isinstance(item, (list, tuple)) or np.ndim(item) != 0
        if nested != bool(shape) or nested and shape[0] != len(item):
            raise ValueError("inner values have inconsistent shape")
        for child in item if nested else ():
            check(child, shape[1:])

    shape = shape_of(values)
    check(values, shape)
    return shape[1:]


def placeholder(dtype: Any, ragged_rank: int, value_shape: Any = None,
                name: str | None = None) -> RaggedTensor:
    """A `RaggedTensor` of placeholders: ``flat_values`` (``[None, *value_shape]``) and one
    ``row_splits_<i>`` (int64) per ragged dimension, fed with a `RaggedTensorValue`."""
    if not isinstance(ragged_rank, numbers.Integral) or ragged_rank < 1:
        raise ValueError(f"ragged_rank must be a positive integer, got {ragged_rank!r}")
    with name_scope(name, "RaggedPlaceholder"):
        shape = TensorShape([None]).concatenate(TensorShape([] if value_shape is None
                                                            else value_shape))
        result: Any = dense_placeholder(dtype, shape, name="flat_values")
        for i in reversed(range(ragged_rank)):
            splits = dense_placeholder(dtypes.int64, [None], name=f"row_splits_{i}")
            result = RaggedTensor(result, splits, internal=True)
        return result


def ragged_range(starts: Any, limits: Any = None, deltas: Any = 1, dtype: Any = None,
                 name: str | None = None, row_splits_dtype: Any = dtypes.int64) -> RaggedTensor:
    """Row ``i`` is ``range(starts[i], limits[i], deltas[i])``; scalars broadcast against
    vectors, and a zero delta fails the step with `InvalidArgumentError`."""
    if limits is None:
        starts, limits = 0, starts
    row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
    with name_scope(name, "RaggedRange", _graph_tensors([starts, limits, deltas])):
        parts = [convert_to_tensor(v, dtype, name=n)
                 for v, n in zip((starts, limits, deltas), ("starts", "limits", "deltas"))]
        if dtype is None:
            order = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]
            for part in parts:
                if part.dtype not in order:
                    raise TypeError(f"Expected int32, int64, float32 or float64, got "
                                    f"{part.dtype!r}")
            widest = max((p.dtype for p in parts), key=order.index)
            parts = [math_ops.cast(p, widest) for p in parts]
        for part in parts:
            if part.shape.ndims not in (None, 0, 1):
                raise ValueError(f"starts, limits and deltas must be scalars or vectors, got "
                                 f"shape {part.shape}")
        start, limit, delta = parts
        check = check_ops.assert_none_equal(delta, array_ops.zeros_like(delta),
                                            message="Requires delta != 0")
        with control_dependencies([check]):
            delta = control_flow_ops.identity(delta)
        # broadcast the three to one vector
        zero = array_ops.reshape(array_ops.zeros_like(start + limit + delta), [-1])
        start, limit, delta = start + zero, limit + zero, delta + zero
        span = limit - start
        if start.dtype.is_integer:
            size = math_ops.floordiv(math_ops.abs(span) + math_ops.abs(delta) - 1,
                                     math_ops.abs(delta))
        else:
            size = math_ops.ceil(math_ops.abs(span / delta))
        backwards = math_ops.less(span * math_ops.sign(delta), array_ops.zeros_like(span))
        size = array_ops.where_v2(backwards, array_ops.zeros_like(size), size)
        lengths = math_ops.cast(size, row_splits_dtype)
        rt = RaggedTensor.from_row_lengths(array_ops.zeros_like(lengths), lengths,
                                           validate=False)
        rowids = rt.value_rowids()
        steps = math_ops.cast(array_ops.range(array_ops.shape(rowids, out_type=rowids.dtype)[0],
                                              dtype=rowids.dtype)
                              - array_ops.gather(rt.row_splits, rowids), start.dtype)
        values = array_ops.gather(start, rowids) + steps * array_ops.gather(delta, rowids)
        return rt.with_values(values)


# -- elementwise --------------------------------------------------------------------------------

def map_flat_values(op: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``op`` applied to the flat values of the ragged arguments (at the top level of `args`
    and `kwargs`, or in a list/tuple there), wrapped in their row partitions; the ragged
    arguments must share their partitions (ragged rank: `ValueError`; the splits are checked at
    run time). With no ragged argument it is just ``op(*args, **kwargs)``."""
    partitions: list[tuple[Tensor, ...]] = []

    def flat(value: Any) -> Any:
        if isinstance(value, RaggedTensor):
            partitions.append(value.nested_row_splits)
            return value.flat_values
        if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
            return type(value)(flat(v) for v in value)
        return value

    flat_args = [flat(a) for a in args]
    flat_kwargs = {k: flat(v) for k, v in kwargs.items()}
    if not partitions:
        return op(*args, **kwargs)
    with control_dependencies(_assert_same_partitions(partitions)):
        result = op(*flat_args, **flat_kwargs)
    return _wrap(result, partitions[0])


def _assert_same_partitions(partitions: list[tuple[Tensor, ...]]) -> list[Any]:
    first = partitions[0]
    checks = []
    for other in partitions[1:]:
        if len(other) != len(first):
            raise ValueError(f"All ragged inputs must have the same ragged_rank, got "
                             f"{len(first)} and {len(other)}")
        for a, b in zip(first, other):
            if a is not b:
                if a.dtype != b.dtype:
                    raise ValueError(f"Inputs must have identical ragged splits dtypes, got "
                                     f"{a.dtype!r} and {b.dtype!r}")
                checks.append(check_ops.assert_equal(
                    a, b, message="Inputs must have identical ragged splits"))
    return checks


def _wrap(values: Any, nested_splits: Sequence[Tensor]) -> RaggedTensor:
    for splits in reversed(nested_splits):
        values = RaggedTensor(values, splits, internal=True)
    return values


def _dense_broadcasts(rt: RaggedTensor, other: Any) -> bool:
    """Whether dense `other` broadcasts against `rt` through its flat values alone: it spans
    no more than the uniform inner dimensions."""
    if isinstance(other, Tensor):
        rank = other.shape.ndims
    else:
        rank = np.ndim(other)
    inner = rt.flat_values.shape.ndims
    return rank is not None and inner is not None and rank <= inner - 1


def _binary_handler(fn: Callable[..., Any]) -> Callable[..., Any]:
    def handler(x: Any, y: Any, name: str | None = None) -> Any:
        if not isinstance(x, RaggedTensor) and not isinstance(y, RaggedTensor):
            return NotImplemented
        for rt, other in ((x, y), (y, x)):
            if isinstance(rt, RaggedTensor) and not isinstance(other, RaggedTensor) \
                    and not _dense_broadcasts(rt, other):
                raise ValueError(f"A dense operand of {fn.__name__} with a RaggedTensor must "
                                 f"broadcast against its uniform inner dimensions "
                                 f"{rt.flat_values.shape[1:]}; got {other!r}")
        return map_flat_values(fn, x, y, name=name)

    return handler


def _unary_handler(fn: Callable[..., Any]) -> Callable[..., Any]:
    def handler(x: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(x, RaggedTensor):
            return NotImplemented
        return x.with_flat_values(fn(x.flat_values, *args, **kwargs))

    return handler


_UNARY = (
    "abs", "negative", "sign", "rint", "floor", "ceil", "sqrt", "rsqrt", "square", "exp",
    "expm1", "log", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "sigmoid", "reciprocal", "erf", "erfc", "is_nan", "is_inf",
    "is_finite", "logical_not", "cast", "round",
)
_BINARY = (
    "add", "subtract", "multiply", "realdiv", "truediv", "floor_div", "floordiv", "floormod",
    "truncatediv", "truncatemod", "pow", "squared_difference", "maximum", "minimum", "xlogy",
    "xdivy", "div_no_nan", "multiply_no_nan", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal", "logical_and", "logical_or", "logical_xor", "divide", "atan2",
)


# -- reductions ---------------------------------------------------------------------------------

_SEGMENT_OPS = {"sum": "UnsortedSegmentSum", "prod": "UnsortedSegmentProd",
                "max": "UnsortedSegmentMax", "min": "UnsortedSegmentMin"}


def _dense_reduction(kind: str) -> Callable[..., Tensor]:
    return {"sum": math_ops.reduce_sum, "prod": math_ops.reduce_prod,
            "max": math_ops.reduce_max, "min": math_ops.reduce_min}[kind]


def _segment_reduction(kind: str) -> Callable[..., Any]:
    if kind == "sum":
        return array_ops.unsorted_segment_sum
    return lambda values, segments, count: _segment(kind, values, segments, count)


def _reduce(kind: str, rt: RaggedTensor, axis: Any, keepdims: bool) -> Tensor | RaggedTensor:
    return reduce_ragged(_dense_reduction(kind), _segment_reduction(kind), rt, axis, keepdims)


def reduce_ragged(dense: Callable[..., Any], segment: Callable[..., Any], rt: RaggedTensor,
                  axis: Any, keepdims: bool) -> Tensor | RaggedTensor:
    """`rt` reduced over `axis` by `dense` (``dense(x, axis=, keepdims=)``) on its uniform part
    and by the unsorted segment op `segment` (``segment(data, ids, count)``) over ragged axes."""
    rank = rt.shape.ndims
    if rank is None:
        raise ValueError("A RaggedTensor reduction needs the rank of its flat_values")
    if axis is None:
        total = dense(rt.flat_values)
        return array_ops.reshape(total, [1] * rank) if keepdims else total
    axes = [axis] if isinstance(axis, numbers.Integral) else \
        list(axis) if isinstance(axis, (list, tuple)) else [axis]
    if not all(isinstance(a, numbers.Integral) for a in axes):
        raise ValueError(f"axis must be known at graph construction time (Python ints), got "
                         f"{axis!r}")
    normalized = set()
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"axis={a} out of bounds: expected {-rank} <= axis < {rank}")
        normalized.add(a % rank)
    result: Any = rt
    for a in sorted(normalized, reverse=True):
        if isinstance(result, RaggedTensor):
            result = _reduce_axis(dense, segment, result, a, keepdims)
        else:
            result = dense(result, axis=a, keepdims=keepdims)
    return result


def _reduce_axis(dense: Callable[..., Any], segment: Callable[..., Any], rt: RaggedTensor,
                 axis: int, keepdims: bool) -> Any:
    ragged_rank = rt.ragged_rank
    if axis > ragged_rank:
        return rt.with_flat_values(dense(rt.flat_values, axis=axis - ragged_rank,
                                         keepdims=keepdims))
    if axis >= 2:
        return rt.with_values(_reduce_axis(dense, segment, rt.values, axis - 1, keepdims))
    rowids = rt.value_rowids()
    if axis == 1:
        segments, count = rowids, rt.nrows()
    else:
        segments = _positions(rowids) - array_ops.gather(rt.row_splits, rowids)
        lengths = rt.row_lengths()
        count = math_ops.reduce_max(array_ops.concat([array_ops.zeros_like(lengths[:1]),
                                                      lengths], 0))
    # a ragged `values` (ragged_rank > 1) is combined item by item within each segment
    out = segment_aggregate(segment, rt.values, segments, count)
    return array_ops.expand_dims(out, axis) if keepdims else out


def _segment(kind: str, values: Tensor, segments: Tensor, count: Tensor) -> Tensor:
    return apply(_SEGMENT_OPS[kind], [values, segments, count], name=_SEGMENT_OPS[kind])


def _reduction_args(axis: Any, reduction_indices: Any, keepdims: Any,
                    keep_dims: Any) -> tuple[Any, bool]:
    axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    return axis, bool(keepdims)


def _reduction(kind: str, scope: str) -> Callable[..., Any]:
    def reduce(input_tensor: Any, axis: Any = None, keepdims: bool | None = None,
               name: str | None = None, reduction_indices: Any = None,
               keep_dims: bool | None = None) -> Any:
        axis, keepdims = _reduction_args(axis, reduction_indices, keepdims, keep_dims)
        if not isinstance(input_tensor, RaggedTensor):
            return _dense_reduction(kind)(input_tensor, axis, keepdims, name)
        with name_scope(name, scope, _graph_tensors([input_tensor])):
            return _reduce(kind, input_tensor, axis, keepdims)

    reduce.__name__ = reduce.__qualname__ = f"reduce_{kind}"
    reduce.__doc__ = (f"The {kind} of a RaggedTensor's values over `axis` (all axes if None); "
                      "a dense input is reduced as by the dense op.")
    return reduce


reduce_sum = _reduction("sum", "RaggedReduceSum")
reduce_prod = _reduction("prod", "RaggedReduceProd")
reduce_max = _reduction("max", "RaggedReduceMax")
reduce_min = _reduction("min", "RaggedReduceMin")


def reduce_join(inputs: Any, axis: Any = None, keep_dims: bool | None = None,
                separator: str = "", name: str | None = None, reduction_indices: Any = None,
                keepdims: bool | None = None) -> Any:
    """The strings joined over `axis` by `separator`: ``ReduceJoin`` on the uniform axes,
    ``UnsortedSegmentJoin`` over the ragged ones ("" for an empty row)."""
    axis, keepdims = _reduction_args(axis, reduction_indices, keepdims, keep_dims)

    def dense(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
        return string_ops.reduce_join(x, axis, keepdims=keepdims, separator=separator)

    def segment(values: Any, segments: Any, count: Any) -> Tensor:
        return string_ops.unsorted_segment_join(values, segments, count, separator)

    with name_scope(name, "RaggedReduceJoin", _graph_tensors([inputs])):
        return reduce_ragged(dense, segment, inputs, axis, keepdims)


def reduce_mean(input_tensor: Any, axis: Any = None, keepdims: bool | None = None,
                name: str | None = None, reduction_indices: Any = None,
                keep_dims: bool | None = None) -> Any:
    """The mean over `axis`: the sum divided by the count (`truediv`; NaN for an empty row)."""
    axis, keepdims = _reduction_args(axis, reduction_indices, keepdims, keep_dims)
    if not isinstance(input_tensor, RaggedTensor):
        return math_ops.reduce_mean(input_tensor, axis, keepdims, name)
    with name_scope(name, "RaggedReduceMean", _graph_tensors([input_tensor])):
        total = _reduce("sum", input_tensor, axis, keepdims)
        ones = input_tensor.with_flat_values(array_ops.ones_like(input_tensor.flat_values))
        count = _reduce("sum", ones, axis, keepdims)
        if isinstance(total, RaggedTensor):
            return total.with_flat_values(math_ops.truediv(total.flat_values, count.flat_values))
        return math_ops.truediv(total, count)


def _logical_reduction(kind: str, scope: str) -> Callable[..., Any]:
    def reduce(input_tensor: Any, axis: Any = None, keepdims: bool | None = None,
               name: str | None = None, reduction_indices: Any = None,
               keep_dims: bool | None = None) -> Any:
        axis, keepdims = _reduction_args(axis, reduction_indices, keepdims, keep_dims)
        if not isinstance(input_tensor, RaggedTensor):
            dense = math_ops.reduce_all if kind == "prod" else math_ops.reduce_any
            return dense(input_tensor, axis, keepdims, name)
        # as TF: all is the product, any the sum, of the values as int32
        with name_scope(name, scope, _graph_tensors([input_tensor])):
            as_int = input_tensor.with_flat_values(
                math_ops.cast(input_tensor.flat_values, dtypes.int32))
            result = _reduce(kind, as_int, axis, keepdims)
            if isinstance(result, RaggedTensor):
                return result.with_flat_values(math_ops.cast(result.flat_values, dtypes.bool_))
            return math_ops.cast(result, dtypes.bool_)

    reduce.__name__ = reduce.__qualname__ = "reduce_all" if kind == "prod" else "reduce_any"
    reduce.__doc__ = "The logical reduction of a RaggedTensor's bool values over `axis`."
    return reduce


reduce_all = _logical_reduction("prod", "RaggedReduceAll")
reduce_any = _logical_reduction("sum", "RaggedReduceAny")


# -- concat and gather --------------------------------------------------------------------------

def concat(values: Any, axis: Any, name: str = "concat") -> Any:
    """`values` (ragged or dense, at least one ragged) joined along `axis` (a Python int)."""
    if not isinstance(values, (list, tuple)):
        values = [values]
    if not any(isinstance(v, RaggedTensor) for v in values):
        return array_ops.concat(values, axis, name)
    if not isinstance(axis, numbers.Integral):
        raise ValueError(f"axis must be a Python int to concat RaggedTensors, got {axis!r}")
    with name_scope(name, "RaggedConcat", _graph_tensors(values)):
        ragged_rank = max(v.ragged_rank for v in values if isinstance(v, RaggedTensor))
        rts = [v if isinstance(v, RaggedTensor)
               else RaggedTensor.from_tensor(v, ragged_rank=ragged_rank) for v in values]
        ranks = {rt.shape.ndims for rt in rts}
        if len(ranks) != 1 or None in ranks:
            raise ValueError(f"Rank of all input tensors should match: got {sorted(ranks)}")
        if {rt.ragged_rank for rt in rts} != {ragged_rank}:
            raise ValueError("All RaggedTensors to concat must have the same ragged_rank")
        if len({rt.row_splits_dtype for rt in rts}) != 1:
            raise ValueError("All RaggedTensors to concat must have the same row_splits dtype")
        rank = ranks.pop()
        if not -rank <= axis < rank:
            raise ValueError(f"axis={axis} out of bounds: expected {-rank} <= axis < {rank}")
        axis %= rank
        if len(rts) == 1:
            return rts[0]
        if axis == 0:
            return _concat_rows(rts)
        if axis == 1:
            return _concat_in_rows(rts)
        if axis > ragged_rank:
            return map_flat_values(lambda *flat: array_ops.concat(list(flat),
                                                                  axis - ragged_rank), *rts)
        return _concat_within_items(rts, axis)


def _concat_within_items(rts: list[RaggedTensor], axis: int) -> RaggedTensor:
    """Concat along ragged axis `axis` >= 2: the inputs' outer rows must match (checked at run
    time), and each row's items are concatenated one axis further in."""
    splits = rts[0].row_splits
    checks = [check_ops.assert_equal(splits, rt.row_splits,
                                      message="Input tensors at index 0 and others have "
                                              "incompatible shapes.")
              for rt in rts[1:]]
    with control_dependencies(checks):
        splits = control_flow_ops.identity(splits)
    inner = concat([rt.values for rt in rts], axis - 1)
    return RaggedTensor(inner, splits, internal=True)


def _concat_rows(rts: list[Any]) -> Any:
    """The rows of each of `rts` one after the other (axis 0)."""
    if not isinstance(rts[0], RaggedTensor):
        return array_ops.concat(rts, 0)
    splits = [rts[0].row_splits]
    offset = rts[0].row_splits[-1]
    for rt in rts[1:]:
        splits.append(rt.row_splits[1:] + offset)
        offset = offset + rt.row_splits[-1]
    values = _concat_rows([rt.values for rt in rts])
    return RaggedTensor(values, array_ops.concat(splits, 0), internal=True)


def _concat_in_rows(rts: list[RaggedTensor]) -> RaggedTensor:
    """Row ``i`` of each of `rts`, one after the other (axis 1); the same number of rows."""
    nrows = rts[0].nrows()
    checks = [check_ops.assert_equal(nrows, rt.nrows(),
                                      message="Input tensors have incompatible shapes.")
              for rt in rts[1:]]
    with control_dependencies(checks):
        lengths = [rt.row_lengths() for rt in rts]
        out_splits = _splits(math_ops.add_n(lengths))
    # each input value's position in the output: its row's start, past the earlier inputs'
    # parts of that row, plus its column
    before = out_splits[:-1]
    positions = []
    for rt, length in zip(rts, lengths):
        rowids = rt.value_rowids()
        column = _positions(rowids) - array_ops.gather(rt.row_splits, rowids)
        positions.append(array_ops.gather(before, rowids) + column)
        before = before + length
    order = array_ops.invert_permutation(array_ops.concat(positions, 0))
    values = _gather_values(_concat_rows([rt.values for rt in rts]), order)
    return RaggedTensor(values, out_splits, internal=True)


def gather(params: Any, indices: Any, validate_indices: Any = None, name: str | None = None,
           axis: Any = None, batch_dims: int = 0) -> Any:
    """Rows of `params` (axis 0): dense `indices` of any rank add their dimensions in front
    (uniform), ragged `indices` their row partitions."""
    if not isinstance(params, RaggedTensor) and not isinstance(indices, RaggedTensor):
        return array_ops.gather(params, indices, validate_indices, name, axis, batch_dims)
    if axis not in (None, 0) or batch_dims != 0:
        raise ValueError("gather with a RaggedTensor supports only axis=0 and batch_dims=0")
    with name_scope(name, "RaggedGather", _graph_tensors([params, indices])):
        if isinstance(indices, RaggedTensor):
            if not indices.dtype.is_integer:
                raise TypeError(f"indices must be integers, got {indices.dtype!r}")
            return _wrap(gather(params, indices.flat_values), indices.nested_row_splits)
        indices = convert_to_tensor(indices, name="indices")
        if not indices.dtype.is_integer:
            raise TypeError(f"indices must be integers, got {indices.dtype!r}")
        rank = indices.shape.ndims
        if rank is None:
            raise ValueError("gather of a RaggedTensor needs indices of known rank")
        if rank == 0:
            return params[indices]
        dtype = params.row_splits_dtype
        result: Any = _gather_values(params, array_ops.reshape(indices, [-1]))
        dims = array_ops.shape(indices, out_type=dtype)
        for axis_ in range(rank - 1, 0, -1):
            splits = array_ops.range(math_ops.reduce_prod(dims[:axis_]) + 1,
                                     dtype=dtype) * dims[axis_]
            result = RaggedTensor(result, splits, internal=True)
        return result


def _gather_values(params: Any, indices: Tensor) -> Any:
    """``params[indices]`` along axis 0 for a vector of indices, `params` ragged or dense."""
    if not isinstance(params, RaggedTensor):
        return array_ops.gather(params, indices)
    dtype = params.row_splits_dtype
    indices = math_ops.cast(indices, dtype)
    starts = array_ops.gather(params.row_splits[:-1], indices)
    out_splits = _splits(array_ops.gather(params.row_lengths(), indices))
    rowids = row_splits_to_segment_ids(out_splits)
    sources = array_ops.gather(starts, rowids) + _positions(rowids) \
        - array_ops.gather(out_splits, rowids)
    return RaggedTensor(_gather_values(params.values, sources), out_splits, internal=True)


# -- helpers --------------------------------------------------------------------------------------

def _splits(lengths: Tensor) -> Tensor:
    zero = array_ops.zeros([1], lengths.dtype)
    return array_ops.concat([zero, math_ops.cumsum(lengths)], 0)


def _positions(vector: Tensor) -> Tensor:
    """``0, 1, ..., len(vector) - 1`` in `vector`'s dtype."""
    return array_ops.range(array_ops.shape(vector, out_type=vector.dtype)[0], dtype=vector.dtype)


def _graph_tensors(values: Any) -> list[Tensor]:
    found: list[Tensor] = []
    for value in values:
        if isinstance(value, RaggedTensor):
            found.extend([value.flat_values, *value.nested_row_splits])
        elif isinstance(value, Tensor):
            found.append(value)
    return found


def _ragged_in(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    for value in (*args, *kwargs.values()):
        if isinstance(value, RaggedTensor):
            return True
        if isinstance(value, (list, tuple)) and any(isinstance(v, RaggedTensor) for v in value):
            return True
    return False


def _when_ragged(fn: Callable[..., Any]) -> Callable[..., Any]:
    def handler(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs) if _ragged_in(args, kwargs) else NotImplemented

    return handler


def _register_dispatch() -> None:
    for name in _UNARY:
        fn = getattr(math_ops, name)
        dispatch.register(fn, _unary_handler(fn))
    for name in _BINARY:
        fn = getattr(math_ops, name)
        dispatch.register(fn, _binary_handler(fn))
    for public, ragged in ((math_ops.reduce_sum, reduce_sum), (math_ops.reduce_prod, reduce_prod),
                           (math_ops.reduce_max, reduce_max), (math_ops.reduce_min, reduce_min),
                           (math_ops.reduce_mean, reduce_mean), (math_ops.reduce_all, reduce_all),
                           (math_ops.reduce_any, reduce_any), (array_ops.concat, concat),
                           (string_ops.reduce_join, reduce_join),
                           (array_ops.gather, gather)):
        dispatch.register(public, _when_ragged(ragged))


_register_dispatch()
