"""Python indexing of a `RaggedTensor` (``rt[key]``), as TF 1.15's ragged ``__getitem__``.

Contract: `key` is one index or a tuple (or list) of them, one per dimension from the outside:
a Python int or integer scalar `Tensor` (negative counts from the end), a `slice` of those
(with ``None`` parts), ``...`` or ``tw.newaxis``. On the outer (uniform) dimension an index
picks one row (the result loses that dimension: a `Tensor` once no ragged dimension is left) and
a slice, of any step, picks rows. On a ragged inner dimension a slice picks the same range of
each row (clipped to the row, as Python lists do; a negative start or stop counts from each
row's end); an index there raises ``ValueError("Cannot index into an inner ragged
dimension.")`` at construction, as TF does, since a row may be too short. Uniform inner
dimensions take anything a dense `Tensor` does. A ``newaxis`` adds a dimension of size 1 (ragged
when the dimension after it is). More indices than dimensions raise `IndexError`; offsets and
steps that are not integers raise `TypeError`; ``...`` needs a known rank (`ValueError`).
Out-of-range row indices fail at run time, as with a dense slice.
"""

from __future__ import annotations

import numbers
from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.api.ragged_ops import _gather_values, ragged_range
from tensorweave.api.ragged_tensor import RaggedTensor, _slice_values
from tensorweave.api.scopes import name_scope
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor

_INNER_INDEX_ERROR = "Cannot index into an inner ragged dimension."


def ragged_getitem(rt: RaggedTensor, key: Any) -> Tensor | RaggedTensor:
    """``rt[key]``; see the module docstring for what `key` may hold."""
    keys = list(key) if isinstance(key, (list, tuple)) else [key]
    scope_tensors = [rt.flat_values, *rt.nested_row_splits, *_key_tensors(keys)]
    with name_scope(None, "RaggedGetItem", scope_tensors):
        return _getitem(rt, keys)


def _getitem(rt: RaggedTensor, keys: list[Any]) -> Tensor | RaggedTensor:
    """`keys` applied to `rt`, the first of them to its outer dimension."""
    if not keys:
        return rt
    row_key, inner_keys = keys[0], keys[1:]
    if row_key is Ellipsis:
        return _getitem(rt, _expand_ellipsis(keys, rt.shape.ndims))
    if row_key is None:
        return _one_row(_getitem(rt, inner_keys))
    if isinstance(row_key, slice):
        return _inner(_slice_rows(rt, row_key), inner_keys)
    _check_index(row_key)
    row = _slice_values(rt.values, rt.row_splits[:-1][row_key], rt.row_splits[1:][row_key])
    if isinstance(row, RaggedTensor):
        return _getitem(row, inner_keys)
    return row[tuple(inner_keys)] if inner_keys else row


def _inner(rt: Tensor | RaggedTensor, keys: list[Any]) -> Tensor | RaggedTensor:
    """`keys` applied below the outer dimension of `rt`, which stays as it is."""
    if not keys:
        return rt
    if not isinstance(rt, RaggedTensor):
        return rt[(slice(None), *keys)]
    column_key = keys[0]
    if column_key is Ellipsis:
        return _inner(rt, _expand_ellipsis(keys, rt.values.shape.ndims))
    if column_key is None:
        # each row becomes a row of one item: a ragged dimension of uniform length 1
        inner = _inner(rt, keys[1:])
        splits = array_ops.range(inner.nrows() + 1, dtype=inner.row_splits_dtype)
        return RaggedTensor(inner, splits, internal=True)
    if not isinstance(column_key, slice):
        raise ValueError(_INNER_INDEX_ERROR)
    if column_key == slice(None):
        return rt.with_values(_inner(rt.values, keys[1:]))
    starts, limits = rt.row_splits[:-1], rt.row_splits[1:]
    new_starts = starts if column_key.start in (None, 0) else \
        _offset_ranges(column_key.start, starts, limits)
    new_limits = limits if column_key.stop in (None, 0) else \
        _offset_ranges(column_key.stop, starts, limits)
    picked = _value_ranges(new_starts, new_limits, column_key.step, rt.values)
    return picked.with_values(_inner(picked.values, keys[1:]))


