"""``crossed_column``: TF's names, errors and exact hashed ids (test vectors of TF 1.15's
``feature_column_test.py``), and its use in ``linear_model``, ``indicator_column``,
``embedding_column`` and ``LinearClassifier``, where a cross learns XOR."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.api.feature_column_base import LazyBuilder

fc = tw.feature_column

XOR_FEATURES = {"x1": np.array(["0", "0", "1", "1"]), "x2": np.array(["0", "1", "0", "1"])}
XOR_LABELS = np.array([[0.0], [1.0], [1.0], [0.0]], np.float32)


def abc_features() -> dict:
    def sp(values: list[str]) -> tw.SparseTensor:
        return tw.SparseTensor(indices=((0, 0), (1, 0), (1, 1)), values=values,
                               dense_shape=(2, 2))
    return {"a": tw.constant(((-1.0, 0.5), (0.5, 1.0))), "c": sp(["cA", "cB", "cC"]),
            "d1": sp(["d1A", "d1B", "d1C"]), "d2": sp(["d2A", "d2B", "d2C"])}


def bucketized_a() -> object:
    return fc.bucketized_column(fc.numeric_column("a", dtype=tw.int32, shape=(2,)), (0, 1))


def ids_of(column: object, features: dict) -> tw.SparseTensorValue:
    pair = column._get_sparse_tensors(LazyBuilder(features))
    assert pair.weight_tensor is None
    with tw.Session() as sess:
        return sess.run(pair.id_tensor)


def test_name_is_the_sorted_leaf_names() -> None:
    b = bucketized_a()
    crossed1 = fc.crossed_column(["d1", "d2"], 10)
    assert fc.crossed_column([b, "c", crossed1], 10).name == "a_bucketized_X_c_X_d1_X_d2"
    assert fc.crossed_column([crossed1, "c", b], 10).name == "a_bucketized_X_c_X_d1_X_d2"
    inner = fc.crossed_column(["d2", "c"], 10)
    assert fc.crossed_column([inner, "d1", b], 10).name == "a_bucketized_X_c_X_d1_X_d2"


def test_spec_buckets_and_copy() -> None:
    b = bucketized_a()
    crossed = fc.crossed_column([b, "c"], 15, hash_key=5)
    assert crossed._num_buckets == 15
    spec = crossed._parse_example_spec
    assert set(spec) == {"a", "c"}
    assert spec["c"] == tw.VarLenFeature(tw.string)
    assert spec["a"] == tw.FixedLenFeature((2,), tw.int32)
    clone = copy.deepcopy(crossed)
    assert (clone.name, clone.hash_bucket_size, clone.hash_key) == ("a_bucketized_X_c", 15, 5)
    assert clone == crossed


@pytest.mark.parametrize("keys, size, message", [
    (["a", "c"], -1, "hash_bucket_size must be > 1"),
    (["a", "c"], 0, "hash_bucket_size must be > 1"),
    (["a", "c"], None, "hash_bucket_size must be > 1"),
    (["a"], 10, "keys must be a list with length > 1"),
    ([], 10, "keys must be a list with length > 1"),
    (["a", fc.numeric_column("c")], 10, "Unsupported key type"),
    (["a", fc.categorical_column_with_hash_bucket("c", 10)], 10,
     "categorical_column_with_hash_bucket is not supported"),
])
def test_bad_arguments_raise_tf_errors(keys: list, size: int | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fc.crossed_column(keys, size)


def test_nested_cross_ids_equal_tf() -> None:
    crossed1 = fc.crossed_column(["d1", "d2"], 10)
    crossed2 = fc.crossed_column([bucketized_a(), "c", crossed1], 15, hash_key=5)
    out = ids_of(crossed2, abc_features())
    np.testing.assert_array_equal(out.indices, [(0, 0), (0, 1)] + [(1, j) for j in range(16)])
    assert out.values.tolist() == [6, 14, 0, 13, 8, 8, 10, 12, 2, 0, 1, 9, 8, 12, 2, 0, 10, 11]
    assert out.values.dtype == np.int64
    np.testing.assert_array_equal(out.dense_shape, (2, 16))


def test_bucketized_cross_ids_equal_tf() -> None:
    crossed = fc.crossed_column([bucketized_a(), "c"], hash_bucket_size=5, hash_key=5)
    out = ids_of(crossed, abc_features())
    np.testing.assert_array_equal(out.indices, ((0, 0), (0, 1), (1, 0), (1, 1), (1, 2), (1, 3)))
    assert out.values.tolist() == [1, 0, 1, 3, 4, 2]
    np.testing.assert_array_equal(out.dense_shape, (2, 4))


def test_dense_string_feature_crosses_with_bucketized_ids() -> None:
    price = fc.bucketized_column(fc.numeric_column("price", shape=[2]), boundaries=[0, 50])
    crossed = fc.crossed_column([price, "wire"], 10)
    wire = tw.SparseTensor(values=["omar", "stringer", "marlo"],
                           indices=[[0, 0], [1, 0], [1, 1]], dense_shape=[2, 2])
    out = ids_of(crossed, {"price": tw.constant([[1.0, 2.0], [5.0, 60.0]]), "wire": wire})
    np.testing.assert_array_equal(out.indices, [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [1, 3]])
    assert ((out.values >= 0) & (out.values < 10)).all()
    np.testing.assert_array_equal(out.dense_shape, [2, 4])
    # the same ids as crossing the bucket ids (price bucket + 3 * dimension) by hand
    expected = tw.sparse.cross_hashed(
        [tw.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1]], np.array([1, 4, 1, 5], np.int64),
                         [2, 2]), wire], num_buckets=10)
    with tw.Session() as sess:
        assert out.values.tolist() == sess.run(expected).values.tolist()


def test_vocabulary_and_identity_keys_cross_their_ids() -> None:
    vocab = fc.categorical_column_with_vocabulary_list("v", ["p", "q"])
    ident = fc.categorical_column_with_identity("i", 4)
    out = ids_of(fc.crossed_column([vocab, ident], 1000),
                 {"v": np.array([["q"], ["p"]]), "i": np.array([[3], [2]], np.int64)})
    ids = tw.sparse.cross_hashed([tw.constant([[1], [0]], tw.int64),
                                  tw.constant([[3], [2]], tw.int64)], num_buckets=1000)
    with tw.Session() as sess:
        assert out.values.tolist() == sess.run(ids).values.tolist()


def test_weighted_key_is_refused_when_building() -> None:
    weighted = fc.weighted_categorical_column(fc.categorical_column_with_identity("t", 5), "w")
    crossed = fc.crossed_column([weighted, "c"], 5, hash_key=5)
    features = {"t": tw.SparseTensor([[0, 0]], np.array([1], np.int64), [1, 1]),
                "w": tw.SparseTensor([[0, 0]], [2.0], [1, 1]),
                "c": tw.SparseTensor([[0, 0]], ["cA"], [1, 1])}
    with pytest.raises(ValueError, match="crossed_column does not support weight_tensor.*t_"):
        fc.linear_model(features, [crossed])


def test_linear_model_sums_the_crossed_weights_as_tf() -> None:
    crossed = fc.crossed_column([bucketized_a(), "c"], hash_bucket_size=5, hash_key=5)
    features = abc_features()
    cols_to_vars: dict = {}
    predictions = fc.linear_model({"a": features["a"], "c": features["c"]}, [crossed],
                                  cols_to_vars=cols_to_vars)
    weights = cols_to_vars[crossed][0]
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        np.testing.assert_allclose(sess.run(predictions), [[0.0], [0.0]])
        sess.run(weights.assign([[1.0], [2.0], [3.0], [4.0], [5.0]]))
        # ids (1, 0) and (1, 3, 4, 2)
        np.testing.assert_allclose(sess.run(predictions), [[3.0], [14.0]])


def test_indicator_and_embedding_of_a_cross() -> None:
    crossed = fc.crossed_column(["x1", "x2"], 7)
    indicator = fc.indicator_column(crossed)
    embedding = fc.embedding_column(crossed, 3, initializer=tw.ones_initializer())
    dense = fc.input_layer(XOR_FEATURES, [indicator, embedding])
    ids = ids_of(crossed, XOR_FEATURES)
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        out = sess.run(dense)
    assert out.shape == (4, 3 + 7)  # columns sorted by name: embedding, then indicator
    np.testing.assert_allclose(out[:, :3], np.ones((4, 3)))
    np.testing.assert_allclose(out[:, 3:], np.eye(7, dtype=np.float32)[ids.values])


def _xor_loss(columns: list) -> float:
    logits = fc.linear_model(XOR_FEATURES, columns)
    loss = tw.reduce_mean(tw.nn.sigmoid_cross_entropy_with_logits(labels=XOR_LABELS,
                                                                  logits=logits))
    train = tw.train.GradientDescentOptimizer(1.0).minimize(loss)
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        for _ in range(100):
            sess.run(train)
        return float(sess.run(loss))


def test_a_cross_learns_xor_where_the_single_columns_cannot() -> None:
    x1 = fc.categorical_column_with_vocabulary_list("x1", ["0", "1"])
    x2 = fc.categorical_column_with_vocabulary_list("x2", ["0", "1"])
    crossed = fc.crossed_column(["x1", "x2"], 20)
    assert len(set(ids_of(crossed, XOR_FEATURES).values.tolist())) == 4  # no collision
    assert _xor_loss([x1, x2]) > 0.69  # the best linear fit of XOR predicts 0.5: ln 2
    tw.reset_default_graph()
    assert _xor_loss([x1, x2, crossed]) < 0.05


def test_linear_classifier_with_a_cross(tmp_path: object) -> None:
    crossed = fc.crossed_column(["x1", "x2"], 20)
    classifier = tw.estimator.LinearClassifier([crossed], model_dir=str(tmp_path),
                                               optimizer=tw.train.GradientDescentOptimizer(0.5))

    def input_fn() -> tuple:
        return ({k: tw.constant(v) for k, v in XOR_FEATURES.items()},
                tw.constant(XOR_LABELS.astype(np.int64)))

    classifier.train(input_fn, steps=40)
    metrics = classifier.evaluate(input_fn, steps=1)
    assert metrics["accuracy"] == 1.0
