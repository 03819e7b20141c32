"""Host-only sparse kernels, as in TF (CPU kernels only): ``SerializeSparse``,
``SerializeManySparse``, ``DeserializeManySparse`` and ``EditDistance``.

Contract: a serialized `SparseTensor` is TF's: a string vector of three serialized
``TensorProto``s (indices, values, dense shape), written with ``tensor_proto``'s
``tensor_to_proto`` and read back with ``parse_tensor``. ``SerializeManySparse`` gives one such
row per entry of the first dimension (the rest of the indices and shape); deserializing stacks
rows back with their row number as a new first index column and the elementwise maximum of
their shapes. ``EditDistance`` is the Levenshtein distance between the value sequences (ordered
by last index) that hypothesis and truth hold at each position of their outer dimensions,
divided by the truth's length with ``normalize`` (inf for an empty truth, 0 when both are
empty). Malformed input raises `InvalidArgumentError` in TF's wording.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.graph.tensor_proto import parse_tensor, tensor_to_proto
from tensorweave.engine.kernel import KernelContext
from tensorweave.engine.proto.framework import DATA_TYPES
from tensorweave.plugins.kernels.array import _fail, _fmt
from tensorweave.plugins.kernels.sparse_ops import _components, _flat, _order


def _tf_name(dtype: dtypes.DType) -> str:
    """TF's ``DataTypeString``: ``float``, ``double``, ``int64``, ``string``, ..."""
    return next(name for name, number in DATA_TYPES.items()
                if number == dtype.as_datatype_enum)[3:].lower()


