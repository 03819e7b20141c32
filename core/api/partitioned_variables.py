"""Partitioned variables: one logical variable stored as shards, as TF1's ``PartitionedVariable``.

Contract: a partitioner is ``fn(shape=TensorShape, dtype=DType) -> [int per axis]`` with more
than one partition along at most one axis (`fixed_size_partitioner`,
`variable_axis_size_partitioner`, `min_max_variable_partitioner`, TF's formulas).
``get_variable(name, shape, partitioner=...)`` (or a ``variable_scope(partitioner=...)``) creates
the shards ``name/part_0`` ... as ordinary variables: along the split axis the first
``size % n`` shards get one row more, and each gets its offset (TF's ``_PartitionInfo``) when its
initializer is called; a value initializer is sliced. Every shard carries ``_save_slice_info``
(the full name, full shape, its offset and shape), so a `Saver` writes the whole variable under
its full name and restores it into any partitioning. Shards are separate variable ops, so
``replica_device_setter`` spreads them over ps tasks round robin. The `PartitionedVariable`
iterates over its shards, and `as_tensor()` (also what ``convert_to_tensor`` gives) concatenates
them. Reuse follows `get_variable`'s rules with TF's messages.

`embedding_lookup_shards` is ``embedding_lookup`` over several shards: each id goes to its shard
(``"mod"``: ``id % n``; ``"div"``: consecutive ranges), each shard is gathered where it lives and
the rows are put back in the ids' order, so the gradient of each shard stays an
`IndexedSlices` of the rows it served.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs
import numpy as np

from tensorweave.api import array_ops, math_ops
from tensorweave.api.scopes import colocate_with
from tensorweave.api.variable_scope import (
    _default_initializer,
    _graph_singleton,
    _VariableStore,
    get_variable_scope,
    variable_scope,
)
from tensorweave.api.variables import Variable
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.func_graph import outermost_graph
from tensorweave.engine.graph.graph import Tensor, get_default_graph
from tensorweave.engine.graph.op_builder import apply
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "PartitionedVariable", "create_partitioned_variables", "fixed_size_partitioner",
    "min_max_variable_partitioner", "variable_axis_size_partitioner",
]

Partitioner = Callable[..., Sequence[int]]
_PARTITIONED_KEY = ("__partitioned_variables",)


@attrs.frozen
class SaveSliceInfo:
    """Where a shard sits in its full variable: TF's ``Variable.SaveSliceInfo``."""

    full_name: str
    full_shape: tuple[int, ...]
    var_offset: tuple[int, ...]
    var_shape: tuple[int, ...]

    @property
    def spec(self) -> str:
        """TF's slice spec text: ``"<full dims> <offset>,<length>:..."``."""
        dims = " ".join(str(d) for d in self.full_shape)
        parts = ":".join(f"{o},{s}" for o, s in zip(self.var_offset, self.var_shape))
        return f"{dims} {parts}"

    @property
    def slices(self) -> tuple[slice, ...]:
        return tuple(slice(o, o + s) for o, s in zip(self.var_offset, self.var_shape))


@attrs.frozen
class PartitionInfo:
    """What a shard's initializer is told: the full shape and the shard's offset in it."""

    full_shape: tuple[int, ...]
    var_offset: tuple[int, ...]

    def single_slice_dim(self, shape: Sequence[int]) -> int | None:
        """The one axis along which a shard of `shape` differs from the full shape."""
        dims = [i for i, (full, part) in enumerate(zip(self.full_shape, shape)) if full != part]
        if len(dims) > 1:
            raise ValueError(f"Cannot use single_slice_dim() with shape={list(shape)} and "
                             f"full_shape={list(self.full_shape)}")
        return dims[0] if dims else None

    def single_offset(self, shape: Sequence[int]) -> int:
        axis = self.single_slice_dim(shape)
        return 0 if axis is None else self.var_offset[axis]


# -- partitioners ---------------------------------------------------------------------------------


def _element_size(dtype: dtypes.DType, bytes_per_string_element: int) -> int:
    if dtype == dtypes.string:
        return bytes_per_string_element
    return int(np.dtype(dtype.np_type).itemsize)


def fixed_size_partitioner(num_shards: int, axis: int = 0) -> Partitioner:
    """`num_shards` partitions along `axis` (fewer when the axis is shorter)."""

    def _partitioner(shape: Any, dtype: Any = None) -> list[int]:
        shape = TensorShape(shape)
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        partitions = [1] * shape.ndims
        partitions[axis] = min(num_shards, shape.as_list()[axis])
        return partitions

    return _partitioner


