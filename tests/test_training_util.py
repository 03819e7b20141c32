"""The global step: creation, lookup, increments and its errors."""

from __future__ import annotations

import pytest

import tensorweave as tf


def test_get_or_create_global_step_creates_once() -> None:
    assert tf.train.get_global_step() is None
    step = tf.train.get_or_create_global_step()
    assert tf.train.get_or_create_global_step() is step
    assert step.op.name == "global_step" and step.dtype == tf.int64
    assert step.shape.as_list() == [] and not step.trainable
    assert step in tf.global_variables() and step not in tf.trainable_variables()
    assert tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [step]
    with pytest.raises(ValueError, match="already exists"):
        tf.train.create_global_step()


def test_global_step_value_and_increment() -> None:
    step = tf.train.create_global_step()
    increment = tf.assign_add(step, 1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert tf.train.global_step(sess, step) == 0
        sess.run(increment)
        sess.run(increment)
        value = tf.train.global_step(sess, step)
    assert value == 2 and isinstance(value, int)


def test_global_step_is_per_graph_and_at_the_root() -> None:
    g = tf.Graph()
    with tf.variable_scope("model"), tf.name_scope("ns"):
        step = tf.train.get_or_create_global_step(g)
    assert step.graph is g and step.op.name == "global_step"
    assert tf.train.get_global_step() is None
    assert tf.train.get_global_step(g) is step


def test_a_global_step_found_by_name_must_be_an_integer_scalar() -> None:
    tf.Variable(0.5, name="global_step")
    with pytest.raises(TypeError, match="integer"):
        tf.train.get_global_step()
