"""The op builder: Python values given to an op become constants named as TF's op library
names them, after the op and its argument."""

from __future__ import annotations

import numpy as np

import tensorweave as tf


def test_a_python_input_is_a_constant_in_the_ops_own_scope():
    x = tf.placeholder(tf.float32, [2], name="x")
    shaped = tf.reshape(x, [1, 2])
    widened = tf.expand_dims(x, 0)
    with tf.name_scope("outer"):
        inner = tf.reshape(x, [2, 1], name="r")
    assert shaped.op.inputs[1].op.name == "Reshape/shape"
    assert widened.op.inputs[1].op.name == "ExpandDims/dim"
    assert inner.op.inputs[1].op.name == "outer/r/shape"
    packed = tf.raw_ops.Pack(values=[x, np.array([1.0, 2.0], np.float32)], axis=0)
    assert packed.op.inputs[1].op.name == "Pack/values_1"
    with tf.Session() as sess:
        assert sess.run(inner, {x: [1.0, 2.0]}).shape == (2, 1)


def test_binary_operands_are_named_x_and_y_as_tf_names_them():
    x = tf.placeholder(tf.float32, [2], name="x")
    assert (x * 2.0).op.inputs[1].op.name == "mul/y"
    assert (x > 1.0).op.inputs[1].op.name == "Greater/y"
    assert (3.0 / x).op.inputs[0].op.name == "truediv/x"
    other = tf.Graph()  # tensors of another graph: the op and its constant go there
    with other.as_default():
        z = tf.placeholder(tf.float32, [], name="z")
    scaled = z * 4.0
    assert scaled.graph is other and scaled.op.inputs[1].op.name == "mul/y"
