"""OpDefs for the array ops: shapes, indexing, joining and creation.

Contract: names, inputs, attrs and dtype rules follow TF's ``array_ops.cc`` (``Reshape``,
``ConcatV2``, ``StridedSlice``, ``GatherV2``, ...). Shape functions infer as much as the static
shapes and the inputs' construction-time values (``ctx.constant_value``) allow, leave the rest
unknown, and raise ``ValueError`` (``ctx.shape_error``) for a graph TF would reject. Index-typed
attrs (``Tidx``, ``Tshape``, ...) default to the dtype of the input given (int32 for Python
values) and accept int32 or int64.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape, format_dims, unknown_shape
from tensorweave.plugins.standard_ops.shape_fns import (
    broadcast_shape,
    unchanged,
    with_rank,
    with_rank_at_least,
    with_rank_at_most,
)
from tensorweave.plugins.standard_ops.slicing import SliceError, strided_slice_spec

Dims = list[int | None]
INDEX = dtypes.INDEX
ONE_HOT_INDICES = frozenset({dtypes.uint8, dtypes.int32, dtypes.int64})
RANGE_TYPES = frozenset({dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8,
                         dtypes.int16, dtypes.int32, dtypes.int64})


# -- helpers ---------------------------------------------------------------------------------

def _ints(ctx: InferContext, i: int) -> list[int] | None:
    value = ctx.constant_value(i)
    return None if value is None else [int(v) for v in np.ravel(value)]


def _scalar(ctx: InferContext, i: int) -> int | None:
    value = _ints(ctx, i)
    if value is None:
        return None
    if len(value) != 1:
        raise ctx.shape_error(f"Expected a scalar, got {len(value)} values")
    return value[0]


def _vector_length(ctx: InferContext, i: int) -> int | None:
    """The static length of a 1-D input (an index list), if known."""
    return with_rank(ctx, i, 1)[0]


def _axis(ctx: InferContext, axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < rank:
        raise ctx.shape_error(
            f"Expected {what} in the range [{-rank}, {rank}), but got {axis}")
    return axis % rank if rank else axis


def _merge(ctx: InferContext, a: TensorShape, b: TensorShape) -> TensorShape:
    """TF's ``Merge`` with its error wording."""
    if a.ndims is None:
        return b
    if b.ndims is None:
        return a
    if a.ndims != b.ndims:
        raise ctx.shape_error(f"Shapes must be equal rank, but are {a.ndims} and {b.ndims}")
    for i, (x, y) in enumerate(zip(a.dims, b.dims)):
        if x is not None and y is not None and x != y:
            raise ctx.shape_error(
                f"Dimension {i} in both shapes must be equal, but are {x} and {y}. "
                f"Shapes are {format_dims(a)} and {format_dims(b)}")
    return a.merge_with(b)


def _spec(ctx: InferContext, dims: Any, dtype: dtypes.DType | None = None) -> list[TensorSpec]:
    return [TensorSpec(dtype or ctx.dtype(0), TensorShape(dims))]


def _shape_from_tensor(ctx: InferContext, i: int) -> TensorShape:
    """The shape an index vector input describes (TF's ``MakeShapeFromShapeTensor``)."""
    values = _ints(ctx, i)
    if values is None:
        return unknown_shape(_vector_length(ctx, i))
    with_rank_at_most(ctx, i, 1)
    for k, d in enumerate(values):
        if d < -1:
            raise ctx.shape_error(f"Dimension {k} must be >= -1, got {d}")
    return TensorShape([None if d == -1 else d for d in values])


# -- reshaping -------------------------------------------------------------------------------

