"""``parse_example`` / ``parse_single_example`` and ``parse_sequence_example`` /
``parse_single_sequence_example`` with ``FixedLenFeature``, ``FixedLenSequenceFeature`` and
``VarLenFeature``, as ``tf.compat.v1``.

Contract: `features` maps each key to a `FixedLenFeature` (a dense tensor of ``shape``, fully
defined, and dtype float32, int64 or string; ``default_value`` None makes it required, else it
is converted to the dtype and must hold exactly the shape's elements), a
`FixedLenSequenceFeature` (rows of ``shape``, as many as each Example holds) or a
`VarLenFeature` (a `SparseTensor` of the values); the Example parsers also take a
`SparseFeature` (`tensorweave.api.sparse_feature`). ``parse_example`` takes a vector of
serialized Examples (dense results are ``[batch] + shape``; a FixedLenSequenceFeature, which
needs ``allow_missing=True``, gives ``[batch, None] + shape`` padded with its
``default_value``, a scalar, else 0 or ``b""``), ``parse_single_example`` a scalar.
The sequence parsers take context features (FixedLenFeature, VarLenFeature) and sequence
features (FixedLenSequenceFeature: ``[None] + shape``, ``[batch, None] + shape`` padded with 0
or ``b""``, a missing list an error unless ``allow_missing``, and ``default_value`` must be
None; VarLenFeature: indices ``[step, j]`` / ``[example, step, j]``);
``parse_single_sequence_example`` returns ``(context, sequence)``, ``parse_sequence_example``
``(context, sequence, lengths)`` with the steps of each dense sequence feature per example.
Keys are processed in sorted order, as TF. Construction errors are ``ValueError`` (no
features, an unsupported feature type, a bad shape or default) and ``TypeError`` (an
unsupported dtype); what the protos hold is checked when the op runs
(``tensorweave/plugins/kernels/parsing.py``).
"""

from __future__ import annotations

import collections
import re
from typing import Any

import attrs
import numpy as np

from tensorweave.api.array_ops import reshape
from tensorweave.api.sparse_feature import (
    SparseFeature,
    expand_sparse_features,
    merge_sparse_features,
)
from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor
from tensorweave.engine.graph.graph import Operation, Tensor, get_default_graph
from tensorweave.engine.graph.op_builder import make_op
from tensorweave.engine.tensor_shape import TensorShape, as_shape

