"""custom_gradient, RegisterGradient and no_gradient."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorweave as tf


def test_custom_gradient_replaces_the_real_one() -> None:
    @tf.custom_gradient
    def clipped_square(x: Any) -> Any:
        def grad(dy: Any) -> Any:
            return tf.clip_by_value(dy * 2.0 * x, -1.0, 1.0)

        return tf.square(x), grad

    x = tf.constant([-3.0, 0.25, 4.0])
    y = clipped_square(x)
    (dx,) = tf.gradients(tf.reduce_sum(y), x)
    (plain,) = tf.gradients(tf.reduce_sum(tf.square(x)), x)
    with tf.Session() as sess:
        y_val, dx_val, plain_val = sess.run([y, dx, plain])
    np.testing.assert_allclose(y_val, [9.0, 0.0625, 16.0])
    np.testing.assert_allclose(dx_val, [-1.0, 0.5, 1.0])
    np.testing.assert_allclose(plain_val, [-6.0, 0.5, 8.0])


def test_several_inputs_and_outputs_and_upstream_gradient() -> None:
    @tf.custom_gradient
    def f(a: Any, b: Any) -> Any:
        def grad(d_sum: Any, d_prod: Any) -> Any:
            return [d_sum * 10.0, d_prod * 100.0]

        return (a + b, a * b), grad

    a, b = tf.constant(2.0), tf.constant(3.0)
    s, p = f(a, b)
    da, db = tf.gradients(3.0 * s + p, [a, b])
    with tf.Session() as sess:
        assert sess.run([s, p]) == [5.0, 6.0]
        assert sess.run([da, db]) == [30.0, 100.0]


def test_variables_get_the_gradients_grad_fn_returns_for_them() -> None:
    w = tf.Variable(2.0, name="w")

    @tf.custom_gradient
    def scale(x: Any) -> Any:
        def grad(dy: Any, variables: Any = None) -> Any:
            assert variables == [w]
            return dy * 0.0, [dy * 7.0]

        return x * w, grad

    x = tf.constant(5.0)
    dx, dw = tf.gradients(scale(x), [x, w])
    with tf.Session() as sess:
        sess.run(w.initializer)
        assert sess.run([dx, dw]) == [0.0, 7.0]


def test_variables_need_a_grad_fn_taking_them() -> None:
    w = tf.Variable(2.0)

    @tf.custom_gradient
    def scale(x: Any) -> Any:
        return x * w, lambda dy: dy

    with pytest.raises(TypeError, match="keyword argument 'variables'"):
        scale(tf.constant(1.0))
    with pytest.raises(ValueError, match="keywords arguments"):
        scale(x=tf.constant(1.0))


def test_wrong_number_of_input_gradients_is_a_value_error() -> None:
    @tf.custom_gradient
    def f(a: Any, b: Any) -> Any:
        return a * b, lambda dy: [dy]

    a = tf.constant(1.0)
    with pytest.raises(ValueError, match="expected to return 2 gradients but returned 1"):
        tf.gradients(f(a, tf.constant(2.0)), a)


def test_register_gradient_and_no_gradient() -> None:
    @tf.RegisterGradient("TestTimesThree")
    def _times_three(op: Any, grad: Any) -> Any:
        return [grad * 3.0]

    with pytest.raises(KeyError, match="Registering two gradient with name 'TestTimesThree'"):
        tf.RegisterGradient("TestTimesThree")(_times_three)
    with pytest.raises(KeyError, match="'Square'"):
        tf.no_gradient("Square")
    x = tf.constant(2.0)
    y = tf.identity(x)
    y.op._attrs["_gradient_op_type"] = "TestTimesThree"  # what gradient_override_map sets
    (dx,) = tf.gradients(y, x)
    with tf.Session() as sess:
        assert sess.run(dx) == 3.0
    assert tf.NotDifferentiable is tf.no_gradient and tf.NoGradient is tf.no_gradient


def test_gradient_override_map_uses_a_built_in_ops_gradient() -> None:
    x = tf.placeholder(tf.float32, [3], name="x")
    graph = tf.get_default_graph()
    with graph.gradient_override_map({"Sign": "Identity"}):
        y = tf.sign(x, name="y")  # a straight-through estimator, as in binarized networks
    z = tf.sign(x)
    weights = tf.constant([1.0, 2.0, 3.0])
    (dy,) = tf.gradients(tf.reduce_sum(y * weights), x)
    (dz,) = tf.gradients(tf.reduce_sum(z * weights), x)
    feed = {x: [-1.5, 0.5, 2.0]}
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, feed), [-1.0, 1.0, 1.0])
        np.testing.assert_array_equal(sess.run(dy, feed), [1.0, 2.0, 3.0])  # Identity's
        np.testing.assert_array_equal(sess.run(dz, feed), [0.0, 0.0, 0.0])  # Sign's own
    graph_def = tf.GraphDef.FromString(graph.as_graph_def().SerializeToString())
    with tf.Graph().as_default():  # the override travels in the GraphDef
        tf.import_graph_def(graph_def, name="")
        imported = tf.get_default_graph()
        (grad,) = tf.gradients(imported.get_tensor_by_name("y:0"),
                               imported.get_tensor_by_name("x:0"))
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(grad, {"x:0": feed[x]}), [1.0, 1.0, 1.0])
    with pytest.raises(TypeError, match="mapping strings to strings"):
        with graph.gradient_override_map({"Sign": 1}):
            pass
    with graph.gradient_override_map({"Sign": "NoSuchGradient"}):
        bad = tf.sign(x)
    with pytest.raises(LookupError, match="NoSuchGradient"):
        tf.gradients(bad, x)