def _reshape(ctx: InferContext) -> list[TensorSpec]:
    with_rank_at_most(ctx, 1, 1)
    values = _ints(ctx, 1)
    if values is None:
        return _spec(ctx, unknown_shape(ctx.shape(1)[0] if ctx.shape(1).ndims == 1 else None))
    wildcards = [k for k, d in enumerate(values) if d == -1]
    for k, d in enumerate(values):
        if d < -1:
            raise ctx.shape_error(f"Size {k} must be non-negative, not {d}")
    if len(wildcards) > 1:
        # TF's shape function reads each -1 as an unknown dim; the kernel refuses two.
        return _spec(ctx, [None if d == -1 else d for d in values])
    known = math.prod(d for d in values if d != -1)
    n = ctx.shape(0).num_elements()
    dims: Dims = list(values)
    if n is not None:
        if wildcards and known == 0:
            if n != 0:
                raise ctx.shape_error(f"Cannot reshape a tensor with {n} elements to shape "
                                      f"{format_dims(TensorShape(values))} (0 elements)")
            raise ctx.shape_error("Reshape cannot infer the missing input size for an empty "
                                  "tensor unless all specified input sizes are non-zero")
        if wildcards and n % known:
            raise ctx.shape_error(f"Dimension size must be evenly divisible by {known} but is "
                                  f"{n}")
        if not wildcards and n != known:
            raise ctx.shape_error(
                f"Cannot reshape a tensor with {n} elements to shape "
                f"[{','.join(str(d) for d in values)}] ({known} elements)")
        if wildcards:
            dims[wildcards[0]] = n // known
    elif wildcards:
        dims[wildcards[0]] = None
    return _spec(ctx, dims)


def _transpose(ctx: InferContext) -> list[TensorSpec]:
    shape = ctx.shape(0)
    rank = shape.ndims if shape.ndims is not None else _vector_length(ctx, 1)
    perm = _ints(ctx, 1)
    if perm is None:
        return _spec(ctx, unknown_shape(rank))
    if rank is not None and len(perm) != rank:
        raise ctx.shape_error(f"Dimension must be {rank} but is {len(perm)}")
    rank = len(perm)
    for p in perm:
        if not -rank <= p < rank:
            raise ctx.shape_error(f"perm dim {p} is out of range of input rank {rank}")
    if sorted(p % rank for p in perm) != list(range(rank)):
        raise ctx.shape_error(f"{perm} is not a permutation")
    if shape.ndims is None:
        return _spec(ctx, unknown_shape(rank))
    return _spec(ctx, [shape[p] for p in perm])


def _expand_dims(ctx: InferContext) -> list[TensorSpec]:
    shape = ctx.shape(0)
    dim = _ints(ctx, 1)
    if dim is not None and len(dim) != 1:
        raise ctx.shape_error(f"'dim' must be a tensor with a single value, got {dim}")
    if shape.ndims is None:
        return _spec(ctx, None)
    rank = shape.ndims
    if dim is None:
        return _spec(ctx, unknown_shape(rank + 1))
    d = dim[0]
    if not -rank - 1 <= d <= rank:
        raise ctx.shape_error(f"Tried to expand dim index {d} for tensor with {rank} dimensions.")
    d = d + rank + 1 if d < 0 else d
    dims = list(shape.dims)
    dims.insert(d, 1)
    return _spec(ctx, dims)


def _squeeze(ctx: InferContext) -> list[TensorSpec]:
    shape = ctx.shape(0)
    if shape.ndims is None:
        return _spec(ctx, None)
    rank = shape.ndims
    wanted = set()
    for d in ctx.attr("squeeze_dims"):
        if not -rank <= d < rank:
            raise ctx.shape_error(
                f"Tried to squeeze dim index {d} for tensor with {rank} dimensions.")
        wanted.add(d % rank)
    dims: Dims = []
    for i, d in enumerate(shape.dims):
        if wanted:
            if i not in wanted:
                dims.append(d)
            elif d not in (1, None):
                raise ctx.shape_error(
                    f"Can not squeeze dim[{i}], expected a dimension of 1, got {d}")
        elif d is None:
            return _spec(ctx, None)  # an unknown dim may or may not be squeezed
        elif d != 1:
            dims.append(d)
    return _spec(ctx, dims)


def _broadcast_to(ctx: InferContext) -> list[TensorSpec]:
    target = _shape_from_tensor(ctx, 1)
    shape = ctx.shape(0)
    if target.ndims is None or shape.ndims is None:
        return _spec(ctx, target)
    if shape.ndims > target.ndims:
        raise ctx.shape_error(f"Rank of input ({shape.ndims}) must be no greater than rank of "
                              f"output shape ({target.ndims})")
    offset = target.ndims - shape.ndims
    for i, d in enumerate(shape.dims):
        t = target[offset + i]
        if d is not None and t is not None and d not in (1, t):
            raise ctx.shape_error(f"Dimensions must be equal, but are {t} and {d}")
    return _spec(ctx, target)


