"""`RaggedTensor` and `RaggedTensorValue`, as in ``tf.compat.v1`` (TF 1.15).

Contract: a `RaggedTensor` is ``values`` (a `Tensor`, or a `RaggedTensor` when ``ragged_rank``
> 1) cut into rows by ``row_splits`` (an int64 or int32 vector of ``nrows + 1`` entries): row
``i`` is ``values[row_splits[i]:row_splits[i + 1]]``. The constructor is private, as in TF; the
factories (``from_row_splits``, ``from_row_lengths``, ``from_value_rowids``, ``from_row_starts``,
``from_row_limits``, the ``from_nested_*`` forms, ``from_tensor``, ``from_sparse``) convert a
Python partition to int64, raise `ValueError` at construction for a bad rank or dtype, and, with
``validate=True``, add TF's checks of the partition (splits start at 0, never decrease and end
at the number of values; row ids are sorted, non-negative and below ``nrows``): a partition
known while the graph is built fails right there with `InvalidArgumentError`, any other fails
the step with it. ``shape`` is static: ``[nrows, None, ..., None, *flat_values.shape[1:]]``.

A `RaggedTensor` is not a `Tensor` (converting one raises `TypeError`); the ops of
`tensorweave.api.ragged_ops` take it, and the public functions dispatch to them (reductions,
``concat``, ``gather``, elementwise math and Python's operators). ``rt[key]`` indexes and
slices as TF (`tensorweave.api.ragged_getitem`). A
session fetches a `RaggedTensor` as a `RaggedTensorValue` and feeds one from a
`RaggedTensorValue` of the same ragged rank (`ragged_feed_items`).
"""

from __future__ import annotations

import numbers
from typing import Any

import attrs
import numpy as np

from tensorweave.api import array_ops, check_ops, control_flow_ops, math_ops
from tensorweave.api.scopes import control_dependencies, name_scope
from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.api.tensor_operators import overload_operators
from tensorweave.engine import dtypes
from tensorweave.engine.client.conversions import register_session_run_conversion_functions
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor
from tensorweave.engine.graph.graph import Graph, Operation, Tensor
from tensorweave.engine.tensor_shape import TensorShape

_PARTITION_DTYPES = (dtypes.int32, dtypes.int64)


class _Nesting:
    """The nested structure of a ragged value whose ``values`` are of its own class or flat:
    shared by `RaggedTensor` (tensors) and `RaggedTensorValue` (numpy arrays)."""

    __slots__ = ()

    @property
    def flat_values(self) -> Any:
        values = self.values
        while isinstance(values, type(self)):
            values = values.values
        return values

    @property
    def nested_row_splits(self) -> tuple[Any, ...]:
        splits = [self.row_splits]
        values = self.values
        while isinstance(values, type(self)):
            splits.append(values.row_splits)
            values = values.values
        return tuple(splits)

    @property
    def ragged_rank(self) -> int:
        return len(self.nested_row_splits)