def variable_axis_size_partitioner(max_shard_bytes: int, axis: int = 0,
                                   bytes_per_string_element: int = 16,
                                   max_shards: int | None = None) -> Partitioner:
    """As many partitions along `axis` as keep each shard within `max_shard_bytes`."""
    if axis < 0:
        raise ValueError("axis must be non-negative")
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be positive.")
    if max_shards is not None and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape: Any, dtype: Any) -> list[int]:
        if not isinstance(shape, TensorShape):
            raise ValueError(f"shape is not a TensorShape: {shape}")
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        if not isinstance(dtype, dtypes.DType):
            raise ValueError(f"dtype is not a DType: {dtype}")
        dims = shape.as_list()
        partitions = [1] * len(dims)
        bytes_per_slice = shape.num_elements() / dims[axis] * _element_size(
            dtype, bytes_per_string_element)
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice))
        axis_shards = int(math.ceil(dims[axis] / slices_per_shard))
        if max_shards:
            axis_shards = min(max_shards, axis_shards)
        partitions[axis] = axis_shards
        return partitions

    return _partitioner


def min_max_variable_partitioner(max_partitions: int = 1, axis: int = 0,
                                 min_slice_size: int = 256 << 10,
                                 bytes_per_string_element: int = 16) -> Partitioner:
    """Partitions of at least `min_slice_size` bytes each, at most `max_partitions`."""

    def _partitioner(shape: Any, dtype: Any) -> list[int]:
        shape = TensorShape(shape)
        dims = shape.as_list()
        if axis >= len(dims):
            raise ValueError(f"Can not partition variable along axis {axis} when shape is only "
                             f"{shape}")
        total = shape.num_elements() * _element_size(dtypes.as_dtype(dtype),
                                                     bytes_per_string_element)
        partitions = [1] * len(dims)
        partitions[axis] = max(1, min(dims[axis], max_partitions,
                                      int(math.ceil(total / min_slice_size))))
        return partitions

    return _partitioner


# -- the variable ---------------------------------------------------------------------------------


class PartitionedVariable:
    """The shards of one logical variable; see the module docstring."""

    def __init__(self, name: str, shape: TensorShape, dtype: dtypes.DType,
                 variable_list: list[Variable], partitions: list[int]) -> None:
        self._name = name
        self._shape = shape
        self._dtype = dtype
        self._variable_list = variable_list
        self._partitions = partitions
        self._as_tensor_cache: Tensor | None = None

    def __iter__(self) -> Iterator[Variable]:
        return iter(self._variable_list)

    def __len__(self) -> int:
        return len(self._variable_list)

    def _get_variable_list(self) -> list[Variable]:
        return self._variable_list

    def _get_partitions(self) -> list[int]:
        return self._partitions

    def _partition_axis(self) -> int:
        return next((i for i, p in enumerate(self._partitions) if p > 1), 0)

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    @property
    def graph(self) -> Any:
        return self._variable_list[0].graph

    def as_tensor(self) -> Tensor:
        """The shards concatenated along the partitioned axis (one read per call)."""
        with get_default_graph().name_scope(f"{self._name}/ConcatPartitions/"):
            if len(self._variable_list) == 1:
                return apply("Identity", [self._variable_list[0]], name="concat")
            return apply("ConcatV2", [list(self._variable_list),
                                      np.int32(self._partition_axis())], name="concat")

    def _as_tensor(self, dtype: dtypes.DType | None = None) -> Tensor:
        if dtype is not None and dtypes.as_dtype(dtype) != self._dtype:
            raise ValueError(
                f"Incompatible type conversion requested to type '{dtypes.as_dtype(dtype).name}'"
                f" for variable of type '{self._dtype.name}'")
        return self.as_tensor()

    def assign(self, value: Any, use_locking: bool = False, name: str | None = None,
               read_value: bool = True) -> list[Any]:
        """Assign the matching slice of `value` to each shard; returns their assignments."""
        value = convert_to_tensor(value, self._dtype)
        out = []
        for i, var in enumerate(self._variable_list):
            info: SaveSliceInfo = var._save_slice_info
            part = array_ops.slice(value, list(info.var_offset), list(info.var_shape))
            out.append(var.assign(part, use_locking=use_locking,
                                  name=None if name is None else f"{name}_{i}",
                                  read_value=read_value))
        return out

    def __repr__(self) -> str:
        return (f"<tf.PartitionedVariable '{self._name}' shape={self._shape} "
                f"dtype={self._dtype.name} partitions={self._partitions}>")