def _slice_rows(rt: RaggedTensor, row_key: slice) -> RaggedTensor:
    """The rows of `rt` picked by `row_key`."""
    if row_key == slice(None):
        return rt
    for part in (row_key.start, row_key.stop):
        _check_offset(part)
    starts = rt.row_splits[:-1][row_key]
    limits = rt.row_splits[1:][row_key]
    if row_key.step is None or (isinstance(row_key.step, numbers.Integral)
                                and row_key.step == 1):
        # contiguous rows are one span of the values; with no rows the splits are just [0]
        zero = array_ops.zeros([1], rt.row_splits_dtype)
        first = array_ops.concat([starts[:1], zero], 0)[:1]
        splits = array_ops.concat([first, limits], 0)
        values = _slice_values(rt.values, splits[0], splits[-1])
        return RaggedTensor(values, splits - splits[0], internal=True)
    return _value_ranges(starts, limits, 1, rt.values)


def _value_ranges(starts: Tensor, limits: Tensor, step: Any,
                  values: Tensor | RaggedTensor) -> RaggedTensor:
    """Row ``i`` is ``values[starts[i]:limits[i]:step]`` (``0 <= starts <= limits``)."""
    step = convert_to_tensor(1 if step is None else step, name="step")
    if not step.dtype.is_integer:
        raise TypeError("slice strides must be integers or None")
    step = math_ops.cast(step, starts.dtype)
    indices = ragged_range(starts, limits, step, row_splits_dtype=starts.dtype)
    return indices.with_values(_gather_values(values, indices.values))


def _offset_ranges(offset: Any, starts: Tensor, limits: Tensor) -> Tensor:
    """Each range's position `offset` from its start (from its limit when negative), clipped
    to the range."""
    _check_offset(offset)
    if isinstance(offset, Tensor):
        offset = math_ops.cast(offset, starts.dtype)
        return array_ops.where_v2(math_ops.greater_equal(offset, 0),
                                  math_ops.minimum(starts + offset, limits),
                                  math_ops.maximum(limits + offset, starts))
    if offset > 0:
        return math_ops.minimum(starts + offset, limits)
    return math_ops.maximum(limits + offset, starts)


def _one_row(inner: Tensor | RaggedTensor) -> Tensor | RaggedTensor:
    """`inner` as the single row of a new outer dimension."""
    if not isinstance(inner, RaggedTensor):
        return array_ops.expand_dims(inner, 0)
    splits = array_ops.stack([array_ops.zeros([], inner.row_splits_dtype), inner.nrows()])
    return RaggedTensor(inner, splits, internal=True)


def _expand_ellipsis(keys: list[Any], remaining_dims: int | None) -> list[Any]:
    """`keys` (which start with ``...``) with the ellipsis turned into one full slice, or
    dropped when the other keys already cover every dimension."""
    if remaining_dims is None:
        raise ValueError("Ellipsis not supported for unknown shape RaggedTensors")
    count = sum(1 for k in keys if k is not None)
    if count > remaining_dims + 1:
        raise IndexError("Too many indices for RaggedTensor")
    if count == remaining_dims + 1:
        return keys[1:]
    return [slice(None), *keys]


def _check_index(key: Any) -> None:
    ok = isinstance(key, numbers.Integral) and not isinstance(key, bool) or (
        isinstance(key, Tensor) and key.dtype.is_integer and key.shape.ndims in (0, None))
    if not ok:
        raise TypeError(f"RaggedTensor indices must be integers, slices, Ellipsis or "
                        f"tf.newaxis, got {key!r}")


def _check_offset(offset: Any) -> None:
    if offset is None or isinstance(offset, Tensor) and offset.dtype.is_integer:
        return
    if isinstance(offset, bool) or not isinstance(offset, numbers.Integral):
        raise TypeError("slice offsets must be integers or None")


def _key_tensors(keys: list[Any]) -> list[Tensor]:
    found: list[Tensor] = []
    for key in keys:
        parts = (key.start, key.stop, key.step) if isinstance(key, slice) else (key,)
        found.extend(p for p in parts if isinstance(p, Tensor))
    return found

