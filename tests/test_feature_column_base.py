"""`LazyBuilder` (rank-1 features made ``[batch, 1]``, one transformation per column, TF's key
errors) and `to_sparse_input` (missing entries dropped) against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.api.feature_column_base import LazyBuilder, to_sparse_input


def run(*fetches: object, feed: dict | None = None) -> list:
    with tw.Session() as sess:
        return sess.run(list(fetches), feed)


def test_rank_one_dense_feature_becomes_a_column() -> None:
    builder = LazyBuilder({"a": np.array([1.0, 2.0, 3.0], np.float32)})
    out = builder.get("a")
    assert out.shape.as_list() == [3, 1]
    np.testing.assert_array_equal(run(out)[0], [[1.0], [2.0], [3.0]])
    assert builder.get("a") is out


def test_rank_one_sparse_feature_becomes_a_column() -> None:
    sp = tw.SparseTensor([[0], [2]], np.array([5, 6], np.int64), [3])
    out = LazyBuilder({"a": sp}).get("a")
    value = run(out)[0]
    np.testing.assert_array_equal(value.indices, [[0, 0], [2, 0]])
    np.testing.assert_array_equal(value.dense_shape, [3, 1])


def test_unknown_rank_dense_feature_is_expanded_at_run_time() -> None:
    ph = tw.placeholder(tw.float32)
    out = LazyBuilder({"a": ph}).get("a")
    np.testing.assert_array_equal(run(out, feed={ph: [1.0, 2.0]})[0], [[1.0], [2.0]])
    np.testing.assert_array_equal(run(out, feed={ph: [[1.0, 2.0]]})[0], [[1.0, 2.0]])


def test_rank_two_feature_is_unchanged() -> None:
    out = LazyBuilder({"a": np.ones((2, 3), np.float32)}).get("a")
    assert out.shape.as_list() == [2, 3]


def test_key_errors_follow_tf() -> None:
    builder = LazyBuilder({"a": np.ones(2, np.float32)})
    with pytest.raises(ValueError, match="Feature b is not in features dictionary"):
        builder.get("b")
    with pytest.raises(TypeError, match='"key" must be either a "str" or "_FeatureColumn"'):
        builder.get(3)
    with pytest.raises(ValueError, match=r"Feature \(key: s\) cannot have rank 0"):
        LazyBuilder({"s": np.float32(1.0)}).get("s")


def test_transformation_is_built_once_per_column() -> None:
    column = tw.feature_column.numeric_column("a")
    builder = LazyBuilder({"a": np.ones(2, np.float32)})
    assert builder.get(column) is builder.get(column)


@pytest.mark.parametrize("dense,missing", [
    (np.array([[1, -1], [-1, 4]], np.int64), -1),
    (np.array([["x", ""], ["", "y"]]), ""),
])
def test_to_sparse_input_drops_missing_entries(dense: np.ndarray, missing: object) -> None:
    value = run(to_sparse_input(dense))[0]
    np.testing.assert_array_equal(value.indices, [[0, 0], [1, 1]])
    expected = dense[dense != missing]
    got = [v.decode() if isinstance(v, bytes) else v for v in value.values]
    assert list(got) == list(expected)
    np.testing.assert_array_equal(value.dense_shape, [2, 2])
    assert value.dense_shape.dtype == np.int64


def test_to_sparse_input_float_ignore_value_and_sparse_passthrough() -> None:
    value = run(to_sparse_input(np.array([[0.0, 2.5]], np.float32)))[0]
    np.testing.assert_array_equal(value.indices, [[0, 1]])
    np.testing.assert_array_equal(value.values, np.array([2.5], np.float32))
    sp = tw.SparseTensor([[0, 0]], [1.0], [1, 1])
    assert to_sparse_input(sp) is sp
