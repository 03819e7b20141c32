"""Constants and conversion to tensors, with TF's default dtypes."""

import numpy as np
import pytest

import tensorweave as tf


@pytest.mark.parametrize("value, dtype", [
    (1.0, tf.float32), (1, tf.int32), (2**40, tf.int64), (True, tf.bool),
    ([1.5, 2.0], tf.float32), (np.array([1.0]), tf.float64), (np.int8(3), tf.int8),
])
def test_default_dtypes(value, dtype):
    assert tf.constant(value).dtype == dtype


def test_shape_argument_broadcasts_or_reshapes():
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(tf.constant(7, shape=[2, 2])), [[7, 7], [7, 7]])
        np.testing.assert_array_equal(sess.run(tf.constant([1, 2, 3, 4], shape=[2, 2])),
                                      [[1, 2], [3, 4]])
    with pytest.raises(TypeError):
        tf.constant([1, 2, 3], shape=[2, 2])


def test_values_that_do_not_fit_are_type_errors():
    with pytest.raises(TypeError, match="Expected int32"):
        tf.constant(1.5, dtype=tf.int32)
    with pytest.raises(TypeError):
        tf.constant([1.5], dtype=tf.uint8)
    # Integers wrap, as numpy 1.x's conversion under TF 1.15 wraps them; numpy values are cast.
    with tf.Session() as sess:
        assert sess.run(tf.constant(300, dtype=tf.uint8)) == 44
        assert sess.run(tf.constant(np.array([9.7]), dtype=tf.uint8)).tolist() == [9]
    with pytest.raises(TypeError):
        tf.constant(["text", 1])  # strings are string tensors, but not mixed with numbers
    assert tf.constant(2.0, dtype=tf.int32).dtype == tf.int32


def test_convert_to_tensor():
    t = tf.constant(1.0)
    assert tf.convert_to_tensor(t) is t
    with pytest.raises(ValueError, match="requested dtype int32"):
        tf.convert_to_tensor(t, dtype=tf.int32)
    assert tf.convert_to_tensor([1, 2], dtype=tf.float64).dtype == tf.float64
    assert tf.convert_to_tensor(3, preferred_dtype=tf.int64).dtype == tf.int64
    assert tf.convert_to_tensor(3.5, preferred_dtype=tf.int64).dtype == tf.float32


def test_nested_lists_with_tensors_are_packed():
    t = tf.placeholder(tf.int32, [])
    packed = tf.convert_to_tensor([[t, 1], [2, t]])
    assert packed.shape.as_list() == [2, 2] and packed.dtype == tf.int32
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(packed, {t: 5}), [[5, 1], [2, 5]])
    assert tf.convert_to_tensor([t, 3], dtype=tf.int32).dtype == tf.int32
    with pytest.raises(TypeError, match="Expected float32"):
        tf.convert_to_tensor([t, 3], dtype=tf.float32)


def test_lists_of_numpy_values_keep_their_dtype():
    assert tf.constant([np.float16(1), np.float16(2)]).dtype == tf.float16
    assert tf.constant([np.int8(1)]).dtype == tf.int8
    assert tf.constant([1.0, 2.0]).dtype == tf.float32


def test_small_constant_subgraphs_are_known_at_build_time():
    x = tf.placeholder(tf.float32, [2, 3, 4])
    flat = tf.reshape(x, [tf.shape(x)[0], -1])
    assert flat.shape.as_list() == [2, 12]
    fed = tf.placeholder_with_default(tf.constant([3, 8]), [2])
    assert tf.reshape(tf.zeros([24]), fed).shape.as_list() == [None, None]


def test_none_is_refused_with_value_error_as_in_tf():
    # e.g. clipping the None gradient of a variable the loss does not depend on
    with pytest.raises(ValueError, match="None values not supported"):
        tf.convert_to_tensor(None)
    with pytest.raises(ValueError, match="None values not supported"):
        tf.clip_by_value(None, -1.0, 1.0)
