"""Kernels of the sparse-tensor manipulations of ``standard_ops/sparse_extra.py``:
``SparseConcat``, ``SparseSplit``, ``SparseSlice``, ``SparseSliceGrad``, ``SparseSoftmax``,
``SparseSparseMaximum``/``Minimum``, ``SparseReduceMax``, ``SparseReduceMaxSparse`` and
``SparseReduceSumSparse``.

Contract: each kernel checks its sparse operands as TF's ``SparseTensor::Create`` and its other
inputs as TF's kernels do, raising `InvalidArgumentError` with TF's wording. Outputs follow TF's
order: concat, max/min and the ``*Sparse`` reductions give row-major sorted indices; split and
slice keep the input order. A softmax or reduction group is the set of entries sharing the
grouping coordinates, wherever they sit in the input. Dense shapes are read to the host (TF
keeps them in host memory); everything else runs on ``ctx.xp``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels.array import _fail, _fmt, _ints
from tensorweave.plugins.kernels.sparse_ops import (
    _check_indices,
    _components,
    _flat,
    _operand_dims,
    _order,
    _reduced_dims,
    _reduction,
    _unflat,
)


def _groups(ctx: KernelContext, indices: Any, dims: Sequence[int], columns: Sequence[int]) -> Any:
    """(sorted distinct group keys, each entry's group) of the entries grouped by `columns`."""
    xp = ctx.xp
    keys = _flat(ctx, indices[:, list(columns)], [dims[c] for c in columns])
    unique, slot = xp.unique(keys, return_inverse=True)
    return unique, slot.reshape(-1)


def _lowest(dtype: Any) -> Any:
    """The identity of a max: -inf, or the integer type's lowest value (host metadata)."""
    return -np.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min


# -- concat, split, slice --------------------------------------------------------------------

def sparse_concat(ctx: KernelContext, *inputs: Any) -> Any:
    xp = ctx.xp
    n = ctx.attrs["N"]
    indices, values, shapes = inputs[:n], inputs[n:2 * n], inputs[2 * n:]
    for i in range(n):
        if indices[i].ndim != 2:
            raise _fail(ctx, f"Input indices should be a list of matrices but received shape "
                             f"{_fmt(indices[i].shape)} at position {i}")
        if values[i].ndim != 1:
            raise _fail(ctx, f"Input values should be a list of vectors but received shape "
                             f"{_fmt(values[i].shape)} at position {i}")
        if shapes[i].ndim != 1:
            raise _fail(ctx, f"Input shapes should be a list of 1-D vectors but received shape "
                             f"{_fmt(shapes[i].shape)} at position {i}")
    dims = [_ints(s) for s in shapes]
    rank = len(dims[0])
    axis = ctx.attrs["concat_dim"]
    if not -rank <= axis < rank:
        raise _fail(ctx, f"Concat dimension must be in range [{-rank}, {rank}), got {axis}")
    axis %= rank
    for i in range(1, n):
        if len(dims[i]) != rank:
            raise _fail(ctx, f"Ranks of all input tensors should match: shape[0] = "
                             f"{_fmt(dims[0])} vs. shape[{i}] = {_fmt(dims[i])}")
        for j in range(rank):
            if j != axis and dims[i][j] != dims[0][j]:
                raise _fail(ctx, f"Input shapes must match: expected {dims[0][j]} for "
                                 f"dimension {j} but got {dims[i][j]} at position {i}")
    for i in range(n):
        _components(ctx, indices[i], values[i], shapes[i])
    parts, offset = [], 0
    for i in range(n):
        shifted = indices[i].astype(xp.int64, copy=True)
        shifted[:, axis] += offset
        parts.append(shifted)
        offset += dims[i][axis]
    out_indices = xp.concatenate(parts)
    out_values = xp.concatenate(values)
    out_dims = list(dims[0])
    out_dims[axis] = offset
    if axis:  # concatenating along dim 0 keeps row-major order; otherwise restore it
        order = _order(ctx, out_indices)
        out_indices, out_values = out_indices[order], out_values[order]
    return out_indices, out_values, xp.asarray(out_dims, dtype=xp.int64)


def sparse_split(ctx: KernelContext, split_dim: Any, indices: Any, values: Any,
                 shape: Any) -> Any:
    xp = ctx.xp
    dims = _components(ctx, indices, values, shape)
    rank = len(dims)
    axis = _ints(split_dim)[0] if split_dim.size == 1 else None
    if axis is None or not -rank <= axis < rank:
        raise _fail(ctx, f"Input split_dim should be between 0 and rank ({rank}), got {axis}")
    axis %= rank
    k = ctx.attrs["num_split"]
    if not 1 <= k <= dims[axis]:
        raise _fail(ctx, f"Input num_split should be between 1 and the splitting dimension "
                         f"size ({dims[axis]}), got {k}")
    # TF's piece sizes: the first (size % k) pieces get one extra element
    base, extra = divmod(dims[axis], k)
    out_indices, out_values, out_shapes = [], [], []
    start = 0
    for piece in range(k):
        size = base + (piece < extra)
        column = indices[:, axis]
        keep = (column >= start) & (column < start + size)
        chosen = indices[keep].astype(xp.int64, copy=True)
        chosen[:, axis] -= start
        piece_dims = list(dims)
        piece_dims[axis] = size
        out_indices.append(chosen)
        out_values.append(values[keep])
        out_shapes.append(xp.asarray(piece_dims, dtype=xp.int64))
        start += size
    return tuple(out_indices + out_values + out_shapes)


def sparse_slice(ctx: KernelContext, indices: Any, values: Any, shape: Any, start: Any,
                 size: Any) -> Any:
    xp = ctx.xp
    dims = _components(ctx, indices, values, shape)
    for what, vector in (("start", start), ("size", size)):
        if vector.ndim != 1:
            raise _fail(ctx, f"Input {what} should be a vector but received shape "
                             f"{_fmt(vector.shape)}")
        if vector.shape[0] != len(dims):
            raise _fail(ctx, f"Expected {what} to be a vector of length {len(dims)} but got "
                             f"length {vector.shape[0]}")
    begin, extent = _ints(start), _ints(size)
    out_dims = [max(0, min(b + s, d) - b) for b, s, d in zip(begin, extent, dims)]
    lower = xp.asarray(begin, dtype=xp.int64)
    upper = lower + xp.asarray(extent, dtype=xp.int64)
    keep = ((indices >= lower) & (indices < upper)).all(axis=1)
    return (indices[keep] - lower, values[keep], xp.asarray(out_dims, dtype=xp.int64))


def sparse_slice_grad(ctx: KernelContext, grad: Any, input_indices: Any, start: Any,
                      output_indices: Any) -> Any:
    """The sliced entries' gradients at their input positions, 0 for the others: outputs are
    input entries shifted by `start`, so each input row is looked up among them."""
    xp = ctx.xp
    if input_indices.ndim != 2 or output_indices.ndim != 2:
        raise _fail(ctx, "input_indices and output_indices should be matrices")
    if grad.ndim != 1 or grad.shape[0] != output_indices.shape[0]:
        raise _fail(ctx, f"backprop_val_grad has {grad.size} values but output_indices has "
                         f"{output_indices.shape[0]} rows")
    if start.ndim != 1 or start.shape[0] != input_indices.shape[1]:
        raise _fail(ctx, f"Expected input_start to be a vector of length "
                         f"{input_indices.shape[1]} but got shape {_fmt(start.shape)}")
    out = xp.zeros(input_indices.shape[0], dtype=grad.dtype)
    if output_indices.shape[0] == 0 or input_indices.shape[0] == 0:
        return out
    shifted = input_indices - start.astype(xp.int64)
    inside = (shifted >= 0).all(axis=1)
    bounds = _ints(xp.maximum(shifted.max(axis=0), output_indices.max(axis=0)) + 1)
    wanted = _flat(ctx, xp.where(inside[:, None], shifted, 0), bounds)
    have = _flat(ctx, output_indices, bounds)
    order = xp.argsort(have)
    at = xp.minimum(xp.searchsorted(have[order], wanted), have.shape[0] - 1)
    found = inside & (have[order][at] == wanted)
    out[found] = grad[order[at[found]]]
    return out


# -- elementwise over entries ----------------------------------------------------------------

def sparse_softmax(ctx: KernelContext, indices: Any, values: Any, shape: Any) -> Any:
    xp = ctx.xp
    dims = _components(ctx, indices, values, shape)
    if len(dims) < 2:
        raise _fail(ctx, f"Input should have rank >= 2, but received shape: {_fmt(dims)}")
    if values.shape[0] == 0:
        return values.copy()
    _check_indices(ctx, indices, dims, ordered=False)
    unique, slot = _groups(ctx, indices, dims, range(len(dims) - 1))
    peak = xp.full(unique.shape[0], -xp.inf, dtype=values.dtype)
    xp.maximum.at(peak, slot, values)
    exps = xp.exp(values - peak[slot])
    sums = xp.zeros(unique.shape[0], dtype=values.dtype)
    xp.add.at(sums, slot, exps)
    return (exps / sums[slot]).astype(ctx.out_np, copy=False)


def _sparse_binary(pick: str) -> Any:
    def kernel(ctx: KernelContext, a_indices: Any, a_values: Any, a_shape: Any, b_indices: Any,
               b_values: Any, b_shape: Any) -> Any:
        """The elementwise `pick` of two sparse operands over the union of their entries, a
        missing entry counting as 0."""
        xp = ctx.xp
        dims = _operand_dims(ctx, a_indices, a_values, a_shape, b_indices, b_values, b_shape)
        _check_indices(ctx, a_indices, dims, ordered=False)
        _check_indices(ctx, b_indices, dims, ordered=False)
        a_flat, b_flat = _flat(ctx, a_indices, dims), _flat(ctx, b_indices, dims)
        positions = xp.unique(xp.concatenate([a_flat, b_flat]))
        a_dense = xp.zeros(positions.shape[0], dtype=a_values.dtype)
        b_dense = xp.zeros(positions.shape[0], dtype=b_values.dtype)
        a_dense[xp.searchsorted(positions, a_flat)] = a_values
        b_dense[xp.searchsorted(positions, b_flat)] = b_values
        return _unflat(ctx, positions, dims), getattr(xp, pick)(a_dense, b_dense)

    return kernel


# -- reductions ------------------------------------------------------------------------------

def sparse_reduce_max(ctx: KernelContext, indices: Any, values: Any, shape: Any,
                      axes: Any) -> Any:
    """The max of the values present in each group; a group with none is 0, as TF."""
    xp = ctx.xp
    dims, reduced = _reduction(ctx, indices, values, shape, axes)
    kept = [i for i in range(len(dims)) if i not in reduced]
    kept_dims = [dims[i] for i in kept]
    size = math.prod(kept_dims)
    out = xp.full(size, _lowest(values.dtype), dtype=values.dtype)
    if indices.shape[0]:
        cells = _flat(ctx, indices[:, kept], kept_dims)
        xp.maximum.at(out, cells, values)
        filled = xp.bincount(cells, minlength=size)[:size] > 0
        out = xp.where(filled, out, xp.zeros((), dtype=values.dtype))
    else:
        out = xp.zeros(size, dtype=values.dtype)
    return out.reshape(_reduced_dims(ctx, dims, reduced))


def _reduce_sparse(pick: str) -> Any:
    def kernel(ctx: KernelContext, indices: Any, values: Any, shape: Any, axes: Any) -> Any:
        """One entry per group that holds values, sorted row-major; reduced axes are dropped,
        or kept as size-1 dims at index 0 with ``keep_dims``."""
        xp = ctx.xp
        dims, reduced = _reduction(ctx, indices, values, shape, axes)
        kept = [i for i in range(len(dims)) if i not in reduced]
        kept_dims = [dims[i] for i in kept]
        unique, slot = _groups(ctx, indices, dims, kept)
        if pick == "sum":
            out = xp.zeros(unique.shape[0], dtype=values.dtype)
            xp.add.at(out, slot, values)
        else:
            out = xp.full(unique.shape[0], _lowest(values.dtype), dtype=values.dtype)
            xp.maximum.at(out, slot, values)
        out_indices = _unflat(ctx, unique, kept_dims)
        out_dims = xp.asarray(_reduced_dims(ctx, dims, reduced), dtype=xp.int64)
        if ctx.attrs["keep_dims"]:
            full = xp.zeros((unique.shape[0], len(dims)), dtype=xp.int64)
            full[:, kept] = out_indices
            return full, out, out_dims
        return out_indices, out, out_dims

    return kernel


KERNELS = {
    "SparseConcat": sparse_concat, "SparseSplit": sparse_split, "SparseSlice": sparse_slice,
    "SparseSliceGrad": sparse_slice_grad, "SparseSoftmax": sparse_softmax,
    "SparseSparseMaximum": _sparse_binary("maximum"),
    "SparseSparseMinimum": _sparse_binary("minimum"),
    "SparseReduceMax": sparse_reduce_max, "SparseReduceMaxSparse": _reduce_sparse("max"),
    "SparseReduceSumSparse": _reduce_sparse("sum"),
}


def register(registry: Any, device_type: str) -> None:
    for op, fn in KERNELS.items():
        registry.add(op, device_type, fn)