class RaggedTensor(_Nesting):
    """Rows of varying length: ``values`` partitioned by ``row_splits``."""

    def __init__(self, values: Tensor | RaggedTensor, row_splits: Tensor,
                 cached_row_lengths: Tensor | None = None,
                 cached_value_rowids: Tensor | None = None,
                 cached_nrows: Tensor | None = None, internal: bool = False) -> None:
        if not internal:
            raise ValueError("RaggedTensor constructor is private; please use one of the "
                             "factory methods instead (e.g., RaggedTensor.from_row_lengths())")
        if not isinstance(row_splits, Tensor):
            raise TypeError(f"Row-partitioning argument must be a Tensor, got {row_splits!r}")
        if not isinstance(values, (Tensor, RaggedTensor)):
            raise TypeError(f"values must be a Tensor or RaggedTensor, got {values!r}")
        _check_partition_dtype(row_splits, "row_splits")
        row_splits.shape.with_rank(1)
        if values.shape.ndims == 0:
            raise ValueError(f"Shape {values.shape} must have rank at least 1")
        if isinstance(values, RaggedTensor) and values.row_splits.dtype != row_splits.dtype:
            raise ValueError(f"dtype mismatch: row_splits is {row_splits.dtype!r} but "
                             f"values.row_splits is {values.row_splits.dtype!r}")
        self._values = values
        self._row_splits = row_splits
        self._cached_row_lengths = cached_row_lengths
        self._cached_value_rowids = cached_value_rowids
        self._cached_nrows = cached_nrows

    # -- factories ----------------------------------------------------------------------------

    @classmethod
    def from_row_splits(cls, values: Any, row_splits: Any, name: str | None = None,
                        validate: bool = True) -> RaggedTensor:
        """Row ``i`` is ``values[row_splits[i]:row_splits[i + 1]]``."""
        with name_scope(name, "RaggedFromRowSplits", _tensors(values, row_splits)):
            values = _convert_values(values)
            row_splits = _convert_partition(row_splits, "row_splits")
            row_splits.shape.with_rank(1)
            if validate:
                msg = "Arguments to from_row_splits do not form a valid RaggedTensor:"
                checks = [
                    check_ops.assert_equal(row_splits[0], _zero(row_splits), message=msg + "zero"),
                    check_ops.assert_non_negative(row_splits[1:] - row_splits[:-1],
                                                  message=msg + "monotonic"),
                    check_ops.assert_equal(row_splits[-1], _nrows(values, row_splits.dtype),
                                           message=msg + "sum"),
                ]
                row_splits = _with_dependencies(checks, row_splits)
            return cls(values, row_splits, internal=True)

    @classmethod
    def from_row_lengths(cls, values: Any, row_lengths: Any, name: str | None = None,
                         validate: bool = True) -> RaggedTensor:
        """Row ``i`` holds the next ``row_lengths[i]`` values."""
        with name_scope(name, "RaggedFromRowLengths", _tensors(values, row_lengths)):
            values = _convert_values(values)
            row_lengths = _convert_partition(row_lengths, "row_lengths")
            row_lengths.shape.with_rank(1)
            if validate:
                msg = "Arguments to from_row_lengths do not form a valid RaggedTensor"
                checks = [
                    check_ops.assert_non_negative(row_lengths, message=msg),
                    check_ops.assert_equal(math_ops.reduce_sum(row_lengths),
                                           _nrows(values, row_lengths.dtype), message=msg),
                ]
                row_lengths = _with_dependencies(checks, row_lengths)
            row_splits = _splits_from_lengths(row_lengths)
            return cls(values, row_splits, cached_row_lengths=row_lengths, internal=True)

    @classmethod
    def from_value_rowids(cls, values: Any, value_rowids: Any, nrows: Any = None,
                          name: str | None = None, validate: bool = True) -> RaggedTensor:
        """Value ``j`` goes to row ``value_rowids[j]`` (sorted); `nrows` defaults to
        ``value_rowids[-1] + 1`` (0 with no values)."""
        with name_scope(name, "RaggedFromValueRowIds", _tensors(values, value_rowids, nrows)):
            values = _convert_values(values)
            value_rowids = _convert_partition(value_rowids, "value_rowids")
            value_rowids.shape.with_rank(1)
            if nrows is None:
                last = array_ops.concat([value_rowids[-1:], _constant([-1], value_rowids)], 0)
                nrows = last[0] + 1
            else:
                nrows = _convert_partition(nrows, "nrows", value_rowids.dtype)
                nrows.shape.with_rank(0)
            if validate:
                msg = "Arguments to from_value_rowids do not form a valid RaggedTensor"
                checks = [
                    check_ops.assert_equal(_nrows(values, value_rowids.dtype),
                                           _nrows(value_rowids, value_rowids.dtype),
                                           message=msg),
                    check_ops.assert_non_negative(value_rowids[:1], message=msg),
                    check_ops.assert_non_negative(value_rowids[1:] - value_rowids[:-1],
                                                  message=msg),
                    check_ops.assert_less(value_rowids[-1:], nrows, message=msg),
                ]
                value_rowids = _with_dependencies(checks, value_rowids)
            row_splits = segment_ids_to_row_splits(value_rowids, nrows)
            return cls(values, row_splits, cached_value_rowids=value_rowids,
                       cached_nrows=nrows, internal=True)

    @classmethod
    def from_row_starts(cls, values: Any, row_starts: Any, name: str | None = None,
                        validate: bool = True) -> RaggedTensor:
        """Row ``i`` starts at ``row_starts[i]`` and ends where the next one starts."""
        with name_scope(name, "RaggedFromRowStarts", _tensors(values, row_starts)):
            values = _convert_values(values)
            row_starts = _convert_partition(row_starts, "row_starts")
            row_starts.shape.with_rank(1)
            nvals = array_ops.reshape(_nrows(values, row_starts.dtype), [1])
            if validate:
                msg = "Arguments to from_row_starts do not form a valid RaggedTensor"
                checks = [
                    check_ops.assert_equal(row_starts[:1], _zero(row_starts), message=msg),
                    check_ops.assert_non_negative(row_starts[1:] - row_starts[:-1],
                                                  message=msg),
                    check_ops.assert_less_equal(row_starts[-1:], nvals, message=msg),
                ]
                row_starts = _with_dependencies(checks, row_starts)
            return cls(values, array_ops.concat([row_starts, nvals], 0), internal=True)

    @classmethod
    def from_row_limits(cls, values: Any, row_limits: Any, name: str | None = None,
                        validate: bool = True) -> RaggedTensor:
        """Row ``i`` ends at ``row_limits[i]`` and starts where the previous one ends."""
        with name_scope(name, "RaggedFromRowLimits", _tensors(values, row_limits)):
            values = _convert_values(values)
            row_limits = _convert_partition(row_limits, "row_limits")
            row_limits.shape.with_rank(1)
            if validate:
                msg = "Arguments to from_row_limits do not form a valid RaggedTensor"
                checks = [
                    check_ops.assert_non_negative(row_limits[:1], message=msg),
                    check_ops.assert_non_negative(row_limits[1:] - row_limits[:-1],
                                                  message=msg),
                    check_ops.assert_equal(row_limits[-1:], _nrows(values, row_limits.dtype),
                                           message=msg),
                ]
                row_limits = _with_dependencies(checks, row_limits)
            zero = _constant([0], row_limits)
            return cls(values, array_ops.concat([zero, row_limits], 0), internal=True)

    @classmethod
    def from_nested_row_splits(cls, flat_values: Any, nested_row_splits: Any,
                               name: str | None = None, validate: bool = True) -> RaggedTensor:
        """`flat_values` partitioned by each of `nested_row_splits`, innermost last."""
        if isinstance(nested_row_splits, Tensor) or not nested_row_splits:
            raise ValueError("nested_row_splits must be a non-empty list of tensors")
        with name_scope(name, "RaggedFromNestedRowSplits", _tensors(flat_values)):
            result = flat_values
            for splits in reversed(nested_row_splits):
                result = cls.from_row_splits(result, splits, validate=validate)
            return result

    @classmethod
    def from_nested_row_lengths(cls, flat_values: Any, nested_row_lengths: Any,
                                name: str | None = None,
                                validate: bool = True) -> RaggedTensor:
        """`flat_values` partitioned by each of `nested_row_lengths`, innermost last."""
        if isinstance(nested_row_lengths, Tensor) or not nested_row_lengths:
            raise ValueError("nested_row_lengths must be a non-empty list of tensors")
        with name_scope(name, "RaggedFromNestedRowlengths", _tensors(flat_values)):
            result = flat_values
            for lengths in reversed(nested_row_lengths):
                result = cls.from_row_lengths(result, lengths, validate=validate)
            return result

    @classmethod
    def from_tensor(cls, tensor: Any, lengths: Any = None, padding: Any = None,
                    ragged_rank: int = 1, name: str | None = None) -> RaggedTensor:
        """The rows of a dense `tensor`: whole (default), cut to `lengths`, or with the trailing
        entries equal to `padding` dropped; ``ragged_rank > 1`` makes the next dimensions
        ragged too (with `lengths`/`padding` applying to the innermost)."""
        if lengths is not None and padding is not None:
            raise ValueError("Specify lengths or padding, but not both")
        if not isinstance(ragged_rank, numbers.Integral) or ragged_rank <= 0:
            raise ValueError(f"ragged_rank must be a positive integer; got {ragged_rank}")
        with name_scope(name, "RaggedFromTensor", _tensors(tensor, lengths, padding)):
            tensor = convert_to_tensor(tensor, name="tensor")
            rank = tensor.shape.ndims
            if rank is None:
                raise ValueError("The rank of tensor must be statically known")
            if ragged_rank >= rank:
                raise ValueError(f"ragged_rank must be smaller than rank(tensor) ({rank}); got "
                                 f"{ragged_rank}")
            dims = array_ops.shape(tensor, out_type=dtypes.int64)
            if ragged_rank > 1:
                outer = math_ops.reduce_prod(dims[:ragged_rank])
                flat = array_ops.reshape(
                    tensor, array_ops.concat([array_ops.reshape(outer, [1]),
                                              dims[ragged_rank:]], 0))
                result = cls.from_tensor(flat, lengths, padding)
                for axis in range(ragged_rank - 1, 0, -1):
                    result = _uniform_rows(result, dims[axis],
                                           math_ops.reduce_prod(dims[:axis]))
                return result
            return _rows_of_matrix(cls, tensor, dims, lengths, padding)

    @classmethod
    def from_sparse(cls, st_input: SparseTensor, name: str | None = None) -> RaggedTensor:
        """The rows of a 2-D `SparseTensor` whose indices are ordered and leave no gaps at the
        start of a row (`InvalidArgumentError` otherwise)."""
        if not isinstance(st_input, SparseTensor):
            raise TypeError(f"st_input must be a SparseTensor, got {st_input!r}")
        rank = st_input.dense_shape.shape[0]
        if rank != 2 and st_input.indices.shape[1] != 2:
            raise ValueError("rank(st_input) must be 2")
        with name_scope(name, "RaggedFromSparse", [st_input.indices, st_input.values]):
            indices = st_input.indices
            rows, cols = indices[:, 0], indices[:, 1]
            starts_row = math_ops.not_equal(rows[1:], rows[:-1])
            ok = array_ops.where(starts_row, math_ops.equal(cols[1:], 0),
                                 math_ops.equal(cols[1:], cols[:-1] + 1))
            right_ragged = math_ops.logical_and(
                math_ops.reduce_all(math_ops.equal(cols[:1], 0)), math_ops.reduce_all(ok))
            check = control_flow_ops.Assert(
                right_ragged, ["SparseTensor is not right-ragged", "SparseTensor.indices =",
                               indices])
            with control_dependencies([check]):
                rows = control_flow_ops.identity(rows)
            return cls.from_value_rowids(st_input.values, rows, st_input.dense_shape[0],
                                         validate=False)

    # -- structure ----------------------------------------------------------------------------

    @property
    def values(self) -> Tensor | RaggedTensor:
        return self._values

    @property
    def row_splits(self) -> Tensor:
        return self._row_splits

    @property
    def dtype(self) -> dtypes.DType:
        return self.flat_values.dtype

    @property
    def row_splits_dtype(self) -> dtypes.DType:
        return self._row_splits.dtype

    @property
    def graph(self) -> Graph:
        return self._row_splits.graph

    @property
    def op(self) -> Operation:
        return self.flat_values.op

    @property
    def shape(self) -> TensorShape:
        return self.get_shape()

    def get_shape(self) -> TensorShape:
        """``[nrows, None (each ragged dimension), *flat_values.shape[1:]]``."""
        splits = self._row_splits.shape[0]
        nrows = None if splits is None else splits - 1
        inner = self.flat_values.shape
        uniform = TensorShape(None) if inner.ndims is None else inner[1:]
        return TensorShape([nrows] + [None] * self.ragged_rank).concatenate(uniform)

    # -- row partition queries ----------------------------------------------------------------

    def nrows(self, out_type: Any = None, name: str | None = None) -> Tensor:
        """The number of rows, in `out_type` (default: the row_splits dtype)."""
        out_type = self.row_splits_dtype if out_type is None else dtypes.as_dtype(out_type)
        if self._cached_nrows is not None:
            return math_ops.cast(self._cached_nrows, out_type)
        with name_scope(name, "RaggedNRows", [self._row_splits]):
            return array_ops.shape(self._row_splits, out_type=out_type)[0] - 1

    def row_starts(self, name: str | None = None) -> Tensor:
        with name_scope(name, "RaggedRowStarts", [self._row_splits]):
            return self._row_splits[:-1]

    def row_limits(self, name: str | None = None) -> Tensor:
        with name_scope(name, "RaggedRowLimits", [self._row_splits]):
            return self._row_splits[1:]

    def row_lengths(self, axis: int = 1, name: str | None = None) -> Tensor | RaggedTensor:
        """The lengths of the rows along `axis` (1: of this tensor; deeper: ragged)."""
        if axis == 0:
            return self.nrows(name=name)
        if axis == 1:
            if self._cached_row_lengths is not None:
                return self._cached_row_lengths
            with name_scope(name, "RaggedRowLengths", [self._row_splits]):
                return self._row_splits[1:] - self._row_splits[:-1]
        if not isinstance(axis, numbers.Integral) or axis < 0 or axis > self.ragged_rank:
            raise ValueError(f"axis={axis} out of bounds: expected 0 <= axis <= "
                             f"{self.ragged_rank} for ragged_rank {self.ragged_rank}")
        return self.with_values(self._values.row_lengths(axis - 1, name=name))

    def nested_row_lengths(self, name: str | None = None) -> tuple[Tensor, ...]:
        with name_scope(name, "RaggedNestedRowLengths", [self._row_splits]):
            lengths = []
            rt: Any = self
            while isinstance(rt, RaggedTensor):
                lengths.append(rt.row_lengths())
                rt = rt.values
            return tuple(lengths)

    def value_rowids(self, name: str | None = None) -> Tensor:
        """The row of each value (the partition as segment ids)."""
        if self._cached_value_rowids is not None:
            return self._cached_value_rowids
        with name_scope(name, "RaggedValueRowIds", [self._row_splits]):
            return row_splits_to_segment_ids(self._row_splits)

    def bounding_shape(self, axis: Any = None, name: str | None = None) -> Tensor:
        """The smallest dense shape that holds this tensor (int64 of the splits' dtype):
        ``[nrows, longest row of each ragged dimension, *flat_values' inner shape]``."""
        with name_scope(name, "RaggedBoundingBox", [self._row_splits]):
            dtype = self.row_splits_dtype
            dims = [array_ops.reshape(self.nrows(), [1])]
            rt: Any = self
            while isinstance(rt, RaggedTensor):
                dims.append(array_ops.reshape(_longest(rt.row_lengths()), [1]))
                rt = rt.values
            dims.append(array_ops.shape(rt, out_type=dtype)[1:])
            shape = array_ops.concat(dims, 0)
            return shape if axis is None else array_ops.gather(shape, axis)

    # -- new tensors from this one ------------------------------------------------------------

    def with_values(self, new_values: Any) -> RaggedTensor:
        """The same row partition around `new_values` (same number of rows as ``values``)."""
        new_values = _convert_values(new_values)
        return RaggedTensor(new_values, self._row_splits, self._cached_row_lengths,
                            self._cached_value_rowids, self._cached_nrows, internal=True)

    def with_flat_values(self, new_values: Any) -> RaggedTensor:
        """The same nested row partitions around `new_values` (in place of ``flat_values``)."""
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    def with_row_splits_dtype(self, dtype: Any) -> RaggedTensor:
        """This tensor with every row partition cast to `dtype` (int32 or int64)."""
        dtype = dtypes.as_dtype(dtype)
        if dtype not in _PARTITION_DTYPES:
            raise ValueError(f"dtype must be int32 or int64, got {dtype!r}")
        if dtype == self.row_splits_dtype:
            return self
        values = self._values
        if isinstance(values, RaggedTensor):
            values = values.with_row_splits_dtype(dtype)
        return RaggedTensor(values, math_ops.cast(self._row_splits, dtype), internal=True)

    def to_tensor(self, default_value: Any = None, name: str | None = None) -> Tensor:
        """The dense tensor of `bounding_shape`, padded with `default_value` (zero, ``b""``
        or False by default; it must broadcast to ``flat_values.shape[1:]``)."""
        with name_scope(name, "RaggedToTensor", [self._row_splits]):
            flat = self.flat_values
            if default_value is None:
                default = constant(_zero_of(flat.dtype), flat.dtype)
            else:
                default = convert_to_tensor(default_value, flat.dtype, name="default_value")
            inner = flat.shape[1:]
            if default.shape.ndims is not None and inner.ndims is not None \
                    and default.shape.ndims > inner.ndims:
                raise ValueError(f"default_value of shape {default.shape} does not broadcast "
                                 f"to the inner shape {inner}")
            dense = _padded(self, default)
            dense.set_shape(self.shape)
            return dense

    def to_sparse(self, name: str | None = None) -> SparseTensor:
        """The `SparseTensor` of every value, indexed in row-major order."""
        with name_scope(name, "RaggedToSparse", [self._row_splits]):
            return SparseTensor(*_sparse_parts(self))

    # -- Python protocol ----------------------------------------------------------------------

    def eval(self, feed_dict: dict | None = None, session: Any = None) -> RaggedTensorValue:
        from tensorweave.engine.client.session import get_default_session_or_raise

        return (session or get_default_session_or_raise()).run(self, feed_dict)

    def _as_tensor(self, dtype: Any = None) -> Tensor:
        raise TypeError(f"Failed to convert object of type {type(self)} to Tensor. Contents: "
                        f"{self}. Consider casting elements to a supported type.")

    def __getitem__(self, key: Any) -> Tensor | RaggedTensor:
        """``rt[key]``: ints, slices, ``...`` and ``newaxis`` as TF's ragged indexing (see
        `tensorweave.api.ragged_getitem`)."""
        # imported here: the indexing module builds on the ragged ops, which import this one
        from tensorweave.api.ragged_getitem import ragged_getitem

        return ragged_getitem(self, key)

    def __repr__(self) -> str:
        return f"tf.RaggedTensor(values={self._values}, row_splits={self._row_splits})"


