"""Kernels of ``ParseExample`` and ``ParseSingleExample``, host-only as in TF (the CPU plugin's
``HOST_KERNEL_MODULES``).

Contract, as TF's fast Example parser (``example_proto_fast_parsing.cc``): each serialized
Example is read straight from its bytes (`example_features`: a later entry of a key wins). A
dense feature must hold exactly as many values of its dtype as its shape has elements; a
missing one (or one with no kind set) takes its default, or, when the default is empty, fails.
A sparse feature gives its values in order, with indices ``[example, j]`` (``[j]`` for one
Example) and dense shape ``[batch, longest]`` (``[length]``); a missing one gives none.
Failures are `InvalidArgumentError` in TF's words, naming the Example (its name, else
``<unknown>``), the feature and the Example's index: ``Could not parse example input, value:
'...'``, ``Name: <unknown>, Feature: x (data type: int64) is required but could not be
found.``, ``Name: <unknown>, Key: x, Index: 0.  Data types don't match. Data type: float but
expected type: int64``, ``... Number of int64 values != expected.  Values size: 3 but output
shape: [2]`` and, for a sparse feature, ``... Data types don't match. Expected type: int64,
Actual type: float``. Outputs are new arrays; the inputs are never touched.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from tensorweave import dtypes, errors
from tensorweave.kernel import KernelContext
from tensorweave.train.example_proto import DecodeError, example_features

_DTYPE_OF_KIND = {"bytes": dtypes.string, "float": dtypes.float32, "int64": dtypes.int64}
_TF_NAME = {dtypes.string: "string", dtypes.float32: "float", dtypes.int64: "int64"}
_VALUES_NAME = {dtypes.string: "bytes", dtypes.float32: "float", dtypes.int64: "int64"}


@attrs.frozen
class _Dense:
    key: bytes
    dtype: dtypes.DType
    shape: tuple[int, ...]
    default: Any


@attrs.frozen
class _Sparse:
    key: bytes
    dtype: dtypes.DType


def _fail(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _text(key: bytes) -> str:
    return key.decode("utf-8", "replace")


def _shape_text(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"  # TF's TensorShape::DebugString


def _array(values: list[Any], dtype: dtypes.DType) -> np.ndarray:
    if dtype.is_string:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    return np.asarray(values, dtype=dtype.np_type).reshape(len(values))


def _dense_configs(ctx: KernelContext, keys: Sequence[Any],
                   defaults: Sequence[Any]) -> list[_Dense]:
    out = []
    for d, (key, default) in enumerate(zip(keys, defaults)):
        shape = tuple(int(n) for n in ctx.attrs["dense_shapes"][d].dims)
        if default.size and tuple(default.shape) != shape:
            raise _fail(ctx, f"dense_defaults[{d}].shape() == {_shape_text(default.shape)} != "
                             f"dense_shapes[{d}]: {_shape_text(shape)}")
        out.append(_Dense(bytes(key), ctx.attrs["Tdense"][d], shape, default))
    return out


def _parse(ctx: KernelContext, serialized: Sequence[bytes], names: Sequence[bytes],
           dense: list[_Dense], sparse: list[_Sparse]) -> tuple[list[np.ndarray],
                                                                list[list[list[Any]]]]:
    """Dense outputs ``[batch, *shape]`` and, per sparse feature, each Example's values."""
    batch = len(serialized)
    dense_out = [np.empty((batch, *c.shape), dtype=c.dtype.np_type) for c in dense]
    sparse_out: list[list[list[Any]]] = [[] for _ in sparse]
    for b, data in enumerate(serialized):
        name = _text(names[b]) if len(names) else "<unknown>"
        try:
            features = example_features(data)
        except DecodeError:
            raise _fail(ctx, f"Could not parse example input, value: '{_text(data)}'") from None

        def example_error(key: bytes, suffix: str, b: int = b, name: str = name) -> Exception:
            return _fail(ctx, f"Name: {name}, Key: {_text(key)}, Index: {b}.  {suffix}")

        for c, out in zip(dense, dense_out):
            kind, values = features.get(c.key, (None, []))
            if kind is None:
                if c.default.size == 0:
                    raise _fail(ctx, f"Name: {name}, Feature: {_text(c.key)} (data type: "
                                     f"{_TF_NAME[c.dtype]}) is required but could not be found.")
                out[b] = c.default
                continue
            if _DTYPE_OF_KIND[kind] != c.dtype:
                raise example_error(c.key, f"Data types don't match. Data type: "
                                           f"{_TF_NAME[_DTYPE_OF_KIND[kind]]} but expected type: "
                                           f"{_TF_NAME[c.dtype]}")
            if len(values) != math.prod(c.shape):
                raise example_error(c.key, f"Number of {_VALUES_NAME[c.dtype]} values != "
                                           f"expected.  Values size: {len(values)} but output "
                                           f"shape: {_shape_text(c.shape)}")
            out[b] = _array(values, c.dtype).reshape(c.shape)
        for c, lists in zip(sparse, sparse_out):
            kind, values = features.get(c.key, (None, []))
            if kind is not None and _DTYPE_OF_KIND[kind] != c.dtype:
                raise example_error(c.key, f"Data types don't match. Expected type: "
                                           f"{_TF_NAME[c.dtype]}, Actual type: "
                                           f"{_TF_NAME[_DTYPE_OF_KIND[kind]]}")
            lists.append(values)
    return dense_out, sparse_out


