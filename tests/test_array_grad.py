"""Gradients of the array ops, checked against numerical Jacobians (``tw.test``) and numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tests.numeric import gradient_error

RNG = np.random.default_rng(11)


CASES = {
    "identity": (lambda x: tf.identity(x) * 2.0, [[2, 3]], [2, 3]),
    "reshape": (lambda x: tf.reshape(x, [3, 2]), [[2, 3]], [3, 2]),
    "expand_dims": (lambda x: tf.expand_dims(x, 1), [[2, 3]], [2, 1, 3]),
    "squeeze": (lambda x: tf.squeeze(x, [1]), [[2, 1, 3]], [2, 3]),
    "transpose": (lambda x: tf.transpose(x, [2, 0, 1]), [[2, 3, 4]], [4, 2, 3]),
    "concat": (lambda x, y: tf.concat([x, y, x], axis=1), [[2, 3], [2, 1]], [2, 7]),
    "concat_negative_axis": (lambda x, y: tf.concat([x, y], -2), [[2, 3], [1, 3]], [3, 3]),
    # more than 16 values: TF's gradient takes one split, not a ConcatOffset and slices
    "concat_17": (lambda x, y: tf.concat([x, y] * 8 + [x], axis=-1), [[2, 1], [2, 2]], [2, 25]),
    "stack": (lambda x, y: tf.stack([x, y], axis=1), [[2, 3], [2, 3]], [2, 2, 3]),
    "unstack": (lambda x: tf.unstack(x, axis=1)[2] * tf.unstack(x, axis=1)[0], [[2, 3]], [2]),
    "split": (lambda x: tf.split(x, 2, axis=1)[1], [[2, 4]], [2, 2]),
    "split_sizes": (lambda x: tf.split(x, [1, 3], axis=1)[1] * 3.0, [[2, 4]], [2, 3]),
    "slice": (lambda x: tf.slice(x, [1, 0], [1, 2]), [[3, 4]], [1, 2]),
    "strided_slice": (lambda x: x[1:, ::-2], [[3, 4]], [2, 2]),
    "strided_slice_shrink": (lambda x: x[:, 2], [[3, 4]], [3]),
    "strided_slice_new_axis": (lambda x: x[tf.newaxis, 1, ...], [[3, 4]], [1, 4]),
    "tile": (lambda x: tf.tile(x, [2, 3]), [[2, 2]], [4, 6]),
    "pad": (lambda x: tf.pad(x, [[1, 0], [2, 1]]), [[2, 3]], [3, 6]),
    "pad_constant": (lambda x: tf.pad(x, [[1, 1], [0, 0]], constant_values=2.0), [[2, 3]],
                     [4, 3]),
    "gather_axis0": (lambda x: tf.gather(x, [2, 0, 2]), [[3, 2]], [3, 2]),
    "gather_axis1": (lambda x: tf.gather(x, [[1, 1], [0, 2]], axis=1), [[2, 3]], [2, 2, 2]),
    "gather_nd": (lambda x: tf.gather_nd(x, [[0, 1], [1, 2], [0, 1]]), [[2, 3]], [3]),
    "reverse": (lambda x: tf.reverse(x, [1]), [[2, 3]], [2, 3]),
    "broadcast_to": (lambda x: tf.broadcast_to(x, [4, 2, 3]), [[2, 1]], [4, 2, 3]),
    "where": (lambda x, y: tf.where(tf.constant([[True, False, True]] * 2), x, y),
              [[2, 3], [2, 3]], [2, 3]),
    "where_v2": (lambda x, y: tf.where_v2(tf.constant([True, False, True]), x, y),
                 [[2, 3], [3]], [2, 3]),
    "unsorted_segment_sum": (lambda x: tf.unsorted_segment_sum(x, [0, 2, -1, 0], 3),
                             [[4, 2]], [3, 2]),
    "scatter_nd": (lambda u: tf.scatter_nd([[1], [3]], u, [4, 2]), [[2, 2]], [4, 2]),
    "unsorted_segment_max": (lambda x: tf.unsorted_segment_max(x, [0, 2, -1, 0, 2], 3),
                             [[5, 2]], [3, 2]),
    "gather_batch_dims": (lambda x: tf.gather(x, [[0, 2], [1, 1]], axis=1, batch_dims=1),
                          [[2, 3, 2]], [2, 2, 2]),
    "gather_batch_dims_axis_past_batch": (
        lambda x: tf.gather(x, [[0, 3], [2, 2]], axis=2, batch_dims=1), [[2, 3, 4, 5]],
        [2, 3, 2, 5]),
    "gather_batch_dims_2": (
        lambda x: tf.gather(x, [[[0], [1], [3]], [[2], [0], [0]]], axis=2, batch_dims=2),
        [[2, 3, 4]], [2, 3, 1]),
    "gather_batch_dims_negative": (
        lambda x: tf.gather(x, [[1, 0, 1], [0, 0, 1]], axis=-1, batch_dims=-1), [[2, 2]],
        [2, 3]),
    "mirror_pad_reflect": (lambda x: tf.pad(x, [[2, 1], [1, 2]], mode="REFLECT"), [[3, 4]],
                           [6, 7]),
    "mirror_pad_symmetric": (lambda x: tf.pad(x, [[0, 3], [2, 1]], mode="SYMMETRIC"),
                             [[3, 4]], [6, 7]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_array_gradient(name: str) -> None:
    fn, shapes, out_shape = CASES[name]
    assert gradient_error(RNG, fn, shapes, out_shape=out_shape) < 1e-8


DYNAMIC = ["reshape", "concat", "concat_17", "slice", "strided_slice", "tile", "pad",
           "gather_axis0", "transpose", "stack", "split"]


@pytest.mark.parametrize("name", DYNAMIC)
def test_array_gradient_with_shapes_known_only_at_run_time(name: str) -> None:
    fn, shapes, out_shape = CASES[name]
    assert gradient_error(RNG, fn, shapes, out_shape=out_shape, dynamic=True) < 1e-8


def test_gather_gradient_accumulates_repeated_indices() -> None:
    params = tf.constant(np.arange(6.0).reshape(3, 2))
    grad = tf.gradients(tf.reduce_sum(tf.gather(params, [2, 0, 2])), params)[0]
    assert isinstance(grad, tf.IndexedSlices)  # as TF: densified here to see the sum
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(tf.convert_to_tensor(grad)),
                                   [[1, 1], [0, 0], [2, 2]])


def test_top_k_gradient_goes_to_the_selected_positions() -> None:
    x = tf.constant([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    values, _ = tf.nn.top_k(x, k=2)
    grad = tf.gradients(values * [[1.0, 10.0], [1.0, 10.0]], x)[0]
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(grad), [[0, 1, 10], [10, 0, 1]])


def test_fill_gradient_sums_into_the_value() -> None:
    value = tf.constant(2.0)
    grad = tf.gradients(tf.fill([2, 3], value) * 3.0, value)[0]
    with tf.Session() as sess:
        assert sess.run(grad) == 18.0


@pytest.mark.parametrize("make", [
    lambda x: tf.cast(tf.shape(x), tf.float32),
    lambda x: tf.cast(tf.size(x), tf.float32),
    lambda x: tf.cast(tf.rank(x), tf.float32),
    lambda x: tf.one_hot(tf.cast(x, tf.int32), 3),
    lambda x: tf.zeros_like(x),
])
def test_shape_and_index_ops_carry_no_gradient(make) -> None:
    x = tf.placeholder(tf.float32, [None])
    assert tf.gradients(tf.reduce_sum(make(x)), x) == [None]


def test_stop_gradient_blocks_one_path() -> None:
    x = tf.constant(3.0)
    grad = tf.gradients(x * x + tf.stop_gradient(x * x), x)[0]
    with tf.Session() as sess:
        assert sess.run(grad) == 6.0


@pytest.mark.parametrize("axis, shapes", [(0, [[2, 3], [3, 3], [1, 3]]), (1, [[4, 2], [4, 3]]),
                                          (-1, [[4, 2, 2], [4, 2, 3]]),
                                          (-2, [[3, 1, 2], [3, 2, 2]])])
def test_concat_gradient_of_gathered_rows_stays_sparse(axis, shapes) -> None:
    # concat_op_test.testIndexedSlicesConcatDim*Grad: TF's IndexedSlices per input.
    xs = [tf.constant(RNG.random(s)) for s in shapes]
    out = tf.gather(tf.concat(xs, axis), [1, 2, 0, 1])
    weights = RNG.random(out.shape.as_list())
    grads = tf.gradients(out * weights, xs)
    assert all(isinstance(g, tf.IndexedSlices) for g in grads)
    dense = tf.gradients(tf.reduce_sum(tf.gather(tf.identity(tf.concat(xs, axis)) * 1.0,
                                                 [1, 2, 0, 1]) * weights), xs)
    with tf.Session() as sess:
        got = sess.run([tf.convert_to_tensor(g) for g in grads])
        want = sess.run([tf.convert_to_tensor(g) for g in dense])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)


def test_sparse_concat_gradient_needs_a_static_axis_as_tf() -> None:
    ps = [tf.placeholder(tf.float64) for _ in range(2)]
    with pytest.raises(ValueError, match="negative concat_dim when first value rank is "
                                         "statically-known"):
        tf.gradients(tf.gather(tf.concat(ps, -1), [0]), ps)
    axis = tf.placeholder(tf.int32, [])
    x = tf.constant(np.ones((2, 2)))
    with pytest.raises(ValueError, match="with statically-known concat_dim"):
        tf.gradients(tf.gather(tf.concat([x, x], axis), [0]), x)


def test_concat_offset_as_tf() -> None:
    # concat_op_test.ConcatOffsetTest: where each shape starts along the axis, and its errors
    shapes = [tf.constant([2, 3, 5]), tf.constant([2, 7, 5]), tf.constant([2, 20, 5])]
    offsets = tf.raw_ops.ConcatOffset(concat_dim=1, shape=shapes)
    negative = tf.raw_ops.ConcatOffset(concat_dim=-2, shape=shapes)
    with tf.Session() as sess:
        assert [o.tolist() for o in sess.run(offsets)] == [[0, 0, 0], [0, 3, 0], [0, 10, 0]]
        assert [o.tolist() for o in sess.run(negative)] == [[0, 0, 0], [0, 3, 0], [0, 10, 0]]
        for dim, others, match in (
                (4, [2, 7, 5], "Concat dim is out of range: 4 vs. 3"),
                (1, [2, 7], "input 1 should contain 3 elements, but got 2"),
                (1, [2, 7, 10], "All dimensions except 1 must match. Input 1 has shape "
                                r"\[2 7 10\] and doesn't match input 0 with shape \[2 3 5\]")):
            op = tf.raw_ops.ConcatOffset(concat_dim=dim, shape=[shapes[0], tf.constant(others)])
            with pytest.raises(tf.errors.InvalidArgumentError, match=match):
                sess.run(op)
