"""OpDefs for TF's data-movement ops beyond the core array set: space/depth/batch rearranging
(``SpaceToDepth``, ``SpaceToBatchND``, ...), partitioning and stitching, sequence reversal and
rolling, sorted search, unique-with-counts and set difference, index unravelling, ``ShapeN``,
``ConcatOffset`` (where concatenated shapes start, for concat's gradient), ``BroadcastArgs``,
histograms, ``Bitcast`` and ``Multinomial``.

Contract: names, inputs, attrs and defaults follow TF 1.15's ``array_ops.cc``,
``data_flow_ops.cc``, ``manip_ops.cc``, ``math_ops.cc`` and ``random_ops.cc``. Shape functions
infer what the static shapes and construction-time values allow and raise ``ValueError``
(``ctx.shape_error``) with TF's wording for a graph TF rejects.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape, format_dims, unknown_shape
from tensorweave.plugins.standard_ops.random import SEEDS
from tensorweave.plugins.standard_ops.shape_fns import (
    unchanged,
    with_rank,
    with_rank_at_least,
)

Dims = list[int | None]
INDEX = dtypes.INDEX
# the dtypes a Bitcast may reinterpret (TF: every numeric type, not bool or string)
BITCAST_TYPES = dtypes.NUMERIC
SORTABLE = dtypes.NUMERIC


def _values(ctx: InferContext, i: int) -> list[int] | None:
    value = ctx.constant_value(i)
    return None if value is None else [int(v) for v in np.ravel(value)]


def _divide(ctx: InferContext, d: int | None, by: int) -> int | None:
    """TF's evenly-divisible ``Divide`` of a dimension."""
    if d is None:
        return None
    if d % by:
        raise ctx.shape_error(f"Dimension size must be evenly divisible by {by} but is {d}")
    return d // by


def _merge_dim(ctx: InferContext, a: int | None, b: int | None) -> int | None:
    if a is not None and b is not None and a != b:
        raise ctx.shape_error(f"Dimensions must be equal, but are {a} and {b}")
    return a if b is None else b


# -- space <-> depth -------------------------------------------------------------------------

def _nhwc_axes(data_format: str) -> tuple[int, int, int, int]:
    """Positions of N, H, W, C."""
    return (0, 2, 3, 1) if data_format == "NCHW" else (0, 1, 2, 3)


def _check_depth_attrs(ctx: InferContext) -> tuple[int, str]:
    block, data_format = ctx.attr("block_size"), ctx.attr("data_format")
    if block < 2:
        raise ctx.shape_error(f"Value for attr 'block_size' of {block} must be at least "
                              "minimum 2")
    if data_format not in ("NHWC", "NCHW"):
        raise ctx.shape_error(f"Value for attr 'data_format' of \"{data_format}\" is not in the "
                              "list of allowed values: \"NHWC\", \"NCHW\"")
    return block, data_format


def _space_to_depth(ctx: InferContext) -> list[TensorSpec]:
    block, data_format = _check_depth_attrs(ctx)
    shape = with_rank(ctx, 0, 4)
    n, h, w, c = (shape[i] for i in _nhwc_axes(data_format))
    dims = _format(data_format, n, _divide(ctx, h, block), _divide(ctx, w, block),
                   None if c is None else c * block * block)
    return [TensorSpec(ctx.dtype(0), TensorShape(dims))]


def _depth_to_space(ctx: InferContext) -> list[TensorSpec]:
    block, data_format = _check_depth_attrs(ctx)
    shape = with_rank(ctx, 0, 4)
    n, h, w, c = (shape[i] for i in _nhwc_axes(data_format))
    dims = _format(data_format, n, None if h is None else h * block,
                   None if w is None else w * block, _divide(ctx, c, block * block))
    return [TensorSpec(ctx.dtype(0), TensorShape(dims))]


def _format(data_format: str, n: Any, h: Any, w: Any, c: Any) -> Dims:
    return [n, c, h, w] if data_format == "NCHW" else [n, h, w, c]


# -- space <-> batch -------------------------------------------------------------------------

def _block_count(ctx: InferContext, i: int | None) -> int:
    """The number of block dims: the static length of block_shape (TF requires it known)."""
    if i is None:
        return 2
    shape = ctx.shape(i)
    if shape.ndims != 1:
        raise ctx.shape_error("block_shape must have rank 1.")
    if shape[0] is None:
        raise ctx.shape_error("block_shape must have known size.")
    return shape[0]