def _tile(ctx: InferContext) -> list[TensorSpec]:
    shape = ctx.shape(0)
    length = _vector_length(ctx, 1)
    if shape.ndims is not None and length is not None and length != shape.ndims:
        raise ctx.shape_error(f"Shape must be rank {shape.ndims} but is rank {length}")
    rank = shape.ndims if shape.ndims is not None else length
    multiples = _ints(ctx, 1)
    if multiples is None or rank is None:
        return _spec(ctx, unknown_shape(rank))
    if len(multiples) != rank:
        raise ctx.shape_error(f"Shape must be rank {rank} but is rank {len(multiples)}")
    dims: Dims = []
    for i, m in enumerate(multiples):
        if m < 0:
            raise ctx.shape_error(f"Expected multiples[{i}] >= 0, but got {m}")
        d = None if shape.ndims is None else shape[i]
        dims.append(0 if m == 0 else None if d is None else d * m)
    return _spec(ctx, dims)


def _pad(ctx: InferContext) -> list[TensorSpec]:
    shape = ctx.shape(0)
    pshape = with_rank(ctx, 1, 2)
    if pshape[1] is not None and pshape[1] != 2:
        raise ctx.shape_error(f"Dimension 1 in both shapes must be equal, but are {pshape[1]} "
                              "and 2")
    if shape.ndims is not None and pshape[0] is not None and pshape[0] != shape.ndims:
        raise ctx.shape_error(f"Shape must be rank {pshape[0]} but is rank {shape.ndims}")
    if len(ctx.inputs) == 3:
        with_rank(ctx, 2, 0)
    rank = shape.ndims if shape.ndims is not None else pshape[0]
    paddings = ctx.constant_value(1)
    if paddings is None or rank is None:
        return _spec(ctx, unknown_shape(rank))
    paddings = np.asarray(paddings).reshape(-1, 2)
    mode = ctx.attrs.get("mode")
    dims: Dims = []
    for i, (before, after) in enumerate(paddings.tolist()):
        if before < 0 or after < 0:
            raise ctx.shape_error(f"Paddings must be non-negative: {before} {after}")
        d = None if shape.ndims is None else shape[i]
        if d is not None and mode == "REFLECT" and (before >= d or after >= d):
            raise ctx.shape_error(f"paddings must be less than the dimension size: {before}, "
                                  f"{after} not less than {d}")
        if d is not None and mode == "SYMMETRIC" and (before > d or after > d):
            raise ctx.shape_error(f"paddings must be no greater than the dimension size: "
                                  f"{before}, {after} greater than {d}")
        dims.append(None if d is None else d + before + after)
    return _spec(ctx, dims)


# -- joining and splitting -------------------------------------------------------------------

def _concat(ctx: InferContext) -> list[TensorSpec]:
    n = len(ctx.inputs) - 1
    if n < 2:
        raise ctx.shape_error(f"ConcatV2 requires at least 2 values (attr N >= 2), got {n}")
    with_rank_at_most(ctx, n, 0)
    shapes = [ctx.shape(i) for i in range(n)]
    rank = next((s.ndims for s in shapes if s.ndims is not None), None)
    for s in shapes:
        if s.ndims is not None and s.ndims != rank:
            raise ctx.shape_error(f"Shape must be rank {rank} but is rank {s.ndims}")
    if rank == 0:
        raise ctx.shape_error("Can't concatenate scalars (use tf.stack instead)")
    axis = _scalar(ctx, n)
    if rank is None or axis is None:
        return _spec(ctx, unknown_shape(rank))
    axis = _axis(ctx, axis, rank, "concatenating dimensions")
    known = [s for s in shapes if s.ndims is not None]
    dims: Dims = []
    for d in range(rank):
        if d == axis:
            sizes = [s[d] for s in known]
            dims.append(None if len(known) < n or None in sizes else sum(sizes))
            continue
        merged = None
        for s in known:
            if merged is not None and s[d] is not None and merged != s[d]:
                raise ctx.shape_error(
                    f"Dimension {d} in both shapes must be equal, but are {merged} and {s[d]}. "
                    f"Shapes are {format_dims(known[0])} and {format_dims(s)}")
            merged = s[d] if merged is None else merged
        dims.append(merged)
    return _spec(ctx, dims)


