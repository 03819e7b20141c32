"""Kernels of the sparse-tensor ops (``SparseToDense``, ``SparseReorder``, ``SparseReshape``,
``SparseTensorDenseMatMul``, ``SparseReduceSum``, ``SparseTensorDenseAdd``, ``SparseAdd``,
``SparseAddGrad``, ``SparseFillEmptyRows``).

Contract: every kernel first checks its sparse operand's components as TF's kernels do (ranks,
indices rows equal to values, indices columns equal to the dense rank) and raises
`InvalidArgumentError` with TF's wording otherwise; indices outside the dense shape are an
`InvalidArgumentError` too, never a wrapped numpy index. ``SparseToDense`` with
``validate_indices`` also refuses unsorted and repeated indices, naming the first bad one as TF's
``SparseTensor::IndicesValid``. Dense shapes are read back to the host (TF keeps them in host
memory); the rest runs on ``ctx.xp``. Sums over repeated positions use ``add.at``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels.array import _fail, _fmt, _ints

UNSORTED_HINT = (" is out of order. Many sparse ops require sorted indices.\n    Use "
                 "`tf.sparse.reorder` to create a correctly ordered copy.\n\n")


# -- checks ----------------------------------------------------------------------------------

def _components(ctx: KernelContext, indices: Any, values: Any, shape: Any) -> list[int]:
    """Checks a sparse operand as TF's ``SparseTensor::Create``; returns its dense shape."""
    if indices.ndim != 2:
        raise _fail(ctx, f"Input indices should be a matrix but received shape "
                         f"{_fmt(indices.shape)}")
    if values.ndim != 1:
        raise _fail(ctx, f"Input values should be a vector but received shape "
                         f"{_fmt(values.shape)}")
    if shape.ndim != 1:
        raise _fail(ctx, f"Input shape should be a vector but received shape "
                         f"{_fmt(shape.shape)}")
    if indices.shape[0] != values.shape[0]:
        raise _fail(ctx, f"indices and values rows (indexing dimension) must match. "
                         f"(indices = {indices.shape[0]}, values = {values.shape[0]})")
    if indices.shape[1] != shape.shape[0]:
        raise _fail(ctx, f"Shape rank must be SparseTensor rank. (indices have "
                         f"{indices.shape[1]} columns, shape has {shape.shape[0]} elements)")
    return _ints(shape)


def _check_indices(ctx: KernelContext, indices: Any, dims: Sequence[int],
                   ordered: bool) -> None:
    """TF's ``IndicesValid``: each index inside `dims` and, if `ordered`, each strictly after
    the previous one in row-major order; the first bad index is reported."""
    xp = ctx.xp
    n, rank = indices.shape
    if n == 0 or rank == 0:
        return
    bad = ((indices < 0) | (indices >= xp.asarray(dims, dtype=indices.dtype))).any(axis=1)
    if ordered and n > 1:
        step = indices[1:] - indices[:-1]
        first = xp.argmax(step != 0, axis=1)
        lead = xp.take_along_axis(step, first[:, None], axis=1)[:, 0]
        bad = bad | xp.concatenate([xp.zeros(1, dtype=bool), lead <= 0])
    if not bool(bad.any()):
        return
    row = int(xp.argmax(bad))
    index = _ints(indices[row])
    text = f"indices[{row}] = [{','.join(str(v) for v in index)}]"
    if any(not 0 <= v < d for v, d in zip(index, dims)):
        raise _fail(ctx, f"{text} is out of bounds: need 0 <= index < "
                         f"[{','.join(str(d) for d in dims)}]")
    if index < _ints(indices[row - 1]):
        raise _fail(ctx, text + UNSORTED_HINT)
    raise _fail(ctx, f"{text} is repeated")


def _flat(ctx: KernelContext, indices: Any, dims: Sequence[int]) -> Any:
    """Row-major positions of in-bounds `indices` in a dense array of `dims`."""
    xp = ctx.xp
    strides = [math.prod(dims[i + 1:]) for i in range(len(dims))]
    if not strides:
        return xp.zeros(indices.shape[0], dtype=xp.int64)
    return (indices.astype(xp.int64, copy=False) * xp.asarray(strides, dtype=xp.int64)).sum(axis=1)