def _pad_matrix(ctx: InferContext, i: int, m: int) -> list[int] | None:
    """Input `i` as a flat ``[m, 2]`` paddings/crops matrix, shape-checked."""
    shape = with_rank(ctx, i, 2)
    for k, want in enumerate((m, 2)):
        if shape[k] is not None and shape[k] != want:
            raise ctx.shape_error(f"Dimension {k} in both shapes must be equal, but are "
                                  f"{shape[k]} and {want}. Shapes are {format_dims(shape)} and "
                                  f"[{m},2].")
    return _values(ctx, i)


def _to_batch(ctx: InferContext, block: list[int] | None, m: int, pads_at: int,
              inverse: bool) -> list[TensorSpec]:
    """Shared by the four space/batch ops: `inverse` is BatchToSpace (crops, not paddings)."""
    shape = with_rank_at_least(ctx, 0, m + 1)
    pads = _pad_matrix(ctx, pads_at, m)
    what = "crops" if inverse else "paddings"
    if block is not None and any(b < 1 for b in block):
        raise ctx.shape_error("block_shape must be positive")
    if pads is not None and any(p < 0 for p in pads):
        raise ctx.shape_error(f"{what} cannot be negative")
    if shape.ndims is None:
        return [TensorSpec(ctx.dtype(0), TensorShape(None))]
    batch = shape[0]
    if block is None:
        batch = None if m else batch
    elif batch is not None:
        for b in block:
            batch = _divide(ctx, batch, b) if inverse else batch * b
    spatial: Dims = [None] * m
    if pads is not None and block is not None:
        for k in range(m):
            d = shape[k + 1]
            if d is None:
                continue
            if inverse:
                spatial[k] = d * block[k] - pads[2 * k] - pads[2 * k + 1]
                if spatial[k] < 0:
                    raise ctx.shape_error(f"Negative dimension size caused by subtracting "
                                          f"{pads[2 * k + 1]} from {d * block[k] - pads[2 * k]}")
            else:
                spatial[k] = _divide(ctx, d + pads[2 * k] + pads[2 * k + 1], block[k])
    dims = [batch, *spatial, *shape.dims[m + 1:]]
    return [TensorSpec(ctx.dtype(0), TensorShape(dims))]


def _space_to_batch_nd(ctx: InferContext) -> list[TensorSpec]:
    return _to_batch(ctx, _values(ctx, 1), _block_count(ctx, 1), 2, inverse=False)


def _batch_to_space_nd(ctx: InferContext) -> list[TensorSpec]:
    return _to_batch(ctx, _values(ctx, 1), _block_count(ctx, 1), 2, inverse=True)


def _block_size_attr(ctx: InferContext) -> list[int]:
    block = ctx.attr("block_size")
    if block < 2:
        raise ctx.shape_error(f"Value for attr 'block_size' of {block} must be at least "
                              "minimum 2")
    with_rank(ctx, 0, 4)
    return [block, block]


def _space_to_batch(ctx: InferContext) -> list[TensorSpec]:
    return _to_batch(ctx, _block_size_attr(ctx), 2, 1, inverse=False)


def _batch_to_space(ctx: InferContext) -> list[TensorSpec]:
    return _to_batch(ctx, _block_size_attr(ctx), 2, 1, inverse=True)


# -- partitioning and stitching --------------------------------------------------------------

def _dynamic_partition(ctx: InferContext) -> list[TensorSpec]:
    num = ctx.attr("num_partitions")
    if num < 1:
        raise ctx.shape_error(f"Value for attr 'num_partitions' of {num} must be at least "
                              "minimum 1")
    data, partitions = ctx.shape(0), ctx.shape(1)
    if data.ndims is None or partitions.ndims is None:
        return [TensorSpec(ctx.dtype(0), TensorShape(None))] * num
    if partitions.ndims > data.ndims \
            or not data[:partitions.ndims].is_compatible_with(partitions):
        raise ctx.shape_error(f"Dimensions must be equal, but data.shape = {format_dims(data)} "
                              f"does not start with partitions.shape = "
                              f"{format_dims(partitions)}")
    out = TensorShape([None, *data.dims[partitions.ndims:]])
    return [TensorSpec(ctx.dtype(0), out)] * num