# The dtypes an Example feature can have (``tf.train.Feature``'s three lists).
FEATURE_TYPES = frozenset({dtypes.float32, dtypes.int64, dtypes.string})

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "SparseFeature", "VarLenFeature",
           "decode_json_example",
           "parse_example", "parse_sequence_example", "parse_single_example",
           "parse_single_sequence_example"]


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """A dense input feature of fixed `shape` (TF's namedtuple)."""

    def __new__(cls, shape: Any, dtype: Any, default_value: Any = None) -> FixedLenFeature:
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A variable number of rows of `shape`, parsed into a dense tensor (TF's namedtuple)."""

    def __new__(cls, shape: Any, dtype: Any, allow_missing: bool = False,
                default_value: Any = None) -> FixedLenSequenceFeature:
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A variable-length input feature, parsed into a `SparseTensor` (TF's namedtuple)."""


@attrs.frozen
class _Dense:
    """A dense feature's parameters: `shape` has a None first dimension for a
    FixedLenSequenceFeature parsed from Examples."""

    key: str
    dtype: dtypes.DType
    shape: TensorShape
    feature: Any


@attrs.frozen
class _Params:
    sparse: list[tuple[str, dtypes.DType]]
    dense: list[_Dense]


def _feature_dtype(key: str, dtype: Any) -> dtypes.DType:
    # imported here: the plugin package imports every standard op module, a cost that
    # ``import tensorweave`` should not pay
    dtype = dtypes.as_dtype(dtype)
    if dtype not in FEATURE_TYPES:
        raise TypeError(f"Unsupported dtype {dtype.name} for feature {key}: Example features "
                        "are float32, int64 or string")
    return dtype


def _known(key: str, shape: TensorShape) -> TensorShape:
    if not shape.is_fully_defined():
        raise ValueError(f"All dimensions of shape for feature {key} need to be known but "
                         f"received {shape}.")
    return shape


def _params(features: dict[str, Any] | None, allowed: tuple[type, ...],
            rows: bool = False) -> _Params:
    """Sparse and dense parameters of `features`, by sorted key; `rows`: a
    FixedLenSequenceFeature gains a None first dimension (parsing Examples)."""
    sparse, dense = [], []
    for key in sorted(features or {}):
        feature = features[key]  # type: ignore[index]
        if not isinstance(feature, (VarLenFeature, FixedLenFeature, FixedLenSequenceFeature)):
            raise ValueError(f"Invalid feature {key}:{feature}.")
        if not isinstance(feature, allowed):
            raise ValueError(f"Unsupported {type(feature).__name__} {feature}.")
        dtype = _feature_dtype(key, feature.dtype)
        if isinstance(feature, VarLenFeature):
            sparse.append((key, dtype))
            continue
        shape = as_shape(feature.shape)
        if isinstance(feature, FixedLenFeature):
            if shape.ndims and shape.dims[0] is None:
                raise ValueError(f"First dimension of shape for feature {key} unknown. "
                                 "Consider using FixedLenSequenceFeature.")
            dense.append(_Dense(key, dtype, _known(key, shape), feature))
        elif rows:
            if not feature.allow_missing:
                raise ValueError("Unsupported: FixedLenSequenceFeature requires "
                                 "allow_missing to be True.")
            dense.append(_Dense(key, dtype, TensorShape([None, *_known(key, shape).dims]),
                                feature))
        else:
            if feature.default_value is not None:
                raise ValueError(f"Value feature_list.dense_defaults[{key}] must be None")
            dense.append(_Dense(key, dtype, _known(key, shape), feature))
    return _Params(sparse, dense)


def _example_params(features: dict[str, Any]) -> _Params:
    if not features:
        raise ValueError(f"Missing: features was {features}.")
    return _params(features, (VarLenFeature, FixedLenFeature, FixedLenSequenceFeature),
                   rows=True)


def _op_name(prefix: str, key: str) -> str:
    return prefix + re.sub(r"[^A-Za-z0-9_.\-/]", "_", key)


def _default(d: _Dense) -> Tensor:
    """The default of a dense feature: its value reshaped to its shape, an empty tensor for a
    required feature, or, variable-length, its padding element (0 or ``b""`` by default)."""
    dtype, value = d.dtype, d.feature.default_value
    if d.shape.ndims and d.shape.dims[0] is None:
        if value is None:
            value = b"" if dtype.is_string else 0
        return reshape(convert_to_tensor(value, dtype=dtype, name=_op_name("padding_", d.key)),
                       [])
    if value is None:
        return constant(np.zeros([0], dtype=dtype.np_type) if not dtype.is_string else [],
                        dtype=dtype, shape=[0], name=_op_name("key_", d.key))
    if isinstance(value, Tensor):
        return reshape(convert_to_tensor(value, dtype=dtype), list(d.shape.dims),
                       name=_op_name("key_", d.key))
    array = np.asarray(value, dtype=object if dtype.is_string else dtype.np_type)
    if array.size != d.shape.num_elements():
        raise ValueError(f"Cannot reshape a tensor with {array.size} elements to shape "
                         f"{list(d.shape.dims)} ({d.shape.num_elements()} elements): "
                         f"default_value of feature {d.key}")
    return constant(array.reshape(d.shape.dims), dtype=dtype, name=_op_name("key_", d.key))


def _split(outputs: list[Tensor], params: _Params) -> tuple[dict[str, Any], list[Tensor]]:
    """The features `params` describes, from the front of `outputs` (sparse indices, values,
    shapes, then dense), and the outputs left."""
    n, result = len(params.sparse), {}
    for i, (key, _) in enumerate(params.sparse):
        result[key] = SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i])
    for i, d in enumerate(params.dense):
        result[d.key] = outputs[3 * n + i]
    return result, outputs[3 * n + len(params.dense):]