def _unflat(ctx: KernelContext, flat: Any, dims: Sequence[int]) -> Any:
    """The inverse of `_flat`: an int64 ``[N, len(dims)]`` matrix of indices."""
    xp = ctx.xp
    columns = []
    for i in range(len(dims)):
        stride = math.prod(dims[i + 1:])
        columns.append(flat // stride if stride else xp.zeros_like(flat))
        flat = flat % stride if stride else flat
    if not columns:
        return xp.zeros((flat.shape[0], 0), dtype=xp.int64)
    return xp.stack(columns, axis=1).astype(xp.int64, copy=False)


def _order(ctx: KernelContext, indices: Any) -> Any:
    """The permutation that sorts `indices` rows in row-major order (stable)."""
    xp = ctx.xp
    if indices.shape[0] < 2 or indices.shape[1] == 0:
        return xp.arange(indices.shape[0])
    return xp.lexsort(indices.T[::-1])


# -- kernels ---------------------------------------------------------------------------------

def sparse_to_dense(ctx: KernelContext, indices: Any, output_shape: Any, values: Any,
                    default: Any) -> Any:
    if indices.ndim > 2:
        raise _fail(ctx, f"sparse_indices should be a scalar, vector, or matrix, got shape "
                         f"{_fmt(indices.shape)}")
    n = indices.shape[0] if indices.ndim > 0 else 1
    rank = indices.shape[1] if indices.ndim > 1 else 1
    if output_shape.ndim > 1:
        raise _fail(ctx, f"output_shape should be a vector, got shape "
                         f"{_fmt(output_shape.shape)}")
    if output_shape.size != rank:
        raise _fail(ctx, f"output_shape has incorrect number of elements: "
                         f"{output_shape.size} should be: {rank}")
    if not (values.ndim == 0 or values.ndim == 1 and values.shape[0] == n):
        raise _fail(ctx, f"sparse_values has incorrect shape {_fmt(values.shape)}, should be [] "
                         f"or [{n}]")
    if default.ndim != 0:
        raise _fail(ctx, "default_value should be a scalar.")
    dims = _ints(output_shape)
    for i, d in enumerate(dims):
        if d < 0:
            raise _fail(ctx, f"Dimension {d} must be >= 0 (output_shape[{i}])")
    matrix = ctx.xp.reshape(indices, (n, rank)).astype(ctx.xp.int64, copy=False)
    if ctx.attrs["validate_indices"]:
        _check_indices(ctx, matrix, dims, ordered=True)
    elif n and bool(((matrix < 0) | (matrix >= ctx.xp.asarray(dims))).any()):
        raise _fail(ctx, f"Indices are not valid (out of bounds).  Shape: {_fmt(dims)}")
    out = ctx.xp.empty(dims, dtype=ctx.out_np)
    out[...] = default
    if n:
        out.reshape(-1)[_flat(ctx, matrix, dims)] = values
    return out


def sparse_reorder(ctx: KernelContext, indices: Any, values: Any, shape: Any) -> Any:
    _components(ctx, indices, values, shape)
    order = _order(ctx, indices)
    return indices[order], values[order]


def sparse_reshape(ctx: KernelContext, indices: Any, shape: Any, new_shape: Any) -> Any:
    if indices.ndim != 2:
        raise _fail(ctx, f"Input indices should be a matrix but received shape "
                         f"{_fmt(indices.shape)}")
    if shape.ndim != 1:
        raise _fail(ctx, f"Input shape should be a vector but received shape "
                         f"{_fmt(shape.shape)}")
    if new_shape.ndim != 1:
        raise _fail(ctx, f"Target shape should be a vector but received shape "
                         f"{_fmt(new_shape.shape)}")
    dims = _ints(shape)
    if indices.shape[1] != len(dims):
        raise _fail(ctx, f"Input shape has {len(dims)} elements but the indices have "
                         f"{indices.shape[1]} columns")
    dense_size = math.prod(dims)
    target = _ints(new_shape)
    unknown = [i for i, d in enumerate(target) if d == -1]
    if len(unknown) > 1:
        raise _fail(ctx, f"only one output dimension may be -1, not both {unknown[0]} and "
                         f"{unknown[1]}")
    for i, d in enumerate(target):
        if d < -1:
            raise _fail(ctx, f"size {i} must be non-negative, not {d}")
    product = math.prod(d for d in target if d != -1)
    if unknown:
        if product == 0:
            raise _fail(ctx, "reshape cannot infer the missing input size for an empty tensor "
                             "unless all specified input sizes are non-zero")
        if dense_size % product:
            raise _fail(ctx, f"Input to reshape is a SparseTensor with {dense_size} dense "
                             f"values, but the requested shape requires a multiple of "
                             f"{product}. input_shape={_fmt(dims)} output_shape="
                             f"{_fmt([1 if d == -1 else d for d in target])}")
        target[unknown[0]] = dense_size // product
    if math.prod(target) != dense_size:
        raise _fail(ctx, f"Input to reshape is a tensor with {dense_size} dense values, but the "
                         f"requested shape has {math.prod(target)}. input_shape={_fmt(dims)} "
                         f"output_shape={_fmt(target)}")
    out_shape = ctx.xp.asarray(target, dtype=ctx.xp.int64)
    if target == dims:
        return indices, out_shape
    return _unflat(ctx, _flat(ctx, indices, dims), target), out_shape


def sparse_tensor_dense_matmul(ctx: KernelContext, indices: Any, values: Any, a_shape: Any,
                               b: Any) -> Any:
    if b.ndim != 2:
        raise _fail(ctx, "Tensor 'b' is not a matrix")
    if a_shape.ndim != 1:
        raise _fail(ctx, "Tensor 'a_shape' is not a vector")
    if a_shape.size != 2:
        raise _fail(ctx, "Tensor 'a_shape' must have 2 elements")
    if values.ndim != 1:
        raise _fail(ctx, "Tensor 'a_values' is not a vector")
    if indices.ndim != 2:
        raise _fail(ctx, "Tensor 'a_indices' is not a matrix")
    if indices.shape[0] != values.shape[0]:
        raise _fail(ctx, "Number of rows of a_indices does not match number of entries in "
                         "a_values")
    if indices.shape[1] != 2:
        raise _fail(ctx, "Number of columns of a_indices does not match number of entries in "
                         "a_shape")
    adjoint_a, adjoint_b = ctx.attrs["adjoint_a"], ctx.attrs["adjoint_b"]
    dims = _ints(a_shape)
    outer, inner = (dims[1], dims[0]) if adjoint_a else (dims[0], dims[1])
    right = b.T if adjoint_b else b
    if inner != right.shape[0]:
        raise _fail(ctx, f"Cannot multiply A and B because inner dimension does not match: "
                         f"{inner} vs. {right.shape[0]}.  Did you forget a transpose?  "
                         f"Dimensions of A: [{dims[0]}, {dims[1]}).  Dimensions of B: "
                         f"{_fmt(b.shape)}")
    m_col, k_col = (1, 0) if adjoint_a else (0, 1)
    m, k = indices[:, m_col], indices[:, k_col]
    bad_k = (k < 0) | (k >= inner)
    bad_m = (m < 0) | (m >= outer)
    bad = bad_k | bad_m
    if indices.shape[0] and bool(bad.any()):
        i = int(ctx.xp.argmax(bad))
        if bool(bad_k[i]):
            raise _fail(ctx, f"k ({int(k[i])}) from index[{i},{k_col}] out of bounds "
                             f"(>={inner})")
        raise _fail(ctx, f"m ({int(m[i])}) from index[{i},{m_col}] out of bounds (>={outer})")
    out = ctx.xp.zeros((outer, right.shape[1]), dtype=ctx.out_np)
    if indices.shape[0]:
        ctx.xp.add.at(out, m, values[:, None] * right[k])
    return out


def _reduction(ctx: KernelContext, indices: Any, values: Any, shape: Any,
               axes: Any) -> tuple[list[int], set[int]]:
    """The dense shape and the normalized reduced axes, checked as TF's ``SparseReduceOp``."""
    dims = _components(ctx, indices, values, shape)
    if axes.ndim > 1:
        raise _fail(ctx, f"Expected reduction_axes to be a scalar or a vector; got shape: "
                         f"{_fmt(axes.shape)}")
    rank = len(dims)
    reduced = set()
    for axis in _ints(axes):
        if not -rank <= axis < rank:
            raise _fail(ctx, f"Invalid reduction dimension {axis}, for input with {rank} "
                             "dimensions.")
        reduced.add(axis % rank)
    _check_indices(ctx, indices, dims, ordered=False)
    return dims, reduced


def _reduced_dims(ctx: KernelContext, dims: Sequence[int], reduced: set[int]) -> list[int]:
    """The shape of a reduction's result: reduced axes dropped, or size 1 with ``keep_dims``."""
    if ctx.attrs["keep_dims"]:
        return [1 if i in reduced else d for i, d in enumerate(dims)]
    return [d for i, d in enumerate(dims) if i not in reduced]


def sparse_reduce_sum(ctx: KernelContext, indices: Any, values: Any, shape: Any,
                      axes: Any) -> Any:
    dims, reduced = _reduction(ctx, indices, values, shape, axes)
    kept = [i for i in range(len(dims)) if i not in reduced]
    kept_dims = [dims[i] for i in kept]
    out = ctx.xp.zeros(math.prod(kept_dims), dtype=ctx.out_np)
    if indices.shape[0]:
        ctx.xp.add.at(out, _flat(ctx, indices[:, kept], kept_dims), values)
    return out.reshape(_reduced_dims(ctx, dims, reduced))


def sparse_tensor_dense_add(ctx: KernelContext, indices: Any, values: Any, shape: Any,
                            b: Any) -> Any:
    if indices.ndim != 2:
        raise _fail(ctx, f"Input a_indices should be a matrix but received shape: "
                         f"{_fmt(indices.shape)}")
    if values.ndim != 1 or shape.ndim != 1:
        raise _fail(ctx, f"Inputs a_values and a_shape should be vectors but received shapes: "
                         f"{_fmt(values.shape)} and {_fmt(shape.shape)}")
    dims = _ints(shape)
    if len(dims) != b.ndim:
        raise _fail(ctx, f"Two operands have different ranks; received: {len(dims)} and "
                         f"{b.ndim}")
    for i, (d, n) in enumerate(zip(dims, b.shape)):
        if d != n:
            raise _fail(ctx, f"Dimension {i} does not equal (no broadcasting is supported): "
                             f"sparse side {d} vs dense side {n}")
    if indices.shape[0] != values.shape[0]:
        raise _fail(ctx, f"Dimensions {indices.shape[0]} and {values.shape[0]} are not "
                         "compatible")
    if indices.shape[1] != len(dims):
        raise _fail(ctx, f"Dimensions {indices.shape[1]} and {len(dims)} are not compatible")
    _check_indices(ctx, indices, dims, ordered=False)
    out = b.astype(ctx.out_np, copy=True)
    if indices.shape[0]:
        ctx.xp.add.at(out.reshape(-1), _flat(ctx, indices, dims), values)
    return out


def _operand_dims(ctx: KernelContext, a_indices: Any, a_values: Any, a_shape: Any,
                  b_indices: Any, b_values: Any, b_shape: Any) -> list[int]:
    """The dense shape of two sparse operands of a binary op, checked to be the same."""
    dims = _components(ctx, a_indices, a_values, a_shape)
    b_dims = _components(ctx, b_indices, b_values, b_shape)
    if len(dims) != len(b_dims):
        raise _fail(ctx, f"Operands do not have the same ranks; got shapes: {_fmt(dims)} and "
                         f"{_fmt(b_dims)}")
    for i, (a, b) in enumerate(zip(dims, b_dims)):
        if a != b:
            raise _fail(ctx, f"Operands' shapes do not match: got {a} and {b} for dimension {i}")
    return dims


def sparse_add(ctx: KernelContext, a_indices: Any, a_values: Any, a_shape: Any, b_indices: Any,
               b_values: Any, b_shape: Any, thresh: Any) -> Any:
    """The entries of both operands, those at one position summed, sorted row-major; a sum
    whose magnitude is below `thresh` is dropped."""
    xp = ctx.xp
    dims = _operand_dims(ctx, a_indices, a_values, a_shape, b_indices, b_values, b_shape)
    if thresh.ndim != 0:
        raise _fail(ctx, f"The magnitude threshold must be a scalar: got shape "
                         f"{_fmt(thresh.shape)}")
    indices = xp.concatenate([a_indices, b_indices])
    _check_indices(ctx, indices, dims, ordered=False)
    flat = _flat(ctx, indices, dims)
    positions, slot = xp.unique(flat, return_inverse=True)
    sums = xp.zeros(positions.shape[0], dtype=ctx.output_dtypes[1].np_type)
    xp.add.at(sums, slot.reshape(-1), xp.concatenate([a_values, b_values]))
    keep = xp.abs(sums) >= thresh
    return (_unflat(ctx, positions[keep], dims), sums[keep],
            xp.asarray(dims, dtype=xp.int64))


def sparse_add_grad(ctx: KernelContext, grad: Any, a_indices: Any, b_indices: Any,
                    sum_indices: Any) -> Any:
    """Each operand entry's share of the sum's gradient: the gradient at its position, or 0
    where the sum dropped it."""
    xp = ctx.xp
    everything = xp.concatenate([a_indices, b_indices, sum_indices])
    if everything.shape[0] == 0:
        return xp.zeros(0, dtype=grad.dtype), xp.zeros(0, dtype=grad.dtype)
    bounds = _ints(everything.max(axis=0) + 1)  # a shape that holds every index
    sums = _flat(ctx, sum_indices, bounds)

    def share(indices: Any) -> Any:
        flat = _flat(ctx, indices, bounds)
        at = xp.minimum(xp.searchsorted(sums, flat), max(sums.shape[0] - 1, 0))
        if sums.shape[0] == 0:
            return xp.zeros(flat.shape[0], dtype=grad.dtype)
        return xp.where(sums[at] == flat, grad[at], xp.zeros((), dtype=grad.dtype))

    return share(a_indices), share(b_indices)


def sparse_fill_empty_rows(ctx: KernelContext, indices: Any, values: Any, shape: Any,
                           default: Any) -> Any:
    xp = ctx.xp
    dims = _components(ctx, indices, values, shape)
    if default.ndim != 0:
        raise _fail(ctx, f"default_value must be a scalar, saw: {_fmt(default.shape)}")
    if not dims:
        raise _fail(ctx, "dense_shape must have at least one dimension")
    n, rows = indices.shape[0], dims[0]
    if n and rows == 0:
        raise _fail(ctx, f"Received SparseTensor with dense_shape[0] = 0 but indices.shape[0] "
                         f"= {n}")
    row_of = indices[:, 0]
    bad = (row_of < 0) | (row_of >= rows)
    if n and bool(bad.any()):
        i = int(xp.argmax(bad))
        raise _fail(ctx, f"indices({i}, 0) is invalid: {int(row_of[i])} >= {rows}")
    empty = xp.bincount(row_of, minlength=rows)[:rows] == 0 if n else xp.ones(rows, dtype=bool)
    empty_rows = xp.nonzero(empty)[0].astype(xp.int64)
    filler = xp.zeros((empty_rows.shape[0], len(dims)), dtype=xp.int64)
    filler[:, 0] = empty_rows
    all_indices = xp.concatenate([indices, filler])
    fill_values = xp.empty(empty_rows.shape[0], dtype=values.dtype)
    fill_values[...] = default
    all_values = xp.concatenate([values, fill_values])
    # entries keep their order within a row, as TF's kernel places them by row offsets
    order = xp.argsort(all_indices[:, 0], kind="stable")
    position = xp.empty_like(order)
    position[order] = xp.arange(order.shape[0])
    return (all_indices[order], all_values[order], empty,
            position[:n].astype(xp.int64, copy=False))


def _sparse_dense_cwise(op: str) -> Any:
    """TF's ``SparseDenseBinaryOpShared``: `dense` broadcast to the sparse shape (never the
    other way), read at each sparse index and combined with that value."""

    def kernel(ctx: KernelContext, indices: Any, values: Any, shape: Any, dense: Any) -> Any:
        xp = ctx.xp
        if indices.ndim != 2 or values.ndim != 1 or shape.ndim != 1:
            raise _fail(ctx, f"Inputs sp_indices, sp_values and sp_shape should be a matrix "
                             f"and two vectors but received shapes: {_fmt(indices.shape)}, "
                             f"{_fmt(values.shape)} and {_fmt(shape.shape)}")
        dims = _ints(shape)
        if dense.ndim > len(dims) or any(
                d != 1 and d != s for d, s in zip(reversed(dense.shape), reversed(dims))):
            raise _fail(ctx, f"SparseDenseBinaryOpShared broadcasts dense to sparse only; got "
                             f"incompatible shapes: [{','.join(map(str, dims))}] vs. "
                             f"[{','.join(map(str, dense.shape))}]")
        full = xp.broadcast_to(dense, dims)
        picked = full[tuple(xp.asarray(indices, dtype=xp.int64).T)] if len(dims) else full
        if op == "Mul":
            return values * picked
        if op == "Div":
            if values.dtype.kind in "iu":
                if bool((picked == 0).any()):
                    raise _fail(ctx, "Integer division by zero")
                # C division, as Eigen's: the quotient truncated toward zero
                quotient = xp.abs(values) // xp.abs(picked)
                return (xp.sign(values) * xp.sign(picked) * quotient).astype(values.dtype)
            return values / picked
        return values + picked

    return kernel


KERNELS = {
    "SparseToDense": sparse_to_dense, "SparseReorder": sparse_reorder,
    "SparseReshape": sparse_reshape, "SparseReduceSum": sparse_reduce_sum,
    "SparseTensorDenseAdd": sparse_tensor_dense_add,
    **{f"SparseDenseCwise{op}": _sparse_dense_cwise(op) for op in ("Add", "Mul", "Div")},
    "SparseFillEmptyRows": sparse_fill_empty_rows, "SparseAdd": sparse_add,
    "SparseAddGrad": sparse_add_grad,
}


def register(registry: Any, device_type: str) -> None:
    for op, fn in KERNELS.items():
        registry.add(op, device_type, fn)
    registry.add("SparseTensorDenseMatMul", device_type, sparse_tensor_dense_matmul,
                 expensive=True)