_ragged_indexing = RaggedTensor.__getitem__
overload_operators(RaggedTensor)
# operators come from the Tensor set; ragged indexing has its own rules
RaggedTensor.__getitem__ = _ragged_indexing  # type: ignore[method-assign]


@attrs.frozen(eq=False)
class RaggedTensorValue(_Nesting):
    """A fetched `RaggedTensor`: numpy ``values`` (or a nested `RaggedTensorValue`) cut by the
    numpy vector ``row_splits``."""

    values: Any
    row_splits: np.ndarray

    def __attrs_post_init__(self) -> None:
        splits = self.row_splits
        if not (isinstance(splits, np.ndarray) and splits.ndim == 1
                and splits.dtype in (np.int32, np.int64)):
            raise TypeError("row_splits must be a 1D int32 or int64 numpy array")
        if not isinstance(self.values, (np.ndarray, np.generic, RaggedTensorValue)):
            raise TypeError("values must be a numpy array or a RaggedTensorValue")
        if isinstance(self.values, RaggedTensorValue) \
                and self.values.row_splits.dtype != splits.dtype:
            raise ValueError("row_splits and values.row_splits must have the same dtype")

    @property
    def dtype(self) -> np.dtype:
        return self.flat_values.dtype

    @property
    def shape(self) -> tuple[int | None, ...]:
        return (len(self.row_splits) - 1, *[None] * self.ragged_rank,
                *self.flat_values.shape[1:])

    def to_list(self) -> list[Any]:
        inner = self.values.to_list() if isinstance(self.values, RaggedTensorValue) \
            else self.values.tolist()
        splits = self.row_splits.tolist()
        return [inner[start:limit] for start, limit in zip(splits[:-1], splits[1:])]

    def __str__(self) -> str:
        return f"<tf.RaggedTensorValue {self.to_list()}>"

    def __repr__(self) -> str:
        return f"tf.RaggedTensorValue(values={self.values!r}, row_splits={self.row_splits!r})"


