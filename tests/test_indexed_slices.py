"""`tw.IndexedSlices`: the class, densifying conversion, fetching, the gather gradient that
produces it, how ``tw.gradients`` aggregates and passes it on, and clipping."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorweave as tf

PARAMS = np.arange(12.0).reshape(4, 3)


def dense_reference(values: np.ndarray, indices: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    out = np.zeros(shape, values.dtype)
    np.add.at(out, indices, values)
    return out


def run(*fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches), feed_dict)


# -- the class ----------------------------------------------------------------------------------


def test_parts_and_properties_are_the_component_tensors() -> None:
    with tf.device("/cpu:0"):
        values = tf.constant(PARAMS[:2], name="v")
    indices, shape = tf.constant([3, 1]), tf.constant([4, 3])
    s = tf.IndexedSlices(values, indices, shape)
    assert (s.values, s.indices, s.dense_shape) == (values, indices, shape)
    assert (s.dtype, s.op, s.graph, s.name) == (tf.float64, values.op, values.graph, "v:0")
    assert s.device == values.device and "CPU:0" in s.device.upper()
    assert "IndexedSlices(indices=" in repr(s) and "dense_shape=" in repr(s)
    assert tf.IndexedSlices(values, indices).dense_shape is None


def test_bad_parts_are_refused_at_construction() -> None:
    with pytest.raises(TypeError, match="indices must be int32 or int64"):
        tf.IndexedSlices(PARAMS, tf.constant([0.0, 1.0]))
    with pytest.raises(ValueError):
        tf.IndexedSlices(PARAMS, tf.constant([[0, 1]]))
    with pytest.raises(TypeError, match="dense_shape must be int32 or int64"):
        tf.IndexedSlices(PARAMS, [0, 1, 2, 3], tf.constant([4.0, 3.0]))


def test_fetch_gives_an_indexed_slices_value() -> None:
    s = tf.IndexedSlices(tf.constant(PARAMS[:2]), tf.constant([3, 1], tf.int64), [4, 3])
    got, no_shape = run(s, tf.IndexedSlices(tf.constant([1.0]), [0]))
    assert isinstance(got, tf.IndexedSlicesValue)
    np.testing.assert_array_equal(got.values, PARAMS[:2])
    assert got.indices.dtype == np.int64 and got.indices.tolist() == [3, 1]
    assert got.dense_shape.tolist() == [4, 3]
    assert no_shape.dense_shape is None and no_shape.values.tolist() == [1.0]
    with tf.Session():
        assert s.eval().indices.tolist() == [3, 1]


def test_negation_keeps_the_indices() -> None:
    s = -tf.IndexedSlices(tf.constant(PARAMS[:2]), [3, 1], [4, 3])
    (got,) = run(s)
    np.testing.assert_array_equal(got.values, -PARAMS[:2])
    assert got.indices.tolist() == [3, 1]


# -- densifying -----------------------------------------------------------------------------------


def test_conversion_scatters_the_rows_and_sums_repeated_indices() -> None:
    values = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    s = tf.IndexedSlices(values, [2, 0, 2], [4, 3])
    dense = tf.convert_to_tensor(s)
    assert dense.dtype == tf.float32 and dense.shape.as_list() == [4, 3]
    assert tf.convert_to_tensor(s) is dense  # one dense tensor per slices
    added = tf.add(s, 1.0)  # any op densifies its IndexedSlices input
    got, got_added = run(dense, added)
    expected = dense_reference(values, np.array([2, 0, 2]), (4, 3))
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got_added, expected + 1)


def test_conversion_errors_as_tf() -> None:
    s = tf.IndexedSlices(tf.constant(PARAMS), [0, 1, 2, 3], [4, 3])
    with pytest.raises(ValueError, match="requested dtype float32 for IndexedSlices with dtype "
                                         "float64"):
        tf.convert_to_tensor(s, tf.float32)
    with pytest.raises(ValueError, match="without dense_shape"):
        tf.convert_to_tensor(tf.IndexedSlices(tf.constant(PARAMS), [0, 1, 2, 3]))
    assert tf.convert_to_tensor_or_indexed_slices(s) is s
    with pytest.raises(ValueError):
        tf.convert_to_tensor_or_indexed_slices(s, tf.float32)


def test_conversion_warns_for_unknown_or_huge_dense_shapes_only() -> None:
    values = tf.constant([[1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tf.convert_to_tensor(tf.IndexedSlices(values, [0], [2, 1]))
    unknown = tf.placeholder(tf.int32, [2])
    with pytest.warns(UserWarning, match="Converting sparse IndexedSlices to a dense Tensor of "
                                         "unknown shape. This may consume a large amount"):
        dense = tf.convert_to_tensor(tf.IndexedSlices(values, [0], unknown))
    with pytest.warns(UserWarning, match="dense Tensor with 100000000 elements"):
        tf.convert_to_tensor(tf.IndexedSlices(values, [0], [100_000_000, 1]))
    (got,) = run(dense, feed_dict={unknown: [3, 1]})
    np.testing.assert_array_equal(got, [[1.0], [0.0], [0.0]])


# -- the gather gradient ------------------------------------------------------------------------


def test_gather_gradient_is_indexed_slices_of_the_incoming_rows() -> None:
    params = tf.constant(PARAMS)
    ids = np.array([[2, 0], [2, 3]], np.int64)
    weights = np.arange(1.0, 13.0).reshape(2, 2, 3)
    grad = tf.gradients(tf.reduce_sum(tf.gather(params, ids) * weights), params)[0]
    assert isinstance(grad, tf.IndexedSlices)
    assert grad.values.shape.as_list() == [4, 3] and grad.indices.dtype == tf.int64
    got, dense = run(grad, tf.convert_to_tensor(grad))
    np.testing.assert_array_equal(got.values, weights.reshape(4, 3))
    assert got.indices.tolist() == [2, 0, 2, 3]
    assert got.dense_shape.tolist() == [4, 3] and got.dense_shape.dtype == np.int32
    np.testing.assert_array_equal(dense, dense_reference(weights.reshape(4, 3),
                                                         ids.reshape(-1), (4, 3)))


def test_embedding_lookup_of_a_variable_gives_indexed_slices_for_the_variable() -> None:
    table = tf.Variable(PARAMS.astype(np.float32))
    rows = tf.nn.embedding_lookup(table, [3, 3, 1])
    grad = tf.gradients(tf.reduce_sum(rows * rows), table)[0]
    assert isinstance(grad, tf.IndexedSlices)
    got, dense = run(grad, tf.convert_to_tensor(grad))
    assert got.indices.tolist() == [3, 3, 1]
    expected = np.zeros((4, 3), np.float32)
    expected[3], expected[1] = 4 * PARAMS[3], 2 * PARAMS[1]
    np.testing.assert_allclose(dense, expected)


def test_gather_along_another_axis_keeps_a_dense_gradient() -> None:
    params = tf.constant(PARAMS)
    grad = tf.gradients(tf.reduce_sum(tf.gather(params, [2, 2], axis=1)), params)[0]
    assert isinstance(grad, tf.Tensor)
    (got,) = run(grad)
    np.testing.assert_array_equal(got, np.tile([0.0, 0.0, 2.0], (4, 1)))


def test_a_gradient_function_that_cannot_take_slices_gets_them_densified() -> None:
    w = tf.constant(np.arange(12.0))
    params = tf.reshape(w, [4, 3])  # Reshape's gradient is dense-only
    grad = tf.gradients(tf.reduce_sum(tf.gather(params, [1, 1])), w)[0]
    assert isinstance(grad, tf.Tensor)
    (got,) = run(grad)
    np.testing.assert_array_equal(got, [0, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0])


def test_identity_passes_slices_through() -> None:
    params = tf.constant(PARAMS)
    grad = tf.gradients(tf.reduce_sum(tf.gather(tf.identity(params), [0])), params)[0]
    assert isinstance(grad, tf.IndexedSlices)


def test_gather_of_a_gather_densifies_the_inner_rows() -> None:
    params = tf.constant(PARAMS)
    inner = tf.gather(params, [3, 0])
    outer = tf.gather(inner, [1, 1, 0])
    grad = tf.gradients(tf.reduce_sum(outer * [[1.0], [2.0], [5.0]]), params)[0]
    assert isinstance(grad, tf.IndexedSlices)
    got, dense = run(grad, tf.convert_to_tensor(grad))
    assert got.indices.tolist() == [3, 0]
    np.testing.assert_array_equal(dense[:, 0], [3.0, 0.0, 0.0, 5.0])


# -- aggregation ----------------------------------------------------------------------------------


def test_several_sparse_gradients_are_concatenated() -> None:
    params = tf.constant(PARAMS)
    loss = tf.reduce_sum(tf.gather(params, [1, 2])) + 3.0 * tf.reduce_sum(tf.gather(params, [2]))
    grad = tf.gradients(loss, params)[0]
    assert isinstance(grad, tf.IndexedSlices)
    got, dense = run(grad, tf.convert_to_tensor(grad))
    assert sorted(got.indices.tolist()) == [1, 2, 2]
    np.testing.assert_array_equal(dense[:, 0], [0.0, 1.0, 4.0, 0.0])


def test_int32_and_int64_indices_concatenate_as_int64() -> None:
    params = tf.constant(PARAMS)
    loss = tf.reduce_sum(tf.gather(params, tf.constant([1], tf.int64))) + \
        tf.reduce_sum(tf.gather(params, tf.constant([3], tf.int32)))
    grad = tf.gradients(loss, params)[0]
    assert grad.indices.dtype == tf.int64
    (got,) = run(grad)
    assert sorted(got.indices.tolist()) == [1, 3]


def test_sparse_and_dense_gradients_sum_densely() -> None:
    params = tf.constant(PARAMS)
    loss = tf.reduce_sum(tf.gather(params, [0, 0])) + tf.reduce_sum(params * 0.5)
    grad = tf.gradients(loss, params)[0]
    assert isinstance(grad, tf.Tensor)
    (got,) = run(grad)
    expected = np.full((4, 3), 0.5)
    expected[0] += 2.0
    np.testing.assert_array_equal(got, expected)


def test_gating_keeps_slices_sparse() -> None:
    params = tf.constant(PARAMS)
    other = tf.constant(2.0, tf.float64)
    loss = tf.reduce_sum(tf.gather(params, [1])) * other
    grads = tf.gradients(loss, [params, other], gate_gradients=True)
    assert isinstance(grads[0], tf.IndexedSlices)
    got, g_other = run(*grads)
    np.testing.assert_array_equal(got.values, [[2.0, 2.0, 2.0]])
    assert g_other == PARAMS[1].sum()


def test_a_gather_inside_cond_and_while_gives_a_dense_gradient() -> None:
    table = tf.Variable(PARAMS)
    pred = tf.placeholder(tf.bool, [])
    y = tf.cond(pred, lambda: tf.reduce_sum(tf.gather(table, [2, 0, 2])),
                lambda: tf.constant(0.0, tf.float64))
    _, total = tf.while_loop(lambda i, acc: i < 3,
                             lambda i, acc: (i + 1, acc + tf.reduce_sum(tf.gather(table, [i]))),
                             [0, tf.constant(0.0, tf.float64)])
    g_cond, g_while = tf.gradients(y, table)[0], tf.gradients(total, table)[0]
    got_cond, got_while = run(g_cond, g_while, feed_dict={pred: True})
    np.testing.assert_array_equal(got_cond[:, 0], [1.0, 0.0, 2.0, 0.0])
    np.testing.assert_array_equal(got_while[:, 0], [1.0, 1.0, 1.0, 0.0])


# -- clipping -------------------------------------------------------------------------------------


def test_clip_by_global_norm_scales_slice_values() -> None:
    values = np.array([[3.0, 0.0], [0.0, 4.0]])
    s = tf.IndexedSlices(tf.constant(values), [1, 1], [3, 2])
    dense = np.array([12.0])
    (clipped_s, clipped_d, none), norm = tf.clip_by_global_norm([s, tf.constant(dense), None],
                                                                  6.5)
    assert none is None
    assert isinstance(clipped_s, tf.IndexedSlices) and clipped_s.indices is s.indices
    got_s, got_d, got_norm = run(clipped_s, clipped_d, norm)
    assert got_norm == pytest.approx(13.0)  # the values' norm (5), not the summed rows' (7.07)
    np.testing.assert_allclose(got_s.values, values * 0.5)
    np.testing.assert_allclose(got_d, dense * 0.5)
    assert got_s.indices.tolist() == [1, 1]


def test_clip_by_norm_clips_slice_values() -> None:
    s = tf.IndexedSlices(tf.constant([[3.0, 4.0]]), [2], [3, 2])
    clipped = tf.clip_by_norm(s, 1.0)
    assert isinstance(clipped, tf.IndexedSlices)
    (got,) = run(clipped)
    np.testing.assert_allclose(got.values, [[0.6, 0.8]], rtol=1e-6)
    assert got.indices.tolist() == [2]
