"""``tw.contrib.util``: static values and TensorProto round trips."""

from __future__ import annotations

import numpy as np

import tensorweave as tf


def test_constant_value_and_tensor_proto_round_trip():
    util = tf.contrib.util
    np.testing.assert_array_equal(util.constant_value(tf.constant([1.5, 2.5]) + 1.0), [2.5, 3.5])
    assert util.constant_value(tf.placeholder(tf.int32)) is None
    value = np.arange(6, dtype=np.int64).reshape(2, 3)
    back = util.make_ndarray(util.make_tensor_proto(value))
    np.testing.assert_array_equal(back, value)
    assert back.dtype == np.int64
