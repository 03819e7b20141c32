"""Kernels for the data-movement ops of ``standard_ops.array_extra``: space/depth/batch
rearranging, partitioning and stitching, sequence reversal and rolling, sorted search,
unique-with-counts, set difference, index unravelling, ``ShapeN``, ``ConcatOffset``,
``BroadcastArgs``, histograms, ``Bitcast`` and ``Multinomial``.

Contract: kernels run on ``ctx.xp`` arrays (numpy or cupy), return exactly the node's output
dtypes, never write into their inputs, and report bad runtime values as `InvalidArgumentError`
with TF's wording. Small index-like inputs (block shapes, paddings, shifts) are read back to the
host. ``Multinomial`` draws on the host from the node's seeded generator, as the other random
kernels do, so a seeded node repeats its sequence in every new session.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels.random import _generator as node_generator
from tensorweave.plugins.standard_ops.array_extra import broadcast_dims


def _fail(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _ints(x: Any) -> list[int]:
    return [int(v) for v in x.ravel().tolist()]


def _fmt(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _outputs(values: Sequence[Any]) -> Any:
    return values[0] if len(values) == 1 else tuple(values)


# -- space <-> depth -------------------------------------------------------------------------

def _as_nhwc(ctx: KernelContext, x: Any) -> Any:
    if x.ndim != 4:
        raise _fail(ctx, f"Input rank should be: 4 instead of: {x.ndim}")
    return x.transpose(0, 2, 3, 1) if ctx.attrs["data_format"] == "NCHW" else x


def _from_nhwc(ctx: KernelContext, y: Any) -> Any:
    y = y.transpose(0, 3, 1, 2) if ctx.attrs["data_format"] == "NCHW" else y
    return ctx.xp.ascontiguousarray(y)


def space_to_depth(ctx: KernelContext, x: Any) -> Any:
    b = ctx.attrs["block_size"]
    x = _as_nhwc(ctx, x)
    n, h, w, c = x.shape
    if h % b or w % b:
        raise _fail(ctx, f"Image width {w} and height {h} should be divisible by block_size: "
                         f"{b}")
    blocks = x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5)
    return _from_nhwc(ctx, blocks.reshape(n, h // b, w // b, b * b * c))


def depth_to_space(ctx: KernelContext, x: Any) -> Any:
    b = ctx.attrs["block_size"]
    x = _as_nhwc(ctx, x)
    n, h, w, c = x.shape
    if c % (b * b):
        raise _fail(ctx, f"Input depth dimension {c} should be divisible by: {b * b}")
    blocks = x.reshape(n, h, w, b, b, c // (b * b)).transpose(0, 1, 3, 2, 4, 5)
    return _from_nhwc(ctx, blocks.reshape(n, h * b, w * b, c // (b * b)))


# -- space <-> batch -------------------------------------------------------------------------

def _block_args(ctx: KernelContext, x: Any, block: list[int], pads: Any,
                what: str) -> list[tuple[int, int]]:
    m = len(block)
    if x.ndim < m + 1:
        raise _fail(ctx, f"input rank should be >= {m + 1} instead of {x.ndim}")
    if pads.shape != (m, 2):
        raise _fail(ctx, f"{what} should have shape [{m}, 2] instead of {_fmt(pads.shape)}")
    if any(b < 1 for b in block):
        raise _fail(ctx, f"All values in block_shape must be positive, got value, "
                         f"{min(block)} instead.")
    pairs = [(int(a), int(b)) for a, b in pads.tolist()]
    if any(a < 0 or b < 0 for a, b in pairs):
        raise _fail(ctx, f"{what.capitalize()} must be non-negative")
    return pairs


def _space_to_batch(ctx: KernelContext, x: Any, block: list[int], pads: Any) -> Any:
    xp = ctx.xp
    pairs = _block_args(ctx, x, block, pads, "paddings")
    m = len(block)
    padded = xp.pad(x, [(0, 0), *pairs] + [(0, 0)] * (x.ndim - m - 1))
    split: list[int] = [x.shape[0]]
    for k, b in enumerate(block):
        size = padded.shape[k + 1]
        if size % b:
            raise _fail(ctx, f"padded_shape[{k}]={size} is not divisible by "
                             f"block_shape[{k}]={b}")
        split += [size // b, b]
    rest = list(x.shape[m + 1:])
    blocks = padded.reshape(split + rest)
    # the block offsets lead, outermost first, then the batch, then the shrunk spatial dims
    perm = [2 * k + 2 for k in range(m)] + [0] + [2 * k + 1 for k in range(m)] \
        + list(range(2 * m + 1, 2 * m + 1 + len(rest)))
    out_shape = [x.shape[0] * math.prod(block)] + split[1::2] + rest
    return xp.ascontiguousarray(blocks.transpose(perm)).reshape(out_shape)


def _batch_to_space(ctx: KernelContext, x: Any, block: list[int], crops: Any) -> Any:
    xp = ctx.xp
    pairs = _block_args(ctx, x, block, crops, "crops")
    m = len(block)
    total = math.prod(block)
    if x.shape[0] % total:
        raise _fail(ctx, f"Input batch dimension ({x.shape[0]}) is not divisible by product "
                         f"of block sizes ({total})")
    batch = x.shape[0] // total
    spatial = list(x.shape[1:m + 1])
    rest = list(x.shape[m + 1:])
    blocks = x.reshape(block + [batch] + spatial + rest)
    perm = [m] + [i for k in range(m) for i in (m + 1 + k, k)] \
        + list(range(2 * m + 1, 2 * m + 1 + len(rest)))
    full = [d * b for d, b in zip(spatial, block)]
    merged = xp.ascontiguousarray(blocks.transpose(perm)).reshape([batch] + full + rest)
    index: list[slice] = [slice(None)]
    for size, (start, end) in zip(full, pairs):
        if start + end > size:
            raise _fail(ctx, f"Cropped size must be non-negative: start: {start} end: {end} "
                             f"size {size}")
        index.append(slice(start, size - end))
    return merged[tuple(index)]


def space_to_batch_nd(ctx: KernelContext, x: Any, block_shape: Any, paddings: Any) -> Any:
    if block_shape.ndim != 1:
        raise _fail(ctx, f"block_shape must be 1-D, got shape {_fmt(block_shape.shape)}")
    return _space_to_batch(ctx, x, _ints(block_shape), paddings)


def batch_to_space_nd(ctx: KernelContext, x: Any, block_shape: Any, crops: Any) -> Any:
    if block_shape.ndim != 1:
        raise _fail(ctx, f"block_shape must be 1-D, got shape {_fmt(block_shape.shape)}")
    return _batch_to_space(ctx, x, _ints(block_shape), crops)


def _rank4(ctx: KernelContext, x: Any) -> list[int]:
    if x.ndim != 4:
        raise _fail(ctx, f"input rank should be 4 instead of {x.ndim}")
    return [ctx.attrs["block_size"]] * 2


def space_to_batch(ctx: KernelContext, x: Any, paddings: Any) -> Any:
    return _space_to_batch(ctx, x, _rank4(ctx, x), paddings)


def batch_to_space(ctx: KernelContext, x: Any, crops: Any) -> Any:
    return _batch_to_space(ctx, x, _rank4(ctx, x), crops)


# -- partitioning and stitching --------------------------------------------------------------

def _starts_with(data: Any, prefix: Any) -> bool:
    return data.ndim >= prefix.ndim and tuple(data.shape[:prefix.ndim]) == tuple(prefix.shape)


def _position(flat: int, shape: Sequence[int]) -> str:
    coords = []
    for d in reversed(shape):
        coords.append(flat % d)
        flat //= d
    return _fmt(list(reversed(coords)))


def dynamic_partition(ctx: KernelContext, data: Any, partitions: Any) -> Any:
    xp = ctx.xp
    num = ctx.attrs["num_partitions"]
    if not _starts_with(data, partitions):
        raise _fail(ctx, f"data.shape must start with partitions.shape, got data.shape = "
                         f"{_fmt(data.shape)}, partitions.shape = {_fmt(partitions.shape)}")
    flat = partitions.reshape(-1)
    bad = xp.nonzero((flat < 0) | (flat >= num))[0]
    if bad.size:
        i = int(bad[0])
        raise _fail(ctx, f"partitions{_position(i, partitions.shape)} = {int(flat[i])} is not "
                         f"in [0, {num})")
    rows = data.reshape((flat.shape[0],) + tuple(data.shape[partitions.ndim:]))
    return _outputs([rows[flat == p] for p in range(num)])


def dynamic_stitch(ctx: KernelContext, *inputs: Any) -> Any:
    xp = ctx.xp
    n = len(inputs) // 2
    indices, data = inputs[:n], inputs[n:]
    rest: tuple[int, ...] | None = None
    for i, (idx, d) in enumerate(zip(indices, data)):
        if not _starts_with(d, idx):
            raise _fail(ctx, f"data[{i}].shape = {_fmt(d.shape)} does not start with "
                             f"indices[{i}].shape = {_fmt(idx.shape)}")
        tail = tuple(d.shape[idx.ndim:])
        if rest is None:
            rest = tail
        elif tail != rest:
            raise _fail(ctx, f"Need data[0].shape[{indices[0].ndim}:] = {_fmt(rest)}, got "
                             f"data[{i}].shape[{idx.ndim}:] = {_fmt(tail)}")
        if idx.size and int(idx.min()) < 0:
            raise _fail(ctx, f"indices[{i}] is out of range")
    sizes = [int(idx.max()) + 1 for idx in indices if idx.size]
    out = xp.zeros((max(sizes, default=0),) + (rest or ()), dtype=ctx.out_np)
    # later inputs (and later positions within one) overwrite earlier ones, as in TF
    for idx, d in zip(indices, data):
        flat = idx.reshape(-1)
        out[flat] = d.reshape((flat.shape[0],) + (rest or ()))
    return out


# -- reversing and rolling -------------------------------------------------------------------

def reverse_sequence(ctx: KernelContext, x: Any, lengths: Any) -> Any:
    xp = ctx.xp
    seq_dim, batch_dim = ctx.attrs["seq_dim"], ctx.attrs["batch_dim"]
    if batch_dim == seq_dim:
        raise _fail(ctx, f"batch_dim == seq_dim == {seq_dim}")
    if seq_dim >= x.ndim:
        raise _fail(ctx, f"seq_dim must be < input rank ( {seq_dim} vs. {x.ndim})")
    if batch_dim >= x.ndim:
        raise _fail(ctx, f"batch_dim must be < input rank ( {batch_dim} vs. {x.ndim})")
    if lengths.ndim != 1:
        raise _fail(ctx, f"seq_lengths must be 1-dim, not {lengths.ndim}")
    if lengths.shape[0] != x.shape[batch_dim]:
        raise _fail(ctx, f"Length of seq_lengths != input.dims({batch_dim}), "
                         f"({lengths.shape[0]} vs. {x.shape[batch_dim]})")
    host = _ints(lengths)
    for d, n in enumerate(host):
        if n < 0:
            raise _fail(ctx, f"seq_lens({d}) < 0")
        if n > x.shape[seq_dim]:
            raise _fail(ctx, f"seq_lens({d}) > input.dims({seq_dim})")
    steps = xp.arange(x.shape[seq_dim])
    lens = lengths.astype(steps.dtype)[:, None]
    # position t of sequence b reads from L[b] - 1 - t inside the sequence, else from t
    source = xp.where(steps[None, :] < lens, lens - 1 - steps[None, :], steps[None, :])
    shape = [1] * x.ndim
    shape[batch_dim], shape[seq_dim] = x.shape[batch_dim], x.shape[seq_dim]
    if batch_dim > seq_dim:
        source = source.T
    index = xp.broadcast_to(source.reshape(shape), x.shape)
    return xp.take_along_axis(x, index, axis=seq_dim)


def roll(ctx: KernelContext, x: Any, shift: Any, axis: Any) -> Any:
    if x.ndim < 1:
        raise _fail(ctx, "input must be 1-D or higher")
    if shift.ndim > 1:
        raise _fail(ctx, f"shift must be a scalar or a 1-D vector. Found: {_fmt(shift.shape)}")
    if axis.ndim > 1:
        raise _fail(ctx, f"axis must be a scalar or a 1-D vector. Found: {_fmt(axis.shape)}")
    shifts, axes = _ints(shift), _ints(axis)
    if len(shifts) != len(axes):
        raise _fail(ctx, "shift and axis must have the same size")
    for a in axes:
        if not -x.ndim <= a < x.ndim:
            raise _fail(ctx, f"axis {a} is out of range")
    if not axes:
        return x
    return ctx.xp.roll(x, tuple(shifts), tuple(a % x.ndim for a in axes))


# -- searching, sets and indices -------------------------------------------------------------

def _bound(side: str) -> Any:
    def kernel(ctx: KernelContext, sorted_inputs: Any, values: Any) -> Any:
        xp = ctx.xp
        if sorted_inputs.ndim != 2 or values.ndim != 2:
            raise _fail(ctx, "sorted_inputs and values must be 2-D, got shapes "
                             f"{_fmt(sorted_inputs.shape)} and {_fmt(values.shape)}")
        if sorted_inputs.shape[0] != values.shape[0]:
            raise _fail(ctx, "Leading dim_size of both tensors must match.")
        out = xp.empty(values.shape, dtype=ctx.out_np)
        for row in range(values.shape[0]):
            out[row] = xp.searchsorted(sorted_inputs[row], values[row], side=side)
        return out

    return kernel


def unique_rows(xp: Any, rows: Any) -> tuple[Any, Any, Any]:
    """The distinct rows of a 2-D array in order of first occurrence: (first position of each,
    the group of every row, the size of each group)."""
    n = rows.shape[0]
    if rows.shape[1] == 0:  # every row is the empty row
        first = xp.zeros(min(n, 1), dtype=xp.int64)
        return first, xp.zeros(n, dtype=xp.int64), xp.full(first.shape, n, dtype=xp.int64)
    order = xp.lexsort(rows.T[::-1])  # stable: equal rows keep their input order
    ordered = rows[order]
    starts = xp.ones(n, dtype=bool)
    starts[1:] = xp.any(ordered[1:] != ordered[:-1], axis=1)
    group_sorted = xp.cumsum(starts) - 1
    first = order[starts]  # the earliest position of each group, groups in sorted order
    by_first = xp.argsort(first)
    rank = xp.empty_like(by_first)
    rank[by_first] = xp.arange(by_first.shape[0], dtype=by_first.dtype)
    group = xp.empty(n, dtype=rank.dtype)
    group[order] = rank[group_sorted]
    counts = xp.bincount(group, minlength=first.shape[0])
    return first[by_first], group, counts


def unique_with_counts(ctx: KernelContext, x: Any) -> tuple[Any, Any, Any]:
    if x.ndim != 1:
        raise _fail(ctx, f"unique expects a 1D vector, got shape {_fmt(x.shape)}")
    first, group, counts = unique_rows(ctx.xp, x.reshape(-1, 1))
    out_idx = ctx.output_dtypes[1].np_type
    return x[first], group.astype(out_idx), counts.astype(out_idx)


def unique_v2(ctx: KernelContext, x: Any, axis: Any) -> tuple[Any, Any]:
    xp = ctx.xp
    axes = _ints(axis)
    if not axes:
        if x.ndim != 1:
            raise _fail(ctx, f"unique expects a 1D vector, got shape {_fmt(x.shape)}")
        a = 0
    elif len(axes) > 1:
        raise _fail(ctx, f"axis expects a 1D vector with 1 element: {_fmt(axis.shape)}")
    else:
        a = axes[0]
        if not -x.ndim <= a < x.ndim:
            raise _fail(ctx, f"axis has to be between [{-x.ndim}, {x.ndim}) got {a}")
        a %= x.ndim
    moved = xp.moveaxis(x, a, 0)
    first, group, _ = unique_rows(xp, moved.reshape(moved.shape[0], -1))
    y = xp.ascontiguousarray(xp.moveaxis(moved[first], 0, a))
    return y, group.astype(ctx.output_dtypes[1].np_type)


def list_diff(ctx: KernelContext, x: Any, y: Any) -> tuple[Any, Any]:
    xp = ctx.xp
    if x.ndim != 1:
        raise _fail(ctx, f"x should be a 1D vector.{_fmt(x.shape)}")
    if y.ndim != 1:
        raise _fail(ctx, f"y should be a 1D vector.{_fmt(y.shape)}")
    kept = xp.nonzero(~xp.isin(x, y))[0]
    return x[kept], kept.astype(ctx.output_dtypes[1].np_type)


def unravel_index(ctx: KernelContext, indices: Any, dims: Any) -> Any:
    xp = ctx.xp
    if indices.ndim > 1:
        raise _fail(ctx, f"The indices can only be scalar or vector, got \""
                         f"{_fmt(indices.shape)}\"")
    if dims.ndim != 1:
        raise _fail(ctx, f"The indices can only be 1-D, got \"{_fmt(dims.shape)}\"")
    sizes = _ints(dims)
    if any(d <= 0 for d in sizes):
        raise _fail(ctx, "Input dims must be positive")
    if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= math.prod(sizes)):
        raise _fail(ctx, "index is out of bound as with dims")
    coords = xp.unravel_index(indices, tuple(sizes))
    return xp.stack([xp.asarray(c) for c in coords]).astype(ctx.out_np, copy=False)


def shape_n(ctx: KernelContext, *inputs: Any) -> Any:
    out = ctx.output_dtypes[0].np_type
    return _outputs([ctx.xp.asarray(x.shape, dtype=out) for x in inputs])


def concat_offset(ctx: KernelContext, concat_dim: Any, *shapes: Any) -> Any:
    """TF's ``ConcatOffsetOp``: where each shape starts along `concat_dim` (0 elsewhere)."""
    first = _ints(shapes[0])
    dims = len(first)
    cdim = int(concat_dim)
    axis = cdim + dims if cdim < 0 else cdim
    if not 0 <= axis < dims:
        raise _fail(ctx, f"Concat dim is out of range: {cdim} vs. {dims}")
    offset, out = 0, []
    for i, value in enumerate(shapes):
        dims_i = _ints(value)
        if len(dims_i) != dims:
            raise _fail(ctx, f"input {i} should contain {dims} elements, but got {len(dims_i)}")
        for j in range(dims):
            if j != axis and dims_i[j] != first[j]:
                raise _fail(ctx, f"All dimensions except {axis} must match. Input {i} has shape "
                            f"[{' '.join(map(str, dims_i))}] and doesn't match input 0 with "
                            f"shape [{' '.join(map(str, first))}].")
        out.append(ctx.xp.asarray([offset if j == axis else 0 for j in range(dims)], np.int32))
        offset += dims_i[axis]
    return _outputs(out)


