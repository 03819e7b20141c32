"""Ragged array ops and the elementwise string/array dispatch of TF 1.15's ``ragged_dispatch``.

Contract: each function takes ragged or dense inputs (a dense-only call is the dense op) and,
once this module is imported (``import tensorweave`` does), the public functions dispatch to it:

- ``tile``: `multiples` (one per dimension, statically ``[rank]``) repeats each ragged row's
  items within the row, the rows as a whole, and the uniform inner dimensions;
- ``expand_dims``: a new axis 0 (one row holding everything), 1 (each row wrapped in a row of
  one item), or deeper; ``stack`` is ``concat`` of the inputs expanded at `axis`, with
  ``concat``'s axes (0, 1 and the uniform inner ones);
- ``size`` and ``rank`` count the values and the dimensions; ``tw.ragged.boolean_mask`` /
  ``tw.boolean_mask`` keep, along the last dimension of `mask` (whose shape is a prefix of the
  data's), the items where it is true: a vector mask picks rows, a deeper one leaves a ragged
  dimension in its place;
- ``where``: with `x` and `y`, elementwise on tensors of one row partition, or, for a vector
  `condition`, picking whole rows of `x` or `y`; alone, the coordinates of the true values;
- ``tw.nn.embedding_lookup`` with ragged `ids` looks up their flat values;
- elementwise ops (the ``tw.strings`` ops, ``add_n``, ``clip_by_value``, ``ones_like``,
  ``zeros_like``) run on the flat values of their ragged arguments, which must share one row
  partition (checked at run time); a dense argument must broadcast against the uniform inner
  dimensions (`ValueError` otherwise).

Unsupported forms raise `ValueError` at construction (a non-int axis, an axis out of range, a
mask of unknown rank); the row partitions of two ragged inputs that must match are checked when
the step runs (`InvalidArgumentError`).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.api import (
    array_ops,
    check_ops,
    control_flow_ops,
    dispatch,
    math_ops,
    nn_ops,
    string_ops,
)
from tensorweave.api.deprecation import deprecated_argument_lookup
from tensorweave.api.ragged_ops import (
    _concat_rows,
    _dense_broadcasts,
    _gather_values,
    _graph_tensors,
    _positions,
    _ragged_in,
    _splits,
    concat,
    map_flat_values,
)
from tensorweave.api.ragged_tensor import RaggedTensor, row_splits_to_segment_ids
from tensorweave.api.scopes import control_dependencies, name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor

# -- tile ---------------------------------------------------------------------------------------


def tile(input: Any, multiples: Any, name: str | None = None) -> Any:  # noqa: A002 - TF's name
    """`input` repeated `multiples[d]` times along each dimension ``d``."""
    if not isinstance(input, RaggedTensor):
        return array_ops.tile(input, multiples, name)
    with name_scope(name, "RaggedTile", _graph_tensors([input, multiples])):
        multiples = convert_to_tensor(multiples, name="multiples",
                                      preferred_dtype=dtypes.int64)
        if not multiples.dtype.is_integer:
            raise TypeError(f"multiples must be integers, got {multiples.dtype!r}")
        rank = input.shape.ndims
        if rank is None:
            raise ValueError("tile of a RaggedTensor needs its rank")
        multiples.shape.assert_is_compatible_with([rank])
        return _tile(input, math_ops.cast(multiples, input.row_splits_dtype))


def _tile(rt: Tensor | RaggedTensor, multiples: Tensor) -> Tensor | RaggedTensor:
    if not isinstance(rt, RaggedTensor):
        return array_ops.tile(rt, multiples)
    # the items of each row first get their own (deeper) repetition, then repeat within the
    # row, then the rows repeat as a whole; tiling along different axes commutes
    one = array_ops.ones([1], multiples.dtype)
    inner = _tile(rt.values, array_ops.concat([one, multiples[2:]], 0))
    within = _repeat_within_rows(RaggedTensor(inner, rt.row_splits, internal=True),
                                 multiples[1])
    rows = array_ops.tile(array_ops.range(rt.nrows(), dtype=multiples.dtype), multiples[:1])
    return _gather_values(within, rows)


def _repeat_within_rows(rt: RaggedTensor, times: Tensor) -> RaggedTensor:
    """Each row's items, `times` over, as the row."""
    lengths = rt.row_lengths()
    out_splits = _splits(lengths * times)
    rowids = row_splits_to_segment_ids(out_splits)
    column = _positions(rowids) - array_ops.gather(out_splits, rowids)
    sources = array_ops.gather(rt.row_splits, rowids) \
        + math_ops.floormod(column, array_ops.gather(lengths, rowids))
    return RaggedTensor(_gather_values(rt.values, sources), out_splits, internal=True)