def ragged_feed_items(key: RaggedTensor, value: Any) -> list[tuple[Tensor, Any]]:
    """The component feeds of feeding `value` (a `RaggedTensorValue`) to `key`."""
    if not isinstance(value, RaggedTensorValue):
        raise TypeError(f"Cannot feed value {value!r} to a RaggedTensor: a RaggedTensorValue "
                        f"is expected.")
    if value.ragged_rank != key.ragged_rank:
        raise ValueError(f"Cannot feed a RaggedTensorValue of ragged_rank {value.ragged_rank} "
                         f"to a RaggedTensor of ragged_rank {key.ragged_rank}")
    return [*zip(key.nested_row_splits, value.nested_row_splits),
            (key.flat_values, value.flat_values)]


# -- row partitions as segment ids --------------------------------------------------------------

def row_splits_to_segment_ids(splits: Any, name: str | None = None,
                              out_type: Any = None) -> Tensor:
    """The row of each value of the partition `splits`: ``[0, 0, 2]`` for ``[0, 2, 2, 3]``."""
    with name_scope(name, "RaggedSplitsToSegmentIds", _tensors(splits)):
        splits = _convert_partition(splits, "splits")
        splits.shape.with_rank(1)
        out_type = splits.dtype if out_type is None else dtypes.as_dtype(out_type)
        # each interior split bumps the row id of the values from there on, so the ids are a
        # cumulative count of the splits at or before each position (empty rows count twice)
        interior = splits[1:-1]
        nvals = splits[-1]
        bumps = array_ops.unsorted_segment_sum(array_ops.ones_like(interior), interior,
                                               nvals + 1)
        return math_ops.cast(math_ops.cumsum(bumps)[:nvals], out_type)


