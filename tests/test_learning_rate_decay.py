"""Learning-rate schedules of ``tw.train`` against numpy references, evaluated at several values
of the global step."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorweave as tf

STEPS = [0, 1, 5, 10, 15, 20, 37, 100]


def values_over_steps(make_schedule, steps=STEPS):
    """The schedule built on the global step, evaluated after assigning each of `steps`."""
    global_step = tf.train.get_or_create_global_step()
    lr = make_schedule(global_step)
    new_step = tf.placeholder(tf.int64, [])
    assign = tf.assign(global_step, new_step)
    values = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in steps:
            sess.run(assign, {new_step: step})
            values.append(sess.run(lr))
    return lr, np.array(values)


@pytest.mark.parametrize("staircase", [False, True])
def test_exponential_decay(staircase):
    lr, values = values_over_steps(
        lambda step: tf.train.exponential_decay(0.1, step, 10, 0.5, staircase=staircase))
    assert lr.name == "ExponentialDecay:0" and lr.dtype == tf.float32
    p = np.array(STEPS, np.float64) / 10
    expected = 0.1 * 0.5 ** (np.floor(p) if staircase else p)
    np.testing.assert_allclose(values, expected, rtol=1e-6)


def test_natural_exp_decay_and_float64_rate():
    lr, values = values_over_steps(
        lambda step: tf.train.natural_exp_decay(np.float64(0.2), step, 5, 0.3))
    assert lr.dtype == tf.float64
    # As in TF, the Python decay rate is cast to float64 from float32.
    np.testing.assert_allclose(values, 0.2 * np.exp(-0.3 * np.array(STEPS) / 5), rtol=1e-6)


@pytest.mark.parametrize("staircase", [False, True])
def test_inverse_time_decay(staircase):
    lr, values = values_over_steps(
        lambda step: tf.train.inverse_time_decay(0.5, step, 4, 2.0, staircase=staircase,
                                                 name="inv"))
    assert lr.name == "inv:0"
    p = np.array(STEPS, np.float64) / 4
    expected = 0.5 / (1 + 2.0 * (np.floor(p) if staircase else p))
    np.testing.assert_allclose(values, expected, rtol=1e-6)


def test_polynomial_decay_holds_at_the_end():
    lr, values = values_over_steps(
        lambda step: tf.train.polynomial_decay(0.1, step, 20, end_learning_rate=0.01, power=2.0))
    assert lr.name == "PolynomialDecay:0"
    step = np.minimum(STEPS, 20) / 20
    np.testing.assert_allclose(values, (0.1 - 0.01) * (1 - step) ** 2 + 0.01, rtol=1e-5)


def test_polynomial_decay_cycles():
    _, values = values_over_steps(
        lambda step: tf.train.polynomial_decay(0.1, step, 10, end_learning_rate=0.0, cycle=True))
    steps = np.array(STEPS, np.float64)
    decay_steps = 10 * np.where(steps == 0, 1, np.ceil(steps / 10))
    np.testing.assert_allclose(values, 0.1 * (1 - steps / decay_steps), rtol=1e-5, atol=1e-8)


def test_cosine_decay_with_alpha():
    lr, values = values_over_steps(lambda step: tf.train.cosine_decay(0.3, step, 20, alpha=0.1))
    assert lr.name == "CosineDecay:0"
    fraction = np.minimum(STEPS, 20) / 20
    cosine = 0.5 * (1 + np.cos(math.pi * fraction))
    np.testing.assert_allclose(values, 0.3 * ((1 - 0.1) * cosine + 0.1), rtol=1e-5, atol=1e-8)


def test_piecewise_constant_intervals_and_int64_step():
    lr, values = values_over_steps(
        lambda step: tf.train.piecewise_constant(step, [5, 15], [1.0, 0.5, 0.1]))
    assert lr.name == "PiecewiseConstant:0" and lr.dtype == tf.float32
    expected = [1.0 if s <= 5 else 0.5 if s <= 15 else 0.1 for s in STEPS]
    np.testing.assert_allclose(values, expected, rtol=1e-7)


def test_piecewise_constant_errors():
    step = tf.train.get_or_create_global_step()
    with pytest.raises(ValueError, match="length of boundaries should be 1 less"):
        tf.train.piecewise_constant(step, [5, 15], [1.0, 0.5])
    with pytest.raises(ValueError, match=r"Boundaries \(float32\) must have the same dtype"):
        tf.train.piecewise_constant(step, [5.0], [1.0, 0.5])
    with pytest.raises(ValueError, match="Values must have elements all with the same dtype"):
        tf.train.piecewise_constant(step, [5], [1.0, 2])


@pytest.mark.parametrize("schedule", ["exponential_decay", "natural_exp_decay",
                                      "inverse_time_decay"])
def test_global_step_is_required(schedule):
    with pytest.raises(ValueError, match=f"global_step is required for {schedule}"):
        getattr(tf.train, schedule)(0.1, None, 10, 0.5)


def test_decayed_rate_drives_an_optimizer():
    global_step = tf.train.get_or_create_global_step()
    w = tf.Variable(0.0)
    lr = tf.train.exponential_decay(1.0, global_step, 1, 0.5)
    train = tf.train.GradientDescentOptimizer(lr).minimize(-w, global_step=global_step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train)
        assert sess.run(global_step) == 3
        np.testing.assert_allclose(sess.run(w), 1.0 + 0.5 + 0.25)
