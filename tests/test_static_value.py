"""`tensorweave.api.static_value`: `get_static_value` (``tw.get_static_value``,
``tw.contrib.util.constant_value``), `smart_constant_value` and `smart_cond`."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.api.static_value import get_static_value, smart_cond, smart_constant_value


def test_get_static_value_of_known_unknown_and_non_tensors():
    known = tf.constant([[1, 2], [3, 4]]) * 2
    value = tf.get_static_value(known)
    np.testing.assert_array_equal(value, [[2, 4], [6, 8]])
    assert value.dtype == np.int32
    np.testing.assert_array_equal(get_static_value(tf.shape(tf.zeros([3, 5]))), [3, 5])
    assert get_static_value(tf.placeholder(tf.float32)) is None
    assert get_static_value(tf.Variable(1.0)) is None
    assert get_static_value(7) == 7  # not a tensor: returned as is
    assert tf.contrib.util.constant_value is get_static_value


def test_smart_constant_value():
    assert smart_constant_value(True) is True
    assert smart_constant_value(0) is False
    assert smart_constant_value(tf.constant(False)) is False
    assert smart_constant_value(tf.placeholder(tf.bool)) is None
    with pytest.raises(TypeError, match="`pred` must be a Tensor, or a Python bool"):
        smart_constant_value("yes")
    with pytest.raises(TypeError, match="`pred` must be a Tensor"):
        smart_constant_value(2)


def test_smart_cond_calls_one_branch_when_the_predicate_is_known():
    calls = []

    def true_fn():
        calls.append("t")
        return tf.constant(1.0)

    def false_fn():
        calls.append("f")
        return tf.constant(2.0)

    out = smart_cond(False, true_fn, false_fn)
    assert calls == ["f"] and out.op.type == "Const"
    with pytest.raises(TypeError, match="`true_fn` must be callable"):
        smart_cond(True, 1.0, false_fn)


def test_smart_cond_builds_a_cond_for_a_fed_predicate():
    pred = tf.placeholder(tf.bool)
    x = tf.placeholder(tf.float32, [None, 3])
    out = smart_cond(pred, lambda: x * 2.0, lambda: x - 1.0)
    assert out.shape.as_list() == [None, 3]
    value = np.array([[1.0, 2.0, 3.0]], np.float32)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(out, {pred: True, x: value}), value * 2)
        np.testing.assert_array_equal(sess.run(out, {pred: False, x: value}), value - 1)