# -- expand_dims and stack ----------------------------------------------------------------------

def expand_dims(input: Any, axis: Any = None, name: str | None = None,  # noqa: A002
                dim: Any = None) -> Any:
    """`input` with a new dimension of size 1 at `axis` (a Python int)."""
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    if not isinstance(input, RaggedTensor):
        return array_ops.expand_dims(input, axis, name)
    if not isinstance(axis, numbers.Integral):
        raise ValueError(f"axis must be a Python int to expand a RaggedTensor, got {axis!r}")
    with name_scope(name, "RaggedExpandDims", _graph_tensors([input])):
        return _expand(input, _normalize_axis(axis, input.shape.ndims + 1))


def _expand(rt: RaggedTensor, axis: int) -> RaggedTensor:
    dtype = rt.row_splits_dtype
    if axis == 0:
        splits = array_ops.stack([array_ops.zeros([], dtype), rt.nrows()])
        return RaggedTensor(rt, splits, internal=True)
    if axis == 1:
        return RaggedTensor(rt, array_ops.range(rt.nrows() + 1, dtype=dtype), internal=True)
    if axis > rt.ragged_rank:
        return rt.with_flat_values(array_ops.expand_dims(rt.flat_values,
                                                         axis - rt.ragged_rank))
    return rt.with_values(_expand(rt.values, axis - 1))


def stack(values: Any, axis: Any = 0, name: str = "stack") -> Any:
    """`values` (ragged or dense, of one rank) stacked along a new dimension `axis`."""
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    if not any(isinstance(v, RaggedTensor) for v in values):
        return array_ops.stack(values, axis, name)
    if not isinstance(axis, numbers.Integral):
        raise ValueError(f"axis must be a Python int to stack RaggedTensors, got {axis!r}")
    with name_scope(name, "RaggedStack", _graph_tensors(values)):
        values = [v if isinstance(v, RaggedTensor) else convert_to_tensor(v) for v in values]
        ranks = {v.shape.ndims for v in values}
        if len(ranks) != 1 or None in ranks:
            raise ValueError(f"Rank of all input tensors should match: got {sorted(ranks)}")
        axis = _normalize_axis(axis, ranks.pop() + 1)
        expanded = [_expand(v, axis) if isinstance(v, RaggedTensor)
                    else array_ops.expand_dims(v, axis) for v in values]
        return expanded[0] if len(expanded) == 1 else concat(expanded, axis)


def _normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"axis={axis} out of bounds: expected {-rank} <= axis < {rank}")
    return axis % rank


# -- size and rank ------------------------------------------------------------------------------

def size(input: Any, name: str | None = None,  # noqa: A002
         out_type: Any = dtypes.int32) -> Tensor:
    """The number of values of `input`."""
    if not isinstance(input, RaggedTensor):
        return array_ops.size(input, name, out_type)
    return array_ops.size(input.flat_values, name, out_type)