def _dynamic_stitch(ctx: InferContext) -> list[TensorSpec]:
    n = ctx.attr("N")
    if len(ctx.inputs) != 2 * n:
        raise ctx.shape_error(f"Expected as many indices as data tensors: N = {n}, got "
                              f"{len(ctx.inputs)} inputs in all")
    if n < 1:
        raise ctx.shape_error(f"Value for attr 'N' of {n} must be at least minimum 1")
    extra = TensorShape(None)
    max_index: int | None = -1
    for i in range(n):
        indices, data = ctx.shape(i), ctx.shape(n + i)
        values = _values(ctx, i)
        if values is None:
            max_index = None
        elif max_index is not None and values:
            max_index = max(max_index, *values)
        if indices.ndims is None or data.ndims is None:
            continue
        if indices.ndims > data.ndims \
                or not data[:indices.ndims].is_compatible_with(indices):
            raise ctx.shape_error(f"data[{i}].shape = {format_dims(data)} does not start with "
                                  f"indices[{i}].shape = {format_dims(indices)}")
        rest = data[indices.ndims:]
        if not extra.is_compatible_with(rest):
            raise ctx.shape_error(f"Need data[0].shape[{indices.ndims}:] = "
                                  f"{format_dims(extra)}, got data[{i}].shape"
                                  f"[{indices.ndims}:] = {format_dims(rest)}")
        extra = extra.merge_with(rest)
    first = None if max_index is None else max_index + 1
    if extra.ndims is None:
        return [TensorSpec(ctx.dtype(n), TensorShape(None))]
    return [TensorSpec(ctx.dtype(n), TensorShape([first, *extra.dims]))]


# -- reversing and rolling -------------------------------------------------------------------

def _reverse_sequence(ctx: InferContext) -> list[TensorSpec]:
    lengths = with_rank(ctx, 1, 1)
    shape = ctx.shape(0)
    seq_dim, batch_dim = ctx.attr("seq_dim"), ctx.attr("batch_dim")
    if shape.ndims is None:
        return [TensorSpec(ctx.dtype(0), shape)]
    rank = shape.ndims
    if batch_dim >= rank:
        raise ctx.shape_error(f"batch_dim must be < input rank: {batch_dim} vs. {rank}")
    if seq_dim >= rank:
        raise ctx.shape_error(f"seq_dim must be < input rank: {seq_dim} vs. {rank}")
    dims = list(shape.dims)
    dims[batch_dim] = _merge_dim(ctx, dims[batch_dim], lengths[0])
    return [TensorSpec(ctx.dtype(0), TensorShape(dims))]


def _roll(ctx: InferContext) -> list[TensorSpec]:
    shift, axis = ctx.shape(1), ctx.shape(2)
    if shift.ndims is not None and shift.ndims > 1:
        raise ctx.shape_error("shift must be a scalar or a 1-D vector. Found: "
                              f"{format_dims(shift)}")
    if axis.ndims is not None and axis.ndims > 1:
        raise ctx.shape_error(f"axis must be a scalar or a 1-D vector. Found: "
                              f"{format_dims(axis)}")
    if shift.is_fully_defined() and axis.is_fully_defined() \
            and shift.num_elements() != axis.num_elements():
        raise ctx.shape_error("shift and axis must have the same size")
    with_rank_at_least(ctx, 0, 1)
    return unchanged(ctx)


# -- searching, sets and indices -------------------------------------------------------------

def _bound(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 2)
    values = with_rank(ctx, 1, 2)
    return [TensorSpec(ctx.attr("out_type"), values)]


def _unique_with_counts(ctx: InferContext) -> list[TensorSpec]:
    shape = with_rank(ctx, 0, 1)
    out_idx = ctx.attr("out_idx")
    return [TensorSpec(ctx.dtype(0), TensorShape([None])), TensorSpec(out_idx, shape),
            TensorSpec(out_idx, TensorShape([None]))]


def _unique_v2(ctx: InferContext) -> list[TensorSpec]:
    shape = ctx.shape(0)
    return [TensorSpec(ctx.dtype(0), unknown_shape(shape.ndims)),
            TensorSpec(ctx.attr("out_idx"), TensorShape([None]))]