def _attrs(prefix: str, params: _Params) -> dict[str, Any]:
    """The counts, sparse types and dense shapes the sequence ops take for one of their two
    feature groups (`prefix` ``context`` or ``feature_list``)."""
    return {f"N{prefix}_sparse": len(params.sparse), f"N{prefix}_dense": len(params.dense),
            f"{prefix}_sparse_types": [t for _, t in params.sparse],
            f"{prefix}_dense_shapes": [d.shape for d in params.dense]}


def _scalar_string(value: Any, what: str, name: str) -> Tensor:
    tensor = convert_to_tensor(value, dtype=dtypes.string, name=name)
    if tensor.shape.ndims not in (None, 0):
        raise ValueError(f"Input {what} must be a scalar, got shape {tensor.shape}")
    return tensor


def parse_example(serialized: Any, features: dict[str, Any], name: str | None = None,
                  example_names: Any = None) -> dict[str, Any]:
    """Parse a vector of serialized ``Example`` protos; see the module docstring."""
    requested, features = features, expand_sparse_features(features)
    params = _example_params(features)
    graph = get_default_graph()
    with graph.name_scope(name or "ParseExample"):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        names = convert_to_tensor([] if example_names is None else example_names,
                                  dtype=dtypes.string, name="names")
        sparse_keys = [constant(k, dtype=dtypes.string, name="sparse_keys")
                       for k, _ in params.sparse]
        dense_keys = [constant(d.key, dtype=dtypes.string, name="dense_keys")
                      for d in params.dense]
        defaults = [_default(d) for d in params.dense]
        op = make_op("ParseExample", [serialized, names, sparse_keys, dense_keys, defaults],
                     {"Nsparse": len(params.sparse), "Ndense": len(params.dense),
                      "sparse_types": [t for _, t in params.sparse],
                      "Tdense": [d.dtype for d in params.dense],
                      "dense_shapes": [d.shape for d in params.dense]}, name="ParseExample")
        return merge_sparse_features(requested, _split(list(op.outputs), params)[0])


def parse_single_example(serialized: Any, features: dict[str, Any], name: str | None = None,
                         example_names: Any = None) -> dict[str, Any]:
    """Parse one serialized ``Example`` proto (a scalar); see the module docstring.
    `example_names` is accepted for TF's signature and, as in TF 1.15, ignored."""
    requested, features = features, expand_sparse_features(features)
    params = _example_params(features)
    graph = get_default_graph()
    with graph.name_scope(name or "ParseSingleExample"):
        serialized = _scalar_string(serialized, "serialized", "serialized")
        defaults = [_default(d) for d in params.dense]
        op = make_op("ParseSingleExample", [serialized, defaults],
                     {"num_sparse": len(params.sparse),
                      "sparse_keys": [k for k, _ in params.sparse],
                      "dense_keys": [d.key for d in params.dense],
                      "sparse_types": [t for _, t in params.sparse],
                      "Tdense": [d.dtype for d in params.dense],
                      "dense_shapes": [d.shape for d in params.dense]},
                     name="ParseSingleExample")
        return merge_sparse_features(requested, _split(list(op.outputs), params)[0])


def _sequence_params(context_features: dict[str, Any] | None,
                     sequence_features: dict[str, Any] | None) -> tuple[_Params, _Params]:
    if not (context_features or sequence_features):
        raise ValueError("Missing features.")
    return (_params(context_features, (VarLenFeature, FixedLenFeature)),
            _params(sequence_features, (VarLenFeature, FixedLenSequenceFeature)))


def _sequence_results(op: Operation, context: _Params, lists: _Params
                      ) -> tuple[dict[str, Any], dict[str, Any], list[Tensor]]:
    context_out, rest = _split(list(op.outputs), context)
    lists_out, rest = _split(rest, lists)
    return context_out, lists_out, rest