def broadcast_args(ctx: KernelContext, s0: Any, s1: Any) -> Any:
    for s in (s0, s1):
        if s.ndim != 1:
            raise _fail(ctx, f"In[0] and In[1] must be vectors, got shape {_fmt(s.shape)}")
    try:
        dims = broadcast_dims(_ints(s0), _ints(s1))
    except ValueError as exc:
        raise _fail(ctx, str(exc)) from None
    return ctx.xp.asarray(dims, dtype=ctx.out_np)


# -- histograms, bit casts and sampling ------------------------------------------------------

def histogram_fixed_width(ctx: KernelContext, values: Any, value_range: Any,
                          nbins: Any) -> Any:
    xp = ctx.xp
    if value_range.shape != (2,):
        raise _fail(ctx, f"value_range should be a vector of 2 elements, but got "
                         f"{_fmt(value_range.shape)}")
    if nbins.ndim != 0:
        raise _fail(ctx, f"nbins should be a scalar, but got {_fmt(nbins.shape)}")
    n = int(nbins)
    lo, hi = (v.item() for v in value_range)
    if n <= 0:
        raise _fail(ctx, f"nbins should be a positive number, but got '{n}'")
    if not lo < hi:
        raise _fail(ctx, f"value_range should satisfy value_range[0] < value_range[1], but "
                         f"got '[{lo}, {hi}]'")
    step = (float(hi) - float(lo)) / n
    scaled = (xp.maximum(values.astype(xp.float64), lo) - lo) / step
    bins = xp.minimum(xp.floor(scaled), n - 1).astype(xp.int64).reshape(-1)
    return xp.bincount(bins, minlength=n).astype(ctx.out_np)