def _pack(ctx: InferContext) -> list[TensorSpec]:
    if not ctx.inputs:
        raise ctx.shape_error("Pack requires at least one value (attr N >= 1)")
    merged = TensorShape(None)
    for spec in ctx.inputs:
        merged = _merge(ctx, merged, spec.shape)
    if merged.ndims is None:
        return _spec(ctx, None)
    rank = merged.ndims + 1
    axis = ctx.attr("axis")
    if not -rank <= axis < rank:
        raise ctx.shape_error(f"Invalid axis: {axis}; must be in [{-rank},{rank})")
    dims = list(merged.dims)
    dims.insert(axis % rank, len(ctx.inputs))
    return _spec(ctx, dims)


def _unpack(ctx: InferContext) -> list[TensorSpec]:
    num = ctx.attr("num")
    shape = ctx.shape(0)
    if shape.ndims is None:
        return [TensorSpec(ctx.dtype(0), TensorShape(None))] * num
    rank = shape.ndims
    axis = ctx.attr("axis")
    if not -rank <= axis < rank:
        raise ctx.shape_error(f"Invalid axis: {axis}; must be in [{-rank},{rank})")
    axis %= rank
    if shape[axis] is not None and shape[axis] != num:
        raise ctx.shape_error(f"Dimension must be {shape[axis]} but is {num}")
    dims = list(shape.dims)
    del dims[axis]
    return [TensorSpec(ctx.dtype(0), TensorShape(dims))] * num


def _split(ctx: InferContext) -> list[TensorSpec]:
    num = ctx.attr("num_split")
    if num < 1:
        raise ValueError(f"Attr 'num_split' of '{ctx.op}' Op passed {num} less than minimum 1.")
    shape = ctx.shape(1)
    axis = _scalar(ctx, 0)
    out = TensorShape(None) if shape.ndims is None else unknown_shape(shape.ndims)
    if shape.ndims is not None and axis is not None:
        axis = _axis(ctx, axis, shape.ndims)
        dims = list(shape.dims)
        if dims[axis] is not None:
            if dims[axis] % num:
                raise ctx.shape_error(
                    f"Dimension size must be evenly divisible by {num} but is {dims[axis]}\n"
                    "\tNumber of ways to split should evenly divide the split dimension")
            dims[axis] //= num
        out = TensorShape(dims)
    return [TensorSpec(ctx.dtype(1), out)] * num


def _split_v(ctx: InferContext) -> list[TensorSpec]:
    num = ctx.attr("num_split")
    shape = ctx.shape(0)
    sizes = _ints(ctx, 1)
    axis = _scalar(ctx, 2)
    length = _vector_length(ctx, 1)
    if length is not None and length != num:
        raise ctx.shape_error(f"Dimension must be {num} but is {length}")
    if shape.ndims is None:
        return [TensorSpec(ctx.dtype(0), TensorShape(None))] * num
    if axis is None:
        return [TensorSpec(ctx.dtype(0), unknown_shape(shape.ndims))] * num
    axis = _axis(ctx, axis, shape.ndims)
    if sizes is None:
        dims = list(shape.dims)
        dims[axis] = None
        return [TensorSpec(ctx.dtype(0), TensorShape(dims))] * num
    wildcards = [k for k, s in enumerate(sizes) if s == -1]
    if len(wildcards) > 1:
        raise ctx.shape_error("size_splits can only have one -1")
    if any(s < -1 for s in sizes):
        raise ctx.shape_error(f"size_splits must be non-negative (or -1), got {sizes}")
    total = sum(s for s in sizes if s != -1)
    dim = shape[axis]
    if dim is not None and (total > dim or (not wildcards and total != dim)):
        raise ctx.shape_error(
            "Determined shape must either match input shape along split_dim exactly if fully "
            "specified, or be less than the size of the input along split_dim if not fully "
            f"specified.  Got: {total}")
    out = []
    for s in sizes:
        dims = list(shape.dims)
        dims[axis] = s if s != -1 else (None if dim is None else dim - total)
        out.append(TensorSpec(ctx.dtype(0), TensorShape(dims)))
    return out


# -- slicing ---------------------------------------------------------------------------------

