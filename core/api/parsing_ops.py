"""``parse_example`` / ``parse_single_example`` with ``FixedLenFeature`` and
``VarLenFeature``, as ``tf.compat.v1``.

Contract: `features` maps each key to a `FixedLenFeature` (a dense tensor of ``shape``, fully
defined, and dtype float32, int64 or string; ``default_value`` None makes it required, else it
is converted to the dtype and must hold exactly the shape's elements) or a `VarLenFeature` (a
`SparseTensor` of the values, indices ``[example, j]``). The result maps the same keys to
tensors: ``parse_example`` takes a vector of serialized Examples (dense results are
``[batch] + shape``), ``parse_single_example`` a scalar. Keys are processed in sorted order,
as TF. Construction errors are ``ValueError`` (no features, an unknown feature type, a bad
shape or default) and ``TypeError`` (an unsupported dtype); what the Examples hold is checked
when the op runs (``tensorweave/plugins/kernels/parsing.py``).
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from tensorweave import dtypes
from tensorweave.api.array_ops import reshape
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.framework.graph import Tensor, get_default_graph
from tensorweave.framework.op_builder import make_op
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.plugins.standard_ops.parsing import FEATURE_TYPES
from tensorweave.tensor_shape import TensorShape, as_shape

__all__ = ["FixedLenFeature", "VarLenFeature", "parse_example", "parse_single_example"]


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """A dense input feature of fixed `shape` (TF's namedtuple)."""

    def __new__(cls, shape: Any, dtype: Any, default_value: Any = None) -> FixedLenFeature:
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A variable-length input feature, parsed into a `SparseTensor` (TF's namedtuple)."""


def _feature_dtype(key: str, dtype: Any) -> dtypes.DType:
    dtype = dtypes.as_dtype(dtype)
    if dtype not in FEATURE_TYPES:
        raise TypeError(f"Unsupported dtype {dtype.name} for feature {key}: Example features "
                        "are float32, int64 or string")
    return dtype


def _default(key: str, feature: FixedLenFeature, dtype: dtypes.DType,
             shape: TensorShape) -> Tensor:
    """The default of a dense feature: its value reshaped to `shape`, or an empty tensor for a
    required feature."""
    if feature.default_value is None:
        return constant(np.zeros([0], dtype=dtype.np_type) if not dtype.is_string else [],
                        dtype=dtype, shape=[0], name=f"key_{key}")
    value = feature.default_value
    if isinstance(value, Tensor):
        return reshape(convert_to_tensor(value, dtype=dtype), list(shape.dims),
                       name=f"key_{key}")
    array = np.asarray(value, dtype=object if dtype.is_string else dtype.np_type)
    if array.size != shape.num_elements():
        raise ValueError(f"Cannot reshape a tensor with {array.size} elements to shape "
                         f"{list(shape.dims)} ({shape.num_elements()} elements): "
                         f"default_value of feature {key}")
    return constant(array.reshape(shape.dims), dtype=dtype, name=f"key_{key}")


def _configs(features: dict[str, Any]) -> tuple[list[tuple[str, dtypes.DType]],
                                                 list[tuple[str, dtypes.DType, TensorShape,
                                                            FixedLenFeature]]]:
    if not features:
        raise ValueError(f"Missing: features was {features}.")
    sparse, dense = [], []
    for key in sorted(features):
        feature = features[key]
        if isinstance(feature, VarLenFeature):
            sparse.append((key, _feature_dtype(key, feature.dtype)))
        elif isinstance(feature, FixedLenFeature):
            shape = as_shape(feature.shape)
            if not shape.is_fully_defined():
                raise ValueError(f"All dimensions of shape for feature {key} need to be known "
                                 f"but received {shape}.")
            dense.append((key, _feature_dtype(key, feature.dtype), shape, feature))
        else:
            raise ValueError(f"Invalid feature {key}:{feature}.")
    return sparse, dense


def _results(op: Any, sparse: list[tuple[str, dtypes.DType]],
             dense: list[tuple[str, Any, Any, Any]]) -> dict[str, Any]:
    outputs, n = list(op.outputs), len(sparse)
    result: dict[str, Any] = {}
    for i, (key, _) in enumerate(sparse):
        result[key] = SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i])
    for i, (key, *_) in enumerate(dense):
        result[key] = outputs[3 * n + i]
    return result


def parse_example(serialized: Any, features: dict[str, Any], name: str | None = None,
                  example_names: Any = None) -> dict[str, Any]:
    """Parse a vector of serialized ``Example`` protos; see the module docstring."""
    sparse, dense = _configs(features)
    graph = get_default_graph()
    with graph.name_scope(name or "ParseExample"):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        names = convert_to_tensor([] if example_names is None else example_names,
                                  dtype=dtypes.string, name="names")
        sparse_keys = [constant(k, dtype=dtypes.string, name="sparse_keys") for k, _ in sparse]
        dense_keys = [constant(k, dtype=dtypes.string, name="dense_keys") for k, *_ in dense]
        defaults = [_default(k, f, t, s) for k, t, s, f in dense]
        op = make_op("ParseExample", [serialized, names, sparse_keys, dense_keys, defaults],
                     {"Nsparse": len(sparse), "Ndense": len(dense),
                      "sparse_types": [t for _, t in sparse],
                      "Tdense": [t for _, t, *_ in dense],
                      "dense_shapes": [s for _, _, s, _ in dense]}, name="ParseExample")
    return _results(op, sparse, dense)


def parse_single_example(serialized: Any, features: dict[str, Any], name: str | None = None,
                         example_names: Any = None) -> dict[str, Any]:
    """Parse one serialized ``Example`` proto (a scalar); see the module docstring.
    `example_names` is accepted for TF's signature and, as in TF 1.15, ignored."""
    sparse, dense = _configs(features)
    graph = get_default_graph()
    with graph.name_scope(name or "ParseSingleExample"):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        if serialized.shape.ndims not in (None, 0):
            raise ValueError(f"Input serialized must be a scalar, got shape {serialized.shape}")
        defaults = [_default(k, f, t, s) for k, t, s, f in dense]
        op = make_op("ParseSingleExample", [serialized, defaults],
                     {"num_sparse": len(sparse), "sparse_keys": [k for k, _ in sparse],
                      "dense_keys": [k for k, *_ in dense],
                      "sparse_types": [t for _, t in sparse],
                      "Tdense": [t for _, t, *_ in dense],
                      "dense_shapes": [s for _, _, s, _ in dense]},
                     name="ParseSingleExample")
    return _results(op, sparse, dense)
