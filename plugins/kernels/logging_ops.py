"""Kernels of ``Assert`` and ``Print``.

Contract: values are shown as TF's ``Tensor::SummarizeValue``: the first ``summarize`` elements
(all when negative) in row-major order, nested in brackets by dimension, ``...`` when some are
left out; floats in the shortest of 6/9 (float32, float16) or 15/17 (float64) significant digits
that round-trips, bools as 1/0, strings as their text. ``Assert`` raises `InvalidArgumentError`
``assertion failed: [item] [item] ...`` when its (scalar) condition is false; ``Print`` writes
``message[item][item]`` to stderr, for its first ``first_n`` runs when ``first_n >= 0``, and
forwards its input. Both kernels are host-only (``HOST_ONLY``), as
TF's."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels.array import _fail, _fmt


def _element(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    if isinstance(value, np.bool_):
        return "1" if value else "0"
    if isinstance(value, np.floating):
        value = np.float32(value) if value.dtype == np.float16 else value  # TF prints as float
        short, full = (15, 17) if value.dtype == np.float64 else (6, 9)
        text = f"{float(value):.{short}g}"
        return text if value.dtype.type(text) == value else f"{float(value):.{full}g}"
    return str(value)


def summarize(value: np.ndarray, limit: int) -> str:
    """`value` as TF's ``Tensor::SummarizeValue(limit)``."""
    count = value.size
    limit = count if limit < 0 else min(limit, count)
    flat = value.reshape(-1)
    if value.ndim == 0:
        out = " ".join(_element(v) for v in flat[:limit])
    else:
        out = _dims(value.shape, 0, flat, [0], limit)
    return out + ("..." if count > limit else "")


def _dims(shape: Sequence[int], dim: int, flat: np.ndarray, next_index: list[int],
          limit: int) -> str:
    """TF's ``PrintOneDim``: `next_index` is the running position in `flat`."""
    if next_index[0] >= limit:
        return ""
    out = ""
    if dim == len(shape) - 1:
        for i in range(shape[dim]):
            if next_index[0] >= limit:
                return out + ("..." if dim else "")
            out += (" " if i else "") + _element(flat[next_index[0]])
            next_index[0] += 1
        return out
    for _ in range(shape[dim]):
        opened = next_index[0] < limit
        out += "[" if opened else ""
        out += _dims(shape, dim + 1, flat, next_index, limit)
        if next_index[0] < limit or opened:
            out += "]"
    return out


def _items(ctx: KernelContext, data: Sequence[Any]) -> list[str]:
    """Each tensor of `data` summarized."""
    return [summarize(np.asarray(value), ctx.attrs["summarize"]) for value in data]


def assert_(ctx: KernelContext, condition: Any, *data: Any) -> None:
    cond = np.asarray(condition)
    if cond.ndim > 1 or cond.size != 1:
        raise _fail(ctx, f"In[0] should be a scalar: {_fmt(cond.shape)}")
    if not bool(cond.reshape(())):
        items = " ".join(f"[{item}]" for item in _items(ctx, data))
        raise _fail(ctx, f"assertion failed: {items}")


def print_(ctx: KernelContext, x: Any, *data: Any) -> Any:
    first_n = ctx.attrs["first_n"]
    if first_n >= 0:
        # The count lives in the node's kernel state, which outlives plans, as TF's kernel.
        runs = ctx.state.setdefault("runs", itertools.count())
        if next(runs) >= first_n:
            return x
    items = "".join(f"[{item}]" for item in _items(ctx, data))
    sys.stderr.write(f"{ctx.attrs['message']}{items}\n")
    return x


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    registry.add("Assert", device_type, assert_)
    registry.add("Print", device_type, print_)
