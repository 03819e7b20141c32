"""`SparseTensor` and `SparseTensorValue`: construction and static checks, the static shape,
conversion refused as in TF, fetching (a `SparseTensorValue`, also inside structures), feeding a
sparse placeholder (value or triple, with the component shape checks), and a sparse op run on a
worker of a real local cluster."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.train.local_cluster import LocalCluster

INDICES = [[0, 1], [2, 0]]


def test_components_are_converted_to_int64_indices_and_shape() -> None:
    sp = tw.SparseTensor(INDICES, [1.5, 2.5], [3, 4])
    assert sp.indices.dtype == tw.int64 and sp.dense_shape.dtype == tw.int64
    assert sp.dtype == tw.float32 and sp.values.dtype == tw.float32
    assert sp.indices.shape.as_list() == [2, 2] and sp.values.shape.as_list() == [2]
    assert sp.op is sp.values.op and sp.graph is tw.get_default_graph()
    assert sp.shape == tw.TensorShape([3, 4]) and sp.get_shape() == sp.shape
    assert sp.indices.name.startswith("SparseTensor/")


def test_the_static_shape_is_unknown_where_the_dense_shape_is() -> None:
    dense_shape = tw.placeholder(tw.int64, [3])
    sp = tw.SparseTensor(tw.placeholder(tw.int64, [None, 3]), tw.placeholder(tw.int32, [None]),
                         dense_shape)
    assert sp.shape.as_list() == [None, None, None]
    unknown = tw.SparseTensor(INDICES, [1, 2], tw.placeholder(tw.int64))
    assert unknown.shape.ndims is None


@pytest.mark.parametrize("indices, values, shape, message", [
    ([0, 1], [1.0, 2.0], [3], "must have rank 2"),
    (INDICES, [[1.0, 2.0]], [3, 4], "must have rank 1"),
    (INDICES, [1.0, 2.0, 3.0], [3, 4], "Dimensions 2 and 3 are not compatible"),
    (INDICES, [1.0, 2.0], [3, 4, 5], "Dimensions 2 and 3 are not compatible"),
])
def test_inconsistent_static_shapes_raise_value_error(indices: object, values: object,
                                                      shape: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tw.SparseTensor(indices, values, shape)


def test_int32_indices_tensor_is_refused_as_in_tf() -> None:
    with pytest.raises(ValueError, match="requested dtype int64"):
        tw.SparseTensor(tw.constant(INDICES), [1.0, 2.0], [3, 4])


def test_a_sparse_tensor_is_not_convertible_to_a_tensor() -> None:
    sp = tw.SparseTensor(INDICES, [1.0, 2.0], [3, 4])
    with pytest.raises(TypeError, match="Failed to convert object of type .*SparseTensor"):
        tw.convert_to_tensor(sp)
    with pytest.raises(TypeError, match="Failed to convert"):
        tw.add(sp, 1.0)


def test_from_value_and_consumers() -> None:
    value = tw.SparseTensorValue(np.array(INDICES), np.array([1, 2], np.int32), [3, 4])
    sp = tw.SparseTensor.from_value(value)
    assert sp.dtype == tw.int32 and tw.SparseTensor.from_value(sp) is sp
    dense = tw.sparse.to_dense(sp)
    assert dense.op in sp.consumers()
    with pytest.raises(TypeError, match="Neither a SparseTensor nor SparseTensorValue"):
        tw.SparseTensor.from_value((INDICES, [1, 2], [3, 4]))
    assert tw.sparse.SparseTensorValue is tw.SparseTensorValue


def test_fetching_gives_a_sparse_tensor_value_also_inside_structures() -> None:
    sp = tw.SparseTensor(INDICES, [1.5, 2.5], [3, 4])
    dense = tw.constant([1, 2])
    with tw.Session() as sess:
        value = sess.run(sp)
        nested = sess.run({"sp": sp, "both": [sp, dense]})
        evaluated = sp.eval()
    assert isinstance(value, tw.SparseTensorValue)
    np.testing.assert_array_equal(value.indices, INDICES)
    assert value.indices.dtype == np.int64 and value.dense_shape.dtype == np.int64
    np.testing.assert_array_equal(value.values, np.array([1.5, 2.5], np.float32))
    np.testing.assert_array_equal(value.dense_shape, [3, 4])
    assert isinstance(nested["sp"], tw.SparseTensorValue)
    assert isinstance(nested["both"][0], tw.SparseTensorValue)
    np.testing.assert_array_equal(nested["both"][1], [1, 2])
    np.testing.assert_array_equal(evaluated.values, value.values)


def test_sparse_placeholder_names_and_static_shape() -> None:
    sp = tw.sparse_placeholder(tw.float32, shape=[None, 5], name="ids")
    assert sp.indices.name == "ids/indices:0" and sp.values.name == "ids/values:0"
    assert sp.dense_shape.name == "ids/shape:0"
    assert sp.shape.as_list() == [None, 5] and sp.indices.shape.as_list() == [None, 2]
    free = tw.sparse.placeholder(tw.int32)
    assert free.shape.ndims is None and free.dtype == tw.int32


def test_feeding_a_sparse_placeholder_with_a_value_or_a_triple() -> None:
    sp = tw.sparse_placeholder(tw.float32)
    dense = tw.sparse_tensor_to_dense(sp)
    with tw.Session() as sess:
        by_value = sess.run(dense, {sp: tw.SparseTensorValue([[0, 1]], [3.0], [2, 2])})
        by_triple = sess.run(dense, {sp: ([[1, 0], [1, 2]], [4.0, 5.0], [2, 3])})
        round_trip = sess.run(sp, {sp: ([[1]], [7.0], [4])})
    np.testing.assert_array_equal(by_value, [[0, 3], [0, 0]])
    np.testing.assert_array_equal(by_triple, [[0, 0, 0], [4, 0, 5]])
    assert by_triple.dtype == np.float32
    np.testing.assert_array_equal(round_trip.indices, [[1]])
    np.testing.assert_array_equal(round_trip.dense_shape, [4])


def test_make_callable_takes_sparse_feeds() -> None:
    sp = tw.sparse_placeholder(tw.float32)
    scale = tw.placeholder(tw.float32, [])
    dense = tw.sparse_tensor_to_dense(sp) * scale
    with tw.Session() as sess:
        run = sess.make_callable(dense, [sp, scale])
        got = run(tw.SparseTensorValue([[0, 1]], [3.0], [2, 2]), 2.0)
        with pytest.raises(TypeError, match="SparseTensorValue"):
            run([1.0], 2.0)
    np.testing.assert_array_equal(got, [[0, 6], [0, 0]])


def test_a_given_dense_shape_is_the_default_and_can_be_overridden() -> None:
    sp = tw.sparse_placeholder(tw.int32, shape=[2, 3])
    assert sp.shape.as_list() == [2, 3]
    dense = tw.sparse.to_dense(sp)
    with tw.Session() as sess:
        by_default = sess.run(dense, {sp.indices: [[1, 2]], sp.values: [9]})
        overridden = sess.run(dense, {sp: ([[1, 2]], [9], [2, 4])})
    np.testing.assert_array_equal(by_default, [[0, 0, 0], [0, 0, 9]])
    np.testing.assert_array_equal(overridden, [[0, 0, 0, 0], [0, 0, 9, 0]])


def test_bad_sparse_feeds_raise_as_in_tf() -> None:
    sp = tw.sparse_placeholder(tw.float32, shape=[None, 3])
    other = tw.SparseTensor(INDICES, [1.0, 2.0], [3, 4])
    dense = tw.sparse.to_dense(sp)
    with tw.Session() as sess:
        with pytest.raises(TypeError, match="SparseTensorValue"):
            sess.run(dense, {sp: ([[0, 0]], [1.0])})
        with pytest.raises(TypeError, match="cannot be a tf.SparseTensor"):
            sess.run(dense, {sp: other})
        with pytest.raises(ValueError, match="Cannot feed value of shape"):
            sess.run(dense, {sp: ([[0, 0, 0]], [1.0], [2, 3])})  # 3 columns for a rank-2 one


def test_component_sizes_are_checked_when_the_step_runs() -> None:
    sp = tw.sparse_placeholder(tw.float32)
    total = tw.sparse_reduce_sum(sp, name="total")
    with tw.Session() as sess:
        with pytest.raises(tw.errors.InvalidArgumentError,
                           match=r"(?s)indices and values rows .*total"):
            sess.run(total, {sp: ([[0, 0], [1, 1]], [1.0], [2, 2])})
        with pytest.raises(tw.errors.InvalidArgumentError, match="Shape rank must be"):
            sess.run(total, {sp: ([[0, 0]], [1.0], [2, 2, 2])})
        assert sess.run(total, {sp: ([[0, 0], [1, 1]], [1.0, 2.0], [2, 2])}) == 3.0


def test_a_sparse_op_on_a_worker_of_a_local_cluster() -> None:
    """The components are made on the ps task and cross to the worker as ordinary tensors."""
    dense = np.zeros((3, 4), np.float32)
    dense[0, 3], dense[2, 1] = 2.0, -1.0
    with tw.device("/job:ps/task:0"):
        x = tw.placeholder(tw.float32, [3, 4], name="x")
        sp = tw.sparse.from_dense(x, name="sparse")
    with tw.device("/job:worker/task:0"):
        b = tw.constant(np.arange(8, dtype=np.float32).reshape(4, 2))
        product = tw.sparse_tensor_dense_matmul(sp, b, name="product")
        total = tw.sparse.reduce_sum(sp, axis=1)
    metadata = tw.RunMetadata()
    with LocalCluster({"ps": 1, "worker": 1}) as cluster, \
            tw.Session(cluster.target("worker", 0)) as sess:
        got_product, got_total, value = sess.run(
            [product, total, sp], {x: dense},
            options=tw.RunOptions(output_partition_graphs=True), run_metadata=metadata)
    np.testing.assert_allclose(got_product, dense @ np.arange(8).reshape(4, 2))
    np.testing.assert_allclose(got_total, dense.sum(axis=1))
    assert isinstance(value, tw.SparseTensorValue)
    np.testing.assert_array_equal(value.indices, [[0, 3], [2, 1]])
    placed = {n.name: n.device for g in metadata.partition_graphs for n in g.node}
    assert placed["product/SparseTensorDenseMatMul"].startswith("/job:worker/replica:0/task:0")
    assert placed["sparse/Where"].startswith("/job:ps/replica:0/task:0")