def bitcast(ctx: KernelContext, x: Any) -> Any:
    src, dst = x.dtype.itemsize, np.dtype(ctx.out_np).itemsize
    shape = list(x.shape)
    if src > dst:
        shape.append(src // dst)
    elif src < dst:
        if not shape or shape[-1] != dst // src:
            raise _fail(ctx, f"Cannot bitcast from {x.dtype.name} to "
                             f"{np.dtype(ctx.out_np).name}: shape {_fmt(x.shape)}")
        shape.pop()
    return ctx.xp.ascontiguousarray(x).view(ctx.out_np).reshape(shape)


def multinomial(ctx: KernelContext, logits: Any, num_samples: Any) -> Any:
    if logits.ndim != 2:
        raise _fail(ctx, f"logits should be a matrix, got shape {_fmt(logits.shape)}")
    num = int(ctx.device.to_host(num_samples))
    if num < 0:
        raise _fail(ctx, f"num_samples should be nonnegative, got {num}")
    batch, classes = logits.shape
    if classes <= 0:
        raise _fail(ctx, f"num_classes should be positive, got {classes}")
    host = np.asarray(ctx.device.to_host(logits), dtype=np.float64)
    gen, lock = node_generator(ctx)
    with lock:
        draws = gen.random((batch, num))
    out = np.empty((batch, num), dtype=ctx.out_np)
    for row in range(batch):
        # inverse-CDF sampling of softmax(logits): -inf logits get probability zero
        cdf = np.cumsum(np.exp(host[row] - np.max(host[row])))
        picks = np.searchsorted(cdf, draws[row] * cdf[-1], side="right")
        out[row] = np.minimum(picks, classes - 1)
    return ctx.device.from_host(out)


KERNELS = {
    "SpaceToDepth": space_to_depth, "DepthToSpace": depth_to_space,
    "SpaceToBatchND": space_to_batch_nd, "BatchToSpaceND": batch_to_space_nd,
    "SpaceToBatch": space_to_batch, "BatchToSpace": batch_to_space,
    "DynamicPartition": dynamic_partition, "DynamicStitch": dynamic_stitch,
    "ParallelDynamicStitch": dynamic_stitch, "ReverseSequence": reverse_sequence, "Roll": roll,
    "LowerBound": _bound("left"), "UpperBound": _bound("right"),
    "UniqueWithCounts": unique_with_counts, "UniqueV2": unique_v2, "ListDiff": list_diff,
    "UnravelIndex": unravel_index, "ShapeN": shape_n,
    "ConcatOffset": concat_offset,
    "BroadcastArgs": broadcast_args, "HistogramFixedWidth": histogram_fixed_width,
    "Bitcast": bitcast, "Multinomial": multinomial,
}


def register(registry: Any, device_type: str) -> None:
    """Register this module's kernels for `device_type`."""
    for op, fn in KERNELS.items():
        registry.add(op, device_type, fn)