def segment_ids_to_row_splits(segment_ids: Any, num_segments: Any = None,
                              out_type: Any = None, name: str | None = None) -> Tensor:
    """The row splits of sorted `segment_ids` over `num_segments` rows (default: the last id
    plus one)."""
    if out_type is None:
        if isinstance(segment_ids, Tensor):
            out_type = segment_ids.dtype
        elif isinstance(num_segments, Tensor):
            out_type = num_segments.dtype
        else:
            out_type = dtypes.int64
    out_type = dtypes.as_dtype(out_type)
    with name_scope(name, "SegmentIdsToRaggedSplits", _tensors(segment_ids, num_segments)):
        segment_ids = _convert_partition(segment_ids, "segment_ids", out_type)
        segment_ids.shape.with_rank(1)
        if num_segments is None:
            num_segments = math_ops.maximum(math_ops.reduce_max(segment_ids) + 1,
                                            _zero(segment_ids))
        else:
            num_segments = _convert_partition(num_segments, "num_segments", out_type)
        lengths = array_ops.unsorted_segment_sum(array_ops.ones_like(segment_ids), segment_ids,
                                                 num_segments)
        return _splits_from_lengths(lengths)


# -- helpers --------------------------------------------------------------------------------------

def _tensors(*parts: Any) -> list[Tensor]:
    """The graph tensors among `parts` (flat values and splits of ragged ones), for scopes."""
    found: list[Tensor] = []
    for part in parts:
        if isinstance(part, RaggedTensor):
            found.extend([part.flat_values, *part.nested_row_splits])
        elif isinstance(part, Tensor):
            found.append(part)
    return found


