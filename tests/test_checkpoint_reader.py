"""tf.train.NewCheckpointReader over a checkpoint written by Saver.save."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf


def test_reader_maps_names_to_shapes_dtypes_and_values(tmp_path):
    v1 = tf.get_variable("v1", initializer=np.arange(3, dtype=np.float32))
    v2 = tf.get_variable("v2", initializer=np.array([[1, 2]], np.int64))
    saver = tf.train.Saver([v1, v2])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "model.ckpt"))
    reader = tf.train.NewCheckpointReader(path)
    assert reader.get_variable_to_shape_map() == {"v1": [3], "v2": [1, 2]}
    assert reader.get_variable_to_dtype_map() == {"v1": tf.float32, "v2": tf.int64}
    np.testing.assert_array_equal(reader.get_tensor("v1"), np.arange(3, dtype=np.float32))
    assert reader.has_tensor("v2") and not reader.has_tensor("v3")
    assert reader.debug_string() == b"v1 (float32) [3]\nv2 (int64) [1, 2]\n"
    with pytest.raises(tf.errors.NotFoundError, match="Key v3 not found"):
        reader.get_tensor("v3")
    with pytest.raises(tf.errors.NotFoundError):
        tf.train.NewCheckpointReader(str(tmp_path / "missing.ckpt"))
