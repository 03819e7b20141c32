"""Initializers: values, dtypes, seeds, variance scaling and configs."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.api import init_ops


def value(init, shape, dtype=None):
    with tf.Session() as sess:
        return sess.run(init(shape, dtype=dtype))


def test_zeros_ones_constant() -> None:
    zeros = value(tf.zeros_initializer(), [2, 3])
    assert zeros.dtype == np.float32 and zeros.shape == (2, 3) and not zeros.any()
    ones = value(tf.ones_initializer(dtype=tf.int64), [4])
    np.testing.assert_array_equal(ones, [1, 1, 1, 1])
    assert ones.dtype == np.int64
    np.testing.assert_array_equal(value(tf.constant_initializer(7), [2], tf.int32), [7, 7])
    np.testing.assert_array_equal(value(tf.constant_initializer([1, 2, 3, 4]), [2, 2]),
                                  [[1, 2], [3, 4]])


def test_constant_initializer_rejects_bad_values() -> None:
    with pytest.raises(TypeError):
        tf.constant_initializer({"a": 1})
    with pytest.raises(TypeError):
        tf.constant_initializer([1, 2, 3], verify_shape=True)([2, 2])
    with pytest.raises(TypeError):
        tf.constant_initializer([1, 2, 3])([2, 2])


def test_random_initializers_have_the_right_distribution() -> None:
    n = [200, 100]
    uniform = value(tf.random_uniform_initializer(-2.0, 3.0, seed=1), n)
    assert uniform.min() >= -2.0 and uniform.max() < 3.0 and abs(uniform.mean() - 0.5) < 0.1
    normal = value(tf.random_normal_initializer(1.0, 2.0, seed=1), n)
    assert abs(normal.mean() - 1.0) < 0.1 and abs(normal.std() - 2.0) < 0.1
    truncated = value(tf.truncated_normal_initializer(0.0, 1.0, seed=1), n)
    assert np.abs(truncated).max() <= 2.0 and 0.8 < truncated.std() < 0.9
    ints = value(tf.random_uniform_initializer(0, 5, seed=1, dtype=tf.int32), [1000])
    assert ints.dtype == np.int32 and set(np.unique(ints)) == {0, 1, 2, 3, 4}


def test_glorot_uniform_limit_uses_fan_in_and_fan_out() -> None:
    w = value(tf.glorot_uniform_initializer(seed=3), [300, 200])
    limit = math.sqrt(6.0 / (300 + 200))
    assert np.abs(w).max() <= limit and np.abs(w).max() > 0.95 * limit
    assert abs(w.std() - limit / math.sqrt(3)) < 0.02 * limit


def test_variance_scaling_modes_for_a_convolution_kernel() -> None:
    shape = [3, 3, 16, 32]  # receptive field 9: fan_in 144, fan_out 288
    for mode, n in (("fan_in", 144), ("fan_out", 288), ("fan_avg", 216)):
        w = value(tf.variance_scaling_initializer(2.0, mode, "untruncated_normal", seed=5),
                  shape)
        assert abs(w.std() - math.sqrt(2.0 / n)) < 0.05 * math.sqrt(2.0 / n)
    glorot_normal = value(tf.glorot_normal_initializer(seed=1), [400, 400])
    assert abs(glorot_normal.std() - math.sqrt(2.0 / 800)) < 0.003


def test_variance_scaling_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        tf.variance_scaling_initializer(scale=0.0)
    with pytest.raises(ValueError):
        tf.variance_scaling_initializer(mode="fan_sideways")
    with pytest.raises(ValueError):
        tf.variance_scaling_initializer(distribution="cauchy")
    with pytest.raises(ValueError, match="floating"):
        tf.glorot_uniform_initializer()([2, 2], dtype=tf.int32)


def test_op_seed_with_graph_seed_reproduces_across_graphs() -> None:
    draws = []
    for _ in range(2):
        tf.reset_default_graph()
        tf.set_random_seed(42)
        draws.append(value(tf.random_normal_initializer(), [5]))
    np.testing.assert_array_equal(draws[0], draws[1])
    tf.reset_default_graph()
    tf.set_random_seed(43)
    assert not np.array_equal(value(tf.random_normal_initializer(), [5]), draws[0])


def test_op_seed_alone_reproduces_and_differs_by_seed() -> None:
    a = value(tf.random_uniform_initializer(seed=7), [5])
    b = value(tf.random_uniform_initializer(seed=7), [5])
    c = value(tf.random_uniform_initializer(seed=8), [5])
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_initializer_needs_a_fully_defined_shape() -> None:
    with pytest.raises(ValueError, match="fully defined"):
        tf.zeros_initializer()([None, 3])


@pytest.mark.parametrize("init", [
    init_ops.Zeros(tf.float64), init_ops.Constant(3.0), init_ops.RandomUniform(0, 2, seed=1),
    init_ops.RandomNormal(1.0, 0.5, seed=2), init_ops.TruncatedNormal(seed=3),
    init_ops.VarianceScaling(2.0, "fan_out", "uniform", seed=4), init_ops.GlorotUniform(seed=5),
])
def test_config_round_trip(init) -> None:
    clone = type(init).from_config(init.get_config())
    assert clone.get_config() == init.get_config()