def _check_partition_dtype(partition: Tensor, name: str) -> None:
    if partition.dtype not in _PARTITION_DTYPES:
        raise ValueError(f"{name} must have dtype int32 or int64, got {partition.dtype!r}")


def _convert_partition(partition: Any, name: str, dtype: Any = None) -> Tensor:
    """`partition` as an int64 (or int32 where it already is) tensor, as TF converts one."""
    if isinstance(partition, np.ndarray) and partition.dtype == np.int32 and dtype is None:
        tensor = convert_to_tensor(partition, name=name)
    elif dtype is None:
        tensor = convert_to_tensor(partition, preferred_dtype=dtypes.int64, name=name)
    elif isinstance(partition, Tensor) and partition.dtype in _PARTITION_DTYPES:
        tensor = math_ops.cast(partition, dtype)
    else:
        tensor = convert_to_tensor(partition, dtype=dtype, name=name)
    _check_partition_dtype(tensor, name)
    return tensor


def _convert_values(values: Any) -> Tensor | RaggedTensor:
    if isinstance(values, RaggedTensor):
        return values
    values = convert_to_tensor(values, name="values")
    if values.shape.ndims == 0:
        raise ValueError(f"Shape {values.shape} must have rank at least 1")
    return values


def _constant(value: Any, like: Tensor) -> Tensor:
    return constant(np.asarray(value, like.dtype.as_numpy_dtype), like.dtype)


