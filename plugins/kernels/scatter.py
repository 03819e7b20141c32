"""Kernels of the variable scatter updates (``ScatterUpdate``, ``ScatterAdd``, ...,
``ScatterNdUpdate``, ``ScatterNdAdd``, ``ScatterNdSub``) and of ``TensorScatterUpdate``/``Add``/
``Sub``, which return an updated copy of their tensor input.

Contract: each variable kernel updates the variable under its lock, in place when no reader holds
its value and in a fresh array otherwise (`VariableRef.updatable`: a value already read keeps its
contents), stores it and returns the new value.
Repeated indices accumulate for the combining ops (last write wins for the ``*Update`` ops, as
TF leaves their order unspecified). Indices outside the variable raise `InvalidArgumentError`
with TF's wording, and the variable is left unchanged. Products (``ScatterMul``/``ScatterDiv``)
go through `segment_products` rather than ``multiply.at``, which cupy lacks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.engine.kernel import KernelContext
from tensorweave.engine.runtime.variables_store import VariableRef
from tensorweave.plugins.kernels.array import _fail, _fmt, _index_rows, _position
from tensorweave.plugins.kernels.math import div

Combine = Callable[[KernelContext, Any, Any, Any], None]


def segment_products(xp: Any, ids: Any, rows: Any) -> tuple[Any, Any]:
    """The distinct values of the 1-D `ids` and, for each, the product of the `rows` (first
    axis aligned with `ids`) carrying it: a segmented scan in log2(len) vectorized steps."""
    order = xp.argsort(ids)
    ids, values = ids[order], rows[order]
    n = ids.shape[0]
    lead = (1,) * (values.ndim - 1)
    step = 1
    while step < n:
        same = xp.reshape(ids[step:] == ids[:-step], (-1,) + lead)
        tail = xp.where(same, values[step:] * values[:-step], values[step:])
        values = xp.concatenate([values[:step], tail.astype(values.dtype, copy=False)])
        step *= 2
    last = xp.concatenate([ids[1:] != ids[:-1], xp.ones(min(n, 1), dtype=bool)])
    return ids[last], values[last]


# -- Scatter* (first-axis indices) --------------------------------------------------------------

def _flat_indices(ctx: KernelContext, params: Any, indices: Any, updates: Any) -> tuple[Any, Any]:
    """`indices` flattened and range-checked, and `updates` as one row per index."""
    xp = ctx.xp
    if params.ndim == 0:
        raise _fail(ctx, "params must be at least 1-D, got shape []")
    expected = indices.shape + params.shape[1:]
    if updates.ndim and updates.shape != expected:
        raise _fail(ctx, f"Must have updates.shape = indices.shape + params.shape[1:] or "
                         f"updates.shape = [], got updates.shape {_fmt(updates.shape)}, "
                         f"indices.shape {_fmt(indices.shape)}, params.shape "
                         f"{_fmt(params.shape)}")
    flat = xp.reshape(indices, (-1,))
    bad = (flat < 0) | (flat >= params.shape[0])
    if bad.any():
        i = int(xp.argmax(bad))
        where = _position(i, indices.shape) if indices.ndim else ""
        raise _fail(ctx, f"indices[{where}] = {int(flat[i])} is not in [0, {params.shape[0]})")
    rows = xp.broadcast_to(updates, expected)
    return flat, xp.reshape(rows, (flat.shape[0],) + params.shape[1:])


def _update(ctx: KernelContext, out: Any, idx: Any, rows: Any) -> None:
    out[idx] = rows


def _add(ctx: KernelContext, out: Any, idx: Any, rows: Any) -> None:
    ctx.xp.add.at(out, idx, rows)


def _sub(ctx: KernelContext, out: Any, idx: Any, rows: Any) -> None:
    ctx.xp.add.at(out, idx, ctx.xp.negative(rows))  # cupy has add.at, not subtract.at


def _max(ctx: KernelContext, out: Any, idx: Any, rows: Any) -> None:
    ctx.xp.maximum.at(out, idx, rows)


def _min(ctx: KernelContext, out: Any, idx: Any, rows: Any) -> None:
    ctx.xp.minimum.at(out, idx, rows)


def _mul(ctx: KernelContext, out: Any, idx: Any, rows: Any) -> None:
    unique, products = segment_products(ctx.xp, idx, rows)
    out[unique] = out[unique] * products


def _div(ctx: KernelContext, out: Any, idx: Any, rows: Any) -> None:
    # x / a / b == x / (a * b), also for truncating integer division.
    unique, products = segment_products(ctx.xp, idx, rows)
    out[unique] = div(ctx, out[unique], products)


def _scatter(combine: Combine) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, ref: VariableRef, indices: Any, updates: Any) -> Any:
        with ref.lock:
            idx, rows = _flat_indices(ctx, ref.read(), indices, updates)
            out = ref.updatable()
            combine(ctx, out, idx, rows)
            return ref.store(out)

    kernel.__name__ = f"scatter{combine.__name__}"
    return kernel


# -- ScatterNd* (index tuples) --------------------------------------------------------------------

def _nd_rows(ctx: KernelContext, params: Any, indices: Any, updates: Any) -> tuple[Any, Any]:
    xp = ctx.xp
    if indices.ndim == 0:
        raise _fail(ctx, "Indices must be at least a vector")
    k = indices.shape[-1]
    expected = indices.shape[:-1] + params.shape[k:]
    if k > params.ndim or updates.shape != expected:
        raise _fail(ctx, f"The shape of updates {_fmt(updates.shape)} must be indices.shape[:-1] "
                         f"+ ref.shape[indices.shape[-1]:] = {_fmt(expected)} (indices shape "
                         f"{_fmt(indices.shape)}, ref shape {_fmt(params.shape)})")
    rows = _index_rows(ctx, indices, params.shape[:k], "param shape")
    return tuple(rows.T), xp.reshape(updates, (rows.shape[0],) + params.shape[k:])


def _combine_nd(ctx: KernelContext, combine: Combine, out: Any, idx: Any, rows: Any) -> None:
    if idx:
        combine(ctx, out, idx, rows)
    elif rows.shape[0]:  # indices.shape[-1] == 0: every update addresses the whole array
        combine(ctx, out[None], ctx.xp.zeros(rows.shape[0], dtype=int), rows)


def _scatter_nd(combine: Combine) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, ref: VariableRef, indices: Any, updates: Any) -> Any:
        with ref.lock:
            idx, rows = _nd_rows(ctx, ref.read(), indices, updates)
            out = ref.updatable()
            _combine_nd(ctx, combine, out, idx, rows)
            return ref.store(out)

    kernel.__name__ = f"scatter_nd{combine.__name__}"
    return kernel


def _tensor_scatter(combine: Combine) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, tensor: Any, indices: Any, updates: Any) -> Any:
        idx, rows = _nd_rows(ctx, tensor, indices, updates)
        out = tensor.copy()
        _combine_nd(ctx, combine, out, idx, rows)
        return out

    kernel.__name__ = f"tensor_scatter{combine.__name__}"
    return kernel


KERNELS = {
    "ScatterUpdate": _scatter(_update), "ScatterAdd": _scatter(_add),
    "ScatterSub": _scatter(_sub), "ScatterMul": _scatter(_mul), "ScatterDiv": _scatter(_div),
    "ScatterMax": _scatter(_max), "ScatterMin": _scatter(_min),
    "ScatterNdUpdate": _scatter_nd(_update), "ScatterNdAdd": _scatter_nd(_add),
    "ScatterNdSub": _scatter_nd(_sub),
    "TensorScatterUpdate": _tensor_scatter(_update), "TensorScatterAdd": _tensor_scatter(_add),
    "TensorScatterSub": _tensor_scatter(_sub),
}


def register(registry: Any, device_type: str) -> None:
    for op, fn in KERNELS.items():
        registry.add(op, device_type, fn)
