"""Categorical feature columns of ``tf.compat.v1.feature_column``:
``categorical_column_with_hash_bucket``, ``categorical_column_with_vocabulary_list``,
``categorical_column_with_vocabulary_file``, ``categorical_column_with_identity`` and
``weighted_categorical_column``.

Contract: each column reads a `SparseTensor`, or a dense ``[batch]`` / ``[batch, n]`` tensor
whose missing entries (-1, "") are dropped, and gives int64 ids of the same indices: TF's
``string_to_hash_bucket_fast`` bucket of the value (integers hashed as their decimal string);
the value's index in the vocabulary, else a hash bucket after the vocabulary
(``num_oov_buckets``) or ``default_value`` (a vocabulary file's through a lookup table from
``index_table_from_file``, which ``tw.tables_initializer()`` fills); the value itself,
out-of-range values failing at run time (`InvalidArgumentError`) or becoming
``default_value``. Constructor and dtype errors are
TF's ``ValueError`` texts.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from tensorweave.api import array_ops, check_ops, math_ops, string_ops
from tensorweave.api.control_flow_ops import identity
from tensorweave.api.feature_column_base import (
    CategoricalColumn,
    IdWeightPair,
    LazyBuilder,
    assert_key_is_string,
    assert_string_or_int,
    to_sparse_input,
)
from tensorweave.api.lookup_ops import index_table_from_file
from tensorweave.api.parsing_ops import VarLenFeature
from tensorweave.api.scopes import control_dependencies, name_scope
from tensorweave.api.sparse_ops import convert_to_tensor_or_sparse_tensor
from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant
from tensorweave.platform import gfile

__all__ = [
    "categorical_column_with_hash_bucket", "categorical_column_with_identity",
    "categorical_column_with_vocabulary_file", "categorical_column_with_vocabulary_list",
    "weighted_categorical_column",
]


def _check_input_dtype(key: str, column_dtype: dtypes.DType, tensor: SparseTensor) -> None:
    if column_dtype.is_integer != tensor.dtype.is_integer:
        raise ValueError("Column dtype and SparseTensors dtype must be compatible. "
                         f"key: {key}, column dtype: {column_dtype}, "
                         f"tensor dtype: {tensor.dtype}")
    assert_string_or_int(tensor.dtype, prefix=f"column_name: {key} input_tensor")


def _as_string(values: Any) -> Any:
    return values if values.dtype == dtypes.string else string_ops.as_string(values)


class _KeyedIdColumn(CategoricalColumn):
    """A column of one feature `key` (parsed as a ``VarLenFeature`` of the column's `dtype`)
    whose transformation is its ids alone, without weights; subclasses are attrs classes
    declaring `key` (and `dtype`, unless they override `_parse_example_spec`)."""

    key: str
    dtype: dtypes.DType

    @property
    def name(self) -> str:
        return self.key

    @property
    def _parse_example_spec(self) -> dict[str, Any]:
        return {self.key: VarLenFeature(self.dtype)}

    def _get_sparse_tensors(self, inputs: LazyBuilder, weight_collections: Any = None,
                            trainable: bool | None = None) -> IdWeightPair:
        return IdWeightPair(inputs.get(self), None)


@attrs.frozen
class HashedCategoricalColumn(_KeyedIdColumn):
    """See `categorical_column_with_hash_bucket`."""

    key: str
    hash_bucket_size: int
    dtype: dtypes.DType

    @property
    def _num_buckets(self) -> int:
        return self.hash_bucket_size

    def _transform_feature(self, inputs: LazyBuilder) -> SparseTensor:
        input_tensor = to_sparse_input(inputs.get(self.key))
        assert_string_or_int(input_tensor.dtype,
                             prefix=f"column_name: {self.key} input_tensor")
        if self.dtype.is_integer != input_tensor.dtype.is_integer:
            raise ValueError("Column dtype and SparseTensors dtype must be compatible. "
                             f"key: {self.key}, column dtype: {self.dtype}, "
                             f"tensor dtype: {input_tensor.dtype}")
        ids = string_ops.string_to_hash_bucket_fast(_as_string(input_tensor.values),
                                                    self.hash_bucket_size, name="lookup")
        return SparseTensor(input_tensor.indices, ids, input_tensor.dense_shape)


@attrs.frozen
class VocabularyListCategoricalColumn(_KeyedIdColumn):
    """See `categorical_column_with_vocabulary_list`."""

    key: str
    vocabulary_list: tuple[Any, ...]
    dtype: dtypes.DType
    default_value: int
    num_oov_buckets: int

    @property
    def _num_buckets(self) -> int:
        return len(self.vocabulary_list) + self.num_oov_buckets

    def _transform_feature(self, inputs: LazyBuilder) -> SparseTensor:
        input_tensor = to_sparse_input(inputs.get(self.key))
        _check_input_dtype(self.key, self.dtype, input_tensor)
        values = input_tensor.values
        if values.dtype.is_integer:
            values = math_ops.cast(values, dtypes.int64)
        with name_scope(None, f"{self.key}_lookup", [values]):
            ids = self._lookup(values)
        return SparseTensor(input_tensor.indices, ids, input_tensor.dense_shape)

    def _lookup(self, values: Any) -> Any:
        """Ids of the vector `values`, as TF's ``index_table_from_tensor(...).lookup``."""
        np_dtype = object if values.dtype == dtypes.string else np.int64
        keys = constant(np.array(self.vocabulary_list, np_dtype), values.dtype, name="keys")
        matches = math_ops.equal(array_ops.expand_dims(values, 1), keys)
        found = math_ops.reduce_any(matches, axis=1)
        index = math_ops.argmax(math_ops.cast(matches, dtypes.int32), axis=1,
                                output_type=dtypes.int64)
        if self.num_oov_buckets:
            fallback = string_ops.string_to_hash_bucket_fast(
                _as_string(values), self.num_oov_buckets, name="hash_bucket")
            fallback = math_ops.add(fallback, np.int64(len(self.vocabulary_list)))
        else:
            fallback = array_ops.fill(array_ops.shape(values), np.int64(self.default_value))
        return array_ops.where(found, index, fallback, name="lookup")


@attrs.frozen
class VocabularyFileCategoricalColumn(_KeyedIdColumn):
    """See `categorical_column_with_vocabulary_file`."""

    key: str
    vocabulary_file: Any
    vocabulary_size: int
    num_oov_buckets: int
    dtype: dtypes.DType
    default_value: int

    @property
    def _num_buckets(self) -> int:
        return self.vocabulary_size + self.num_oov_buckets

    def _transform_feature(self, inputs: LazyBuilder) -> SparseTensor:
        input_tensor = to_sparse_input(inputs.get(self.key))
        _check_input_dtype(self.key, self.dtype, input_tensor)
        key_dtype = self.dtype
        if input_tensor.dtype.is_integer:  # the table's integer keys are int64
            key_dtype = dtypes.int64
            input_tensor = SparseTensor(input_tensor.indices,
                                        math_ops.cast(input_tensor.values, dtypes.int64),
                                        input_tensor.dense_shape)
        return index_table_from_file(
            vocabulary_file=self.vocabulary_file, num_oov_buckets=self.num_oov_buckets,
            vocab_size=self.vocabulary_size, default_value=self.default_value,
            key_dtype=key_dtype, name=f"{self.key}_lookup").lookup(input_tensor)


@attrs.frozen
class IdentityCategoricalColumn(_KeyedIdColumn):
    """See `categorical_column_with_identity`."""

    key: str
    num_buckets: int
    default_value: int | None

    @property
    def _parse_example_spec(self) -> dict[str, Any]:
        return {self.key: VarLenFeature(dtypes.int64)}

    @property
    def _num_buckets(self) -> int:
        return self.num_buckets

    def _transform_feature(self, inputs: LazyBuilder) -> SparseTensor:
        input_tensor = to_sparse_input(inputs.get(self.key))
        if not input_tensor.dtype.is_integer:
            raise ValueError(f"Invalid input, not integer. key: {self.key} "
                             f"dtype: {input_tensor.dtype}")
        values = math_ops.cast(input_tensor.values, dtypes.int64, name="values")
        num_buckets = constant(self.num_buckets, dtypes.int64, name="num_buckets")
        zero = constant(0, dtypes.int64, name="zero")
        if self.default_value is None:
            assert_less = check_ops.assert_less(
                values, num_buckets, data=[values, num_buckets],
                message=f'Bucket index for categorical column "{self.name}" exceeds number '
                        "of buckets",
                name="assert_less_than_num_buckets")
            assert_greater = check_ops.assert_greater_equal(
                values, zero, data=[values],
                message=f'Negative bucket index for categorical column "{self.name}"',
                name="assert_greater_or_equal_0")
            with control_dependencies([assert_less, assert_greater]):
                values = identity(values)
        else:
            out_of_range = math_ops.logical_or(values < zero, values >= num_buckets,
                                               name="out_of_range")
            defaults = array_ops.fill(array_ops.shape(values), np.int64(self.default_value),
                                      name="default_values")
            values = array_ops.where(out_of_range, defaults, values)
        return SparseTensor(input_tensor.indices, values, input_tensor.dense_shape)


@attrs.frozen
class WeightedCategoricalColumn(CategoricalColumn):
    """See `weighted_categorical_column`."""

    categorical_column: CategoricalColumn
    weight_feature_key: str
    dtype: dtypes.DType

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_weighted_by_{self.weight_feature_key}"

    @property
    def _parse_example_spec(self) -> dict[str, Any]:
        config = dict(self.categorical_column._parse_example_spec)
        if self.weight_feature_key in config:
            raise ValueError(f"Parse config {config[self.weight_feature_key]} already exists "
                             f"for {self.weight_feature_key}.")
        config[self.weight_feature_key] = VarLenFeature(self.dtype)
        return config

    @property
    def _num_buckets(self) -> int:
        return self.categorical_column._num_buckets

    def _transform_feature(self, inputs: LazyBuilder) -> tuple[SparseTensor, SparseTensor]:
        weight_tensor = convert_to_tensor_or_sparse_tensor(inputs.get(self.weight_feature_key))
        if self.dtype != weight_tensor.dtype:
            raise ValueError(f"Bad dtype, expected {self.dtype}, but got "
                             f"{weight_tensor.dtype}.")
        weight_tensor = to_sparse_input(weight_tensor, ignore_value=0.0)
        if not weight_tensor.dtype.is_floating:
            weight_tensor = SparseTensor(weight_tensor.indices,
                                         math_ops.cast(weight_tensor.values, dtypes.float32),
                                         weight_tensor.dense_shape)
        return inputs.get(self.categorical_column), weight_tensor

    def _get_sparse_tensors(self, inputs: LazyBuilder, weight_collections: Any = None,
                            trainable: bool | None = None) -> IdWeightPair:
        ids, weights = inputs.get(self)
        return IdWeightPair(ids, weights)


def categorical_column_with_hash_bucket(key: str, hash_bucket_size: int,
                                        dtype: Any = dtypes.string
                                        ) -> HashedCategoricalColumn:
    """Ids ``string_to_hash_bucket_fast(value, hash_bucket_size)``; integer values are hashed
    as their decimal string."""
    if hash_bucket_size is None:
        raise ValueError(f"hash_bucket_size must be set. key: {key}")
    if hash_bucket_size < 1:
        raise ValueError("hash_bucket_size must be at least 1. "
                         f"hash_bucket_size: {hash_bucket_size}, key: {key}")
    dtype = dtypes.as_dtype(dtype)
    assert_string_or_int(dtype, prefix=f"column_name: {key}")
    assert_key_is_string(key)
    return HashedCategoricalColumn(key, int(hash_bucket_size), dtype)


def categorical_column_with_vocabulary_list(key: str, vocabulary_list: Any, dtype: Any = None,
                                            default_value: int = -1, num_oov_buckets: int = 0
                                            ) -> VocabularyListCategoricalColumn:
    """Ids: the value's index in `vocabulary_list`; an out-of-vocabulary value gets
    ``len(vocabulary_list) + hash bucket`` when `num_oov_buckets` > 0, else `default_value`."""
    if vocabulary_list is None or len(vocabulary_list) < 1:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, "
                         f"column_name: {key}")
    if len(set(vocabulary_list)) != len(vocabulary_list):
        raise ValueError(f"Duplicate keys in vocabulary_list {vocabulary_list}, "
                         f"column_name: {key}")
    vocabulary_dtype = dtypes.as_dtype(np.array(vocabulary_list).dtype)
    if num_oov_buckets:
        if default_value != -1:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    assert_string_or_int(vocabulary_dtype, prefix=f"column_name: {key} vocabulary")
    if dtype is None:
        dtype = vocabulary_dtype
    else:
        dtype = dtypes.as_dtype(dtype)
        if dtype.is_integer != vocabulary_dtype.is_integer:
            raise ValueError(f"dtype {dtype} and vocabulary dtype {vocabulary_dtype} do not "
                             f"match, column_name: {key}")
    assert_string_or_int(dtype, prefix=f"column_name: {key}")
    assert_key_is_string(key)
    return VocabularyListCategoricalColumn(key, tuple(vocabulary_list), dtype,
                                           int(default_value), int(num_oov_buckets))


