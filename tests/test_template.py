"""make_template, get_local_variable and model_variables."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorweave as tf


def linear(x: Any, units: int = 2) -> Any:
    w = tf.get_variable("w", [3, units], initializer=tf.ones_initializer())
    b = tf.get_variable("b", [units], initializer=tf.zeros_initializer())
    return tf.matmul(x, w) + b


def test_template_shares_variables_across_calls() -> None:
    layer = tf.make_template("dense", linear, units=4)
    x = tf.constant(np.ones([1, 3], np.float32))
    first, second = layer(x), layer(x * 2.0)
    assert [v.op.name for v in tf.global_variables()] == ["dense/w", "dense/b"]
    assert layer.variable_scope_name == "dense"
    assert [v.op.name for v in layer.trainable_variables] == ["dense/w", "dense/b"]
    assert first.op.name.startswith("dense/") and second.op.name.startswith("dense_1/")
    other = tf.make_template("dense", linear)
    other(x)
    assert other.variable_scope_name == "dense_1"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(first), [[3.0] * 4])
        np.testing.assert_array_equal(sess.run(second), [[6.0] * 4])


def test_create_scope_now_and_unique_name() -> None:
    with tf.variable_scope("outer"):
        layer = tf.make_template("t", linear, create_scope_now_=True)
    assert layer.variable_scope_name == "outer/t"
    layer(tf.ones([1, 3]))
    layer(tf.ones([1, 3]))
    assert [v.op.name for v in tf.global_variables()] == ["outer/t/w", "outer/t/b"]
    fixed = tf.make_template("ignored", linear, unique_name_="exact")
    fixed(tf.ones([1, 3]))
    assert fixed.variable_scope_name == "exact"


def test_new_trainable_variable_on_a_later_call_is_an_error() -> None:
    def bad(x: Any) -> Any:
        return x * tf.Variable(1.0)

    layer = tf.make_template("bad", bad)
    layer(tf.constant(1.0))
    with pytest.raises(ValueError, match="Trainable variable created when calling a template"):
        layer(tf.constant(1.0))
    with pytest.raises(ValueError, match="name cannot be None"):
        tf.make_template("", linear)


def test_get_local_variable_and_model_variables() -> None:
    with tf.variable_scope("s"):
        v = tf.get_local_variable("count", [], dtype=tf.int32)
    assert v.op.name == "s/count"
    assert tf.local_variables() == [v]
    assert tf.trainable_variables() == [] and tf.global_variables() == []
    tf.add_to_collection(tf.GraphKeys.MODEL_VARIABLES, v)
    assert tf.model_variables() == [v] and tf.model_variables("other") == []
