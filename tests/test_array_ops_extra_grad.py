"""Gradients of the ``array_extra`` ops, checked against numerical Jacobians (``tw.test``) and
against TF's documented rules (a stitched row written twice gets its gradient twice)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tests.numeric import gradient_error

RNG = np.random.default_rng(17)


CASES = {
    "space_to_depth": (lambda x: tf.space_to_depth(x, 2), [[2, 4, 2, 3]], [2, 2, 1, 12]),
    "depth_to_space": (lambda x: tf.depth_to_space(x, 2), [[1, 2, 1, 8]], [1, 4, 2, 2]),
    "space_to_depth_nchw": (lambda x: tf.space_to_depth(x, 2, data_format="NCHW"),
                            [[1, 2, 4, 2]], [1, 8, 2, 1]),
    "space_to_batch_nd": (lambda x: tf.space_to_batch_nd(x, [2, 2], [[1, 1], [0, 2]]),
                          [[1, 2, 2, 1]], [4, 2, 2, 1]),
    "batch_to_space_nd": (lambda x: tf.batch_to_space_nd(x, [2], [[1, 0]]), [[4, 2, 3]],
                          [2, 3, 3]),
    "space_to_batch": (lambda x: tf.raw_ops.SpaceToBatch(input=x, paddings=[[0, 2], [1, 1]],
                                                         block_size=2),
                       [[1, 2, 2, 1]], [4, 2, 2, 1]),
    "batch_to_space": (lambda x: tf.batch_to_space(x, [[1, 0], [0, 1]], 2), [[4, 1, 2, 2]],
                       [1, 1, 3, 2]),
    "dynamic_partition": (lambda x: tf.dynamic_partition(x, [[1, 0, 1], [2, 2, 0]], 3)[2]
                          * 3.0 + tf.reduce_sum(tf.dynamic_partition(
                              x, [[1, 0, 1], [2, 2, 0]], 3)[0]), [[2, 3, 2]], [2, 2]),
    "dynamic_stitch": (lambda x, y: tf.dynamic_stitch([[2, 0], [1, 3]], [x, y * y]),
                       [[2, 3], [2, 3]], [4, 3]),
    "parallel_dynamic_stitch": (lambda x: tf.parallel_dynamic_stitch([[1], [0, 2]],
                                                                     [x[:1], x[1:] * 2.0]),
                                [[3, 2]], [3, 2]),
    "reverse_sequence": (lambda x: tf.reverse_sequence(x, [3, 1], seq_axis=1), [[2, 4, 2]],
                         [2, 4, 2]),
    "reverse_sequence_batch_last": (
        lambda x: tf.reverse_sequence(x, [2, 0, 3], seq_axis=0, batch_axis=1), [[3, 3]], [3, 3]),
    "roll": (lambda x: tf.roll(x, [1, -1], [0, 1]), [[3, 4]], [3, 4]),
    "sort": (lambda x: tf.sort(x), [[2, 5]], [2, 5]),
    "sort_descending_axis0": (lambda x: tf.sort(x, axis=0, direction="DESCENDING"), [[4, 3]],
                              [4, 3]),
    "identity_n": (lambda x, y: tf.identity_n([x, y])[0] * tf.identity_n([x, y])[1],
                   [[2, 2], [2, 2]], [2, 2]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_numeric(name):
    fn, shapes, out_shape = CASES[name]
    assert gradient_error(RNG, fn, shapes, out_shape=out_shape) < 1e-6


@pytest.mark.parametrize("name", ["space_to_depth", "batch_to_space_nd", "dynamic_partition",
                                  "dynamic_stitch", "reverse_sequence", "roll"])
def test_gradient_with_shapes_known_at_run_time(name):
    fn, shapes, out_shape = CASES[name]
    assert gradient_error(RNG, fn, shapes, out_shape=out_shape, dynamic=True) < 1e-6


def test_dynamic_stitch_duplicate_index_gets_gradient_twice():
    x = tf.constant([1.0, 2.0])
    y = tf.constant([5.0])
    merged = tf.dynamic_stitch([[0, 1], [1]], [x, y])
    gx, gy = tf.gradients(tf.reduce_sum(merged * [3.0, 4.0]), [x, y])
    with tf.Session() as sess:
        got_x, got_y = sess.run([gx, gy])
    np.testing.assert_array_equal(got_x, [3.0, 4.0])
    np.testing.assert_array_equal(got_y, [4.0])


def test_index_ops_are_not_differentiable():
    x = tf.constant([3.0, 1.0, 2.0])
    outs = [tf.searchsorted([0.0, 1.5, 2.5], x), tf.unique_with_counts(x).y,
            tf.setdiff1d(x, [1.0]).out, tf.bitcast(x, tf.int32),
            tf.histogram_fixed_width(x, [0.0, 4.0], nbins=2),
            tf.multinomial(tf.expand_dims(x, 0), 2)]
    for out in outs:
        assert tf.gradients(tf.reduce_sum(tf.cast(out, tf.float32)), x) == [None]