def _slice(ctx: InferContext) -> list[TensorSpec]:
    shape = ctx.shape(0)
    lengths = {n for n in (_vector_length(ctx, 1), _vector_length(ctx, 2)) if n is not None}
    if len(lengths) > 1:
        raise ctx.shape_error(f"Dimensions must be equal, but are {min(lengths)} and "
                              f"{max(lengths)}")
    rank = shape.ndims if shape.ndims is not None else next(iter(lengths), None)
    if shape.ndims is not None and lengths and lengths != {rank}:
        raise ctx.shape_error(f"Shape must be rank {rank} but is rank {lengths.pop()}")
    begin, size = _ints(ctx, 1), _ints(ctx, 2)
    if size is None:
        return _spec(ctx, unknown_shape(rank))
    dims: Dims = []
    for i, s in enumerate(size):
        d = None if shape.ndims is None else shape[i]
        b = None if begin is None else begin[i]
        if s < -1:
            raise ctx.shape_error(f"Expected size[{i}] >= -1, got {s}")
        if b is not None and d is not None:
            if not 0 <= b <= d:
                raise ctx.shape_error(f"Expected begin[{i}] in [0, {d}], but got {b}")
            if s != -1 and not 0 <= s <= d - b:
                raise ctx.shape_error(f"Expected size[{i}] in [0, {d - b}], but got {s}")
        if s != -1:
            dims.append(s)
        else:
            dims.append(None if b is None or d is None else d - b)
    return _spec(ctx, dims)


def _strided_slice(ctx: InferContext) -> list[TensorSpec]:
    lengths = {n for n in (_vector_length(ctx, i) for i in (1, 2, 3)) if n is not None}
    if len(lengths) > 1:
        raise ctx.shape_error("Expected begin, end, and strides to be 1D equal size tensors")
    shape = ctx.shape(0)
    strides = _ints(ctx, 3)
    if shape.ndims is None or strides is None:
        return _spec(ctx, None)
    try:
        spec = strided_slice_spec(
            shape.dims, _ints(ctx, 1), _ints(ctx, 2), strides, ctx.attr("begin_mask"),
            ctx.attr("end_mask"), ctx.attr("ellipsis_mask"), ctx.attr("new_axis_mask"),
            ctx.attr("shrink_axis_mask"))
    except SliceError as exc:
        raise ctx.shape_error(str(exc)) from None
    return _spec(ctx, spec.final_shape)


# -- gathering and scattering ----------------------------------------------------------------

def _gather_v2(ctx: InferContext) -> list[TensorSpec]:
    params, indices = ctx.shape(0), ctx.shape(1)
    with_rank_at_most(ctx, 2, 0)
    batch_dims = ctx.attr("batch_dims")
    with_rank_at_least(ctx, 0, 1)
    axis = _scalar(ctx, 2)
    if params.ndims is None or indices.ndims is None:
        return _spec(ctx, None)
    if batch_dims < 0:
        batch_dims += indices.ndims
    if not 0 <= batch_dims <= indices.ndims:
        raise ctx.shape_error(f"batch_dims ({ctx.attr('batch_dims')}) must be in range "
                              f"[{-indices.ndims}, {indices.ndims}]")
    if axis is None:
        return _spec(ctx, unknown_shape(params.ndims + indices.ndims - 1 - batch_dims))
    axis = _axis(ctx, axis, params.ndims)
    if batch_dims > axis:
        raise ctx.shape_error(f"batch_dims ({batch_dims}) must be less than or equal to axis "
                              f"({axis}).")
    batch = _merge(ctx, params[:batch_dims], indices[:batch_dims])
    dims = list(batch.dims) + list(params.dims[batch_dims:axis]) \
        + list(indices.dims[batch_dims:]) + list(params.dims[axis + 1:])
    return _spec(ctx, dims)


def _gather_nd(ctx: InferContext) -> list[TensorSpec]:
    params, indices = ctx.shape(0), with_rank_at_least(ctx, 1, 1)
    if params.ndims is None or indices.ndims is None or indices[-1] is None:
        return _spec(ctx, None)
    k = indices[-1]
    if k > params.ndims:
        raise ctx.shape_error(
            f"indices.shape[-1] must be <= params.rank, but saw indices shape: "
            f"{format_dims(indices)} and params shape: {format_dims(params)}")
    return _spec(ctx, list(indices.dims[:-1]) + list(params.dims[k:]))