def _sparse_tensors(sparse: list[_Sparse], lists: list[list[list[Any]]],
                    batched: bool) -> list[np.ndarray]:
    """Indices, then values, then dense shapes, of each sparse feature."""
    indices, values, shapes = [], [], []
    for c, per_example in zip(sparse, lists):
        rows = [(b, j) for b, vals in enumerate(per_example) for j in range(len(vals))]
        index = np.array(rows, dtype=np.int64).reshape(len(rows), 2)
        longest = max((len(v) for v in per_example), default=0)
        indices.append(index if batched else index[:, 1:].copy())
        values.append(_array([v for vals in per_example for v in vals], c.dtype))
        shapes.append(np.array([len(per_example), longest] if batched else [longest],
                               dtype=np.int64))
    return [*indices, *values, *shapes]


def _strings(value: Any) -> list[bytes]:
    return [bytes(v) for v in np.asarray(value, dtype=object).reshape(-1)]


def parse_example(ctx: KernelContext, serialized: Any, names: Any, *rest: Any) -> Any:
    nsparse, ndense = ctx.attrs["Nsparse"], ctx.attrs["Ndense"]
    sparse_keys, dense_keys = rest[:nsparse], rest[nsparse:nsparse + ndense]
    examples, example_names = _strings(serialized), _strings(names)
    if example_names and len(example_names) != len(examples):
        raise _fail(ctx, f"Expected len(names) == len(serialized), but got: "
                         f"{len(example_names)} vs. {len(examples)}")
    dense = _dense_configs(ctx, [k[()] for k in dense_keys], rest[nsparse + ndense:])
    sparse = [_Sparse(bytes(k[()]), t) for k, t in zip(sparse_keys, ctx.attrs["sparse_types"])]
    dense_out, lists = _parse(ctx, examples, example_names, dense, sparse)
    return _results([*_sparse_tensors(sparse, lists, True), *dense_out])


def parse_single_example(ctx: KernelContext, serialized: Any, *defaults: Any) -> Any:
    keys = [k.encode("utf-8") if isinstance(k, str) else k for k in ctx.attrs["dense_keys"]]
    dense = _dense_configs(ctx, keys, defaults)
    sparse = [_Sparse(k.encode("utf-8") if isinstance(k, str) else k, t)
              for k, t in zip(ctx.attrs["sparse_keys"], ctx.attrs["sparse_types"])]
    dense_out, lists = _parse(ctx, _strings(serialized), [], dense, sparse)
    return _results([*_sparse_tensors(sparse, lists, False), *(d[0] for d in dense_out)])


def _results(outputs: list[np.ndarray]) -> Any:
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def register(registry: Any, device_type: str) -> None:
    registry.add("ParseExample", device_type, parse_example)
    registry.add("ParseSingleExample", device_type, parse_single_example)