def categorical_column_with_vocabulary_file(key: str, vocabulary_file: Any,
                                            vocabulary_size: int | None = None,
                                            num_oov_buckets: int = 0,
                                            default_value: int | None = None,
                                            dtype: Any = dtypes.string
                                            ) -> VocabularyFileCategoricalColumn:
    """Ids: the value's line number in `vocabulary_file` (its first `vocabulary_size` lines,
    all of them when None); an out-of-vocabulary value gets ``vocabulary_size + hash bucket``
    when `num_oov_buckets` > 0, else `default_value` (-1 when None)."""
    if not vocabulary_file:
        raise ValueError(f"Missing vocabulary_file in {key}.")
    if vocabulary_size is None:
        if not gfile.exists(vocabulary_file):
            raise ValueError(f"vocabulary_file in {key} does not exist.")
        with gfile.GFile(vocabulary_file) as f:
            vocabulary_size = sum(1 for _ in f)
    if vocabulary_size < 1:
        raise ValueError(f"Invalid vocabulary_size in {key}.")
    if num_oov_buckets:
        if default_value is not None:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    dtype = dtypes.as_dtype(dtype)
    assert_string_or_int(dtype, prefix=f"column_name: {key}")
    assert_key_is_string(key)
    return VocabularyFileCategoricalColumn(
        key, vocabulary_file, int(vocabulary_size), int(num_oov_buckets or 0), dtype,
        -1 if default_value is None else int(default_value))


def categorical_column_with_identity(key: str, num_buckets: int,
                                     default_value: int | None = None
                                     ) -> IdentityCategoricalColumn:
    """Ids: the integer values themselves, in ``[0, num_buckets)``."""
    if num_buckets < 1:
        raise ValueError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and (default_value < 0 or default_value >= num_buckets):
        raise ValueError(f"default_value {default_value} not in range [0, {num_buckets}), "
                         f"column_name {key}")
    assert_key_is_string(key)
    return IdentityCategoricalColumn(key, int(num_buckets),
                                     None if default_value is None else int(default_value))


def weighted_categorical_column(categorical_column: CategoricalColumn, weight_feature_key: str,
                                dtype: Any = dtypes.float32) -> WeightedCategoricalColumn:
    """`categorical_column`'s ids, each weighted by the entry of the feature
    `weight_feature_key` at the same index."""
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    if dtype is None or not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype {dtype} is not convertible to float.")
    return WeightedCategoricalColumn(categorical_column, weight_feature_key, dtype)
