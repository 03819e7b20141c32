"""tf.random_gamma and tf.random_poisson: shapes, dtypes, moments against numpy's references."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def test_random_gamma_shape_dtype_and_moments():
    alpha = tf.constant([[0.5], [3.0]])
    beta = tf.constant([1.0, 2.0, 4.0])
    g = tf.random_gamma([20000], alpha, beta, seed=7)
    assert g.dtype == tf.float32 and g.shape.as_list() == [20000, 2, 3]
    v = run(g)
    assert v.dtype == np.float32 and v.shape == (20000, 2, 3) and (v > 0).all()
    a = np.array([[0.5], [3.0]]) + np.zeros(3)
    b = np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(v.mean(axis=0), a / b, rtol=0.05)  # E = alpha / beta
    np.testing.assert_allclose(v.var(axis=0), a / b**2, rtol=0.1)


def test_random_gamma_alpha_zero_is_tiny_and_unknown_alpha_shape():
    k = tf.placeholder(tf.float64)
    g = tf.random_gamma(shape=[4], alpha=k, dtype=tf.float64)
    assert g.shape.ndims is None and g.dtype == tf.float64
    np.testing.assert_array_equal(run(g, {k: 0.0}), np.full(4, np.finfo(np.float64).tiny))
    assert run(g, {k: [1.0, 2.0]}).shape == (4, 2)


def test_random_gamma_seeded_runs_repeat():
    def draw():
        g = tf.Graph()
        with g.as_default():
            return run(tf.random_gamma([5], 2.0, seed=3))
    tf.set_random_seed(1)
    first = draw()
    np.testing.assert_array_equal(first, draw())


@pytest.mark.parametrize("dtype", [tf.float32, tf.int64, tf.int32])
def test_random_poisson_shape_dtype_and_mean(dtype):
    p = tf.random_poisson([1.0, 10.0], [30000], dtype=dtype, seed=5)
    assert p.dtype == dtype and p.shape.as_list() == [30000, 2]
    v = run(p)
    assert v.dtype == dtype.np_type
    np.testing.assert_allclose(v.mean(axis=0), [1.0, 10.0], rtol=0.05)
    np.testing.assert_allclose(v.var(axis=0), [1.0, 10.0], rtol=0.1)
    assert (v == np.round(v)).all() and (v >= 0).all()


def test_bad_arguments():
    with pytest.raises(ValueError):
        tf.random_poisson(1.0, [[2, 3]])  # shape must be a vector
    with pytest.raises(TypeError):
        tf.raw_ops.RandomGamma(shape=[2], alpha=tf.constant([1, 2]))  # int alpha
