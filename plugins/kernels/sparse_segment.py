"""Kernels of the ``SparseSegmentSum``/``Mean``/``SqrtN`` reductions (and their
``WithNumSegments`` forms), of their gradients ``SparseSegmentMeanGrad``/``SqrtNGrad``, and of
``SparseMatMul``.

Contract: a sparse segment reduction reduces the rows ``data[indices[i]]`` by the sorted
``segment_ids[i]``; it gives ``segment_ids[-1] + 1`` rows (``num_segments`` for the
``WithNumSegments`` forms), a segment no id names being 0. A mean divides by the segment's row
count, a sqrt-n by its square root. Bad ids and indices raise `InvalidArgumentError` with the
wording of TF's ``SparseSegmentReductionOpBase``. The gradients scatter each segment's gradient,
scaled by ``1 / count`` (or ``1 / sqrt(count)``), back to the rows ``indices`` names.
``SparseMatMul`` is ``MatMul``: its sparsity hints only steer TF's choice of algorithm.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels.array import _fail, _ints


def _check(ctx: KernelContext, indices: Any, ids: Any) -> None:
    if indices.ndim != 1:
        raise _fail(ctx, "indices should be a vector.")
    if ids.ndim != 1:
        raise _fail(ctx, "segment_ids should be a vector.")
    if indices.shape[0] != ids.shape[0]:
        raise _fail(ctx, "segment_ids and indices should have same size.")


def _output_rows(ctx: KernelContext, data: Any, indices: Any, ids: Any,
                 num_segments: Any) -> int:
    """The number of output rows, after TF's checks of `ids` and `indices`."""
    xp = ctx.xp
    _check(ctx, indices, ids)
    if data.ndim == 0:
        raise _fail(ctx, "input must be at least rank 1")
    last_plus_one = int(ids[-1]) + 1 if ids.shape[0] else 0
    if num_segments is None:
        rows = last_plus_one
    else:
        rows = _ints(num_segments)[0]
        if rows < last_plus_one:
            raise _fail(ctx, "segment ids must be < num_segments")
    if rows < 0 or ids.shape[0] and rows == 0:
        raise _fail(ctx, "segment ids must be >= 0")
    if ids.shape[0] == 0:
        return rows
    bad = xp.concatenate([ids[:1] < 0, ids[1:] < ids[:-1]])
    if bool(bad.any()):
        i = int(xp.argmax(bad))
        if int(ids[i]) < 0:
            raise _fail(ctx, f"Segment id {int(ids[i])} out of range [0, {rows}), possibly "
                             "because 'segment_ids' input is not sorted.")
        raise _fail(ctx, "segment ids are not increasing")
    outside = (indices < 0) | (indices >= data.shape[0])
    if bool(outside.any()):
        i = int(xp.argmax(outside))
        raise _fail(ctx, f"Bad: indices[{i}] == {int(indices[i])} out of range [0, "
                         f"{data.shape[0]})")
    return rows


def _segment_reduction(scale: str, counted: bool) -> Any:
    def kernel(ctx: KernelContext, data: Any, indices: Any, ids: Any,
               num_segments: Any = None) -> Any:
        xp = ctx.xp
        rows = _output_rows(ctx, data, indices, ids, num_segments if counted else None)
        out = xp.zeros((rows,) + data.shape[1:], dtype=data.dtype)
        if ids.shape[0] == 0:
            return out
        xp.add.at(out, ids, data[indices])
        if scale == "sum":
            return out
        counts = xp.bincount(ids, minlength=rows)[:rows].astype(data.dtype)
        divisor = xp.maximum(counts, 1)
        if scale == "sqrtn":
            divisor = xp.sqrt(divisor)
        return (out / divisor.reshape((rows,) + (1,) * (data.ndim - 1))).astype(
            data.dtype, copy=False)

    return kernel


def _segment_grad(sqrt: bool) -> Any:
    def kernel(ctx: KernelContext, grad: Any, indices: Any, ids: Any, output_dim0: Any) -> Any:
        xp = ctx.xp
        _check(ctx, indices, ids)
        if output_dim0.ndim != 0:
            raise _fail(ctx, "output_dim0 should be a scalar.")
        rows = _ints(output_dim0)[0]
        out = xp.zeros((rows,) + grad.shape[1:], dtype=grad.dtype)
        if rows == 0 or ids.shape[0] == 0:
            return out
        segments = grad.shape[0]
        if int(ids[-1]) + 1 > segments:
            raise _fail(ctx, "Invalid number of segments")
        bad_id = (ids < 0) | (ids >= segments)
        if bool(bad_id.any()):
            i = int(xp.argmax(bad_id))
            raise _fail(ctx, f"Segment id {int(ids[i])} out of range [0, {segments}).")
        bad_index = (indices < 0) | (indices >= rows)
        if bool(bad_index.any()):
            i = int(xp.argmax(bad_index))
            raise _fail(ctx, f"Index {int(indices[i])} out of range [0, {rows}).")
        counts = xp.maximum(xp.bincount(ids, minlength=segments)[:segments], 1).astype(
            grad.dtype)
        scaling = 1 / (xp.sqrt(counts) if sqrt else counts)
        shares = grad[ids] * scaling[ids].reshape((-1,) + (1,) * (grad.ndim - 1))
        xp.add.at(out, indices, shares.astype(grad.dtype, copy=False))
        return out

    return kernel


def sparse_matmul(ctx: KernelContext, a: Any, b: Any) -> Any:
    left = a.T if ctx.attrs["transpose_a"] else a
    right = b.T if ctx.attrs["transpose_b"] else b
    if left.shape[1] != right.shape[0]:
        raise _fail(ctx, f"Matrix size-incompatible: In[0]: [{a.shape[0]},{a.shape[1]}], "
                         f"In[1]: [{b.shape[0]},{b.shape[1]}]")
    return ctx.xp.matmul(left, right).astype(ctx.out_np, copy=False)


KERNELS = {
    "SparseSegmentSum": _segment_reduction("sum", False),
    "SparseSegmentMean": _segment_reduction("mean", False),
    "SparseSegmentSqrtN": _segment_reduction("sqrtn", False),
    "SparseSegmentSumWithNumSegments": _segment_reduction("sum", True),
    "SparseSegmentMeanWithNumSegments": _segment_reduction("mean", True),
    "SparseSegmentSqrtNWithNumSegments": _segment_reduction("sqrtn", True),
    "SparseSegmentMeanGrad": _segment_grad(sqrt=False),
    "SparseSegmentSqrtNGrad": _segment_grad(sqrt=True),
}


def register(registry: Any, device_type: str) -> None:
    for op, fn in KERNELS.items():
        registry.add(op, device_type, fn)
    registry.add("SparseMatMul", device_type, sparse_matmul, expensive=True)
