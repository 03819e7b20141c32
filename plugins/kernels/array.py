"""Kernels for the array ops: shapes, indexing, joining and creation.

Contract: each kernel runs TF's op on arrays of ``ctx.xp`` (numpy or cupy), returns exactly the
node's output dtype, never writes into its inputs (results may be views of them, as TF's
outputs may share buffers), and reports bad runtime values (a shape that does not fit, an index
out of range) as `InvalidArgumentError` with TF's wording. Index-like inputs (shapes, axes,
begin/size) are read back to the host; that is cheap, and TF keeps them in host memory too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.standard_ops.array import range_size
from tensorweave.plugins.standard_ops.slicing import SliceError, strided_slice_spec


def _fail(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _ints(x: Any) -> list[int]:
    return [int(v) for v in x.ravel().tolist()]


def _scalar(ctx: KernelContext, x: Any, what: str) -> int:
    values = _ints(x)
    if len(values) != 1:
        raise _fail(ctx, f"{what} must be a scalar, but got shape {_fmt(x.shape)}")
    return values[0]


def _fmt(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _outputs(values: Sequence[Any]) -> Any:
    """A list output: one array when the node has a single output, else a tuple."""
    return values[0] if len(values) == 1 else tuple(values)


def _axis(ctx: KernelContext, axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < rank:
        raise _fail(ctx, f"Expected {what} in the range [{-rank}, {rank}), but got {axis}")
    return axis % rank


def _position(flat_index: int, shape: Sequence[int]) -> str:
    coords = []
    for d in reversed(shape):
        coords.append(flat_index % d)
        flat_index //= d
    return ",".join(str(c) for c in reversed(coords))


# -- reshaping -------------------------------------------------------------------------------

def reshape(ctx: KernelContext, x: Any, shape: Any) -> Any:
    dims = _ints(shape)
    wildcards = [i for i, d in enumerate(dims) if d == -1]
    if len(wildcards) > 1:
        raise _fail(ctx, f"Only one input size may be -1, not both {wildcards[0]} and "
                         f"{wildcards[1]}")
    for i, d in enumerate(dims):
        if d < -1:
            raise _fail(ctx, f"Size {i} must be non-negative, not {d}")
    known = math.prod(d for d in dims if d != -1)
    if wildcards:
        if known == 0:
            raise _fail(ctx, "Reshape cannot infer the missing input size for an empty tensor "
                             "unless all specified input sizes are non-zero")
        if x.size % known:
            raise _fail(ctx, f"Input to reshape is a tensor with {x.size} values, but the "
                             f"requested shape requires a multiple of {known}")
        dims[wildcards[0]] = x.size // known
    elif known != x.size:
        raise _fail(ctx, f"Input to reshape is a tensor with {x.size} values, but the requested "
                         f"shape has {known}")
    return ctx.xp.reshape(x, dims)


def transpose(ctx: KernelContext, x: Any, perm: Any) -> Any:
    p = _ints(perm)
    if len(p) != x.ndim:
        raise _fail(ctx, f"transpose expects a vector of size {x.ndim}. But input(1) is a "
                         f"vector of size {len(p)}")
    for d in p:
        if not -x.ndim <= d < x.ndim:
            raise _fail(ctx, f"perm dim {d} is out of range of input rank {x.ndim}")
    p = [d % x.ndim for d in p]
    if sorted(p) != list(range(x.ndim)):
        raise _fail(ctx, f"{p} is not a permutation of [0, {x.ndim})")
    return ctx.xp.transpose(x, p)


def expand_dims(ctx: KernelContext, x: Any, dim: Any) -> Any:
    d = _scalar(ctx, dim, "'dim'")
    if not -x.ndim - 1 <= d <= x.ndim:
        raise _fail(ctx, f"Tried to expand dim index {d} for tensor with {x.ndim} dimensions.")
    return ctx.xp.expand_dims(x, d)


def squeeze(ctx: KernelContext, x: Any) -> Any:
    axes = []
    for d in ctx.attrs["squeeze_dims"]:
        if not -x.ndim <= d < x.ndim:
            raise _fail(ctx, f"Tried to squeeze dim index {d} for tensor with {x.ndim} "
                             "dimensions.")
        d %= x.ndim
        if x.shape[d] != 1:
            raise _fail(ctx, f"Can not squeeze dim[{d}], expected a dimension of 1, got "
                             f"{x.shape[d]}")
        axes.append(d)
    return ctx.xp.squeeze(x, axis=tuple(sorted(set(axes)))) if axes else ctx.xp.squeeze(x)


def broadcast_to(ctx: KernelContext, x: Any, shape: Any) -> Any:
    dims = _ints(shape)
    try:
        return ctx.xp.broadcast_to(x, dims)
    except ValueError:
        raise _fail(ctx, f"Unable to broadcast tensor of shape {_fmt(x.shape)} to tensor of "
                         f"shape {_fmt(dims)}") from None


def tile(ctx: KernelContext, x: Any, multiples: Any) -> Any:
    m = _ints(multiples)
    if len(m) != x.ndim:
        raise _fail(ctx, f"Expected multiples argument to be a vector of length {x.ndim} but "
                         f"got length {len(m)}")
    for i, k in enumerate(m):
        if k < 0:
            raise _fail(ctx, f"Expected multiples[{i}] >= 0, but got {k}")
    return ctx.xp.tile(x, m)


def _paddings(ctx: KernelContext, x: Any, paddings: Any) -> list[tuple[int, int]]:
    if paddings.ndim != 2 or paddings.shape[0] != x.ndim or paddings.shape[1] != 2:
        raise _fail(ctx, "The first dimension of paddings must be the rank of inputs"
                         f"{_fmt(paddings.shape)} {_fmt(x.shape)}")
    values = _ints(paddings)
    pairs = list(zip(values[::2], values[1::2]))
    for before, after in pairs:
        if before < 0 or after < 0:
            raise _fail(ctx, f"Paddings must be non-negative: {before} {after}")
    return pairs


def _pad_with(ctx: KernelContext, x: Any, paddings: Any, value: Any) -> Any:
    pairs = _paddings(ctx, x, paddings)
    out = ctx.xp.empty([d + b + a for d, (b, a) in zip(x.shape, pairs)], dtype=x.dtype)
    out[...] = value
    out[tuple(slice(b, b + d) for d, (b, _) in zip(x.shape, pairs))] = x
    return out


def _zero(x: Any) -> Any:
    """The zero of `x`'s dtype: TF's zero string is the empty one."""
    return b"" if x.dtype == object else x.dtype.type(0)


def pad(ctx: KernelContext, x: Any, paddings: Any) -> Any:
    return _pad_with(ctx, x, paddings, _zero(x))


def pad_v2(ctx: KernelContext, x: Any, paddings: Any, value: Any) -> Any:
    if value.ndim != 0:
        raise _fail(ctx, f"constant_values must be a scalar. Got: {_fmt(value.shape)}")
    return _pad_with(ctx, x, paddings, value)


def mirror_pad(ctx: KernelContext, x: Any, paddings: Any) -> Any:
    pairs = _paddings(ctx, x, paddings)
    mode = ctx.attrs["mode"]
    for d, (before, after) in zip(x.shape, pairs):
        if mode == "REFLECT" and (before >= d or after >= d):
            raise _fail(ctx, f"paddings must be less than the dimension size: {before}, {after} "
                             f"not less than {d}")
        if mode == "SYMMETRIC" and (before > d or after > d):
            raise _fail(ctx, f"paddings must be no greater than the dimension size: {before}, "
                             f"{after} greater than {d}")
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise _fail(ctx, f"mode must be either REFLECT or SYMMETRIC, got {mode}")
    return ctx.xp.pad(x, pairs, mode=mode.lower())


# -- joining and splitting -------------------------------------------------------------------

def concat(ctx: KernelContext, *inputs: Any) -> Any:
    values, axis = inputs[:-1], _scalar(ctx, inputs[-1], "axis")
    first = values[0]
    if first.ndim == 0:
        raise _fail(ctx, "ConcatOp : Can't concatenate scalars (use tf.stack instead)")
    axis = _axis(ctx, axis, first.ndim, "ConcatOp : Expected concatenating dimensions")
    for i, v in enumerate(values[1:], 1):
        if v.ndim != first.ndim:
            raise _fail(ctx, f"ConcatOp : Ranks of all input tensors should match: shape[0] = "
                             f"{_fmt(first.shape)} vs. shape[{i}] = {_fmt(v.shape)}")
        for d in range(first.ndim):
            if d != axis and v.shape[d] != first.shape[d]:
                raise _fail(ctx, f"ConcatOp : Dimension {d} in both shapes must be equal: "
                                 f"shape[0] = {_fmt(first.shape)} vs. shape[{i}] = "
                                 f"{_fmt(v.shape)}")
    return ctx.xp.concatenate(values, axis=axis)


def pack(ctx: KernelContext, *values: Any) -> Any:
    for i, v in enumerate(values[1:], 1):
        if v.shape != values[0].shape:
            raise _fail(ctx, f"Shapes of all inputs must match: values[0].shape = "
                             f"{_fmt(values[0].shape)} != values[{i}].shape = {_fmt(v.shape)}")
    rank = values[0].ndim + 1
    return ctx.xp.stack(values, axis=_axis(ctx, ctx.attrs["axis"], rank))


def unpack(ctx: KernelContext, x: Any) -> Any:
    num = ctx.attrs["num"]
    axis = _axis(ctx, ctx.attrs["axis"], x.ndim)
    if x.shape[axis] != num:
        raise _fail(ctx, f"Input shape axis {axis} must equal {num}, got shape {_fmt(x.shape)}")
    return _outputs(list(ctx.xp.moveaxis(x, axis, 0)))


def split(ctx: KernelContext, split_dim: Any, x: Any) -> Any:
    num = ctx.attrs["num_split"]
    axis = _scalar(ctx, split_dim, "split_dim")
    if not -x.ndim <= axis < x.ndim:
        raise _fail(ctx, f"-input rank(-{x.ndim}) <= split_dim < input rank ({x.ndim}), but "
                         f"got {axis}")
    axis %= x.ndim
    if x.shape[axis] % num:
        raise _fail(ctx, f"Number of ways to split should evenly divide the split dimension, "
                         f"but got split_dim {axis} (size = {x.shape[axis]}) and num_split {num}")
    return _outputs(ctx.xp.split(x, num, axis=axis))


def split_v(ctx: KernelContext, x: Any, size_splits: Any, split_dim: Any) -> Any:
    sizes = _ints(size_splits)
    axis = _scalar(ctx, split_dim, "split_dim")
    if not -x.ndim <= axis < x.ndim:
        raise _fail(ctx, f"-input rank(-{x.ndim}) <= split_dim < input rank ({x.ndim}), but "
                         f"got {axis}")
    axis %= x.ndim
    if len(sizes) != ctx.attrs["num_split"]:
        raise _fail(ctx, f"size_splits has {len(sizes)} elements, expected "
                         f"{ctx.attrs['num_split']}")
    wildcards = [i for i, s in enumerate(sizes) if s == -1]
    if len(wildcards) > 1 or any(s < -1 for s in sizes):
        raise _fail(ctx, "size_splits must be non-negative, with at most one -1")
    total = sum(s for s in sizes if s != -1)
    dim = x.shape[axis]
    if total > dim or (not wildcards and total != dim):
        raise _fail(ctx, "Determined shape must either match input shape along split_dim "
                         "exactly if fully specified, or be less than the size of the input "
                         f"along split_dim if not fully specified.  Got: {total}")
    if wildcards:
        sizes[wildcards[0]] = dim - total
    offsets = [sum(sizes[:i + 1]) for i in range(len(sizes) - 1)]
    return _outputs(ctx.xp.split(x, offsets, axis=axis))


# -- slicing ---------------------------------------------------------------------------------

def slice_(ctx: KernelContext, x: Any, begin: Any, size: Any) -> Any:
    b, s = _ints(begin), _ints(size)
    if len(b) != x.ndim or len(s) != x.ndim:
        raise _fail(ctx, f"Expected begin and size arguments to be 1-D tensors of size "
                         f"{x.ndim}, but got shapes [{len(b)}] and [{len(s)}] instead.")
    index = []
    for i, (start, n, d) in enumerate(zip(b, s, x.shape)):
        if not 0 <= start <= d:
            raise _fail(ctx, f"Expected begin[{i}] in [0, {d}], but got {start}")
        n = d - start if n == -1 else n
        if not 0 <= n <= d - start:
            raise _fail(ctx, f"Expected size[{i}] in [0, {d - start}], but got {s[i]}")
        index.append(slice(start, start + n))
    return x[tuple(index)]


def strided_slice(ctx: KernelContext, x: Any, begin: Any, end: Any, strides: Any) -> Any:
    # the spec of the last call is kept: a slice inside a loop body repeats it every iteration
    key = (x.shape, *(tuple(_ints(v)) for v in (begin, end, strides)))
    cached = ctx.state.get("strided_slice")
    if cached is not None and cached[0] == key:
        index, final_shape = cached[1]
    else:
        a = ctx.attrs
        try:
            spec = strided_slice_spec(x.shape, *key[1:], a["begin_mask"], a["end_mask"],
                                      a["ellipsis_mask"], a["new_axis_mask"],
                                      a["shrink_axis_mask"])
        except SliceError as exc:
            raise _fail(ctx, str(exc)) from None
        index, final_shape = spec.index(), spec.final_shape
        ctx.state["strided_slice"] = (key, (index, final_shape))
    return ctx.xp.reshape(x[index], final_shape)


def reverse(ctx: KernelContext, x: Any, axis: Any) -> Any:
    axes = _ints(axis)
    seen: set[int] = set()
    for i, d in enumerate(axes):
        if not -x.ndim <= d < x.ndim:
            raise _fail(ctx, f"'axis'[{i}] = {d} is out of valid range [0, {x.ndim})")
        if d % x.ndim in seen:
            raise _fail(ctx, f"axis {d % x.ndim} specified more than once.")
        seen.add(d % x.ndim)
    return ctx.xp.flip(x, axis=tuple(sorted(seen)))


# -- gathering and scattering ----------------------------------------------------------------

def _check_indices(ctx: KernelContext, indices: Any, limit: int) -> None:
    bad = (indices < 0) | (indices >= limit)
    if bad.any():
        flat = int(ctx.xp.argmax(bad.ravel()))
        value = int(indices.ravel()[flat])
        # TF's SliceDebugString: no brackets for a scalar index
        where = f"[{_position(flat, indices.shape)}]" if indices.ndim else ""
        raise _fail(ctx, f"indices{where} = {value} is not in [0, {limit})")


def gather_v2(ctx: KernelContext, params: Any, indices: Any, axis: Any) -> Any:
    xp = ctx.xp
    if params.ndim == 0:
        raise _fail(ctx, "params must be at least 1 dimensional")
    a = _axis(ctx, _scalar(ctx, axis, "axis"), params.ndim)
    batch_dims = ctx.attrs["batch_dims"]
    batch_dims = batch_dims + indices.ndim if batch_dims < 0 else batch_dims
    if not 0 <= batch_dims <= min(a, indices.ndim):
        raise _fail(ctx, f"batch_dims ({ctx.attrs['batch_dims']}) must be in [0, "
                         f"min(axis, rank(indices))] = [0, {min(a, indices.ndim)}]")
    if params.shape[:batch_dims] != indices.shape[:batch_dims]:
        raise _fail(ctx, f"params.shape[:{batch_dims}] {_fmt(params.shape)} should equal "
                         f"indices.shape[:{batch_dims}] {_fmt(indices.shape)}")
    _check_indices(ctx, indices, params.shape[a])
    if batch_dims == 0:
        return xp.take(params, indices, axis=a)
    batch = params.shape[:batch_dims]
    out_shape = batch + params.shape[batch_dims:a] + indices.shape[batch_dims:] \
        + params.shape[a + 1:]
    n = math.prod(batch)
    flat_params = xp.reshape(params, (n,) + params.shape[batch_dims:])
    flat_indices = xp.reshape(indices, (n,) + indices.shape[batch_dims:])
    if n == 0:
        return xp.empty(out_shape, dtype=params.dtype)
    parts = [xp.take(flat_params[k], flat_indices[k], axis=a - batch_dims) for k in range(n)]
    return xp.reshape(xp.stack(parts), out_shape)


def _index_rows(ctx: KernelContext, indices: Any, limits: Sequence[int], what: str) -> Any:
    """`indices` as rows of ``k`` coordinates, each checked against `limits`."""
    k = indices.shape[-1]
    rows = ctx.xp.reshape(indices, (-1, k))
    if k:
        bad = ((rows < 0) | (rows >= ctx.xp.asarray(limits, dtype=rows.dtype))).any(axis=1)
        if bad.any():
            r = int(ctx.xp.argmax(bad))
            raise _fail(ctx, f"indices[{_position(r, indices.shape[:-1])}] = {_fmt(_ints(rows[r]))}"
                             f" does not index into {what} {_fmt(limits)}")
    return rows


def gather_nd(ctx: KernelContext, params: Any, indices: Any) -> Any:
    xp = ctx.xp
    if indices.ndim == 0:
        raise _fail(ctx, "indices must be at least a vector")
    k = indices.shape[-1]
    if k > params.ndim:
        raise _fail(ctx, f"indices.shape[-1] must be <= params.rank, but saw indices shape: "
                         f"{_fmt(indices.shape)} and params shape: {_fmt(params.shape)}")
    rows = _index_rows(ctx, indices, params.shape[:k], "param shape")
    out_shape = indices.shape[:-1] + params.shape[k:]
    if k == 0:
        return xp.reshape(xp.broadcast_to(params, (rows.shape[0],) + params.shape), out_shape)
    return xp.reshape(params[tuple(rows.T)], out_shape)


def scatter_nd(ctx: KernelContext, indices: Any, updates: Any, shape: Any) -> Any:
    xp = ctx.xp
    dims = tuple(_ints(shape))
    if any(d < 0 for d in dims):
        raise _fail(ctx, f"Dimensions must be non-negative, got shape {_fmt(dims)}")
    if indices.ndim == 0:
        raise _fail(ctx, "indices must be at least a vector")
    k = indices.shape[-1]
    expected = indices.shape[:-1] + dims[k:]
    if k > len(dims) or updates.shape != expected:
        raise _fail(ctx, f"The shape of updates {_fmt(updates.shape)} must be "
                         f"indices.shape[:-1] + shape[indices.shape[-1]:] = {_fmt(expected)} "
                         f"(indices shape {_fmt(indices.shape)}, shape {_fmt(dims)})")
    rows = _index_rows(ctx, indices, dims[:k], "shape")
    flat_updates = xp.reshape(updates, (rows.shape[0],) + dims[k:])
    out = xp.zeros(dims, dtype=updates.dtype)
    if k == 0:
        return (out + flat_updates.sum(axis=0)).astype(updates.dtype, copy=False)
    xp.add.at(out, tuple(rows.T), flat_updates)
    return out


def one_hot(ctx: KernelContext, indices: Any, depth: Any, on: Any, off: Any) -> Any:
    xp = ctx.xp
    d = _scalar(ctx, depth, "depth")
    if d < 0:
        raise _fail(ctx, f"depth must be non-negative, got: {d}")
    if on.ndim or off.ndim:
        raise _fail(ctx, f"on_value and off_value must be scalars, got shapes {_fmt(on.shape)} "
                         f"and {_fmt(off.shape)}")
    axis = ctx.attrs["axis"]
    if axis < -1 or axis > indices.ndim:
        raise _fail(ctx, f"Expected axis to be -1 or between [0, {indices.ndim + 1}).  But "
                         f"received: {axis}")
    hits = xp.expand_dims(indices, -1) == xp.arange(d)
    out = xp.where(hits, on, off)
    return out if axis == -1 else xp.moveaxis(out, -1, axis)


def _segment_rows(ctx: KernelContext, data: Any, ids: Any, num: Any) -> tuple[Any, Any, int]:
    n = _scalar(ctx, num, "num_segments")
    if data.shape[:ids.ndim] != ids.shape:
        raise _fail(ctx, f"data.shape = {_fmt(data.shape)} does not start with "
                         f"segment_ids.shape = {_fmt(ids.shape)}")
    flat_ids = ctx.xp.reshape(ids, (-1,))
    bad = flat_ids >= n
    if bad.any():
        i = int(ctx.xp.argmax(bad))
        raise _fail(ctx, f"segment_ids[{_position(i, ids.shape)}] = {int(flat_ids[i])} is out "
                         f"of range [0, {n})")
    rows = ctx.xp.reshape(data, (flat_ids.shape[0],) + data.shape[ids.ndim:])
    keep = flat_ids >= 0  # TF drops negative ids
    return flat_ids[keep], rows[keep], n


def unsorted_segment_sum(ctx: KernelContext, data: Any, ids: Any, num: Any) -> Any:
    ids, rows, n = _segment_rows(ctx, data, ids, num)
    out = ctx.xp.zeros((n,) + rows.shape[1:], dtype=data.dtype)
    ctx.xp.add.at(out, ids, rows)
    return out


def unsorted_segment_max(ctx: KernelContext, data: Any, ids: Any, num: Any) -> Any:
    ids, rows, n = _segment_rows(ctx, data, ids, num)
    # TF fills empty segments with the dtype's lowest finite value.
    out = ctx.xp.full((n,) + rows.shape[1:], ctx.output_dtypes[0].min, dtype=data.dtype)
    ctx.xp.maximum.at(out, ids, rows)
    return out


# -- selection -------------------------------------------------------------------------------

def where(ctx: KernelContext, x: Any) -> Any:
    return ctx.xp.argwhere(x).astype(ctx.xp.int64, copy=False)


def select(ctx: KernelContext, cond: Any, t: Any, e: Any) -> Any:
    if t.shape != e.shape:
        raise _fail(ctx, f"'then' and 'else' must have the same size.  but received: "
                         f"{_fmt(t.shape)} vs. {_fmt(e.shape)}")
    if cond.ndim == 0:
        return t if bool(cond) else e
    if cond.shape == t.shape:
        return ctx.xp.where(cond, t, e)
    if cond.ndim == 1 and t.ndim > 1 and cond.shape[0] == t.shape[0]:
        return ctx.xp.where(ctx.xp.reshape(cond, (-1,) + (1,) * (t.ndim - 1)), t, e)
    raise _fail(ctx, f"'cond' must be a scalar, a vector with the size of the first dimension of "
                     f"'then', or have its shape: {_fmt(cond.shape)} vs. {_fmt(t.shape)}")


def select_v2(ctx: KernelContext, cond: Any, t: Any, e: Any) -> Any:
    try:
        return ctx.xp.where(cond, t, e)
    except ValueError:
        raise _fail(ctx, f"Incompatible shapes: {_fmt(cond.shape)} vs. {_fmt(t.shape)} vs. "
                         f"{_fmt(e.shape)}") from None


# -- creation --------------------------------------------------------------------------------

def fill(ctx: KernelContext, dims: Any, value: Any) -> Any:
    shape = _ints(dims)
    if dims.ndim > 1:
        raise _fail(ctx, f"dims must be a vector, got shape {_fmt(dims.shape)}")
    if value.ndim != 0:
        raise _fail(ctx, f"value must be a scalar, got shape {_fmt(value.shape)}")
    if any(d < 0 for d in shape):
        raise _fail(ctx, f"Fill dimensions must be >= 0, got {_fmt(shape)}")
    return ctx.xp.full(shape, value, dtype=ctx.out_np)


def zeros_like(ctx: KernelContext, x: Any) -> Any:
    return ctx.xp.zeros_like(x)


def ones_like(ctx: KernelContext, x: Any) -> Any:
    return ctx.xp.ones_like(x)


def range_(ctx: KernelContext, start: Any, limit: Any, delta: Any) -> Any:
    xp, dtype = ctx.xp, ctx.out_np
    for what, v in (("start", start), ("limit", limit), ("delta", delta)):
        if v.ndim:
            raise _fail(ctx, f"{what} must be a scalar, not shape {_fmt(v.shape)}")
    try:
        n = range_size(start.item(), limit.item(), delta.item())
    except ValueError as exc:
        raise _fail(ctx, str(exc)) from None
    # TF computes start + i * delta in the output dtype.
    return xp.arange(n, dtype=dtype) * delta.astype(dtype) + start.astype(dtype)


def lin_space(ctx: KernelContext, start: Any, stop: Any, num: Any) -> Any:
    xp, dtype = ctx.xp, ctx.out_np
    for what, v in (("start", start), ("stop", stop)):
        if v.ndim:  # numpy would make one range per element
            raise _fail(ctx, f"{what} must be a scalar, not shape {_fmt(v.shape)}")
    n = _scalar(ctx, num, "num")
    if n <= 0:
        raise _fail(ctx, f"Requires num > 0: {n}")
    if n == 1:
        return xp.full((1,), start, dtype=dtype)
    step = (stop - start) / xp.asarray(n - 1, dtype=dtype)
    out = (start + step * xp.arange(n, dtype=dtype)).astype(dtype, copy=False)
    out[-1] = stop  # TF pins the last element to `stop`
    return out


def shape(ctx: KernelContext, x: Any) -> Any:
    return ctx.xp.asarray(x.shape, dtype=ctx.out_np)


def size(ctx: KernelContext, x: Any) -> Any:
    return ctx.xp.asarray(x.size, dtype=ctx.out_np)


def rank(ctx: KernelContext, x: Any) -> Any:
    return ctx.xp.asarray(x.ndim, dtype=ctx.out_np)


def invert_permutation(ctx: KernelContext, x: Any) -> Any:
    xp = ctx.xp
    if x.ndim != 1:
        raise _fail(ctx, f"invert_permutation expects a 1D vector, got shape {_fmt(x.shape)}")
    n = x.shape[0]
    _check_indices(ctx, x, n)
    counts = xp.bincount(x, minlength=n)
    if (counts > 1).any():
        raise _fail(ctx, f"{int(xp.argmax(counts > 1))} is duplicated in the input.")
    out = xp.empty_like(x)
    out[x] = xp.arange(n, dtype=x.dtype)
    return out


def unique(ctx: KernelContext, x: Any) -> Any:
    xp = ctx.xp
    if x.ndim != 1:
        raise _fail(ctx, f"unique expects a 1D vector, got shape {_fmt(x.shape)}")
    values, first, inverse = xp.unique(x, return_index=True, return_inverse=True)
    order = xp.argsort(first)  # TF lists unique values in order of first occurrence
    position = xp.empty_like(order)
    position[order] = xp.arange(order.shape[0], dtype=order.dtype)
    idx = position[xp.reshape(inverse, (-1,))]
    return values[order], idx.astype(ctx.output_dtypes[1].np_type, copy=False)


KERNELS = {
    "Reshape": reshape, "Transpose": transpose, "ExpandDims": expand_dims, "Squeeze": squeeze,
    "BroadcastTo": broadcast_to, "Tile": tile, "Pad": pad, "PadV2": pad_v2,
    "MirrorPad": mirror_pad, "ConcatV2": concat, "Pack": pack, "Unpack": unpack,
    "Split": split, "SplitV": split_v, "Slice": slice_, "StridedSlice": strided_slice,
    "ReverseV2": reverse, "GatherV2": gather_v2, "GatherNd": gather_nd,
    "ScatterNd": scatter_nd, "OneHot": one_hot, "UnsortedSegmentSum": unsorted_segment_sum,
    "UnsortedSegmentMax": unsorted_segment_max, "Where": where, "Select": select,
    "SelectV2": select_v2, "Fill": fill, "ZerosLike": zeros_like, "OnesLike": ones_like,
    "Range": range_, "LinSpace": lin_space, "Shape": shape, "Size": size, "Rank": rank,
    "InvertPermutation": invert_permutation, "Unique": unique,
}


def register(registry: Any, device_type: str) -> None:
    for op, fn in KERNELS.items():
        registry.add(op, device_type, fn)
