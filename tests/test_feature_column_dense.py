"""Numeric, bucketized and indicator columns against numpy (bucket = ``searchsorted`` right,
one-hot, multi-hot counts and weight sums), and TF's constructor errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.api.feature_column_base import LazyBuilder

fc = tw.feature_column


def dense_of(column: object, features: dict) -> np.ndarray:
    out = column._get_dense_tensor(LazyBuilder(features))
    with tw.Session() as sess:
        return sess.run(out)


def test_numeric_casts_to_float32_and_applies_normalizer() -> None:
    column = fc.numeric_column("a", shape=(2,), dtype=tw.int64,
                               normalizer_fn=lambda x: x * 2)
    out = dense_of(column, {"a": np.array([[1, 2], [3, 4]], np.int64)})
    np.testing.assert_array_equal(out, np.array([[2, 4], [6, 8]], np.float32))
    assert out.dtype == np.float32
    assert column._variable_shape.as_list() == [2]
    assert column._parse_example_spec == {"a": tw.io.FixedLenFeature((2,), tw.int64, None)}


def test_numeric_rejects_sparse_input() -> None:
    sp = tw.SparseTensor([[0, 0]], [1.0], [1, 1])
    with pytest.raises(ValueError, match="SparseTensor is not supported. key: a"):
        dense_of(fc.numeric_column("a"), {"a": sp})


def test_numeric_default_value_fills_the_shape() -> None:
    assert fc.numeric_column("a", shape=(2, 2), default_value=3).default_value == (
        (3, 3), (3, 3))
    assert fc.numeric_column("a", shape=2, default_value=[1.0, 2.0]).default_value == (1.0, 2.0)
    spec = fc.numeric_column("a", default_value=0.5)._parse_example_spec
    assert spec == {"a": tw.io.FixedLenFeature((1,), tw.float32, (0.5,))}


def test_bucketized_matches_searchsorted_right() -> None:
    boundaries = [0.0, 10.0, 100.0]
    values = np.array([[-5.0, 10000.0], [150.0, 10.0], [5.0, 100.0], [0.0, np.nan]],
                      np.float32)
    column = fc.bucketized_column(fc.numeric_column("p", shape=2), boundaries)
    buckets = np.searchsorted(boundaries, values, side="right")
    buckets[np.isnan(values)] = len(boundaries)  # TF's upper_bound puts NaN last
    one_hot = np.eye(4, dtype=np.float32)[buckets]
    np.testing.assert_array_equal(dense_of(column, {"p": values}), one_hot)
    assert column._variable_shape.as_list() == [2, 4]
    assert column._num_buckets == 8
    pair = column._get_sparse_tensors(LazyBuilder({"p": values}))
    with tw.Session() as sess:
        ids = sess.run(pair.id_tensor)
    np.testing.assert_array_equal(ids.indices, [[r, c] for r in range(4) for c in range(2)])
    np.testing.assert_array_equal(ids.values, (buckets + np.array([0, 4])).ravel())
    np.testing.assert_array_equal(ids.dense_shape, [4, 2])


def test_indicator_is_multi_hot() -> None:
    vocab = fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"])
    column = fc.indicator_column(vocab)
    assert column.name == "c_indicator"
    out = dense_of(column, {"c": np.array([["a", "c"], ["b", "b"], ["", "z"]])})
    np.testing.assert_array_equal(out, np.array([[1, 0, 1], [0, 2, 0], [0, 0, 0]], np.float32))


def test_indicator_of_weighted_column_sums_weights() -> None:
    weighted = fc.weighted_categorical_column(fc.categorical_column_with_identity("v", 4), "w")
    features = {"v": np.array([[1, 3], [2, 2]], np.int64),
                "w": np.array([[0.5, 2.0], [1.5, 0.25]], np.float32)}
    out = dense_of(fc.indicator_column(weighted), features)
    np.testing.assert_allclose(out, [[0, 0.5, 0, 2.0], [0, 0, 1.75, 0]])


def test_constructor_errors_follow_tf() -> None:
    with pytest.raises(TypeError, match="shape dimensions must be integer"):
        fc.numeric_column("a", shape=(1.5,))
    with pytest.raises(ValueError, match="shape dimensions must be greater than 0"):
        fc.numeric_column("a", shape=(0,))
    with pytest.raises(ValueError, match="dtype must be convertible to float"):
        fc.numeric_column("a", dtype=tw.string)
    with pytest.raises(ValueError, match="The shape of default_value must be equal"):
        fc.numeric_column("a", shape=(2,), default_value=[1.0])
    with pytest.raises(TypeError, match="default_value must be compatible with dtype"):
        fc.numeric_column("a", dtype=tw.int32, default_value=1.5)
    with pytest.raises(TypeError, match="normalizer_fn must be a callable"):
        fc.numeric_column("a", normalizer_fn=3)
    with pytest.raises(ValueError, match="key must be a string"):
        fc.numeric_column(("a",))
    numeric = fc.numeric_column("a")
    with pytest.raises(ValueError, match="source_column must be a column generated with "
                                         "numeric_column"):
        fc.bucketized_column(fc.categorical_column_with_identity("b", 3), [1.0])
    with pytest.raises(ValueError, match="source_column must be one-dimensional"):
        fc.bucketized_column(fc.numeric_column("m", shape=(2, 2)), [1.0])
    with pytest.raises(ValueError, match="boundaries must not be empty"):
        fc.bucketized_column(numeric, [])
    with pytest.raises(ValueError, match="boundaries must be a sorted list"):
        fc.bucketized_column(numeric, [2.0, 1.0])
    with pytest.raises(ValueError, match="boundaries must be a sorted list"):
        fc.bucketized_column(numeric, np.array([1.0, 2.0]))
