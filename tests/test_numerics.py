"""check_numerics, verify_tensor_all_finite and add_check_numerics_ops."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf


@pytest.mark.parametrize("values, what", [
    ([1.0, np.nan], "NaN"), ([np.inf, 1.0], "Inf"), ([np.nan, -np.inf], "Inf and NaN")])
def test_check_numerics_error_names_the_node(values: list[float], what: str) -> None:
    x = tf.placeholder(tf.float32, [2])
    checked = tf.check_numerics(x, "bad input", name="guard")
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(checked, {x: [1.0, 2.0]}), [1.0, 2.0])
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(checked, {x: values})
    assert f"bad input : Tensor had {what} values" in str(info.value)
    assert info.value.op.name == "guard"


def test_check_numerics_of_a_constant_still_runs_and_checks_gradients() -> None:
    with pytest.raises(TypeError):
        tf.check_numerics(tf.constant([1, 2]), "ints")
    nan = tf.check_numerics(tf.constant([np.nan], tf.float64), "const")
    x = tf.placeholder(tf.float32, [])
    (dx,) = tf.gradients(tf.sqrt(tf.check_numerics(x, "fwd")), x)  # d sqrt at 0: Inf
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="const : Tensor had NaN"):
            sess.run(nan)
        assert sess.run(dx, {x: 4.0}) == 0.25
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="detected in gradient. fwd : Tensor had Inf values"):
            sess.run(dx, {x: 0.0})


def test_verify_tensor_all_finite_passes_its_input_after_the_check() -> None:
    x = tf.placeholder(tf.float32, [3])
    y = tf.verify_tensor_all_finite(x, "not finite")
    assert y.op.type == "Identity"
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1, 2, 3]}), [1, 2, 3])
        with pytest.raises(tf.errors.InvalidArgumentError, match="not finite : Tensor had Inf"):
            sess.run(y, {x: [1, np.inf, 3]})


def test_add_check_numerics_ops_checks_every_float_output() -> None:
    x = tf.placeholder(tf.float32, [], name="x")
    y = tf.log(x, name="log")
    tf.cast(y, tf.int32)
    check = tf.add_check_numerics_ops()
    checks = [op for op in tf.get_default_graph().get_operations()
              if op.type == "CheckNumerics"]
    assert sorted(op.get_attr("message") for op in checks) == ["log:0", "x:0"]
    with tf.Session() as sess:
        sess.run(check, {x: 1.0})
        with pytest.raises(tf.errors.InvalidArgumentError, match="log:0 : Tensor had Inf"):
            sess.run(check, {x: 0.0})
    with tf.Graph().as_default():
        tf.while_loop(lambda i: i < 3.0, lambda i: i + 1.0, [tf.constant(0.0)])
        with pytest.raises(ValueError, match="not compatible with TensorFlow control flow"):
            tf.add_check_numerics_ops()
