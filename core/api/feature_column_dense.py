"""Dense feature columns of ``tf.compat.v1.feature_column`` without variables:
``numeric_column``, ``bucketized_column`` and ``indicator_column``.

Contract: a numeric column is its feature (``[batch] + shape``, after ``normalizer_fn``) cast to
float32. A bucketized column's bucket of ``x`` is the number of boundaries ``b`` with
``not x < b`` (TF's ``Bucketize``: NaN goes to the last bucket); densely it is the one-hot of the
bucket per source element, and as ids the bucket plus ``(len(boundaries) + 1) * i`` for source
element ``i``. An indicator column is the multi-hot count of its categorical column's ids per
example (the sum of their weights for a weighted column). Constructor errors are TF's texts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from tensorweave.api import array_ops, math_ops, sparse_ops
from tensorweave.api.feature_column_base import (
    CategoricalColumn,
    DenseColumn,
    IdWeightPair,
    LazyBuilder,
    assert_key_is_string,
)
from tensorweave.api.parsing_ops import FixedLenFeature
from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant
from tensorweave.engine.tensor_shape import TensorShape

__all__ = ["bucketized_column", "indicator_column", "numeric_column"]


@attrs.frozen
class NumericColumn(DenseColumn):
    """See `numeric_column`."""

    key: str
    shape: tuple[int, ...]
    default_value: Any
    dtype: dtypes.DType
    normalizer_fn: Callable[[Any], Any] | None

    @property
    def name(self) -> str:
        return self.key

    @property
    def _parse_example_spec(self) -> dict[str, Any]:
        return {self.key: FixedLenFeature(self.shape, self.dtype, self.default_value)}

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape(self.shape)

    def _transform_feature(self, inputs: LazyBuilder) -> Any:
        input_tensor = inputs.get(self.key)
        if isinstance(input_tensor, SparseTensor):
            raise ValueError("The corresponding Tensor of numerical column must be a Tensor. "
                             f"SparseTensor is not supported. key: {self.key}")
        if self.normalizer_fn is not None:
            input_tensor = self.normalizer_fn(input_tensor)
        return math_ops.cast(input_tensor, dtypes.float32)

    def _get_dense_tensor(self, inputs: LazyBuilder, weight_collections: Any = None,
                          trainable: bool | None = None) -> Any:
        return inputs.get(self)


@attrs.frozen
class BucketizedColumn(DenseColumn, CategoricalColumn):
    """See `bucketized_column`."""

    source_column: NumericColumn
    boundaries: tuple[float, ...]

    @property
    def name(self) -> str:
        return f"{self.source_column.name}_bucketized"

    @property
    def _parse_example_spec(self) -> dict[str, Any]:
        return self.source_column._parse_example_spec

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape((*self.source_column.shape, len(self.boundaries) + 1))

    @property
    def _num_buckets(self) -> int:
        return (len(self.boundaries) + 1) * self.source_column.shape[0]

    def _transform_feature(self, inputs: LazyBuilder) -> Any:
        source = inputs.get(self.source_column)
        boundaries = constant(np.array(self.boundaries, np.float32), name="boundaries")
        below = math_ops.less(array_ops.expand_dims(source, -1), boundaries)
        return math_ops.reduce_sum(math_ops.cast(math_ops.logical_not(below), dtypes.int32),
                                   axis=-1, name="Bucketize")

    def _get_dense_tensor(self, inputs: LazyBuilder, weight_collections: Any = None,
                          trainable: bool | None = None) -> Any:
        return array_ops.one_hot(math_ops.cast(inputs.get(self), dtypes.int64),
                                 depth=len(self.boundaries) + 1, on_value=1.0, off_value=0.0)

    def _get_sparse_tensors(self, inputs: LazyBuilder, weight_collections: Any = None,
                            trainable: bool | None = None) -> IdWeightPair:
        buckets = inputs.get(self)
        batch_size = array_ops.shape(buckets)[0]
        width = self.source_column.shape[0]
        rows = array_ops.reshape(
            array_ops.tile(array_ops.expand_dims(array_ops.range(0, batch_size), 1),
                           [1, width]), [-1])
        columns = array_ops.tile(array_ops.range(0, width), array_ops.expand_dims(batch_size, 0))
        # ids of source element i lie in [i * k, (i + 1) * k) for k buckets
        ids = array_ops.reshape(buckets, [-1]) + (len(self.boundaries) + 1) * columns
        indices = math_ops.cast(array_ops.transpose(array_ops.stack([rows, columns])),
                                dtypes.int64)
        dense_shape = math_ops.cast(array_ops.stack([batch_size, width]), dtypes.int64)
        return IdWeightPair(SparseTensor(indices, math_ops.cast(ids, dtypes.int64), dense_shape),
                            None)


@attrs.frozen
class IndicatorColumn(DenseColumn):
    """See `indicator_column`."""

    categorical_column: CategoricalColumn

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_indicator"

    @property
    def _parse_example_spec(self) -> dict[str, Any]:
        return self.categorical_column._parse_example_spec

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape([1, self.categorical_column._num_buckets])

    def _transform_feature(self, inputs: LazyBuilder) -> Any:
        ids, weights = self.categorical_column._get_sparse_tensors(inputs)
        depth = self.categorical_column._num_buckets
        if weights is not None:
            return _weighted_multi_hot(ids, weights, depth)
        dense_ids = sparse_ops.sparse_tensor_to_dense(ids, default_value=-1)
        one_hot = array_ops.one_hot(dense_ids, depth=depth, on_value=1.0, off_value=0.0)
        return math_ops.reduce_sum(one_hot, axis=[-2])

    def _get_dense_tensor(self, inputs: LazyBuilder, weight_collections: Any = None,
                          trainable: bool | None = None) -> Any:
        return inputs.get(self)


def _weighted_multi_hot(ids: SparseTensor, weights: SparseTensor, depth: int) -> Any:
    """``[batch, depth]``: per example, the sum of the weights of each id (TF merges the two
    sparse tensors and densifies them; negative ids are dropped as its ``sparse_slice``
    does)."""
    rows = ids.indices[:, 0]
    valid = array_ops.reshape(array_ops.where(math_ops.greater_equal(ids.values, 0)), [-1])
    positions = array_ops.stack([array_ops.gather(rows, valid),
                                 array_ops.gather(ids.values, valid)], axis=1)
    shape = array_ops.stack([ids.dense_shape[0], np.int64(depth)])
    return array_ops.scatter_nd(positions, array_ops.gather(weights.values, valid), shape)


def _check_shape(shape: Any, key: str) -> tuple[int, ...]:
    shape = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
    for dimension in shape:
        if not isinstance(dimension, (int, np.integer)) or isinstance(dimension, bool):
            raise TypeError(f"shape dimensions must be integer. shape: {shape}, key: {key}")
        if dimension < 1:
            raise ValueError(f"shape dimensions must be greater than 0. shape: {shape}, "
                             f"key: {key}")
    return tuple(int(d) for d in shape)


def _check_default_value(shape: tuple[int, ...], default_value: Any, dtype: dtypes.DType,
                         key: str) -> Any:
    """`default_value` as a nested tuple of `shape` (a scalar is repeated), or None."""
    if default_value is None:
        return None
    if isinstance(default_value, (int, np.integer)) or (
            isinstance(default_value, (float, np.floating)) and dtype.is_floating):
        return _as_tuple(np.full(shape, default_value).tolist())
    value = np.asarray(default_value)
    if value.ndim and value.shape != shape:
        raise ValueError("The shape of default_value must be equal to given shape. "
                         f"default_value: {default_value}, shape: {shape}, key: {key}")
    if value.ndim and (value.dtype.kind in "iu" or
                       value.dtype.kind == "f" and dtype.is_floating):
        return _as_tuple(value.tolist())
    raise TypeError("default_value must be compatible with dtype. "
                    f"default_value: {default_value}, dtype: {dtype}, key: {key}")


def _as_tuple(value: Any) -> Any:
    return tuple(_as_tuple(v) for v in value) if isinstance(value, list) else value


def numeric_column(key: str, shape: Any = (1,), default_value: Any = None,
                   dtype: Any = dtypes.float32,
                   normalizer_fn: Callable[[Any], Any] | None = None) -> NumericColumn:
    """A real-valued feature of per-example shape `shape`."""
    shape = _check_shape(shape, key)
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype}, key: {key}")
    default_value = _check_default_value(shape, default_value, dtype, key)
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    assert_key_is_string(key)
    return NumericColumn(key, shape, default_value, dtype, normalizer_fn)


def bucketized_column(source_column: NumericColumn, boundaries: Any) -> BucketizedColumn:
    """`source_column` discretized: buckets ``(-inf, b0), [b0, b1), ..., [bn, inf)``."""
    if not isinstance(source_column, NumericColumn):
        raise ValueError("source_column must be a column generated with numeric_column(). "
                         f"Given: {source_column}")
    if len(source_column.shape) > 1:
        raise ValueError(f"source_column must be one-dimensional column. Given: {source_column}")
    if not isinstance(boundaries, (list, tuple)):
        raise ValueError("boundaries must be a sorted list.")
    if not boundaries:
        raise ValueError("boundaries must not be empty.")
    for low, high in zip(boundaries, boundaries[1:]):
        if low >= high:
            raise ValueError("boundaries must be a sorted list.")
    return BucketizedColumn(source_column, tuple(boundaries))


def indicator_column(categorical_column: CategoricalColumn) -> IndicatorColumn:
    """`categorical_column` as a multi-hot ``[batch, num_buckets]`` float32 tensor."""
    return IndicatorColumn(categorical_column)
