"""Kernels of ``ParseExample``, ``ParseSingleExample``, ``ParseSequenceExample`` and
``ParseSingleSequenceExample``, host-only as in TF (``HOST_ONLY``).

Contract, as TF's fast parsers (``example_proto_fast_parsing.cc``): each serialized proto is
parsed by protobuf into `tensorweave.train.Example` / ``SequenceExample`` (a later map entry of a
key wins; a key must be UTF-8, as protobuf's string keys are, where TF's C++ parser does not
check). A dense feature must hold exactly as many values of its dtype as its shape has
elements; a missing one (or one with no kind set) takes its default, or, when the default is
empty, fails. A variable-length dense feature (first dimension unknown: a
``FixedLenSequenceFeature`` in an Example) holds a multiple of its row's elements, is empty
when missing, and is padded with its default (one element) to the batch's most rows. A sparse
feature gives its values in order, with indices ``[example, j]`` (``[j]`` for one Example) and
dense shape ``[batch, longest]`` (``[length]``); a missing one gives none. A SequenceExample's
context parses as an Example; each step of a dense feature list must hold its shape's
elements, the steps are padded with 0 or ``b""`` to the batch's most and counted in the
lengths output, and a missing list fails unless it is in
``feature_list_dense_missing_assumed_empty``; a sparse feature list gives indices
``[example, step, j]`` (``[step, j]``). Failures are `InvalidArgumentError` in TF's words,
naming the proto (its name, else ``<unknown>``), the feature and the Example's (or step's)
index: ``Could not parse example input, value: '...'``, ``Name: <unknown>, Feature: x (data
type: int64) is required but could not be found.``, ``Name: <unknown>, Key: x, Index: 0.  Data
types don't match. Data type: float but expected type: int64``, ``... Number of int64 values
!= expected.  Values size: 3 but output shape: [2]``, ``... Number of int64 values is not a
multiple of stride length. Saw 3 values but output shape is: [?,2]``, for a sparse feature
``... Data types don't match. Expected type: int64, Actual type: float``, and for feature
lists ``Invalid protocol message input, example id: <unknown>``, ``Name: <unknown>, Feature
list 'x' is required but could not be found.  Did you mean to include it in ...``, ``Name:
<unknown>, Feature list: x, Index: 1.  Data types don't match. Expected type: int64`` and
``Name: <unknown>, Key: x, Index: 1.  Number of values != expected.  values size: 3 but output
shape: [2]``. Outputs are new arrays; the inputs are never touched.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np
from google.protobuf.message import DecodeError

from tensorweave.engine import dtypes, errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.formats.example_proto import Example, SequenceExample

# Feature's oneof ``kind``: the member set, by its name
_DTYPE_OF_KIND = {"bytes_list": dtypes.string, "float_list": dtypes.float32,
                  "int64_list": dtypes.int64}
_TF_NAME = {dtypes.string: "string", dtypes.float32: "float", dtypes.int64: "int64"}
_VALUES_NAME = {dtypes.string: "bytes", dtypes.float32: "float", dtypes.int64: "int64"}


@attrs.frozen
class _Dense:
    """A dense feature: `shape` as declared, whose first dimension is None for a variable-
    length one (``FixedLenSequenceFeature``); `default` is its default (empty: required) or,
    variable-length, its padding element."""

    key: str
    dtype: dtypes.DType
    shape: tuple[int | None, ...]
    default: Any

    @property
    def variable(self) -> bool:
        return bool(self.shape) and self.shape[0] is None

    @property
    def row(self) -> tuple[int, ...]:
        """The shape of one value (one row of a variable-length feature)."""
        return self.shape[1:] if self.variable else self.shape  # type: ignore[return-value]


@attrs.frozen
class _Sparse:
    key: str
    dtype: dtypes.DType


def fail(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _shape_text(shape: Sequence[int | None]) -> str:
    # TF's PartialTensorShape::DebugString
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _array(values: Any, dtype: dtypes.DType) -> np.ndarray:
    """`values` (a list, or a repeated field of an Example) as a new 1-D array."""
    if dtype.is_string:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    return np.asarray(values, dtype=dtype.np_type).reshape(len(values))


def dense_configs(ctx: KernelContext, keys: Sequence[Any], defaults: Sequence[Any],
                  types: Sequence[dtypes.DType], shapes: Sequence[Any]) -> list[_Dense]:
    """The dense features' configs, checking each default against its shape."""
    out = []
    for d, (key, default, dtype, declared) in enumerate(zip(keys, defaults, types, shapes)):
        shape = tuple(None if n is None else int(n) for n in declared.dims)
        config = _Dense(as_key(key), dtype, shape, default)
        if config.variable and default.size != 1:
            raise fail(ctx, f"dense_shape[{d}] is a variable length shape: "
                            f"{_shape_text(shape)}, therefore def_value[{d}] must contain a "
                            "single element (the padding element).  But its shape is: "
                            f"{_shape_text(default.shape)}")
        if not config.variable and default.size and tuple(default.shape) != shape:
            raise fail(ctx, f"dense_defaults[{d}].shape() == {_shape_text(default.shape)} != "
                            f"dense_shapes[{d}]: {_shape_text(shape)}")
        out.append(config)
    return out


