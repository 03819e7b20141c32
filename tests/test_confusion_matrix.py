"""``tw.confusion_matrix`` / ``tw.math.confusion_matrix`` against numpy counts: size from the
data or `num_classes`, weights and dtype, squeezable dimensions, and the run-time checks."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf


def np_confusion(labels, predictions, n, weights=None):
    out = np.zeros((n, n))
    np.add.at(out, (labels, predictions), 1 if weights is None else weights)
    return out


def run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def test_counts_with_size_from_the_data():
    labels = tf.placeholder(tf.int64, [None])
    predictions = tf.placeholder(tf.int64, [None])
    cm = tf.math.confusion_matrix(labels, predictions)
    assert tf.math.confusion_matrix is tf.confusion_matrix
    assert cm.dtype == tf.int32 and cm.shape.as_list() == [None, None]
    lab, pred = np.array([0, 1, 2, 1, 1, 4]), np.array([0, 2, 2, 1, 2, 0])
    got = run(cm, {labels: lab, predictions: pred})
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np_confusion(lab, pred, 5))


def test_num_classes_weights_dtype_and_v1_argument_order():
    lab, pred = np.array([0, 1, 1, 2], np.int32), np.array([0, 1, 1, 0], np.int32)
    weights = np.array([0.5, 1.0, 2.0, 4.0], np.float32)
    cm = tf.confusion_matrix(lab, pred, 4, tf.float64, "cm", weights)
    assert cm.dtype == tf.float64 and cm.name.startswith("cm/")
    got = run(cm)
    assert got.dtype == np.float64 and got.shape == (4, 4)
    np.testing.assert_array_equal(got, np_confusion(lab, pred, 4, weights))


def test_argmax_inputs_and_squeezable_trailing_dimension():
    logits = tf.constant([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    onehot = tf.constant([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    cm = tf.math.confusion_matrix(tf.argmax(onehot, 1), tf.argmax(logits, 1))
    np.testing.assert_array_equal(run(cm), [[0, 1], [1, 1]])
    column = tf.confusion_matrix(tf.constant([[1], [0]]), tf.constant([1, 1]), num_classes=2)
    np.testing.assert_array_equal(run(column), [[0, 1], [0, 1]])


def test_bad_ids_fail_at_run_time_and_bad_weights_at_construction():
    labels = tf.placeholder(tf.int32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="labels` contains negative"):
        run(tf.confusion_matrix(labels, [0, 1]), {labels: [-1, 0]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="predictions` out of bound"):
        run(tf.confusion_matrix(labels, [0, 3], num_classes=3), {labels: [0, 1]})
    with pytest.raises(ValueError):
        tf.confusion_matrix([0, 1], [0, 1], weights=[1.0, 2.0, 3.0])