def shard_layout(full_shape: Sequence[int], partitions: Sequence[int]
                 ) -> list[tuple[list[int], list[int]]]:
    """(offset, shape) of each shard, in order: TF's slicing with the remainder spread over the
    first shards."""
    if len(partitions) != len(full_shape):
        raise ValueError(f"Partitioner returned a partition list that does not match the "
                         f"Variable's rank: {list(partitions)} vs. {list(full_shape)}")
    axis = None
    for dim, (size, count) in enumerate(zip(full_shape, partitions)):
        if count <= 0 or size < count:
            raise ValueError(f"Cannot create {count} slices for size {size}. shape: "
                             f"{list(full_shape)}, slicing: {list(partitions)}")
        if count > 1:
            if axis is not None:
                raise ValueError(f"Can only slice a variable along one dimension: shape: "
                                 f"{list(full_shape)}, slicing: {list(partitions)}")
            axis = dim
    axis = 0 if axis is None else axis
    count, size = partitions[axis], full_shape[axis]
    base, extra = divmod(size, count)
    out = []
    for i in range(count):
        offset, shape = [0] * len(full_shape), list(full_shape)
        offset[axis] = i * base + min(i, extra)
        shape[axis] = base + (1 if i < extra else 0)
        out.append((offset, shape))
    return out


def _partitioned_store() -> dict[str, PartitionedVariable]:
    return _graph_singleton(outermost_graph(get_default_graph()), _PARTITIONED_KEY, dict)


def _shard_initializer(initializer: Any, info: PartitionInfo, offset: list[int],
                       shape: list[int], dtype: dtypes.DType) -> Any:
    """The initializer of one shard: a callable told its `PartitionInfo`, or the slice of a
    value."""
    if callable(initializer):
        return functools.partial(_call_with_info, initializer, info)
    value = convert_to_tensor(initializer, dtype=dtype)
    return array_ops.slice(value, offset, shape)


def _call_with_info(initializer: Any, info: PartitionInfo, shape: Any, dtype: Any = None,
                    partition_info: Any = None) -> Any:
    return initializer(shape, dtype=dtype, partition_info=info)


def get_partitioned_variable(store: _VariableStore, name: str, shape: Any, dtype: Any,
                             initializer: Any, regularizer: Any, reuse: Any,
                             trainable: bool | None, collections: list[str] | None,
                             caching_device: Any, partitioner: Partitioner,
                             validate_shape: bool = True,
                             constraint: Any = None,
                             use_resource: Any = None) -> PartitionedVariable:
    """The partitioned variable `name` of `store`, created or reused (``get_variable`` with a
    partitioner)."""
    if name in store.vars:
        raise ValueError(f"A partitioner was provided, but an unpartitioned version of the "
                         f"variable was found: {name}.  Perhaps a variable of the same name "
                         "was already created without partitioning?")
    from_value = initializer is not None and not callable(initializer)
    dtype = dtypes.as_dtype(dtype)
    shape = TensorShape(shape)
    if from_value:
        value = convert_to_tensor(initializer, dtype=dtype)
        shape = shape.merge_with(value.shape)
        dtype, initializer = value.dtype, value
    found = _partitioned_store().get(name)
    if found is not None:
        if reuse is False:
            raise ValueError(f"Partitioned variable with name {name} already exists. Did you "
                             "mean to set reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
        if not shape.is_compatible_with(found.get_shape()):
            raise ValueError(f"Trying to reuse partitioned variable {name}, but specified shape "
                             f"{shape} and found shape {found.get_shape()}.")
        if dtype != found.dtype:
            raise ValueError(f"Trying to reuse partitioned variable {name}, but specified dtype "
                             f"{dtype.name} and found dtype {found.dtype.name}.")
        return found
    if reuse is True:
        raise ValueError(f"PartitionedVariable {name} does not exist, or was not created with "
                         "tf.get_variable(). Did you mean to set reuse=False or "
                         "reuse=tf.AUTO_REUSE in VarScope?")
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new partitioned variable ({name}) must be fully defined, "
                         f"but instead was {shape}.")
    if shape.ndims < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape}")
    partitions = partitioner(shape=shape, dtype=dtype)
    if not isinstance(partitions, (list, tuple)) or any(
            not isinstance(p, (int, np.integer)) for p in partitions):
        raise ValueError(f"Partitioner returned a non-integer sequence: {partitions}")
    partitions = [int(p) for p in partitions]
    if any(p < 1 for p in partitions):
        raise ValueError(f"Partitioner returned zero partitions for some axes: {partitions}")
    full_shape = shape.as_list()
    if initializer is None:
        initializer = _default_initializer(name, dtype)
    if isinstance(initializer, type):
        initializer = initializer()
    shards = []
    for i, (offset, part_shape) in enumerate(shard_layout(full_shape, partitions)):
        info = PartitionInfo(tuple(full_shape), tuple(offset))
        shard_init = _shard_initializer(initializer, info, offset, part_shape, dtype)
        shard = store._get_single_variable(
            f"{name}/part_{i}", None if from_value else part_shape, dtype, shard_init,
            regularizer, reuse, trainable, collections, caching_device, validate_shape,
            constraint, use_resource)
        shard._save_slice_info = SaveSliceInfo(name, tuple(full_shape), tuple(offset),
                                               tuple(part_shape))
        shards.append(shard)
    variable = PartitionedVariable(name, shape, dtype, shards, partitions)
    _partitioned_store()[name] = variable
    return variable