def rank(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The number of dimensions of `input`, ragged ones included."""
    if not isinstance(input, RaggedTensor):
        return array_ops.rank(input, name)
    with name_scope(name, "RaggedRank", _graph_tensors([input])):
        return array_ops.rank(input.flat_values) + input.ragged_rank


# -- boolean_mask -------------------------------------------------------------------------------

def boolean_mask(data: Any, mask: Any, name: str | None = None, axis: Any = None) -> Any:
    """The items of `data` where `mask` (bool, its shape a prefix of `data`'s) is true, along
    `mask`'s last dimension; the dimensions before it stay (ragged from the second one on)."""
    if not isinstance(data, RaggedTensor) and not isinstance(mask, RaggedTensor):
        return array_ops.boolean_mask(data, mask, name or "boolean_mask", axis)
    if axis not in (None, 0):
        raise ValueError("boolean_mask with a RaggedTensor supports only axis=0")
    with name_scope(name, "RaggedMask", _graph_tensors([data, mask])):
        if not isinstance(data, RaggedTensor):
            data = convert_to_tensor(data, name="data")
        if not isinstance(mask, RaggedTensor):
            mask = convert_to_tensor(mask, dtypes.bool_, name="mask")
        if mask.dtype != dtypes.bool_:
            raise ValueError(f"mask.dtype={mask.dtype!r} is not bool")
        mask_rank = mask.shape.ndims
        if mask_rank is None:
            raise ValueError("mask.shape.ndims must be known statically.")
        if mask_rank == 0:
            raise ValueError("mask cannot be scalar.")
        data_rank = data.shape.ndims
        if data_rank is not None and mask_rank > data_rank:
            raise ValueError(f"mask of rank {mask_rank} is deeper than data of rank "
                             f"{data_rank}")
        return _mask(data, mask)


def _mask(data: Tensor | RaggedTensor, mask: Tensor | RaggedTensor) -> Tensor | RaggedTensor:
    if mask.shape.ndims == 1:
        kept = array_ops.reshape(array_ops.where(mask), [-1])
        return _gather_values(data, kept)
    # two or more levels: line up the outer row partitions, then mask inside the rows
    if not isinstance(data, RaggedTensor) and not isinstance(mask, RaggedTensor):
        data = RaggedTensor.from_tensor(data)
    if not isinstance(mask, RaggedTensor):
        mask = RaggedTensor.from_tensor(mask, lengths=data.row_lengths())
    if not isinstance(data, RaggedTensor):
        data = RaggedTensor.from_tensor(data, lengths=mask.row_lengths())
    mask = mask.with_row_splits_dtype(data.row_splits_dtype)
    splits = data.row_splits
    if mask.row_splits is not splits:
        check = check_ops.assert_equal(splits, mask.row_splits,
                                       message="data and mask must have the same row splits")
        with control_dependencies([check]):
            splits = control_flow_ops.identity(splits)
    inner = _mask(data.values, mask.values)
    if mask.shape.ndims > 2:
        return RaggedTensor(inner, splits, internal=True)
    kept = math_ops.cast(mask.values, splits.dtype)
    lengths = array_ops.unsorted_segment_sum(kept, mask.value_rowids(), mask.nrows())
    return RaggedTensor(inner, _splits(lengths), internal=True)


# -- where --------------------------------------------------------------------------------------

def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Any:
    """`x` where `condition` else `y`, or the coordinates of `condition`'s true values."""
    if not _ragged_in((condition, x, y), {}):
        return array_ops.where(condition, x, y, name)
    if (x is None) != (y is None):
        raise ValueError("x and y must be either both None or both non-None")
    with name_scope(name, "RaggedWhere", _graph_tensors([condition, x, y])):
        if x is None:
            sparse = condition.to_sparse()
            return array_ops.boolean_mask(sparse.indices, sparse.values)
        if isinstance(condition, RaggedTensor):
            if not (isinstance(x, RaggedTensor) and isinstance(y, RaggedTensor)):
                raise ValueError("A ragged condition needs ragged x and y of its shape")
            return map_flat_values(array_ops.where, condition, x, y)
        condition = convert_to_tensor(condition, dtypes.bool_, name="condition")
        if condition.shape.ndims != 1:
            raise ValueError(f"With ragged x and y, condition must be a vector (one choice per "
                             f"row), got shape {condition.shape}")
        ragged_rank = max(v.ragged_rank for v in (x, y) if isinstance(v, RaggedTensor))
        x, y = [v if isinstance(v, RaggedTensor)
                else RaggedTensor.from_tensor(v, ragged_rank=ragged_rank) for v in (x, y)]
        rows = _positions(x.row_splits[1:])
        picks = array_ops.where_v2(condition, rows, rows + x.nrows())
        return _gather_values(_concat_rows([x, y]), picks)


# -- elementwise dispatch -----------------------------------------------------------------------

def _dense_parts(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The dense tensors and arrays among the arguments (and inside list arguments)."""
    found = []
    for value in (*args, *kwargs.values()):
        items = value if isinstance(value, (list, tuple)) else [value]
        found.extend(v for v in items if isinstance(v, (Tensor, np.ndarray)))
    return found


def _first_ragged(args: tuple[Any, ...], kwargs: dict[str, Any]) -> RaggedTensor:
    for value in (*args, *kwargs.values()):
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, RaggedTensor):
                return item
    raise ValueError("no RaggedTensor among the arguments")


def _elementwise_handler(fn: Callable[..., Any]) -> Callable[..., Any]:
    def handler(*args: Any, **kwargs: Any) -> Any:
        if not _ragged_in(args, kwargs):
            return NotImplemented
        ragged = _first_ragged(args, kwargs)
        for dense in _dense_parts(args, kwargs):
            if not _dense_broadcasts(ragged, dense):
                raise ValueError(f"A dense argument of {fn.__name__} with a RaggedTensor must "
                                 f"broadcast against its uniform inner dimensions "
                                 f"{ragged.flat_values.shape[1:]}; got {dense!r}")
        return map_flat_values(fn, *args, **kwargs)

    return handler


def _embedding_lookup(params: Any, ids: Any, *args: Any, **kwargs: Any) -> Any:
    if not isinstance(ids, RaggedTensor) or isinstance(params, RaggedTensor):
        return NotImplemented
    return ids.with_flat_values(nn_ops.embedding_lookup(params, ids.flat_values, *args,
                                                        **kwargs))


def _dispatched_boolean_mask(tensor: Any, mask: Any, name: str = "boolean_mask",
                             axis: Any = None) -> Any:
    """``tw.boolean_mask``'s signature over `boolean_mask`."""
    return boolean_mask(tensor, mask, name, axis)


def _when_ragged(fn: Callable[..., Any]) -> Callable[..., Any]:
    def handler(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs) if _ragged_in(args, kwargs) else NotImplemented

    return handler


_ELEMENTWISE = (
    string_ops.string_join, string_ops.string_length, string_ops.substr,
    string_ops.string_upper, string_ops.string_lower, string_ops.string_strip,
    string_ops.regex_replace, string_ops.regex_full_match, string_ops.string_to_number,
    string_ops.as_string, string_ops.string_to_hash_bucket_fast,
    string_ops.string_to_hash_bucket_strong, string_ops.encode_base64,
    string_ops.decode_base64, math_ops.add_n, math_ops.clip_by_value, array_ops.ones_like,
    array_ops.zeros_like,
)


def _register_dispatch() -> None:
    for fn in _ELEMENTWISE:
        dispatch.register(fn, _elementwise_handler(fn))
    for public, ragged in ((array_ops.tile, tile), (array_ops.expand_dims, expand_dims),
                           (array_ops.stack, stack), (array_ops.size, size),
                           (array_ops.rank, rank),
                           (array_ops.boolean_mask, _dispatched_boolean_mask),
                           (array_ops.where, where)):
        dispatch.register(public, _when_ragged(ragged))
    dispatch.register(nn_ops.embedding_lookup, _embedding_lookup)


_register_dispatch()