def sparse_configs(keys: Sequence[Any], types: Sequence[dtypes.DType]) -> list[_Sparse]:
    return [_Sparse(as_key(k), t) for k, t in zip(keys, types)]


def as_key(key: Any) -> str:
    """A feature key (an attr's str or a string tensor's bytes) as a ``Features`` map key."""
    return key if isinstance(key, str) else text(bytes(key))


def kind_values(feature: Any) -> tuple[str | None, Any]:
    """The member of `feature`'s oneof ``kind`` that is set (None: none is) and its values."""
    kind = feature.WhichOneof("kind")
    return kind, (getattr(feature, kind).value if kind else ())


def lookup(features: Any, key: str) -> tuple[str | None, Any]:
    """`kind_values` of the feature of `key` in the ``Features.feature`` map `features`;
    ``(None, ())`` when it is missing (``get``, which, unlike ``[]``, adds no entry)."""
    feature = features.get(key)
    return (None, ()) if feature is None else kind_values(feature)


def parse_features(ctx: KernelContext, features: Any, index: int, name: str,
                   dense: list[_Dense], sparse: list[_Sparse], dense_values: list[list[Any]],
                   sparse_lists: list[list[list[Any]]]) -> None:
    """Check one Example's (or one SequenceExample context's) ``Features.feature`` map
    `features` against the configs. Each dense feature's values go to its list in
    `dense_values`: extending it (the batch's values, flat) for a fixed shape, appended as
    one ``[rows, *row]`` array for a variable-length one; each sparse feature's values are
    appended to its list in `sparse_lists`."""

    def example_error(key: str, suffix: str) -> Exception:
        return fail(ctx, f"Name: {name}, Key: {key}, Index: {index}.  {suffix}")

    for c, out in zip(dense, dense_values):
        kind, values = lookup(features, c.key)
        if c.variable:
            out.append(_variable_rows(c, kind, values, example_error))
            continue
        if kind is None:
            if c.default.size == 0:
                raise fail(ctx, f"Name: {name}, Feature: {c.key} (data type: "
                                f"{_TF_NAME[c.dtype]}) is required but could not be found.")
            out.extend(c.default.reshape(-1).tolist())
            continue
        if _DTYPE_OF_KIND[kind] != c.dtype:
            raise example_error(c.key, f"Data types don't match. Data type: "
                                       f"{_TF_NAME[_DTYPE_OF_KIND[kind]]} but expected type: "
                                       f"{_TF_NAME[c.dtype]}")
        if len(values) != math.prod(c.shape):
            raise example_error(c.key, f"Number of {_VALUES_NAME[c.dtype]} values != "
                                       f"expected.  Values size: {len(values)} but output "
                                       f"shape: {_shape_text(c.shape)}")
        out.extend(values)
    for c, lists in zip(sparse, sparse_lists):
        kind, values = lookup(features, c.key)
        if kind is not None and _DTYPE_OF_KIND[kind] != c.dtype:
            raise example_error(c.key, f"Data types don't match. Expected type: "
                                       f"{_TF_NAME[c.dtype]}, Actual type: "
                                       f"{_TF_NAME[_DTYPE_OF_KIND[kind]]}")
        lists.append(list(values))


