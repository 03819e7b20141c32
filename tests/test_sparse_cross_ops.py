"""``tw.sparse.cross`` / ``tw.sparse.cross_hashed`` and the ``SparseCross`` kernel: TF 1.15's
cross order, ``"_X_"`` strings, and its exact hashes (test vectors of TF's
``sparse_cross_op_test.py``); errors at construction and at run time."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.api.sparse_cross_ops import DEFAULT_HASH_KEY
from tensorweave.engine import errors

FC1 = [["batch1-FC1-F1", "batch1-FC1-F2", "batch1-FC1-F3"]]
FC2 = [["batch1-FC2-F1"]]
FC3 = [["batch1-FC3-F1", "batch1-FC3-F2"]]


def sparse(rows: list[list], batch_size: int = -1) -> tw.SparseTensor:
    """A 2-D `SparseTensor` with row b's features at ``[b, 0..]``."""
    indices = [[b, j] for b, row in enumerate(rows) for j in range(len(row))]
    values = [v for row in rows for v in row]
    width = max((len(row) for row in rows), default=0)
    array = np.array(values, object if not values or isinstance(values[0], str) else np.int64)
    return tw.SparseTensor(np.array(indices, np.int64).reshape(-1, 2), array,
                           [len(rows) if batch_size < 0 else batch_size, width])


def run(sp: tw.SparseTensor) -> tw.SparseTensorValue:
    with tw.Session() as sess:
        return sess.run(sp)


def assert_sparse(out: tw.SparseTensorValue, rows: list[list], batch_size: int = -1) -> None:
    expected = run(sparse(rows, batch_size))
    np.testing.assert_array_equal(out.indices, expected.indices)
    assert out.values.tolist() == [v.encode() if isinstance(v, str) else v
                                   for row in rows for v in row]
    np.testing.assert_array_equal(out.dense_shape, expected.dense_shape)


def test_sparse_cross_joins_the_row_products_with_X() -> None:
    out = run(tw.sparse.cross([sparse([["batch1-FC1-F1"], ["batch2-FC1-F1", "batch2-FC1-F2"]]),
                               sparse([["batch1-FC2-F1"], ["batch2-FC2-F1", "batch2-FC2-F2"]])]))
    assert_sparse(out, [["batch1-FC1-F1_X_batch1-FC2-F1"],
                        ["batch2-FC1-F1_X_batch2-FC2-F1", "batch2-FC1-F1_X_batch2-FC2-F2",
                         "batch2-FC1-F2_X_batch2-FC2-F1", "batch2-FC1-F2_X_batch2-FC2-F2"]])
    assert out.values.dtype == object and out.indices.dtype == np.int64


def test_dense_inputs_are_crossed_after_the_sparse_ones() -> None:
    dense = tw.constant([["d1", "d2"], ["d3", "d4"]])
    out = run(tw.sparse.cross([dense, sparse([["s1"], ["s2", "s3"]])]))
    assert_sparse(out, [["s1_X_d1", "s1_X_d2"],
                        ["s2_X_d3", "s2_X_d4", "s3_X_d3", "s3_X_d4"]])


def test_integer_features_cross_as_decimal_strings() -> None:
    out = run(tw.sparse.cross([sparse([[11], [333, 55555]]),
                               sparse([["a"], ["b", "c"]])]))
    assert_sparse(out, [["11_X_a"], ["333_X_b", "333_X_c", "55555_X_b", "55555_X_c"]])
    dense = tw.constant([[11, 333], [55555, -9]], tw.int32)  # cast to int64 by the API
    out = run(tw.sparse.cross([dense, tw.constant([["x"], ["y"]])]))
    assert_sparse(out, [["11_X_x", "333_X_x"], ["55555_X_y", "-9_X_y"]])


def test_product_order_varies_the_last_column_fastest() -> None:
    out = run(tw.sparse.cross([sparse(FC1), sparse(FC2), sparse(FC3)]))
    expected = [f"batch1-FC1-F{i}_X_batch1-FC2-F1_X_batch1-FC3-F{k}"
                for i in (1, 2, 3) for k in (1, 2)]
    assert_sparse(out, [expected])


def test_a_row_missing_in_one_column_has_no_cross() -> None:
    out = run(tw.sparse.cross([sparse([["a1", "a2"]], 2), sparse([["b1"], ["b2"]], 2),
                               sparse([["c1", "c2"]], 2)]))
    assert_sparse(out, [["a1_X_b1_X_c1", "a1_X_b1_X_c2", "a2_X_b1_X_c1", "a2_X_b1_X_c2"]], 2)
    empty = run(tw.sparse.cross([sparse([["a1", "a2"]]), sparse([], 1), sparse([["c1"]])]))
    assert empty.indices.shape == (0, 2) and empty.values.size == 0
    np.testing.assert_array_equal(empty.dense_shape, [1, 0])