def _scatter_nd(ctx: InferContext) -> list[TensorSpec]:
    indices, updates = ctx.shape(0), ctx.shape(1)
    out = _shape_from_tensor(ctx, 2)
    with_rank_at_least(ctx, 0, 1)
    if out.ndims is None or indices.ndims is None or indices[-1] is None:
        return [TensorSpec(ctx.dtype(1), out)]
    k = indices[-1]
    if k > out.ndims:
        raise ctx.shape_error(f"Index innermost dimension length must be <= output rank; "
                              f"saw: {k} vs. output rank: {out.ndims}")
    expected = TensorShape(list(indices.dims[:-1]) + list(out.dims[k:]))
    if not expected.is_compatible_with(updates):
        raise ctx.shape_error(
            f"The shape of updates {format_dims(updates)} must be indices.shape[:-1] + "
            f"shape[indices.shape[-1]:] = {format_dims(expected)}")
    return [TensorSpec(ctx.dtype(1), out)]


def _one_hot(ctx: InferContext) -> list[TensorSpec]:
    indices = ctx.shape(0)
    axis = ctx.attr("axis")
    for i in (1, 2, 3):
        with_rank(ctx, i, 0)
    if axis < -1 or (indices.ndims is not None and axis > indices.ndims):
        bound = "?" if indices.ndims is None else indices.ndims + 1
        raise ctx.shape_error(f"Expected axis to be -1 or between [0, {bound}).  But received: "
                              f"{axis}")
    depth = _scalar(ctx, 1)
    if depth is not None and depth < 0:
        raise ctx.shape_error(f"depth must be non-negative, got: {depth}")
    if indices.ndims is None:
        return _spec(ctx, None, ctx.dtype(2))
    dims = list(indices.dims)
    dims.insert(len(dims) if axis == -1 else axis, depth)
    return _spec(ctx, dims, ctx.dtype(2))


def _segment(ctx: InferContext) -> list[TensorSpec]:
    data, ids = ctx.shape(0), ctx.shape(1)
    with_rank_at_most(ctx, 2, 0)
    num = _scalar(ctx, 2)
    if data.ndims is None or ids.ndims is None:
        return _spec(ctx, None)
    if ids.ndims > data.ndims or not data[:ids.ndims].is_compatible_with(ids):
        raise ctx.shape_error(f"data.shape = {format_dims(data)} does not start with "
                              f"segment_ids.shape = {format_dims(ids)}")
    if num is not None and num < 0:
        raise ctx.shape_error(f"num_segments must be non-negative, got {num}")
    return _spec(ctx, [num] + list(data.dims[ids.ndims:]))


# -- selection ------------------------------------------------------------------------------

def _where(ctx: InferContext) -> list[TensorSpec]:
    return _spec(ctx, [None, ctx.shape(0).ndims], dtypes.int64)


def _select(ctx: InferContext) -> list[TensorSpec]:
    data = _merge(ctx, ctx.shape(1), ctx.shape(2))
    cond = ctx.shape(0)
    if cond.ndims is None or data.ndims is None or cond.ndims == 0:
        return _spec(ctx, data, ctx.dtype(1))
    if cond.ndims != 1 or data.ndims == 0:
        return _spec(ctx, _merge(ctx, data, cond), ctx.dtype(1))
    first = _merge(ctx, cond, TensorShape([data[0]]))
    return _spec(ctx, [first[0]] + list(data.dims[1:]), ctx.dtype(1))


def _select_v2(ctx: InferContext) -> list[TensorSpec]:
    shape = broadcast_shape(ctx, ctx.shape(0), ctx.shape(1))
    return _spec(ctx, broadcast_shape(ctx, shape, ctx.shape(2)), ctx.dtype(1))


# -- creation -------------------------------------------------------------------------------

def _fill(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 1, 0)
    values = _ints(ctx, 0)
    if values is not None and any(d < 0 for d in values):
        raise ctx.shape_error(f"Fill dimensions must be >= 0, got {values}")
    return _spec(ctx, _shape_from_tensor(ctx, 0), ctx.dtype(1))


def _range(ctx: InferContext) -> list[TensorSpec]:
    for i, what in enumerate(("start", "limit", "delta")):
        if ctx.shape(i).ndims not in (None, 0):
            raise ctx.shape_error(f"{what} must be a scalar, not shape "
                                  f"{format_dims(ctx.shape(i))}")
    values = [ctx.constant_value(i) for i in range(3)]
    if any(v is None for v in values):
        return _spec(ctx, [None])
    start, limit, delta = (np.asarray(v).item() for v in values)
    try:
        return _spec(ctx, [range_size(start, limit, delta)])
    except ValueError as exc:
        raise ctx.shape_error(str(exc)) from None


