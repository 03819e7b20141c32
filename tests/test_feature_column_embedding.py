"""``embedding_column`` and ``safe_embedding_lookup_sparse``: mean / sum / sqrtn of the rows of
the embedding variable's values (weighted too), empty and pruned rows, the variable's name,
shape, initializer and checkpoint loading, TF's errors."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.api.feature_column_base import LazyBuilder
from tensorweave.api.feature_column_embedding import safe_embedding_lookup_sparse

fc = tw.feature_column

# example 0: ids 1, 3; example 1: id 2 twice; example 2: none; example 3: id 0
IDS = np.array([[1, 3], [2, 2], [-1, -1], [0, -1]], np.int64)
ROWS = [[1, 3], [2, 2], [], [0]]


def embed(column: object, features: dict) -> tuple[np.ndarray, np.ndarray]:
    """The column's dense tensor and its embedding variable's value."""
    with tw.variable_scope("scope"):
        out = column._get_dense_tensor(LazyBuilder(features))
    (variable,) = tw.global_variables()
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        return sess.run([out, variable])


@pytest.mark.parametrize("combiner", ["mean", "sum", "sqrtn"])
def test_embedding_combines_rows_of_the_variable(combiner: str) -> None:
    column = fc.embedding_column(fc.categorical_column_with_identity("v", 4), 3,
                                 combiner=combiner)
    out, table = embed(column, {"v": IDS})
    expected = np.zeros((4, 3), np.float32)
    for i, ids in enumerate(ROWS):
        if ids:
            total = table[ids].sum(axis=0)
            expected[i] = {"sum": total, "mean": total / len(ids),
                           "sqrtn": total / np.sqrt(len(ids))}[combiner]
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert out.dtype == np.float32


def test_weighted_embedding_drops_non_positive_weights() -> None:
    weighted = fc.weighted_categorical_column(fc.categorical_column_with_identity("v", 4), "w")
    column = fc.embedding_column(weighted, 2, combiner="mean")
    # a missing id (-1) has weight 0, so the two sparse tensors have the same entries
    weights = np.array([[2.0, 1.0], [0.5, -3.0], [0.0, 0.0], [4.0, 0.0]], np.float32)
    out, table = embed(column, {"v": IDS, "w": weights})
    expected = np.stack([
        (2.0 * table[1] + 1.0 * table[3]) / 3.0,
        table[2],  # the negative weight is pruned for "mean"
        np.zeros(2),
        table[0],
    ])
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_embedding_variable_name_shape_and_initializer() -> None:
    column = fc.embedding_column(fc.categorical_column_with_hash_bucket("kw", 50), 4,
                                 initializer=tw.constant_initializer(0.25), trainable=False)
    assert column.name == "kw_embedding"
    assert column._variable_shape.as_list() == [4]
    out, table = embed(column, {"kw": np.array([["a", "b"], ["c", ""]])})
    (variable,) = tw.global_variables()
    assert variable.name == "scope/embedding_weights:0"
    assert variable.shape.as_list() == [50, 4]
    assert tw.trainable_variables() == []
    np.testing.assert_array_equal(table, np.full((50, 4), 0.25, np.float32))
    np.testing.assert_allclose(out, np.full((2, 4), 0.25, np.float32))


def test_default_initializer_is_truncated_normal_of_stddev_one_over_sqrt_dimension() -> None:
    column = fc.embedding_column(fc.categorical_column_with_identity("v", 2000), 16)
    _, table = embed(column, {"v": np.array([[0]], np.int64)})
    assert abs(table.std() - 0.88 / 4) < 0.02  # a normal truncated at 2 sigma keeps 0.88 std
    assert np.abs(table).max() <= 2 / 4 + 1e-6


def test_embedding_loads_from_checkpoint(tmp_path: pathlib.Path) -> None:
    saved = np.arange(12, dtype=np.float32).reshape(4, 3)
    source = tw.get_variable("saved_table", initializer=saved)
    with tw.Session() as sess:
        sess.run(source.initializer)
        path = tw.train.Saver([source]).save(sess, str(tmp_path / "model"))
    tw.reset_default_graph()
    column = fc.embedding_column(fc.categorical_column_with_identity("v", 4), 3,
                                 ckpt_to_load_from=path, tensor_name_in_ckpt="saved_table")
    out, table = embed(column, {"v": np.array([[3]], np.int64)})
    np.testing.assert_array_equal(table, saved)
    np.testing.assert_array_equal(out, saved[[3]])
    wrong = fc.embedding_column(fc.categorical_column_with_identity("v", 5), 3,
                                ckpt_to_load_from=path, tensor_name_in_ckpt="saved_table")
    with pytest.raises(ValueError, match="doesn't match with shape of tensor saved_table"):
        wrong._get_dense_tensor(LazyBuilder({"v": np.array([[3]], np.int64)}))


def test_safe_lookup_of_rank_three_ids_keeps_the_leading_dimensions() -> None:
    table = np.arange(10, dtype=np.float32).reshape(5, 2)
    ids = tw.SparseTensor([[0, 0, 0], [0, 0, 1], [1, 1, 0]], np.array([1, 4, 2], np.int64),
                          [2, 2, 2])
    out = safe_embedding_lookup_sparse(tw.constant(table), ids, combiner="sum")
    with tw.Session() as sess:
        value = sess.run(out)
    expected = np.zeros((2, 2, 2), np.float32)
    expected[0, 0] = table[1] + table[4]
    expected[1, 1] = table[2]
    np.testing.assert_array_equal(value, expected)


def test_constructor_errors_follow_tf() -> None:
    ids = fc.categorical_column_with_identity("v", 4)
    with pytest.raises(ValueError, match="Invalid dimension 0"):
        fc.embedding_column(ids, 0)
    with pytest.raises(ValueError, match="initializer must be callable if specified"):
        fc.embedding_column(ids, 2, initializer=3)
    with pytest.raises(ValueError, match="Must specify both `ckpt_to_load_from`"):
        fc.embedding_column(ids, 2, ckpt_to_load_from="x")
    column = fc.embedding_column(ids, 2, combiner="max")
    with pytest.raises(ValueError, match="combiner must be one of"):
        column._get_dense_tensor(LazyBuilder({"v": IDS}))