def _variable_rows(c: _Dense, kind: str | None, values: Any,
                   example_error: Any) -> np.ndarray:
    """A variable-length feature's rows: none when it is missing or has no kind."""
    if kind is None:
        values = []
    elif _DTYPE_OF_KIND[kind] != c.dtype:
        raise example_error(c.key, f"Data types don't match. Expected type: "
                                   f"{_TF_NAME[c.dtype]}")
    stride = math.prod(c.row)
    if (stride == 0 and values) or (stride and len(values) % stride):
        raise example_error(c.key, f"Number of {_VALUES_NAME[c.dtype]} values is not a "
                                   f"multiple of stride length. Saw {len(values)} values but "
                                   f"output shape is: {_shape_text(c.shape)}")
    return _array(values, c.dtype).reshape(len(values) // stride if stride else 0, *c.row)


def padded(rows: list[np.ndarray], dtype: dtypes.DType, row: tuple[int, ...],
           padding: Any) -> np.ndarray:
    """``[len(rows), longest, *row]``: each example's rows, then `padding`."""
    longest = max((len(r) for r in rows), default=0)
    out = np.empty((len(rows), longest, *row), dtype=object if dtype.is_string
                   else dtype.np_type)
    out[...] = padding
    for b, r in enumerate(rows):
        out[b, :len(r)] = r
    return out


def _dense_tensor(c: _Dense, values: list[Any], batch: int) -> np.ndarray:
    """The ``[batch, *shape]`` output of `c` from its `parse_features` values (padded when
    variable-length)."""
    if c.variable:
        return padded(values, c.dtype, c.row, c.default.reshape(())[()])
    return _array(values, c.dtype).reshape(batch, *c.shape)


def _parse(ctx: KernelContext, serialized: Sequence[bytes], names: Sequence[bytes],
           dense: list[_Dense], sparse: list[_Sparse]) -> tuple[list[np.ndarray],
                                                                list[list[list[Any]]]]:
    """Dense outputs ``[batch, *shape]`` and, per sparse feature, each Example's values."""
    dense_values: list[list[Any]] = [[] for _ in dense]
    sparse_out: list[list[list[Any]]] = [[] for _ in sparse]
    for b, data in enumerate(serialized):
        name = text(names[b]) if len(names) else "<unknown>"
        try:
            features = Example.FromString(data).features.feature
        except DecodeError:
            raise fail(ctx, f"Could not parse example input, value: '{text(data)}'") from None
        parse_features(ctx, features, b, name, dense, sparse, dense_values, sparse_out)
    return ([_dense_tensor(c, values, len(serialized)) for c, values in zip(dense, dense_values)],
            sparse_out)


def sparse_tensors(sparse: list[_Sparse], lists: list[list[list[Any]]],
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


def strings(value: Any) -> list[bytes]:
    return [bytes(v) for v in np.asarray(value, dtype=object).reshape(-1)]


def parse_example(ctx: KernelContext, serialized: Any, names: Any, *rest: Any) -> Any:
    nsparse, ndense = ctx.attrs["Nsparse"], ctx.attrs["Ndense"]
    sparse_keys, dense_keys = rest[:nsparse], rest[nsparse:nsparse + ndense]
    examples, example_names = strings(serialized), strings(names)
    if example_names and len(example_names) != len(examples):
        raise fail(ctx, f"Expected len(names) == len(serialized), but got: "
                        f"{len(example_names)} vs. {len(examples)}")
    dense = dense_configs(ctx, [k[()] for k in dense_keys], rest[nsparse + ndense:],
                          ctx.attrs["Tdense"], ctx.attrs["dense_shapes"])
    sparse = sparse_configs([k[()] for k in sparse_keys], ctx.attrs["sparse_types"])
    dense_out, lists = _parse(ctx, examples, example_names, dense, sparse)
    return results([*sparse_tensors(sparse, lists, True), *dense_out])


def parse_single_example(ctx: KernelContext, serialized: Any, *defaults: Any) -> Any:
    dense = dense_configs(ctx, ctx.attrs["dense_keys"], defaults, ctx.attrs["Tdense"],
                          ctx.attrs["dense_shapes"])
    sparse = sparse_configs(ctx.attrs["sparse_keys"], ctx.attrs["sparse_types"])
    dense_out, lists = _parse(ctx, strings(serialized), [], dense, sparse)
    return results([*sparse_tensors(sparse, lists, False), *(d[0, ...] for d in dense_out)])


@attrs.frozen
class _FeatureList:
    """A dense feature list: each step holds `shape`'s values; a missing list is an error
    unless `allow_missing` (then it has no steps)."""

    key: str
    dtype: dtypes.DType
    shape: tuple[int, ...]
    allow_missing: bool


@attrs.frozen
class _Sequence:
    context_dense: list[_Dense]
    context_sparse: list[_Sparse]
    lists_dense: list[_FeatureList]
    lists_sparse: list[_Sparse]


def _steps(ctx: KernelContext, key: str, dtype: dtypes.DType, name: str,
           feature_list: Any) -> list[list[Any]]:
    """The values of each step (``Feature``) of the ``FeatureList`` `feature_list` (None:
    no steps), checking their kind (a step with no kind set has none)."""
    out = []
    for t, step in enumerate(() if feature_list is None else feature_list.feature):
        kind, values = kind_values(step)
        if kind is not None and _DTYPE_OF_KIND[kind] != dtype:
            raise fail(ctx, f"Name: {name}, Feature list: {key}, Index: {t}.  Data types "
                            f"don't match. Expected type: {_TF_NAME[dtype]}")
        out.append(list(values))
    return out


def _dense_steps(ctx: KernelContext, c: _FeatureList, name: str,
                 feature_list: Any) -> np.ndarray:
    """One SequenceExample's ``[steps, *shape]`` values of the dense feature list `c`
    (`feature_list`: its ``FeatureList``, None when it is missing)."""
    if feature_list is None and not c.allow_missing:
        raise fail(ctx, f"Name: {name}, Feature list '{c.key}' is required but could "
                        "not be found.  Did you mean to include it in "
                        "feature_list_dense_missing_assumed_empty or "
                        "feature_list_dense_defaults?")
    values = _steps(ctx, c.key, c.dtype, name, feature_list)
    for t, step in enumerate(values):
        if len(step) != math.prod(c.shape):
            raise fail(ctx, f"Name: {name}, Key: {c.key}, Index: {t}.  Number of values "
                            f"!= expected.  values size: {len(step)} but output shape: "
                            f"{_shape_text(c.shape)}")
    flat = _array([v for step in values for v in step], c.dtype)
    return flat.reshape(len(values), *c.shape)


def _sparse_lists(sparse: list[_Sparse], per_example: list[list[list[list[Any]]]],
                  batched: bool) -> list[np.ndarray]:
    """Indices ``[example, step, j]`` (``[step, j]`` for one), values and dense shapes
    ``[batch, most steps, most values]`` of each sparse feature list."""
    indices, values, shapes = [], [], []
    for c, examples in zip(sparse, per_example):
        rows = [(e, t, j) for e, steps in enumerate(examples)
                for t, step in enumerate(steps) for j in range(len(step))]
        index = np.array(rows, dtype=np.int64).reshape(len(rows), 3)
        indices.append(index if batched else index[:, 1:].copy())
        values.append(_array([v for steps in examples for step in steps for v in step],
                             c.dtype))
        longest = [max((len(steps) for steps in examples), default=0),
                   max((len(step) for steps in examples for step in steps), default=0)]
        shapes.append(np.array([len(examples), *longest] if batched else longest,
                               dtype=np.int64))
    return [*indices, *values, *shapes]


def _parse_sequences(ctx: KernelContext, serialized: Sequence[bytes], names: Sequence[bytes],
                     config: _Sequence, batched: bool) -> tuple[np.ndarray, ...]:
    """The outputs of the SequenceExample ops (``batched``: ParseSequenceExample's, with the
    dense feature lists' lengths last)."""
    context_values: list[list[Any]] = [[] for _ in config.context_dense]
    context_lists: list[list[list[Any]]] = [[] for _ in config.context_sparse]
    dense_steps: list[list[np.ndarray]] = [[] for _ in config.lists_dense]
    sparse_steps: list[list[list[list[Any]]]] = [[] for _ in config.lists_sparse]
    for e, data in enumerate(serialized):
        name = text(names[e]) if len(names) else "<unknown>"
        try:
            sequence = SequenceExample.FromString(data)
        except DecodeError:
            raise fail(ctx, f"Invalid protocol message input, example id: {name}") from None
        lists = sequence.feature_lists.feature_list
        parse_features(ctx, sequence.context.feature, e, name, config.context_dense,
                       config.context_sparse, context_values, context_lists)
        for c, out in zip(config.lists_dense, dense_steps):
            out.append(_dense_steps(ctx, c, name, lists.get(c.key)))
        for s, out in zip(config.lists_sparse, sparse_steps):
            out.append(_steps(ctx, s.key, s.dtype, name, lists.get(s.key)))
    context_dense = [_dense_tensor(c, values, len(serialized))
                     for c, values in zip(config.context_dense, context_values)]
    lists_dense = [padded(steps, c.dtype, c.shape, b"" if c.dtype.is_string else 0)
                   for c, steps in zip(config.lists_dense, dense_steps)]
    if not batched:
        context_dense = [d[0, ...] for d in context_dense]
        lists_dense = [d[0, ...] for d in lists_dense]
    lengths = [np.array([len(s) for s in steps], dtype=np.int64) for steps in dense_steps]
    return (*sparse_tensors(config.context_sparse, context_lists, batched), *context_dense,
            *_sparse_lists(config.lists_sparse, sparse_steps, batched), *lists_dense,
            *(lengths if batched else []))


def _sequence_config(ctx: KernelContext, keys: Sequence[Sequence[Any]], defaults: Sequence[Any],
                     missing_assumed_empty: Sequence[Any]) -> _Sequence:
    """`keys`: the context sparse, context dense, feature-list sparse and feature-list dense
    keys."""
    attrs_ = ctx.attrs
    allowed = {as_key(k) for k in missing_assumed_empty}
    return _Sequence(
        dense_configs(ctx, keys[1], defaults, attrs_["Tcontext_dense"],
                      attrs_["context_dense_shapes"]),
        sparse_configs(keys[0], attrs_["context_sparse_types"]),
        [_FeatureList(as_key(k), t, tuple(int(n) for n in shape.dims), as_key(k) in allowed)
         for k, t, shape in zip(keys[3], attrs_["feature_list_dense_types"],
                                attrs_["feature_list_dense_shapes"])],
        sparse_configs(keys[2], attrs_["feature_list_sparse_types"]))


def parse_single_sequence_example(ctx: KernelContext, serialized: Any, missing: Any,
                                  *rest: Any) -> Any:
    counts = [ctx.attrs[a] for a in ("Ncontext_sparse", "Ncontext_dense",
                                     "Nfeature_list_sparse", "Nfeature_list_dense")]
    keys, at = [], 0
    for n in counts:
        keys.append([k[()] for k in rest[at:at + n]])
        at += n
    config = _sequence_config(ctx, keys, rest[at:-1], strings(missing))
    debug_name = strings(rest[-1])
    return results(list(_parse_sequences(ctx, strings(serialized),
                                         debug_name if debug_name[0] else [], config, False)))


def parse_sequence_example(ctx: KernelContext, serialized: Any, debug_name: Any,
                           *defaults: Any) -> Any:
    examples, names = strings(serialized), strings(debug_name)
    if names and len(names) != len(examples):
        raise fail(ctx, "example_names must be empty or have the correct number of elements")
    keys = [ctx.attrs[a] for a in ("context_sparse_keys", "context_dense_keys",
                                   "feature_list_sparse_keys", "feature_list_dense_keys")]
    config = _sequence_config(ctx, keys, defaults,
                              ctx.attrs["feature_list_dense_missing_assumed_empty"])
    return results(list(_parse_sequences(ctx, examples, names, config, True)))


def results(outputs: list[np.ndarray]) -> Any:
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    registry.add("ParseExample", device_type, parse_example)
    registry.add("ParseSingleExample", device_type, parse_single_example)
    registry.add("ParseSingleSequenceExample", device_type, parse_single_sequence_example)
    registry.add("ParseSequenceExample", device_type, parse_sequence_example)