def create_partitioned_variables(shape: Sequence[int], slicing: Sequence[int], initializer: Any,
                                 dtype: Any = dtypes.float32, trainable: bool = True,
                                 collections: list[str] | None = None, name: str | None = None,
                                 reuse: Any = None) -> list[Variable]:
    """The shards of a variable of `shape` cut as `slicing` says, in a variable scope `name`
    (default ``PartitionedVariable``) whose name is the full variable's."""
    if len(shape) != len(slicing):
        raise ValueError(f"The 'shape' and 'slicing' of a partitioned Variable must have the "
                         f"length: shape: {list(shape)}, slicing: {list(slicing)}")
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {shape}")
    from tensorweave.api.variable_scope import _variable_store

    with variable_scope(name, "PartitionedVariable", reuse=reuse):
        scope = get_variable_scope()
        with get_default_graph().name_scope(None):
            variable = get_partitioned_variable(
                _variable_store(), scope.name, shape, dtype, initializer, None, scope.reuse,
                trainable, collections, None, lambda **_: list(slicing))
        return list(variable)


# -- embedding lookup -----------------------------------------------------------------------------


def embedding_lookup_shards(shards: list[Tensor], ids: Tensor, partition_strategy: str,
                            name: str | None = None) -> Tensor:
    """The rows at `ids` of the table split into `shards`; see the module docstring."""
    count = len(shards)
    flat = array_ops.reshape(ids, [-1])
    positions = apply("Range", [np.int32(0), apply("Size", [flat], {"out_type": dtypes.int32}),
                                np.int32(1)])
    dt = flat.dtype.np_type
    if partition_strategy == "mod":
        n = np.asarray(count, dt)
        assignment, local = apply("FloorMod", [flat, n]), apply("FloorDiv", [flat, n])
    else:
        starts = _shard_starts(shards)
        above = [math_ops.cast(apply("GreaterEqual", [flat, np.asarray(start, dt)]),
                               flat.dtype) for start in starts[1:]]
        assignment = above[0] if len(above) == 1 else apply("AddN", [above])
        local = apply("Sub", [flat, array_ops.gather(np.asarray(starts, dt), assignment)])
    rows, where = [], []
    for p, shard in enumerate(shards):
        mask = apply("Equal", [assignment, np.asarray(p, dt)])
        with colocate_with(shard):
            rows.append(array_ops.gather(shard, array_ops.boolean_mask(local, mask)))
        where.append(array_ops.boolean_mask(positions, mask))
    # the positions are a permutation, so scattering the rows back never sums two; its
    # gradient is a dense gather of the incoming one
    row_shape = array_ops.shape(shards[0])[1:]
    stitched = apply("ScatterNd", [array_ops.expand_dims(apply("ConcatV2", [where, np.int32(0)]),
                                                         1),
                                   apply("ConcatV2", [rows, np.int32(0)]),
                                   apply("ConcatV2", [[array_ops.shape(positions), row_shape],
                                                      np.int32(0)])])
    out_shape = apply("ConcatV2", [[array_ops.shape(ids), row_shape], np.int32(0)])
    result = apply("Reshape", [stitched, out_shape], name=name)
    if ids.shape.ndims is not None and shards[0].shape.ndims is not None:
        result.set_shape(ids.shape.concatenate(shards[0].shape[1:]))
    return result


def _shard_starts(shards: list[Tensor]) -> list[int]:
    sizes = [s.shape[0] if s.shape.ndims else None for s in shards]
    if any(size is None for size in sizes):
        raise ValueError("embedding_lookup over several shards needs each shard's first "
                         "dimension to be known")
    return [int(v) for v in np.concatenate([[0], np.cumsum(sizes[:-1])])]