def _missing_assumed_empty(lists: _Params) -> list[str]:
    return [d.key for d in lists.dense if d.feature.allow_missing]


def parse_single_sequence_example(serialized: Any, context_features: dict[str, Any] | None = None,
                                  sequence_features: dict[str, Any] | None = None,
                                  example_name: Any = None, name: str | None = None
                                  ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Parse one serialized ``SequenceExample`` (a scalar) into ``(context, sequence)``
    dicts; see the module docstring."""
    context, lists = _sequence_params(context_features, sequence_features)
    graph = get_default_graph()
    with graph.name_scope(name or "ParseSingleSequenceExample"):
        serialized = _scalar_string(serialized, "serialized", "serialized")
        debug_name = _scalar_string(b"" if example_name is None else example_name,
                                    "example_name", "debug_name")
        missing = constant(_missing_assumed_empty(lists), dtype=dtypes.string,
                           shape=[len(_missing_assumed_empty(lists))],
                           name="feature_list_dense_missing_assumed_empty")

        def keys(group: str, names: list[str]) -> list[Tensor]:
            return [constant(k, dtype=dtypes.string, name=group) for k in names]

        op = make_op("ParseSingleSequenceExample", [
            serialized, missing,
            keys("context_sparse_keys", [k for k, _ in context.sparse]),
            keys("context_dense_keys", [d.key for d in context.dense]),
            keys("feature_list_sparse_keys", [k for k, _ in lists.sparse]),
            keys("feature_list_dense_keys", [d.key for d in lists.dense]),
            [_default(d) for d in context.dense], debug_name],
            {**_attrs("context", context), **_attrs("feature_list", lists),
             "Tcontext_dense": [d.dtype for d in context.dense],
             "feature_list_dense_types": [d.dtype for d in lists.dense]},
            name="ParseSingleSequenceExample")
    context_out, lists_out, _ = _sequence_results(op, context, lists)
    return context_out, lists_out


def parse_sequence_example(serialized: Any, context_features: dict[str, Any] | None = None,
                           sequence_features: dict[str, Any] | None = None,
                           example_names: Any = None, name: str | None = None
                           ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Tensor]]:
    """Parse a vector of serialized ``SequenceExample`` protos into ``(context, sequence,
    lengths)``; see the module docstring."""
    context, lists = _sequence_params(context_features, sequence_features)
    graph = get_default_graph()
    with graph.name_scope(name or "ParseSequenceExample"):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        names = convert_to_tensor([] if example_names is None else example_names,
                                  dtype=dtypes.string, name="debug_name")
        op = make_op("ParseSequenceExample",
                     [serialized, names, [_default(d) for d in context.dense]],
                     {**_attrs("context", context), **_attrs("feature_list", lists),
                      "Tcontext_dense": [d.dtype for d in context.dense],
                      "feature_list_dense_types": [d.dtype for d in lists.dense],
                      "context_sparse_keys": [k for k, _ in context.sparse],
                      "context_dense_keys": [d.key for d in context.dense],
                      "feature_list_sparse_keys": [k for k, _ in lists.sparse],
                      "feature_list_dense_keys": [d.key for d in lists.dense],
                      "feature_list_dense_missing_assumed_empty":
                          _missing_assumed_empty(lists)},
                     name="ParseSequenceExample")
    context_out, lists_out, lengths = _sequence_results(op, context, lists)
    return context_out, lists_out, {d.key: t for d, t in zip(lists.dense, lengths)}


def decode_json_example(json_examples: Any, name: str | None = None) -> Tensor:
    """``tf.decode_json_example``: JSON-encoded ``tf.train.Example`` strings (proto3's JSON
    mapping) to serialized binary ones, element by element."""
    return make_op("DecodeJSONExample", [json_examples],
                   name=name or "DecodeJSONExample").outputs[0]
