"""The feature-column protocol of ``tf.compat.v1.feature_column`` and the feature cache.

Contract: a column is a `FeatureColumn` (a frozen value: equal columns are one dict key).
A `DenseColumn` gives a float32 tensor ``[batch] + _variable_shape`` from
``_get_dense_tensor(builder, weight_collections, trainable)``; a `CategoricalColumn` gives an
`IdWeightPair` of int64 `SparseTensor` ids in ``[0, _num_buckets)`` (and optional weights) from
``_get_sparse_tensors``. Method names are TF's private ones, so code written against TF 1.x's
column classes runs unchanged. `LazyBuilder` (TF's ``_LazyBuilder``) hands each column its raw
features, a rank-1 feature reshaped to ``[batch, 1]``, and builds each transformation once.
`to_sparse_input` turns a dense categorical feature into a `SparseTensor` without its missing
entries (-1 for integers, "" for strings), as TF does.
"""

from __future__ import annotations

import abc
import collections
from collections.abc import Mapping
from typing import Any

import numpy as np

from tensorweave.api import array_ops, math_ops, sparse_ops
from tensorweave.api.control_flow_ops import cond, identity
from tensorweave.api.scopes import name_scope
from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.engine import dtypes
from tensorweave.engine.tensor_shape import TensorShape

IdWeightPair = collections.namedtuple("IdWeightPair", ["id_tensor", "weight_tensor"])


class FeatureColumn(abc.ABC):
    """A feature column (TF's ``_FeatureColumn``)."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The column's name: its variable scope and its sort key in models."""

    @property
    def _var_scope_name(self) -> str:
        return self.name

    @abc.abstractmethod
    def _transform_feature(self, inputs: LazyBuilder) -> Any:
        """The column's intermediate representation, from `inputs`."""

    @property
    @abc.abstractmethod
    def _parse_example_spec(self) -> dict[str, Any]:
        """Feature key -> ``FixedLenFeature`` / ``VarLenFeature`` for ``parse_example``."""


class DenseColumn(FeatureColumn):
    """A column represented as a dense tensor (TF's ``_DenseColumn``)."""

    @property
    @abc.abstractmethod
    def _variable_shape(self) -> TensorShape:
        """The shape of `_get_dense_tensor`'s result without the batch dimension."""

    @abc.abstractmethod
    def _get_dense_tensor(self, inputs: LazyBuilder, weight_collections: Any = None,
                          trainable: bool | None = None) -> Any:
        """A float32 tensor ``[batch] + _variable_shape``."""


class CategoricalColumn(FeatureColumn):
    """A column represented as sparse ids (TF's ``_CategoricalColumn``)."""

    IdWeightPair = IdWeightPair

    @property
    @abc.abstractmethod
    def _num_buckets(self) -> int:
        """The number of distinct ids."""

    @abc.abstractmethod
    def _get_sparse_tensors(self, inputs: LazyBuilder, weight_collections: Any = None,
                            trainable: bool | None = None) -> IdWeightPair:
        """The ids (and weights, or None) as `SparseTensor`s."""


def assert_key_is_string(key: Any) -> None:
    if not isinstance(key, str):
        raise ValueError(f"key must be a string. Got: type {type(key)}. Given key: {key}")


def assert_string_or_int(dtype: dtypes.DType, prefix: str) -> None:
    if dtype != dtypes.string and not dtype.is_integer:
        raise ValueError(f"{prefix} dtype must be string or integer. dtype: {dtype}.")


class LazyBuilder:
    """Raw features by key, and each column's transformation, built once (TF's
    ``_LazyBuilder``)."""

    def __init__(self, features: Mapping[Any, Any]) -> None:
        self._features = dict(features)
        self._feature_tensors: dict[Any, Any] = {}

    def get(self, key: Any) -> Any:
        """The raw feature for a ``str`` key (rank 1 made ``[batch, 1]``), or the transformed
        feature for a column (a column key in the features dict is taken as transformed)."""
        if key in self._feature_tensors:
            return self._feature_tensors[key]
        if key in self._features:
            tensor = _expand_rank_one(key, self._features[key])
        elif not isinstance(key, (str, FeatureColumn)):
            raise TypeError('"key" must be either a "str" or "_FeatureColumn". '
                            f"Provided: {key}")
        elif not isinstance(key, FeatureColumn):
            raise ValueError(f"Feature {key} is not in features dictionary.")
        else:
            tensor = key._transform_feature(self)
            if tensor is None:
                raise ValueError(f"Column {key.name} is not supported.")
        self._feature_tensors[key] = tensor
        return tensor


def _expand_rank_one(key: Any, raw_feature: Any) -> Any:
    feature = sparse_ops.convert_to_tensor_or_sparse_tensor(raw_feature)
    if isinstance(feature, SparseTensor):
        rank = feature.dense_shape.shape[0]
        if rank is None:
            # TF picks the reshape with a cond over a SparseTensor; tensorweave's cond
            # returns dense tensors only
            raise ValueError(f"Feature (key: {key}) is a SparseTensor of unknown rank; give its "
                             "dense_shape a static length.")
        _check_rank(key, feature, rank)
        if rank != 1:
            return feature
        return sparse_ops.sparse_reshape(feature, array_ops.stack([feature.dense_shape[0],
                                                                   np.int64(1)]))
    rank = feature.shape.ndims
    if rank is None:
        return cond(math_ops.equal(1, array_ops.rank(feature)),
                    lambda: array_ops.expand_dims(feature, -1), lambda: identity(feature))
    _check_rank(key, feature, rank)
    return feature if rank != 1 else array_ops.expand_dims(feature, -1)


def _check_rank(key: Any, feature: Any, rank: int) -> None:
    if rank == 0:
        raise ValueError(f"Feature (key: {key}) cannot have rank 0. Given: {feature}")


def to_sparse_input(input_tensor: Any, ignore_value: Any = None) -> SparseTensor:
    """`input_tensor` as a `SparseTensor` (unchanged if it is one), without the entries equal
    to `ignore_value` (default: "" for strings, -1 for integers, 0 otherwise)."""
    input_tensor = sparse_ops.convert_to_tensor_or_sparse_tensor(input_tensor)
    if isinstance(input_tensor, SparseTensor):
        return input_tensor
    with name_scope(None, "to_sparse_input", [input_tensor]):
        if ignore_value is None:
            if input_tensor.dtype == dtypes.string:
                ignore_value = ""
            elif input_tensor.dtype.is_integer:
                ignore_value = -1
            else:
                ignore_value = 0
        ignore = math_ops.cast(ignore_value, input_tensor.dtype, name="ignore_value")
        indices = array_ops.where(math_ops.not_equal(input_tensor, ignore), name="indices")
        return SparseTensor(
            indices=indices,
            values=array_ops.gather_nd(input_tensor, indices, name="values"),
            dense_shape=array_ops.shape(input_tensor, out_type=dtypes.int64,
                                        name="dense_shape"))