def range_size(start: Any, limit: Any, delta: Any) -> int:
    """TF's element count of ``Range``; `ValueError` with TF's message for bad arguments."""
    if delta == 0:
        raise ValueError(f"Requires delta != 0: {delta}")
    if delta > 0 and start > limit:
        raise ValueError(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if delta < 0 and start < limit:
        raise ValueError(f"Requires start >= limit when delta < 0: {start}/{limit}")
    if isinstance(start, int) and isinstance(limit, int) and isinstance(delta, int):
        return (abs(limit - start) + abs(delta) - 1) // abs(delta)
    return int(math.ceil(abs((limit - start) / delta)))


def _lin_space(ctx: InferContext) -> list[TensorSpec]:
    for i in range(3):
        with_rank(ctx, i, 0)
    num = _scalar(ctx, 2)
    if num is not None and num <= 0:
        raise ctx.shape_error(f"Requires num > 0: {num}")
    return _spec(ctx, [num])


def _shape(ctx: InferContext) -> list[TensorSpec]:
    return _spec(ctx, [ctx.shape(0).ndims], ctx.attr("out_type"))


def _size(ctx: InferContext) -> list[TensorSpec]:
    return _spec(ctx, [], ctx.attr("out_type"))


def _rank(ctx: InferContext) -> list[TensorSpec]:
    return _spec(ctx, [], dtypes.int32)


def _reverse(ctx: InferContext) -> list[TensorSpec]:
    with_rank_at_most(ctx, 1, 1)
    axes, rank = _ints(ctx, 1), ctx.shape(0).ndims
    if axes is not None and rank is not None:
        seen = set()
        for i, a in enumerate(axes):
            if not -rank <= a < rank:
                raise ctx.shape_error(f"'axis'[{i}] = {a} is out of valid range [0, {rank})")
            if a % rank in seen:
                raise ctx.shape_error(f"axis {a % rank} specified more than once.")
            seen.add(a % rank)
    return unchanged(ctx)


def _invert_permutation(ctx: InferContext) -> list[TensorSpec]:
    return _spec(ctx, with_rank(ctx, 0, 1))


def _unique(ctx: InferContext) -> list[TensorSpec]:
    shape = with_rank(ctx, 0, 1)
    return [TensorSpec(ctx.dtype(0), TensorShape([None])),
            TensorSpec(ctx.attr("out_idx"), shape)]


# -- registration ---------------------------------------------------------------------------

def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
    T = {"T": REQUIRED}  # noqa: N806 - TF's attr name
    idx = {"T": REQUIRED, "Tidx": None}
    i_t = {"Tidx": INDEX}
    op = registry.op
    op("Reshape", ["tensor:T", "shape:Tshape"], _reshape, attrs={"T": REQUIRED, "Tshape": None},
       type_constraints={"Tshape": INDEX})
    op("Transpose", ["x:T", "perm:Tperm"], _transpose, attrs={"T": REQUIRED, "Tperm": None},
       type_constraints={"Tperm": INDEX})
    op("ExpandDims", ["input:T", "dim:Tdim"], _expand_dims, attrs={"T": REQUIRED, "Tdim": None},
       type_constraints={"Tdim": INDEX})
    op("Squeeze", ["input:T"], _squeeze, attrs={"T": REQUIRED, "squeeze_dims": []})
    op("BroadcastTo", ["input:T", "shape:Tidx"], _broadcast_to, attrs=idx, type_constraints=i_t)
    op("Tile", ["input:T", "multiples:Tmultiples"], _tile,
       attrs={"T": REQUIRED, "Tmultiples": None}, type_constraints={"Tmultiples": INDEX})
    pad_attrs = {"T": REQUIRED, "Tpaddings": None}
    pad_types = {"Tpaddings": INDEX}
    op("Pad", ["input:T", "paddings:Tpaddings"], _pad, attrs=pad_attrs, type_constraints=pad_types)
    op("PadV2", ["input:T", "paddings:Tpaddings", "constant_values:T"], _pad, attrs=pad_attrs,
       type_constraints=pad_types)
    op("MirrorPad", ["input:T", "paddings:Tpaddings"], _pad,
       attrs={**pad_attrs, "mode": REQUIRED}, type_constraints=pad_types)

    op("ConcatV2", ["values:*T", "axis:Tidx"], _concat, attrs={"N": REQUIRED, **idx},
       type_constraints=i_t)
    op("Pack", ["values:*T"], _pack, attrs={"N": REQUIRED, "T": REQUIRED, "axis": 0})
    op("Unpack", ["value:T"], _unpack, attrs={"num": REQUIRED, "T": REQUIRED, "axis": 0},
       list_output=True)
    op("Split", ["split_dim:int32", "value:T"], _split, attrs={"num_split": REQUIRED, **T},
       list_output=True)
    op("SplitV", ["value:T", "size_splits:Tlen", "split_dim:int32"], _split_v,
       attrs={"num_split": REQUIRED, "T": REQUIRED, "Tlen": None},
       type_constraints={"Tlen": INDEX}, list_output=True)

    op("Slice", ["input:T", "begin:Index", "size:Index"], _slice,
       attrs={"T": REQUIRED, "Index": None}, type_constraints={"Index": INDEX})
    op("StridedSlice", ["input:T", "begin:Index", "end:Index", "strides:Index"], _strided_slice,
       attrs={"T": REQUIRED, "Index": None, "begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0,
              "new_axis_mask": 0, "shrink_axis_mask": 0},
       type_constraints={"Index": INDEX})
    op("ReverseV2", ["tensor:T", "axis:Tidx"], _reverse, attrs=idx, type_constraints=i_t)

    op("GatherV2", ["params:Tparams", "indices:Tindices", "axis:Taxis"], _gather_v2,
       attrs={"Tparams": REQUIRED, "Tindices": None, "Taxis": None, "batch_dims": 0},
       type_constraints={"Tindices": INDEX, "Taxis": INDEX})
    op("GatherNd", ["params:Tparams", "indices:Tindices"], _gather_nd,
       attrs={"Tparams": REQUIRED, "Tindices": None}, type_constraints={"Tindices": INDEX})
    op("ScatterNd", ["indices:Tindices", "updates:T", "shape:Tindices"], _scatter_nd,
       attrs={"T": REQUIRED, "Tindices": None}, type_constraints={"Tindices": INDEX})
    op("OneHot", ["indices:TI", "depth:int32", "on_value:T", "off_value:T"], _one_hot,
       attrs={"axis": -1, "T": REQUIRED, "TI": None}, type_constraints={"TI": ONE_HOT_INDICES})
    segment_types = {"T": dtypes.NUMERIC, "Tindices": INDEX, "Tnumsegments": INDEX}
    for name in ("UnsortedSegmentSum", "UnsortedSegmentMax"):
        op(name, ["data:T", "segment_ids:Tindices", "num_segments:Tnumsegments"], _segment,
           attrs={"T": REQUIRED, "Tindices": None, "Tnumsegments": None},
           type_constraints=segment_types)

    op("Where", ["input:T"], _where, attrs=T)
    op("Select", ["condition:bool", "t:T", "e:T"], _select, attrs=T)
    op("SelectV2", ["condition:bool", "t:T", "e:T"], _select_v2, attrs=T)

    op("Fill", ["dims:index_type", "value:T"], _fill, attrs={"T": REQUIRED, "index_type": None},
       type_constraints={"index_type": INDEX})
    op("ZerosLike", ["x:T"], unchanged, attrs=T)
    op("OnesLike", ["x:T"], unchanged, attrs=T)
    op("Range", ["start:Tidx", "limit:Tidx", "delta:Tidx"], _range, attrs={"Tidx": None},
       type_constraints={"Tidx": RANGE_TYPES})
    op("LinSpace", ["start:T", "stop:T", "num:Tidx"], _lin_space, attrs=idx,
       type_constraints={"T": dtypes.FLOATS, **i_t})
    op("Shape", ["input:T"], _shape, attrs={"T": REQUIRED, "out_type": dtypes.int32},
       type_constraints={"out_type": INDEX})
    op("Size", ["input:T"], _size, attrs={"T": REQUIRED, "out_type": dtypes.int32},
       type_constraints={"out_type": INDEX})
    op("Rank", ["input:T"], _rank, attrs=T)
    op("InvertPermutation", ["x:T"], _invert_permutation, attrs={"T": None},
       type_constraints={"T": INDEX})
    op("Unique", ["x:T"], _unique, attrs={"T": REQUIRED, "out_idx": dtypes.int32},
       type_constraints={"out_idx": INDEX})
