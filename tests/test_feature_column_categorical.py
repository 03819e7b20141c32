"""Categorical columns: hash buckets equal to ``tw.strings.to_hash_bucket_fast``, vocabulary ids
with OOV buckets and defaults, identity ids with defaults and run-time range checks, weights;
TF's constructor and dtype errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.api.feature_column_base import LazyBuilder
from tensorweave.engine import errors

fc = tw.feature_column


def ids_of(column: object, features: dict) -> tw.SparseTensorValue:
    pair = column._get_sparse_tensors(LazyBuilder(features))
    with tw.Session() as sess:
        return sess.run(pair.id_tensor)


def hash_buckets(strings: list[str], size: int) -> np.ndarray:
    with tw.Session() as sess:
        return sess.run(tw.strings.to_hash_bucket_fast(strings, size))


def test_hash_bucket_of_strings_is_to_hash_bucket_fast() -> None:
    column = fc.categorical_column_with_hash_bucket("kw", 10)
    words = ["apple", "", "pear", "fig"]
    out = ids_of(column, {"kw": np.array([words[:2], words[2:]])})
    np.testing.assert_array_equal(out.indices, [[0, 0], [1, 0], [1, 1]])  # "" is missing
    np.testing.assert_array_equal(out.values, hash_buckets(["apple", "pear", "fig"], 10))
    assert out.values.dtype == np.int64
    assert column._num_buckets == 10


def test_hash_bucket_of_integers_hashes_their_decimal_string() -> None:
    column = fc.categorical_column_with_hash_bucket("n", 7, dtype=tw.int64)
    sp = tw.SparseTensor([[0, 0], [1, 2]], np.array([12, -3], np.int64), [2, 3])
    out = ids_of(column, {"n": sp})
    np.testing.assert_array_equal(out.values, hash_buckets(["12", "-3"], 7))
    np.testing.assert_array_equal(out.dense_shape, [2, 3])


def test_vocabulary_ids_oov_buckets_and_default() -> None:
    vocab = ["R", "G", "B"]
    features = {"c": np.array([["B", "X"], ["R", ""], ["Y", "G"]])}
    out = ids_of(fc.categorical_column_with_vocabulary_list("c", vocab), features)
    np.testing.assert_array_equal(out.indices, [[0, 0], [0, 1], [1, 0], [2, 0], [2, 1]])
    np.testing.assert_array_equal(out.values, [2, -1, 0, -1, 1])
    with_default = fc.categorical_column_with_vocabulary_list("c", vocab, default_value=1)
    np.testing.assert_array_equal(ids_of(with_default, features).values, [2, 1, 0, 1, 1])
    oov = fc.categorical_column_with_vocabulary_list("c", vocab, num_oov_buckets=4)
    expected = 3 + hash_buckets(["X", "Y"], 4)
    np.testing.assert_array_equal(ids_of(oov, features).values,
                                  [2, expected[0], 0, expected[1], 1])
    assert oov._num_buckets == 7


def test_integer_vocabulary_with_oov_buckets_hashes_the_decimal_string() -> None:
    column = fc.categorical_column_with_vocabulary_list("n", [10, 20, 30], num_oov_buckets=3)
    assert column.dtype == tw.int64
    out = ids_of(column, {"n": np.array([30, 5, -1, 10], np.int32)})
    np.testing.assert_array_equal(out.indices, [[0, 0], [1, 0], [3, 0]])
    np.testing.assert_array_equal(out.values, [2, 3 + hash_buckets(["5"], 3)[0], 0])


def test_identity_ids_and_default_value() -> None:
    features = {"v": np.array([[0, 4], [7, -1]], np.int64)}
    column = fc.categorical_column_with_identity("v", 5, default_value=2)
    out = ids_of(column, features)
    np.testing.assert_array_equal(out.indices, [[0, 0], [0, 1], [1, 0]])
    np.testing.assert_array_equal(out.values, [0, 4, 2])


def test_identity_out_of_range_fails_at_run_time() -> None:
    column = fc.categorical_column_with_identity("v", 5)
    with pytest.raises(errors.InvalidArgumentError, match="exceeds number of buckets"):
        ids_of(column, {"v": np.array([1, 5], np.int64)})
    sp = tw.SparseTensor([[0, 0]], np.array([-2], np.int64), [1, 1])
    with pytest.raises(errors.InvalidArgumentError, match="Negative bucket index"):
        ids_of(column, {"v": sp})


def test_weighted_column_pairs_ids_with_weights() -> None:
    ids = fc.categorical_column_with_identity("v", 5)
    column = fc.weighted_categorical_column(ids, "w")
    assert column.name == "v_weighted_by_w"
    features = {"v": np.array([[1, 3], [2, -1]], np.int64),
                "w": np.array([[0.5, 2.0], [1.5, 0.0]], np.float32)}
    pair = column._get_sparse_tensors(LazyBuilder(features))
    with tw.Session() as sess:
        id_value, weight_value = sess.run([pair.id_tensor, pair.weight_tensor])
    np.testing.assert_array_equal(id_value.values, [1, 3, 2])
    np.testing.assert_array_equal(weight_value.values, np.array([0.5, 2.0, 1.5], np.float32))
    assert column._parse_example_spec == {"v": tw.io.VarLenFeature(tw.int64),
                                          "w": tw.io.VarLenFeature(tw.float32)}
    with pytest.raises(ValueError, match="Bad dtype, expected"):
        column._get_sparse_tensors(LazyBuilder({"v": features["v"],
                                                "w": features["w"].astype(np.float64)}))


def test_input_dtype_must_match_column_dtype() -> None:
    column = fc.categorical_column_with_hash_bucket("kw", 10)
    with pytest.raises(ValueError, match="Column dtype and SparseTensors dtype must be "
                                         "compatible"):
        ids_of(column, {"kw": np.array([[1]], np.int64)})
    vocab = fc.categorical_column_with_vocabulary_list("c", ["a"])
    with pytest.raises(ValueError, match="Column dtype and SparseTensors dtype"):
        ids_of(vocab, {"c": np.array([[1]], np.int64)})
    identity = fc.categorical_column_with_identity("v", 3)
    with pytest.raises(ValueError, match="Invalid input, not integer"):
        ids_of(identity, {"v": np.array([["a"]])})


def test_constructor_errors_follow_tf() -> None:
    with pytest.raises(ValueError, match="hash_bucket_size must be at least 1"):
        fc.categorical_column_with_hash_bucket("k", 0)
    with pytest.raises(ValueError, match="hash_bucket_size must be set"):
        fc.categorical_column_with_hash_bucket("k", None)
    with pytest.raises(ValueError, match="dtype must be string or integer"):
        fc.categorical_column_with_hash_bucket("k", 3, dtype=tw.float32)
    with pytest.raises(ValueError, match="key must be a string"):
        fc.categorical_column_with_hash_bucket(1, 3)
    with pytest.raises(ValueError, match="must be non-empty"):
        fc.categorical_column_with_vocabulary_list("k", [])
    with pytest.raises(ValueError, match="Duplicate keys in vocabulary_list"):
        fc.categorical_column_with_vocabulary_list("k", ["a", "a"])
    with pytest.raises(ValueError, match="Can't specify both num_oov_buckets and default_value"):
        fc.categorical_column_with_vocabulary_list("k", ["a"], default_value=0,
                                                   num_oov_buckets=1)
    with pytest.raises(ValueError, match="Invalid num_oov_buckets -1"):
        fc.categorical_column_with_vocabulary_list("k", ["a"], num_oov_buckets=-1)
    with pytest.raises(ValueError, match="do not match"):
        fc.categorical_column_with_vocabulary_list("k", ["a"], dtype=tw.int64)
    with pytest.raises(ValueError, match="vocabulary dtype must be string or integer"):
        fc.categorical_column_with_vocabulary_list("k", [1.5, 2.5])
    with pytest.raises(ValueError, match="num_buckets 0 < 1"):
        fc.categorical_column_with_identity("k", 0)
    with pytest.raises(ValueError, match=r"default_value 3 not in range \[0, 3\)"):
        fc.categorical_column_with_identity("k", 3, default_value=3)
    with pytest.raises(ValueError, match="is not convertible to float"):
        fc.weighted_categorical_column(fc.categorical_column_with_identity("k", 3), "w",
                                       dtype=tw.string)


def test_columns_are_values_and_give_parse_specs() -> None:
    a = fc.categorical_column_with_vocabulary_list("c", ("x", "y"))
    assert a == fc.categorical_column_with_vocabulary_list("c", ["x", "y"])
    assert len({a, fc.categorical_column_with_vocabulary_list("c", ["x", "y"])}) == 1
    assert a._parse_example_spec == {"c": tw.io.VarLenFeature(tw.string)}
    assert fc.categorical_column_with_identity("v", 3)._parse_example_spec == {
        "v": tw.io.VarLenFeature(tw.int64)}
