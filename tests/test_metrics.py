"""``tw.metrics`` streamed over batches against numpy references: values, local metric variables
and their names, collections, weights, squeezable dimensions and shape errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(11)


def stream(value, update_op, feeds):
    """The update op's result for each feed, then the metric's value."""
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        updates = [sess.run(update_op, feed) for feed in feeds]
        return updates, sess.run(value)


def test_accuracy_streams_over_batches_in_local_metric_variables():
    labels = tf.placeholder(tf.int32, [None])
    predictions = tf.placeholder(tf.int64, [None])
    acc, update = tf.metrics.accuracy(labels, predictions)
    assert acc.name == "accuracy/value:0" and update.name == "accuracy/update_op:0"
    assert acc.dtype == tf.float32 and acc.shape.as_list() == []
    local = tf.local_variables()
    assert [v.name for v in local] == ["accuracy/total:0", "accuracy/count:0"]
    assert tf.get_collection(tf.GraphKeys.METRIC_VARIABLES) == local
    assert tf.global_variables() == [] and tf.trainable_variables() == []
    batches = [(np.array([1, 2, 3, 4]), np.array([1, 2, 0, 0])),
               (np.array([5, 6]), np.array([5, 6]))]
    feeds = [{labels: y, predictions: p} for y, p in batches]
    updates, final = stream(acc, update, feeds)
    np.testing.assert_allclose(updates, [0.5, 4 / 6])
    np.testing.assert_allclose(final, 4 / 6)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(acc) == 0.0  # nothing seen yet: 0, not nan


def test_accuracy_weights_squeezable_labels_and_unique_scopes():
    labels = np.array([[1], [0], [1], [1]], np.int64)
    predictions = np.array([1, 1, 1, 0], np.int64)
    weights = np.array([1.0, 3.0, 0.0, 2.0], np.float32)
    tf.metrics.accuracy(labels[:, 0], predictions)
    acc, update = tf.metrics.accuracy(labels, predictions, weights=weights)
    assert acc.name == "accuracy_1/value:0"
    assert "accuracy_1/total:0" in [v.name for v in tf.local_variables()]
    (value,), _ = stream(acc, update, [None])
    np.testing.assert_allclose(value, 1.0 / 6.0)


def test_accuracy_shape_mismatch_raises():
    with pytest.raises(ValueError):
        tf.metrics.accuracy(np.zeros(4, np.int32), np.zeros(3, np.int32))
    assert tf.local_variables() == []


def test_mean_with_weights_and_collections():
    values = tf.placeholder(tf.float32, [None, 2])
    weights = tf.placeholder(tf.float32, [None, 1])
    mean, update = tf.metrics.mean(values, weights, metrics_collections=["m"],
                                   updates_collections=["u"])
    assert tf.get_collection("m") == [mean] and tf.get_collection("u") == [update]
    assert mean.name == "mean/value:0"
    batches = [RNG.standard_normal((3, 2)).astype(np.float32) for _ in range(2)]
    batch_weights = [np.array([[1.0], [0.0], [2.0]], np.float32),
                     np.array([[0.5], [0.5], [1.0]], np.float32)]
    feeds = [{values: v, weights: w} for v, w in zip(batches, batch_weights, strict=True)]
    updates, final = stream(mean, update, feeds)
    total = sum((v * w).sum() for v, w in zip(batches, batch_weights, strict=True))
    count = sum((np.ones((3, 2)) * w).sum() for w in batch_weights)
    np.testing.assert_allclose(final, total / count, rtol=1e-5)
    np.testing.assert_allclose(updates[0], (batches[0] * batch_weights[0]).sum() / 6, rtol=1e-5)


@pytest.mark.parametrize("name,reference", [
    ("mean_squared_error", lambda y, p: (y - p) ** 2),
    ("mean_absolute_error", lambda y, p: np.abs(p - y)),
])
def test_error_metrics_match_numpy(name, reference):
    labels = tf.placeholder(tf.float32, [None, 3])
    predictions = tf.placeholder(tf.float32, [None, 3])
    value, update = getattr(tf.metrics, name)(labels, predictions)
    assert value.name == f"{name}/value:0"
    ys = [RNG.standard_normal((2, 3)).astype(np.float32) for _ in range(3)]
    ps = [RNG.standard_normal((2, 3)).astype(np.float32) for _ in range(3)]
    feeds = [{labels: y, predictions: p} for y, p in zip(ys, ps, strict=True)]
    _, final = stream(value, update, feeds)
    expected = np.mean([reference(y, p) for y, p in zip(ys, ps, strict=True)])
    np.testing.assert_allclose(final, expected, rtol=1e-5)


def test_precision_and_recall():
    labels = tf.placeholder(tf.int64, [None])
    predictions = tf.placeholder(tf.bool, [None])
    precision, update_precision = tf.metrics.precision(labels, predictions)
    recall, update_recall = tf.metrics.recall(labels, predictions)
    assert [v.name for v in tf.local_variables()] == [
        "precision/true_positives/count:0", "precision/false_positives/count:0",
        "recall/true_positives/count:0", "recall/false_negatives/count:0"]
    assert precision.name == "precision/value:0"
    y = [np.array([1, 0, 1, 1, 0]), np.array([0, 1, 1])]
    p = [np.array([1, 1, 0, 1, 0], bool), np.array([1, 1, 0], bool)]
    feeds = [{labels: a, predictions: b} for a, b in zip(y, p, strict=True)]
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run([precision, recall]) == [0.0, 0.0]
        for feed in feeds:
            sess.run([update_precision, update_recall], feed)
        value_p, value_r = sess.run([precision, recall])
    tp, fp, fn = 3, 2, 2
    np.testing.assert_allclose(value_p, tp / (tp + fp))
    np.testing.assert_allclose(value_r, tp / (tp + fn))


def test_weighted_true_positives_and_bad_weight_rank():
    labels = np.array([[1, 1], [0, 1]])
    predictions = np.array([[1, 0], [1, 1]])
    weights = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)
    tp, update = tf.metrics.true_positives(labels, predictions, weights)
    assert tp.name == "true_positives/Identity:0"
    (value,), final = stream(tp, update, [None])
    assert value == 5.0 and final == 5.0
    with pytest.raises(ValueError, match="weights must be a scalar or have the rank"):
        tf.metrics.false_negatives(labels, predictions, np.ones((2, 2, 1, 1), np.float32))


def np_auc(labels, predictions, weights, num_thresholds=200, curve="ROC"):
    eps = 1e-7
    inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    thresholds = np.array([-eps, *inner, 1 + eps])[:, None]
    positive = predictions[None, :] > thresholds
    label = labels[None, :].astype(bool)
    tp = (positive & label) @ weights
    fn = (~positive & label) @ weights
    tn = (~positive & ~label) @ weights
    fp = (positive & ~label) @ weights
    recall = (tp + 1e-6) / (tp + fn + 1e-6)
    if curve == "ROC":
        x, y = fp / (fp + tn + 1e-6), recall
    else:
        x, y = recall, (tp + 1e-6) / (tp + fp + 1e-6)
    return np.sum((x[:-1] - x[1:]) * (y[:-1] + y[1:]) / 2)


@pytest.mark.parametrize("curve", ["ROC", "PR"])
def test_auc_matches_numpy_riemann_sum(curve):
    labels = tf.placeholder(tf.int32, [None])
    predictions = tf.placeholder(tf.float32, [None])
    weights = tf.placeholder(tf.float32, [None])
    value, update = tf.metrics.auc(labels, predictions, weights, curve=curve)
    assert value.name == "auc/value:0"
    assert [v.name for v in tf.local_variables()] == [
        "auc/true_positives:0", "auc/false_negatives:0", "auc/true_negatives:0",
        "auc/false_positives:0"]
    assert tf.local_variables()[0].shape.as_list() == [200]
    ys = [RNG.integers(0, 2, 30) for _ in range(2)]
    ps = [np.clip(0.5 * y + RNG.uniform(0, 0.6, 30), 0, 1).astype(np.float32) for y in ys]
    ws = [RNG.uniform(0.5, 2, 30).astype(np.float32) for _ in range(2)]
    feeds = [{labels: y, predictions: p, weights: w} for y, p, w in zip(ys, ps, ws, strict=True)]
    _, final = stream(value, update, feeds)
    expected = np_auc(np.concatenate(ys), np.concatenate(ps).astype(np.float64),
                      np.concatenate(ws).astype(np.float64), curve=curve)
    np.testing.assert_allclose(final, expected, rtol=1e-4)
    assert 0.5 < final <= 1.0


def test_auc_argument_errors():
    with pytest.raises(ValueError, match="curve must be either ROC or PR, XY unknown"):
        tf.metrics.auc([0, 1], [0.2, 0.8], curve="XY")
    with pytest.raises(ValueError, match="Invalid summation_method: simpson"):
        tf.metrics.auc([0, 1], [0.2, 0.8], summation_method="simpson")


def test_root_mean_squared_error_is_the_root_of_the_streamed_mse():
    labels = tf.placeholder(tf.float64, [None])
    predictions = tf.placeholder(tf.float64, [None])
    value, update = tf.metrics.root_mean_squared_error(labels, predictions,
                                                       metrics_collections=["m"],
                                                       updates_collections=["u"])
    assert tf.get_collection("m") == [value] and tf.get_collection("u") == [update]
    assert value.dtype == tf.float32
    ys = [RNG.standard_normal(4) for _ in range(2)]
    ps = [RNG.standard_normal(4) for _ in range(2)]
    updates, final = stream(value, update,
                            [{labels: y, predictions: p} for y, p in zip(ys, ps, strict=True)])
    np.testing.assert_allclose(updates[0], np.sqrt(np.mean((ys[0] - ps[0]) ** 2)), rtol=1e-5)
    squares = [(y - p) ** 2 for y, p in zip(ys, ps, strict=True)]
    np.testing.assert_allclose(final, np.sqrt(np.mean(squares)), rtol=1e-5)