@pytest.mark.parametrize("num_buckets, hash_key, expected", [
    (0, None, 1971693436396284976),
    (0, DEFAULT_HASH_KEY + 1, 4847552627144134031),
    (100, None, 83),
    (100, DEFAULT_HASH_KEY + 1, 31),
])
def test_hashed_values_equal_tf(num_buckets: int, hash_key: int | None,
                                expected: int) -> None:
    columns = [sparse([["batch1-FC1-F1"]]), sparse([["batch1-FC2-F1"]]),
               sparse([["batch1-FC3-F1"]])]
    out = run(tw.sparse.cross_hashed(columns, num_buckets=num_buckets, hash_key=hash_key))
    assert out.values.tolist() == [expected]
    assert out.values.dtype == np.int64
    np.testing.assert_array_equal(out.indices, [[0, 0]])
    np.testing.assert_array_equal(out.dense_shape, [1, 1])


def test_hashed_integers_use_their_bits_without_collisions() -> None:
    # 359 and 1024 + 359 share their low 10 bits; the fingerprint concatenation separates them
    t1 = tw.constant([[359], [359 + 1024]], tw.int64)
    t2 = tw.constant([list(range(10)), list(range(10))], tw.int64)
    cross = tw.sparse.cross_hashed([t2, t1], num_buckets=1024, hash_key=DEFAULT_HASH_KEY + 1)
    with tw.Session() as sess:
        values = sess.run(tw.sparse.to_dense(cross))
    assert values.shape == (2, 10)
    assert (values[0] != values[1]).all()


def test_hashed_3x1x2_gives_distinct_ids_in_range() -> None:
    out = run(tw.sparse.cross_hashed([sparse(FC1), sparse(FC2), sparse(FC3)], num_buckets=1000))
    np.testing.assert_array_equal(out.indices, [[0, i] for i in range(6)])
    assert len(set(out.values.tolist())) == 6
    assert ((out.values >= 0) & (out.values < 1000)).all()


def test_raw_op_records_counts_and_type_lists() -> None:
    sp = sparse([["a"], ["b"]])
    dense = tw.constant([[1, 2], [3, 4]], tw.int64)
    outputs = tw.raw_ops.SparseCross(indices=[sp.indices], values=[sp.values],
                                     shapes=[sp.dense_shape], dense_inputs=[dense, dense],
                                     hashed_output=False, num_buckets=0, hash_key=1,
                                     out_type=tw.string, internal_type=tw.int64)
    op = outputs[1].op
    assert op.get_attr("N") == 1
    assert op.get_attr("sparse_types") == [tw.string]
    assert op.get_attr("dense_types") == [tw.int64, tw.int64]
    with tw.Session() as sess:
        values = sess.run(op.outputs[1])
    assert values.tolist()[:2] == [b"a_X_1_X_1", b"a_X_1_X_2"]


def test_bad_inputs_raise_at_construction() -> None:
    with pytest.raises(TypeError, match="Inputs must be a list"):
        tw.sparse.cross((sparse([["a"]]), sparse([["b"]])))
    with pytest.raises(TypeError, match="All inputs must be SparseTensors"):
        tw.sparse.cross([sparse([["a"]]), [["b"]]])
    with pytest.raises(ValueError, match="rank 2"):
        tw.sparse.cross([sparse([["a"]]), tw.constant(["b"])])
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tw.raw_ops.SparseCross(indices=[], values=[], shapes=[],
                               dense_inputs=[tw.constant([[1.0]])], hashed_output=True,
                               num_buckets=0, hash_key=1, out_type=tw.int64,
                               internal_type=tw.int64)


def test_inconsistent_inputs_fail_at_run_time() -> None:
    batch_mismatch = tw.sparse.cross([sparse([["a"], ["b"]]), tw.constant([["c"]])])
    with pytest.raises(errors.InvalidArgumentError, match="Expected batch size 2 got 1"):
        run(batch_mismatch)
    short = tw.SparseTensor(tw.placeholder(tw.int64, [None, 2]), tw.constant(["a", "b"]),
                            [1, 2])
    cross = tw.sparse.cross([short, sparse([["b"]])])
    with tw.Session() as sess, pytest.raises(errors.InvalidArgumentError,
                                             match="Expected size of values to be 1 got 2"):
        sess.run(cross, {short.indices: [[0, 0]]})


def test_graph_def_round_trip_keeps_the_input_lists() -> None:
    graph = tw.Graph()
    with graph.as_default():
        cross = tw.sparse.cross_hashed([sparse([["a"], ["b"]]),
                                        tw.constant([[1, 2], [3, 4]], tw.int64),
                                        tw.constant([["x"], ["y"]])], num_buckets=50, name="cr")
        serialized = graph.as_graph_def().SerializeToString()
    with tw.Session(graph=graph) as sess:
        expected = sess.run(cross.values)
    graph_def = type(graph.as_graph_def()).FromString(serialized)
    imported = tw.Graph()
    with imported.as_default():
        tw.import_graph_def(graph_def, name="")
        values = imported.get_tensor_by_name("cr:1")
        assert values.op.get_attr("dense_types") == [tw.int64, tw.string]
        with tw.Session() as sess:
            np.testing.assert_array_equal(sess.run(values), expected)