def _zero(like: Tensor) -> Tensor:
    return _constant(0, like)


def _zero_of(dtype: dtypes.DType) -> Any:
    if dtype == dtypes.string:
        return b""
    return np.zeros((), dtype.as_numpy_dtype)[()]


def _nrows(values: Tensor | RaggedTensor, out_type: dtypes.DType) -> Tensor:
    if isinstance(values, RaggedTensor):
        return values.nrows(out_type)
    return array_ops.shape(values, out_type=out_type)[0]


def _with_dependencies(checks: list[Any], tensor: Tensor) -> Tensor:
    with control_dependencies(checks):
        return control_flow_ops.identity(tensor)


def _splits_from_lengths(lengths: Tensor) -> Tensor:
    return array_ops.concat([_constant([0], lengths), math_ops.cumsum(lengths)], 0)


def _longest(lengths: Tensor) -> Tensor:
    """The longest of `lengths`, 0 when there are none."""
    return math_ops.reduce_max(array_ops.concat([_constant([0], lengths), lengths], 0))


def _uniform_rows(values: Tensor | RaggedTensor, row_length: Tensor,
                  nrows: Tensor) -> RaggedTensor:
    """`values` in `nrows` rows of `row_length` each."""
    splits = array_ops.range(nrows + 1, dtype=row_length.dtype) * row_length
    return RaggedTensor(values, splits, internal=True)


