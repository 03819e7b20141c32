"""Kernels of the sorted segment reductions (``SegmentSum``, ``SegmentMean``, ``SegmentProd``,
``SegmentMax``, ``SegmentMin``) and of ``UnsortedSegmentMin`` and ``UnsortedSegmentProd``.

Contract: a sorted reduction checks that ``segment_ids`` is a non-negative, non-decreasing vector
as long as ``data``'s first dimension (else `InvalidArgumentError` with TF's wording) and gives
``segment_ids[-1] + 1`` rows; segments no id names get 0 (1 for the product), as TF. Unsorted
ones check ids against ``num_segments`` and drop negative ids like ``UnsortedSegmentSum``; their
empty segments get the dtype's highest value (min) or 1 (prod). Means of integers truncate.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels.array import _fail, _segment_rows
from tensorweave.plugins.kernels.math import div
from tensorweave.plugins.kernels.scatter import segment_products


def _sorted_rows(ctx: KernelContext, data: Any, ids: Any) -> int:
    """The number of output rows, after checking `ids` as TF's ``SegmentReductionOp``."""
    if ids.ndim != 1:
        raise _fail(ctx, "segment_ids should be a vector.")
    if data.ndim == 0 or ids.shape[0] != data.shape[0]:
        raise _fail(ctx, "segment_ids should be the same size as dimension 0 of input.")
    if ids.shape[0] == 0:
        return 0
    if bool((ids < 0).any()):
        raise _fail(ctx, "segment ids must be >= 0")
    if bool((ids[1:] < ids[:-1]).any()):
        raise _fail(ctx, "segment ids are not increasing")
    return int(ids[-1]) + 1


def _counts(ctx: KernelContext, ids: Any, n: int, ndim: int) -> Any:
    """How many rows each segment has, shaped to broadcast against the output."""
    counts = ctx.xp.bincount(ids, minlength=n)[:n] if ids.shape[0] else ctx.xp.zeros(n, int)
    return ctx.xp.reshape(counts, (n,) + (1,) * (ndim - 1))


def _extreme(ctx: KernelContext, data: Any, ids: Any, n: int, ufunc: Any, fill: Any) -> Any:
    out = ctx.xp.full((n,) + data.shape[1:], fill, dtype=data.dtype)
    ufunc.at(out, ids, data)
    return out


def segment_sum(ctx: KernelContext, data: Any, ids: Any) -> Any:
    n = _sorted_rows(ctx, data, ids)
    out = ctx.xp.zeros((n,) + data.shape[1:], dtype=data.dtype)
    ctx.xp.add.at(out, ids, data)
    return out


def segment_mean(ctx: KernelContext, data: Any, ids: Any) -> Any:
    total = segment_sum(ctx, data, ids)
    counts = ctx.xp.maximum(_counts(ctx, ids, total.shape[0], total.ndim), 1)
    return div(ctx, total, counts.astype(total.dtype)).astype(data.dtype, copy=False)


def segment_prod(ctx: KernelContext, data: Any, ids: Any) -> Any:
    n = _sorted_rows(ctx, data, ids)
    return _products(ctx, data, ids, n)


def _products(ctx: KernelContext, data: Any, ids: Any, n: int) -> Any:
    out = ctx.xp.ones((n,) + data.shape[1:], dtype=data.dtype)
    unique, products = segment_products(ctx.xp, ids, data)
    out[unique] = products
    return out


def _sorted_extreme(ufunc_name: str, fill_attr: str) -> Any:
    def kernel(ctx: KernelContext, data: Any, ids: Any) -> Any:
        n = _sorted_rows(ctx, data, ids)
        out = _extreme(ctx, data, ids, n, getattr(ctx.xp, ufunc_name),
                       getattr(ctx.output_dtypes[0], fill_attr))
        empty = _counts(ctx, ids, n, out.ndim) == 0
        return ctx.xp.where(empty, ctx.xp.zeros((), dtype=data.dtype), out)

    kernel.__name__ = f"segment_{ufunc_name}"
    return kernel


def unsorted_segment_min(ctx: KernelContext, data: Any, ids: Any, num: Any) -> Any:
    ids, rows, n = _segment_rows(ctx, data, ids, num)
    return _extreme(ctx, rows, ids, n, ctx.xp.minimum, ctx.output_dtypes[0].max)


def unsorted_segment_prod(ctx: KernelContext, data: Any, ids: Any, num: Any) -> Any:
    ids, rows, n = _segment_rows(ctx, data, ids, num)
    return _products(ctx, rows, ids, n)


KERNELS = {
    "SegmentSum": segment_sum, "SegmentMean": segment_mean, "SegmentProd": segment_prod,
    "SegmentMax": _sorted_extreme("maximum", "min"),
    "SegmentMin": _sorted_extreme("minimum", "max"),
    "UnsortedSegmentMin": unsorted_segment_min, "UnsortedSegmentProd": unsorted_segment_prod,
}


def register(registry: Any, device_type: str) -> None:
    for op, fn in KERNELS.items():
        registry.add(op, device_type, fn)
