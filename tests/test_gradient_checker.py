"""``tw.test.compute_gradient`` / ``compute_gradient_error``: Jacobian layout, sessions, feeds,
and that a wrong gradient is caught."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf


def test_jacobians_of_a_linear_map_are_its_transpose() -> None:
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    x = tf.placeholder(tf.float64, [3, 1])
    y = tf.matmul(tf.constant(a), x)
    theoretical, numerical = tf.test.compute_gradient(x, [3, 1], y, [2, 1])
    assert theoretical.shape == numerical.shape == (3, 2)
    np.testing.assert_allclose(theoretical, a.T)
    np.testing.assert_allclose(numerical, a.T, rtol=1e-9)


def test_list_of_inputs_gives_one_pair_each() -> None:
    x, y = tf.placeholder(tf.float64, [2]), tf.placeholder(tf.float64, [3])
    z = tf.reduce_sum(x) * y
    pairs = tf.test.compute_gradient([x, y], [[2], [3]], z, [3],
                                     x_init_value=[np.array([1.0, 2.0]), np.ones(3)])
    assert [p[0].shape for p in pairs] == [(2, 3), (3, 3)]
    np.testing.assert_allclose(pairs[0][0], np.ones((2, 3)))
    np.testing.assert_allclose(pairs[1][0], 3.0 * np.eye(3))
    for theoretical, numerical in pairs:
        np.testing.assert_allclose(theoretical, numerical, atol=1e-9)


def test_a_wrong_gradient_is_detected() -> None:
    x = tf.placeholder(tf.float64, [3])
    y = x + tf.stop_gradient(x * x - x)  # value x*x, declared gradient 1
    init = np.array([1.0, 2.0, 3.0])
    assert tf.test.compute_gradient_error(x, [3], y, [3], x_init_value=init) > 0.9
    assert tf.test.compute_gradient_error(x, [3], x * x, [3], x_init_value=init) < 1e-6


def test_a_nan_jacobian_is_an_error_of_nan() -> None:
    x = tf.placeholder(tf.float64, [2])
    init = np.array([0.0, 4.0])
    assert np.isnan(tf.test.compute_gradient_error(x, [2], tf.sqrt(x), [2], x_init_value=init))


def test_unconnected_input_has_a_zero_theoretical_jacobian() -> None:
    x, y = tf.placeholder(tf.float64, [2]), tf.placeholder(tf.float64, [2])
    theoretical, numerical = tf.test.compute_gradient(x, [2], y * 2.0, [2],
                                                      extra_feed_dict={y: [1.0, 1.0]})
    np.testing.assert_array_equal(theoretical, np.zeros((2, 2)))
    np.testing.assert_array_equal(numerical, np.zeros((2, 2)))


def test_extra_feeds_and_the_default_session_are_used() -> None:
    x = tf.placeholder(tf.float64, [2])
    scale = tf.placeholder(tf.float64, [])
    v = tf.Variable(np.array([2.0, 3.0]))
    y = x * v * scale
    with tf.Session() as sess:
        sess.run(v.initializer)  # only this session has v initialized
        theoretical, _ = tf.test.compute_gradient(x, [2], y, [2], extra_feed_dict={scale: 10.0})
    np.testing.assert_allclose(theoretical, np.diag([20.0, 30.0]))


def test_init_targets_run_first() -> None:
    x = tf.placeholder(tf.float64, [2])
    v = tf.Variable(np.array([2.0, 3.0]))
    error = tf.test.compute_gradient_error(x, [2], x * v, [2], init_targets=[v.initializer])
    assert error < 1e-8


def test_float32_with_random_initial_values() -> None:
    x = tf.placeholder(tf.float32, [2, 3])
    assert tf.test.compute_gradient_error(x, [2, 3], tf.sigmoid(x) * 3.0, [2, 3]) < 1e-2


def test_x_init_value_of_the_wrong_shape_is_rejected() -> None:
    x = tf.placeholder(tf.float64, [2])
    with pytest.raises(ValueError, match="x_init_value"):
        tf.test.compute_gradient(x, [2], x * 2.0, [2], x_init_value=np.zeros(3))