def _serialized(indices: np.ndarray, values: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    parts = (indices.astype(np.int64, copy=False), values, np.asarray(dims, np.int64))
    out = np.empty(3, dtype=object)
    out[:] = [tensor_to_proto(part).SerializeToString() for part in parts]
    return out


def _host(ctx: KernelContext, *arrays: Any) -> list[np.ndarray]:
    return [np.asarray(ctx.device.to_host(a)) for a in arrays]


def serialize_sparse(ctx: KernelContext, indices: Any, values: Any, shape: Any) -> Any:
    dims = _components(ctx, indices, values, shape)
    indices, values = _host(ctx, indices, values)
    return _serialized(indices, values, dims)


def serialize_many_sparse(ctx: KernelContext, indices: Any, values: Any, shape: Any) -> Any:
    dims = _components(ctx, indices, values, shape)
    if len(dims) < 2:
        raise _fail(ctx, f"Rank of input SparseTensor should be > 1, but saw rank: {len(dims)}")
    indices, values = _host(ctx, indices, values)
    out = np.empty((dims[0], 3), dtype=object)
    rows = indices[:, 0]
    if indices.shape[0] and bool(((rows < 0) | (rows >= dims[0])).any()):
        i = int(np.argmax((rows < 0) | (rows >= dims[0])))
        raise _fail(ctx, f"Index {i} of input SparseTensor has row {int(rows[i])} outside "
                         f"[0, {dims[0]})")
    for row in range(dims[0]):
        mine = rows == row
        out[row] = _serialized(indices[mine][:, 1:], values[mine], dims[1:])
    return out


def _parse(ctx: KernelContext, data: Any, where: str) -> np.ndarray:
    if not isinstance(data, bytes):
        raise _fail(ctx, f"Could not parse {where}: not a string")
    try:
        return parse_tensor(data, "TensorProto")
    except ValueError as e:
        raise _fail(ctx, f"Could not parse {where}: {e}") from None


def deserialize_many_sparse(ctx: KernelContext, serialized: Any) -> Any:
    want: dtypes.DType = ctx.attrs["dtype"]
    serialized = np.asarray(serialized, dtype=object)
    if serialized.ndim != 2 or serialized.shape[1] != 3:
        raise _fail(ctx, f"Serialized sparse should have 3 columns but received shape "
                         f"{_fmt(serialized.shape)}")
    if serialized.shape[0] == 0:
        raise _fail(ctx, "Serialized sparse should have at least 1 row but received shape "
                         f"{_fmt(serialized.shape)}")
    all_indices, all_values, dims = [], [], None
    for i in range(serialized.shape[0]):
        indices = _parse(ctx, serialized[i, 0], f"serialized_sparse[{i}, 0]")
        values = _parse(ctx, serialized[i, 1], f"serialized_sparse[{i}, 1]")
        shape = _parse(ctx, serialized[i, 2], f"serialized_sparse[{i}, 2]")
        if indices.dtype != np.int64 or indices.ndim != 2:
            raise _fail(ctx, f"Expected serialized_sparse[{i}, 0] to represent an index matrix "
                             f"but received shape {_fmt(indices.shape)}")
        if values.ndim != 1:
            raise _fail(ctx, f"Expected serialized_sparse[{i}, 1] to represent a values vector "
                             f"but received shape {_fmt(values.shape)}")
        if shape.dtype != np.int64 or shape.ndim != 1:
            raise _fail(ctx, f"Expected serialized_sparse[{i}, 2] to represent a shape vector "
                             f"but received shape {_fmt(shape.shape)}")
        got = dtypes.as_dtype(values.dtype)
        if got != want:
            raise _fail(ctx, f"Requested SparseTensor of type {_tf_name(want)} but "
                             f"SparseTensor[{i}].values.dtype() == {_tf_name(got)}")
        if indices.shape[0] != values.shape[0] or indices.shape[1] != shape.shape[0]:
            raise _fail(ctx, f"SparseTensor[{i}] has indices of shape "
                             f"{_fmt(indices.shape)}, values of shape {_fmt(values.shape)} "
                             f"and a shape of {shape.shape[0]} elements")
        if dims is not None and len(dims) != shape.shape[0]:
            raise _fail(ctx, f"Inconsistent rank across SparseTensors: rank prior to "
                             f"SparseTensor[{i}] was: {len(dims) + 1} but rank of "
                             f"SparseTensor[{i}] is: {shape.shape[0] + 1}")
        dims = shape if dims is None else np.maximum(dims, shape)
        batch = np.full((indices.shape[0], 1), i, np.int64)
        all_indices.append(np.concatenate([batch, indices], axis=1))
        all_values.append(values)
    out_shape = np.concatenate([[serialized.shape[0]], dims]).astype(np.int64)
    device = ctx.device
    return (device.from_host(np.concatenate(all_indices)),
            device.from_host(np.concatenate(all_values).astype(want.np_type, copy=False)),
            device.from_host(out_shape))


def _levenshtein(a: Sequence[Any], b: Sequence[Any]) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


def _sequences(ctx: KernelContext, indices: np.ndarray, values: np.ndarray,
               outer: Sequence[int]) -> dict[int, list[Any]]:
    """Each outer position's values, ordered by their full index."""
    order = _order(ctx, indices)
    keys = _flat(ctx, indices[order][:, :-1], outer)
    out: dict[int, list[Any]] = {}
    for key, value in zip(keys.tolist(), values[order].tolist()):
        out.setdefault(key, []).append(value)
    return out


def edit_distance(ctx: KernelContext, h_indices: Any, h_values: Any, h_shape: Any,
                  t_indices: Any, t_values: Any, t_shape: Any) -> Any:
    h_dims = _components(ctx, h_indices, h_values, h_shape)
    t_dims = _components(ctx, t_indices, t_values, t_shape)
    if len(h_dims) < 2 or len(t_dims) < 2:
        raise _fail(ctx, f"Input SparseTensors must have rank at least 2, but "
                         f"{'hypothesis' if len(h_dims) < 2 else 'truth'}_shape rank is: "
                         f"{min(len(h_dims), len(t_dims))}")
    if len(h_dims) != len(t_dims):
        raise _fail(ctx, f"hypothesis_shape and truth_shape must have the same rank; got "
                         f"{_fmt(h_dims)} and {_fmt(t_dims)}")
    outer = [max(h, t) for h, t in zip(h_dims[:-1], t_dims[:-1])]
    h_indices, h_values, t_indices, t_values = _host(ctx, h_indices, h_values, t_indices,
                                                     t_values)
    for name, indices, dims in (("hypothesis", h_indices, h_dims),
                                ("truth", t_indices, t_dims)):
        bad = (indices < 0) | (indices >= np.asarray(dims))
        if indices.shape[0] and bool(bad.any()):
            i = int(np.argmax(bad.any(axis=1)))
            raise _fail(ctx, f"{name}_indices[{i}] = {_fmt(indices[i].tolist())} is out of "
                             f"bounds of {name}_shape {_fmt(dims)}")
    hypothesis = _sequences(ctx, h_indices, h_values, outer)
    truth = _sequences(ctx, t_indices, t_values, outer)
    normalize = ctx.attrs["normalize"]
    out = np.zeros(int(np.prod(outer)), np.float32)
    for key in set(hypothesis) | set(truth):
        h, t = hypothesis.get(key, []), truth.get(key, [])
        distance = float(_levenshtein(h, t))
        if normalize:
            distance = distance / len(t) if t else np.inf
        out[key] = distance
    return ctx.device.from_host(out.reshape(outer))


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    registry.add("SerializeSparse", device_type, serialize_sparse)
    registry.add("SerializeManySparse", device_type, serialize_many_sparse)
    registry.add("DeserializeManySparse", device_type, deserialize_many_sparse)
    registry.add("EditDistance", device_type, edit_distance)