def _rows_of_matrix(cls: type[RaggedTensor], tensor: Tensor, dims: Tensor, lengths: Any,
                    padding: Any) -> RaggedTensor:
    """`from_tensor` with ragged_rank 1: the rows of `tensor` (of shape `dims`)."""
    ncols = dims[1]
    if padding is not None:
        padding = convert_to_tensor(padding, tensor.dtype, name="padding")
        padding.shape.assert_is_compatible_with(tensor.shape[2:])
        is_padding = math_ops.equal(tensor, padding)
        if tensor.shape.ndims > 2:
            is_padding = math_ops.reduce_all(is_padding, axis=list(range(2, tensor.shape.ndims)))
        # a row is as long as its last entry that is not padding
        kept = math_ops.cast(math_ops.logical_not(is_padding), dtypes.int64)
        positions = array_ops.expand_dims(array_ops.range(1, ncols + 1, dtype=dtypes.int64), 0)
        lengths = math_ops.reduce_max(
            array_ops.concat([array_ops.zeros_like(kept[:, :1]), kept * positions], 1), axis=1)
    if lengths is None:
        values = array_ops.reshape(tensor, array_ops.concat([_constant([-1], dims),
                                                             dims[2:]], 0))
        return _uniform_rows(values, ncols, dims[0])
    lengths = _convert_partition(lengths, "lengths", dtypes.int64)
    lengths.shape.with_rank(1)
    lengths = math_ops.maximum(math_ops.minimum(lengths, ncols), _zero(lengths))
    mask = array_ops.sequence_mask(lengths, maxlen=ncols)
    return cls.from_row_splits(array_ops.boolean_mask(tensor, mask),
                               _splits_from_lengths(lengths), validate=False)


def _padded(rt: RaggedTensor, default: Tensor) -> Tensor:
    """`rt` as a dense tensor, its rows padded to the longest with `default`."""
    values = rt.values
    if isinstance(values, RaggedTensor):
        values = _padded(values, default)
    splits = rt.row_splits
    lengths = rt.row_lengths()
    ncols = _longest(lengths)
    columns = array_ops.range(ncols, dtype=splits.dtype)
    # each cell takes its value's index, or the index of a padding row appended to the values
    cells = array_ops.expand_dims(splits[:-1], 1) + array_ops.expand_dims(columns, 0)
    present = math_ops.less(array_ops.expand_dims(columns, 0), array_ops.expand_dims(lengths, 1))
    cells = array_ops.where_v2(present, cells, _nrows(values, splits.dtype))
    inner = array_ops.shape(values, out_type=splits.dtype)[1:]
    pad_row = array_ops.broadcast_to(default, array_ops.concat([_constant([1], splits), inner],
                                                               0))
    return array_ops.gather(array_ops.concat([values, pad_row], 0), cells)


def _sparse_parts(rt: RaggedTensor) -> tuple[Tensor, Tensor, Tensor]:
    """The indices, values and dense shape of `rt`'s `SparseTensor`."""
    values = rt.values
    if isinstance(values, RaggedTensor):
        indices, flat, dense_shape = _sparse_parts(values)
    else:
        every = array_ops.fill(array_ops.shape(values), True)
        indices = array_ops.where(every)
        flat = array_ops.reshape(values, [-1])
        dense_shape = array_ops.shape(values, out_type=dtypes.int64)
    splits = math_ops.cast(rt.row_splits, dtypes.int64)
    rowids = math_ops.cast(rt.value_rowids(), dtypes.int64)
    columns = array_ops.range(array_ops.shape(rowids, out_type=dtypes.int64)[0],
                              dtype=dtypes.int64) - array_ops.gather(splits, rowids)
    outer = array_ops.gather(array_ops.stack([rowids, columns], axis=1), indices[:, 0])
    nrows = array_ops.shape(splits, out_type=dtypes.int64)[:1] - 1
    ncols = array_ops.reshape(_longest(splits[1:] - splits[:-1]), [1])
    return (array_ops.concat([outer, indices[:, 1:]], 1), flat,
            array_ops.concat([nrows, ncols, dense_shape[1:]], 0))


def _slice_values(values: Tensor | RaggedTensor, start: Tensor,
                  limit: Tensor) -> Tensor | RaggedTensor:
    """``values[start:limit]``, rows of a ragged `values` included."""
    if not isinstance(values, RaggedTensor):
        return values[start:limit]
    splits = values.row_splits[start:limit + 1]
    inner = _slice_values(values.values, splits[0], splits[-1])
    return RaggedTensor(inner, splits - splits[0], internal=True)


def _fetch(value: RaggedTensor) -> tuple[list[Tensor], Any]:
    def rebuild(parts: list[Any]) -> Any:
        out = parts[0]
        for splits in reversed(parts[1:]):
            out = RaggedTensorValue(out, splits)
        return out

    return [value.flat_values, *value.nested_row_splits], rebuild


register_session_run_conversion_functions(RaggedTensor, _fetch, ragged_feed_items)