def _list_diff(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 1)
    with_rank(ctx, 1, 1)
    return [TensorSpec(ctx.dtype(0), TensorShape([None])),
            TensorSpec(ctx.attr("out_idx"), TensorShape([None]))]


def _unravel_index(ctx: InferContext) -> list[TensorSpec]:
    dims = with_rank(ctx, 1, 1)
    indices = ctx.shape(0)
    if indices.ndims == 0:
        return [TensorSpec(ctx.dtype(0), TensorShape([dims[0]]))]
    if indices.ndims is None:
        return [TensorSpec(ctx.dtype(0), TensorShape(None))]
    return [TensorSpec(ctx.dtype(0), TensorShape([dims[0], indices.num_elements()]))]


def _shape_n(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(ctx.attr("out_type"), TensorShape([s.shape.ndims])) for s in ctx.inputs]


def _concat_offset(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    return [TensorSpec(dtypes.int32, with_rank(ctx, i, 1)) for i in range(1, len(ctx.inputs))]


def _broadcast_args(ctx: InferContext) -> list[TensorSpec]:
    a, b = with_rank(ctx, 0, 1)[0], with_rank(ctx, 1, 1)[0]
    x, y = _values(ctx, 0), _values(ctx, 1)
    if x is not None and y is not None:
        try:
            return [TensorSpec(ctx.dtype(0), TensorShape([len(broadcast_dims(x, y))]))]
        except ValueError as exc:
            raise ctx.shape_error(str(exc)) from None
    return [TensorSpec(ctx.dtype(0), TensorShape([None if a is None or b is None
                                                  else max(a, b)]))]


def broadcast_dims(x: list[int], y: list[int]) -> list[int]:
    """numpy/TF broadcasting of two concrete shapes; ``ValueError`` with TF's text when they
    do not broadcast."""
    n = max(len(x), len(y))
    px, py = [1] * (n - len(x)) + list(x), [1] * (n - len(y)) + list(y)
    out = []
    for a, b in zip(px, py):
        if a != b and 1 not in (a, b):
            raise ValueError(f"Incompatible shapes: [{','.join(map(str, x))}] vs. "
                             f"[{','.join(map(str, y))}]")
        out.append(b if a == 1 else a)
    return out


# -- histograms, bit casts and sampling ------------------------------------------------------

def _histogram_fixed_width(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 1, 1)
    with_rank(ctx, 2, 0)
    if ctx.shape(1)[0] not in (None, 2):
        raise ctx.shape_error(f"Dimension must be 2 but is {ctx.shape(1)[0]}")
    nbins = _values(ctx, 2)
    if nbins is not None and nbins[0] < 0:
        raise ctx.shape_error(f"Dimension {nbins[0]} must be >= 0")
    return [TensorSpec(ctx.attr("dtype"), TensorShape([None if nbins is None else nbins[0]]))]


def _bitcast(ctx: InferContext) -> list[TensorSpec]:
    shape = ctx.shape(0)
    src, dst = ctx.dtype(0), ctx.attr("type")
    if shape.ndims is None:
        return [TensorSpec(dst, shape)]
    dims = list(shape.dims)
    if src.size > dst.size:
        dims.append(src.size // dst.size)
    elif src.size < dst.size:
        if not dims:
            raise ctx.shape_error("Shape must be at least rank 1 but is rank 0")
        want = dst.size // src.size
        if dims[-1] is not None and dims[-1] != want:
            raise ctx.shape_error(f"Cannot bitcast due to shape. {dims[-1]} does not match "
                                  f"{want}")
        dims.pop()
    return [TensorSpec(dst, TensorShape(dims))]


def _multinomial(ctx: InferContext) -> list[TensorSpec]:
    logits = with_rank(ctx, 0, 2)
    with_rank(ctx, 1, 0)
    num = _values(ctx, 1)
    return [TensorSpec(ctx.attr("output_dtype"),
                       TensorShape([logits[0], None if num is None else num[0]]))]


# -- registration ----------------------------------------------------------------------------

def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
    op = registry.op
    depth_attrs = {"T": REQUIRED, "block_size": REQUIRED, "data_format": "NHWC"}
    op("SpaceToDepth", ["input:T"], _space_to_depth, attrs=depth_attrs)
    op("DepthToSpace", ["input:T"], _depth_to_space, attrs=depth_attrs)
    op("SpaceToBatchND", ["input:T", "block_shape:Tblock_shape", "paddings:Tpaddings"],
       _space_to_batch_nd, attrs={"T": REQUIRED, "Tblock_shape": None, "Tpaddings": None},
       type_constraints={"Tblock_shape": INDEX, "Tpaddings": INDEX})
    op("BatchToSpaceND", ["input:T", "block_shape:Tblock_shape", "crops:Tcrops"],
       _batch_to_space_nd, attrs={"T": REQUIRED, "Tblock_shape": None, "Tcrops": None},
       type_constraints={"Tblock_shape": INDEX, "Tcrops": INDEX})
    op("SpaceToBatch", ["input:T", "paddings:Tpaddings"], _space_to_batch,
       attrs={"T": REQUIRED, "Tpaddings": None, "block_size": REQUIRED},
       type_constraints={"Tpaddings": INDEX})
    op("BatchToSpace", ["input:T", "crops:Tidx"], _batch_to_space,
       attrs={"T": REQUIRED, "block_size": REQUIRED, "Tidx": None},
       type_constraints={"Tidx": INDEX})

    op("DynamicPartition", ["data:T", "partitions:int32"], _dynamic_partition,
       attrs={"num_partitions": REQUIRED, "T": REQUIRED}, list_output=True)
    for name in ("DynamicStitch", "ParallelDynamicStitch"):
        op(name, ["indices:*int32", "data:*T"], _dynamic_stitch,
           attrs={"N": REQUIRED, "T": REQUIRED})

    op("ReverseSequence", ["input:T", "seq_lengths:Tlen"], _reverse_sequence,
       attrs={"seq_dim": REQUIRED, "batch_dim": 0, "T": REQUIRED, "Tlen": None},
       type_constraints={"Tlen": INDEX})
    op("Roll", ["input:T", "shift:Tshift", "axis:Taxis"], _roll,
       attrs={"T": REQUIRED, "Tshift": None, "Taxis": None},
       type_constraints={"Tshift": INDEX, "Taxis": INDEX})

    for name in ("LowerBound", "UpperBound"):
        op(name, ["sorted_inputs:T", "values:T"], _bound,
           attrs={"T": REQUIRED, "out_type": dtypes.int32},
           type_constraints={"T": SORTABLE, "out_type": INDEX})
    op("UniqueWithCounts", ["x:T"], _unique_with_counts,
       attrs={"T": REQUIRED, "out_idx": dtypes.int32}, type_constraints={"out_idx": INDEX})
    op("UniqueV2", ["x:T", "axis:Taxis"], _unique_v2,
       attrs={"T": REQUIRED, "Taxis": None, "out_idx": dtypes.int32},
       type_constraints={"Taxis": INDEX, "out_idx": INDEX})
    op("ListDiff", ["x:T", "y:T"], _list_diff, attrs={"T": REQUIRED, "out_idx": dtypes.int32},
       type_constraints={"out_idx": INDEX})
    op("UnravelIndex", ["indices:Tidx", "dims:Tidx"], _unravel_index, attrs={"Tidx": None},
       type_constraints={"Tidx": INDEX})
    op("ShapeN", ["input:*T"], _shape_n,
       attrs={"N": REQUIRED, "T": REQUIRED, "out_type": dtypes.int32},
       type_constraints={"out_type": INDEX}, list_output=True)
    op("ConcatOffset", ["concat_dim:int32", "shape:*int32"], _concat_offset,
       attrs={"N": REQUIRED}, list_output=True)
    op("BroadcastArgs", ["s0:T", "s1:T"], _broadcast_args, attrs={"T": None},
       type_constraints={"T": INDEX})

    op("HistogramFixedWidth", ["values:T", "value_range:T", "nbins:int32"],
       _histogram_fixed_width, attrs={"T": REQUIRED, "dtype": dtypes.int32},
       type_constraints={"T": dtypes.NUMERIC, "dtype": INDEX})
    op("Bitcast", ["input:T"], _bitcast, attrs={"T": REQUIRED, "type": REQUIRED},
       type_constraints={"T": BITCAST_TYPES, "type": BITCAST_TYPES})
    op("Multinomial", ["logits:T", "num_samples:int32"], _multinomial, stateful=True,
       attrs={**SEEDS, "T": REQUIRED, "output_dtype": dtypes.int64},
       type_constraints={"T": dtypes.NUMERIC, "output_dtype": INDEX})
