"""`ExponentialMovingAverage` against a numpy reference, and its names as in TF."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.train.moving_averages import ExponentialMovingAverage


def test_apply_creates_shadows_named_and_collected_as_tf() -> None:
    v = tf.Variable([1.0, 2.0], name="v")
    with tf.variable_scope("scope"):
        u = tf.Variable(3.0, name="u")
    ema = ExponentialMovingAverage(0.9)
    update = ema.apply([v, u])
    assert isinstance(update, tf.Operation) and update.name == "ExponentialMovingAverage"
    shadow = ema.average(v)
    assert shadow.op.name == "v/ExponentialMovingAverage" == ema.average_name(v)
    assert ema.average(u).op.name == "scope/u/ExponentialMovingAverage"
    assert shadow.dtype == tf.float32 and shadow.shape.as_list() == [2]
    assert shadow in tf.global_variables() and shadow not in tf.trainable_variables()
    assert tf.get_collection(tf.GraphKeys.MOVING_AVERAGE_VARIABLES) == [v, u]
    assert tf.moving_average_variables() == [v, u]
    assert ema.name == "ExponentialMovingAverage"
    assert ema.average(tf.Variable(0.0, name="other")) is None
    # a shadow is made once: applying again only adds update ops
    ema.apply([v])
    assert [x.op.name for x in tf.global_variables()].count("v/ExponentialMovingAverage") == 1


def test_averages_follow_the_tf_formula() -> None:
    v = tf.Variable([1.0, -2.0], name="v")
    value = tf.placeholder(tf.float32, [2])
    assign = tf.assign(v, value)
    ema = ExponentialMovingAverage(0.75)
    update = ema.apply([v])
    shadow = ema.average(v)
    values = np.array([[3.0, 4.0], [-1.0, 0.5], [10.0, 10.0]], np.float32)
    expected = np.array([1.0, -2.0], np.float32)  # starts at v's initial value
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(shadow), expected)
        for row in values:
            sess.run(assign, {value: row})
            sess.run(update)
            expected = expected - np.float32(0.25) * (expected - row)
            got = sess.run(shadow)
            assert got.dtype == np.float32
            np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_num_updates_caps_the_decay() -> None:
    v = tf.Variable(0.0, name="v")
    step = tf.Variable(0, dtype=tf.int32, trainable=False, name="step")
    ema = ExponentialMovingAverage(0.999, num_updates=step)
    update = ema.apply([v])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(v, 10.0))
        sess.run(update)  # decay = min(0.999, 1/10) = 0.1
        np.testing.assert_allclose(sess.run(ema.average(v)), 0.9 * 10.0, rtol=1e-6)
        sess.run(tf.assign(step, 90))
        sess.run(update)  # decay = min(0.999, 91/100) = 0.91
        np.testing.assert_allclose(sess.run(ema.average(v)), 9.0 - 0.09 * (9.0 - 10.0),
                                   rtol=1e-6)


def test_tensor_averages_start_at_zero_and_can_be_debiased() -> None:
    x = tf.placeholder(tf.float32, [2])
    t = tf.identity(x, name="t")
    plain = ExponentialMovingAverage(0.5, name="plain")
    debiased = ExponentialMovingAverage(0.5, zero_debias=True, name="debiased")
    updates = [plain.apply([t]), debiased.apply([t])]
    assert plain.average(t).op.name == "t/plain"
    assert "t/debiased/biased" in [v.op.name for v in tf.global_variables()]
    assert tf.get_collection(tf.GraphKeys.MOVING_AVERAGE_VARIABLES) == []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(plain.average(t)), [0.0, 0.0])
        for _ in range(2):
            sess.run(updates, {x: [4.0, 8.0]})
        # plain: 0 -> 2 -> 3 (biased toward zero); debiased: a constant input's own value
        np.testing.assert_allclose(sess.run(plain.average(t)), [3.0, 6.0], rtol=1e-6)
        np.testing.assert_allclose(sess.run(debiased.average(t)), [4.0, 8.0], rtol=1e-6)


def test_only_float_values_are_averaged() -> None:
    with pytest.raises(TypeError, match="must be half, float, or double: counter"):
        ExponentialMovingAverage(0.9).apply([tf.Variable(1, name="counter")])


def test_apply_defaults_to_trainable_variables_and_ignores_control_dependencies() -> None:
    w = tf.Variable(1.0, name="w")
    tf.Variable(2.0, name="frozen", trainable=False)
    ema = ExponentialMovingAverage(0.5)
    with tf.control_dependencies([tf.assign(w, 3.0)]):
        update = ema.apply()
    assert ema.average(w) is not None
    assert [v.op.name for v in tf.get_collection(tf.GraphKeys.MOVING_AVERAGE_VARIABLES)] == ["w"]
    assert not ema.average(w).initializer.control_inputs
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(update)  # runs after w = 3
        np.testing.assert_allclose(sess.run(ema.average(w)), 2.0)


def test_variables_to_restore_loads_averages_into_the_variables(tmp_path: Path) -> None:
    v = tf.Variable(1.0, name="v")
    tf.Variable(7.0, name="plain", trainable=False)
    ema = ExponentialMovingAverage(0.5)
    update = ema.apply([v])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(v, 5.0))
        sess.run(update)  # shadow = 3
        path = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"))
    with tf.Graph().as_default():
        v2 = tf.Variable(0.0, name="v")
        plain = tf.Variable(0.0, name="plain", trainable=False)
        ema2 = ExponentialMovingAverage(0.5)
        assert ema2.average_name(v2) == "v/ExponentialMovingAverage"
        mapping = ema2.variables_to_restore()
        assert mapping == {"v/ExponentialMovingAverage": v2, "plain": plain}
        with tf.Session() as sess:
            tf.train.Saver(mapping).restore(sess, path)
            assert sess.run([v2, plain]) == [3.0, 7.0]
