"""``tw.losses`` against numpy references: each loss, each reduction, weights, dtypes, the loss
collections and construction errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(3)
Reduction = tf.losses.Reduction


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def np_log_softmax(x):
    shifted = x - x.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def np_sigmoid_xent(labels, logits):
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


def np_huber(error, delta):
    abs_error = np.abs(error)
    quadratic = np.minimum(abs_error, delta)
    return 0.5 * quadratic ** 2 + delta * (abs_error - quadratic)


LABELS = RNG.uniform(0, 1, (4, 3)).astype(np.float32)
PREDS = RNG.uniform(0.05, 0.95, (4, 3)).astype(np.float32)
ELEMENTWISE = {
    "absolute_difference": lambda y, p: np.abs(p - y),
    "mean_squared_error": lambda y, p: (p - y) ** 2,
    "huber_loss": lambda y, p: np_huber(p - y, 1.0),
    "log_loss": lambda y, p: -y * np.log(p + 1e-7) - (1 - y) * np.log(1 - p + 1e-7),
    "hinge_loss": lambda y, p: np.maximum(0, 1 - (2 * np.round(y) - 1) * p),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_losses_match_numpy(name):
    labels = np.round(LABELS) if name == "hinge_loss" else LABELS
    loss = getattr(tf.losses, name)(labels, PREDS)
    assert loss.name == f"{name}/value:0"
    assert loss.dtype == tf.float32 and loss.shape.as_list() == []
    assert tf.get_collection(tf.GraphKeys.LOSSES) == [loss]
    expected = ELEMENTWISE[name](labels.astype(np.float64), PREDS.astype(np.float64)).mean()
    np.testing.assert_allclose(run(loss), expected, rtol=1e-5)


def test_huber_loss_delta_and_float64_inputs_cast_to_float32():
    labels, preds = randn(5, 2, dtype=np.float64) * 3, randn(5, 2, dtype=np.float64) * 3
    loss = tf.losses.huber_loss(labels, preds, delta=0.5)
    assert loss.dtype == tf.float32
    np.testing.assert_allclose(run(loss), np_huber(preds - labels, 0.5).mean(), rtol=1e-5)


@pytest.mark.parametrize("reduction", [Reduction.NONE, Reduction.SUM, Reduction.MEAN,
                                       Reduction.SUM_OVER_BATCH_SIZE,
                                       Reduction.SUM_BY_NONZERO_WEIGHTS])
def test_compute_weighted_loss_reductions(reduction):
    losses = randn(3, 4) ** 2
    weights = np.array([[0.0], [2.0], [0.5]], np.float32)  # broadcast along the last axis
    loss = tf.losses.compute_weighted_loss(losses, weights, reduction=reduction)
    weighted = (losses * weights).astype(np.float64)
    expected = {
        Reduction.NONE: weighted,
        Reduction.SUM: weighted.sum(),
        Reduction.MEAN: weighted.sum() / (np.ones_like(losses) * weights).sum(),
        Reduction.SUM_OVER_BATCH_SIZE: weighted.sum() / losses.size,
        Reduction.SUM_BY_NONZERO_WEIGHTS: weighted.sum() / 8,
    }[reduction]
    value = run(loss)
    assert value.dtype == np.float32 and value.shape == np.shape(expected)
    np.testing.assert_allclose(value, expected, rtol=1e-5)


def test_zero_weights_give_zero_not_nan_and_dtype_follows_losses():
    losses = randn(2, 3, dtype=np.float64)
    loss = tf.losses.compute_weighted_loss(losses, np.zeros((2, 3)))
    mean = tf.losses.compute_weighted_loss(losses, 0.0, reduction=Reduction.MEAN)
    assert loss.dtype == tf.float64
    assert run([loss, mean]) == [0.0, 0.0]


def test_weights_that_cannot_broadcast_raise_at_construction():
    with pytest.raises(ValueError, match="weights can not be broadcast to values. "
                                         "values.rank=2. weights.rank=1"):
        tf.losses.mean_squared_error(LABELS, PREDS, weights=np.ones(3))
    with pytest.raises(ValueError, match="Mismatch at dim 0"):
        tf.losses.mean_squared_error(LABELS, PREDS, weights=np.ones((2, 3)))
    with pytest.raises(ValueError, match="Invalid Reduction Key bogus"):
        tf.losses.compute_weighted_loss(LABELS, reduction="bogus")
    with pytest.raises(ValueError, match="labels must not be None"):
        tf.losses.absolute_difference(None, PREDS)
    with pytest.raises(ValueError, match="incompatible|Incompatible"):
        tf.losses.absolute_difference(LABELS, PREDS[:, :2])
    assert tf.get_collection(tf.GraphKeys.LOSSES) == []


@pytest.mark.parametrize("smoothing", [0, 0.2])
def test_sigmoid_cross_entropy_with_label_smoothing(smoothing):
    labels = (RNG.uniform(size=(4, 3)) > 0.5).astype(np.int32)
    logits = randn(4, 3)
    loss = tf.losses.sigmoid_cross_entropy(labels, logits, label_smoothing=smoothing)
    assert loss.name == "sigmoid_cross_entropy_loss/value:0"
    smoothed = labels * (1 - smoothing) + 0.5 * smoothing
    np.testing.assert_allclose(run(loss), np_sigmoid_xent(smoothed, logits).mean(), rtol=1e-5)


@pytest.mark.parametrize("smoothing", [0, 0.3])
def test_softmax_cross_entropy_with_label_smoothing_and_weights(smoothing):
    onehot = np.eye(4, dtype=np.float32)[[0, 3, 1]]
    logits = randn(3, 4, dtype=np.float64)
    weights = np.array([1.0, 0.0, 2.0])
    loss = tf.losses.softmax_cross_entropy(onehot, logits, weights, label_smoothing=smoothing)
    assert loss.dtype == tf.float64
    smoothed = onehot * (1 - smoothing) + smoothing / 4
    per_row = -(smoothed * np_log_softmax(logits)).sum(-1)
    np.testing.assert_allclose(run(loss), (per_row * weights).sum() / 2, rtol=1e-6)


def test_softmax_cross_entropy_gradient_reaches_logits_only():
    onehot = np.eye(3, dtype=np.float32)[[2, 0]]
    logits = tf.constant(randn(2, 3))
    labels = tf.constant(onehot)
    loss = tf.losses.softmax_cross_entropy(labels, logits, label_smoothing=0.1)
    grad_logits, grad_labels = tf.gradients(loss, [logits, labels])
    assert grad_labels is None
    value = run(grad_logits)
    smoothed = onehot * 0.9 + 0.1 / 3
    probs = np.exp(np_log_softmax(run(logits)))
    np.testing.assert_allclose(value, (probs - smoothed) / 2, rtol=1e-5, atol=1e-6)


def test_sparse_softmax_cross_entropy_squeezes_labels_and_weights():
    logits = randn(5, 4)
    labels = np.array([[0], [3], [1], [1], [2]], np.int64)
    weights = np.array([[1.0], [2.0], [0.0], [1.0], [0.5]], np.float32)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits, weights)
    assert loss.name == "sparse_softmax_cross_entropy_loss/value:0"
    per_row = -np_log_softmax(logits.astype(np.float64))[np.arange(5), labels[:, 0]]
    np.testing.assert_allclose(run(loss), (per_row * weights[:, 0]).sum() / 4, rtol=1e-5)
    none = tf.losses.sparse_softmax_cross_entropy(labels[:, 0], logits,
                                                  reduction=Reduction.NONE)
    assert none.shape.as_list() == [5]
    np.testing.assert_allclose(run(none), per_row, rtol=1e-5)
    with pytest.raises(ValueError):
        tf.losses.sparse_softmax_cross_entropy(np.zeros((5, 2), np.int64), logits)


def test_loss_collections_and_totals():
    a = tf.losses.absolute_difference(LABELS, PREDS)
    tf.losses.mean_squared_error(LABELS, PREDS, loss_collection=None)
    with tf.name_scope("tower"):
        b = tf.losses.mean_squared_error(LABELS, PREDS)
    tf.losses.add_loss(tf.constant(1.5, name="extra"))
    assert tf.losses.get_losses() == [a, b, tf.get_default_graph().get_tensor_by_name("extra:0")]
    assert tf.losses.get_losses(scope="tower") == [b]
    zero = tf.losses.get_regularization_loss()
    assert zero.dtype == tf.float32 and run(zero) == 0.0
    tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, tf.constant(0.25))
    tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, tf.constant(0.5))
    reg = tf.losses.get_regularization_loss()
    total = tf.losses.get_total_loss()
    without = tf.losses.get_total_loss(add_regularization_losses=False, name="plain")
    assert reg.name == "total_regularization_loss:0" and total.name == "total_loss:0"
    assert len(tf.losses.get_regularization_losses()) == 2
    va, vb, vreg, vtotal, vwithout = run([a, b, reg, total, without])
    np.testing.assert_allclose(vreg, 0.75)
    np.testing.assert_allclose(vwithout, va + vb + 1.5, rtol=1e-6)
    np.testing.assert_allclose(vtotal, va + vb + 1.5 + 0.75, rtol=1e-6)


# -- cosine_distance, mean_pairwise_squared_error -------------------------------------------------


def _unit(x, axis):
    return x / np.linalg.norm(x, axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [1, 2])
def test_cosine_distance_keeps_the_axis_and_reduces(axis):
    labels, predictions = _unit(randn(2, 3, 4), axis), _unit(randn(2, 3, 4), axis)
    losses = 1 - np.sum(labels * predictions, axis=axis, keepdims=True)
    weights = np.abs(randn(*losses.shape))
    weights.flat[0] = 0
    per_element = tf.losses.cosine_distance(labels, predictions, axis=axis, weights=weights,
                                            reduction=Reduction.NONE)
    assert per_element.shape.as_list() == list(losses.shape)
    default = tf.losses.cosine_distance(labels, predictions, dim=axis, weights=weights)
    got_none, got_default = run([per_element, default])
    np.testing.assert_allclose(got_none, losses * weights, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_default, np.sum(losses * weights) / np.count_nonzero(weights),
                               rtol=1e-5)
    assert default.dtype == tf.float32 and default in tf.losses.get_losses()
    assert default.op.name == "cosine_distance_loss_1/value"  # the second loss built


def test_cosine_distance_errors():
    with pytest.raises(ValueError, match="You must specify 'axis'"):
        tf.losses.cosine_distance([[1.0]], [[1.0]])
    with pytest.raises(ValueError, match="labels must not be None"):
        tf.losses.cosine_distance(None, [[1.0]], axis=1)
    with pytest.raises(ValueError):
        tf.losses.cosine_distance(np.ones((2, 3)), np.ones((2, 4)), axis=1)


def np_pairwise(labels, predictions, weights):
    """TF's per-item formula, times the weights (broadcast against the kept item dims)."""
    diffs = (predictions - labels).reshape(len(labels), -1)
    present = np.broadcast_to(weights != 0, predictions.shape).reshape(len(labels), -1)
    n = present.sum(axis=1).astype(np.float64)
    ratio = lambda num, den: np.where(den > 0, num / np.where(den > 0, den, 1), 0)  # noqa: E731
    term1 = 2 * ratio(np.sum(diffs ** 2, 1), np.maximum(n - 1, 0))
    term2 = 2 * ratio(np.sum(diffs, 1) ** 2, np.maximum(n * (n - 1), 0))
    per_item = (term1 - term2).reshape((len(labels),) + (1,) * (labels.ndim - 1))
    return np.sum(per_item * weights)


def test_mean_pairwise_squared_error_matches_the_pairwise_mean():
    labels, predictions = randn(3, 4), randn(3, 4)
    # TF's definition: the mean over pairs (i, j) of ((p_i - p_j) - (l_i - l_j)) ** 2
    d = predictions - labels
    pairs = [np.mean([(d[b, i] - d[b, j]) ** 2 for i in range(4) for j in range(i + 1, 4)])
             for b in range(3)]
    loss = tf.losses.mean_pairwise_squared_error(labels, predictions)
    np.testing.assert_allclose(run(loss), np.sum(pairs), rtol=1e-5)
    assert loss in tf.losses.get_losses() and loss.dtype == tf.float32


@pytest.mark.parametrize("weights", [
    2.0, np.array([[[1.0]], [[0.0]], [[3.0]]], np.float32),
    np.array([[[1.0], [0.0]], [[2.0], [2.0]], [[0.0], [0.0]]], np.float32)])
def test_mean_pairwise_squared_error_weights(weights):
    labels, predictions = randn(3, 2, 3), randn(3, 2, 3)
    got = run(tf.losses.mean_pairwise_squared_error(labels, predictions, weights))
    np.testing.assert_allclose(got, np_pairwise(labels, predictions, np.asarray(weights)),
                               rtol=1e-5)


def test_mean_pairwise_squared_error_zero_weights_and_errors():
    labels, predictions = randn(2, 3), randn(2, 3)
    assert run(tf.losses.mean_pairwise_squared_error(labels, predictions, 0.0)) == 0.0
    with pytest.raises(ValueError, match="weights can not be broadcast to values"):
        tf.losses.mean_pairwise_squared_error(labels, predictions, np.ones((2, 2), np.float32))
    with pytest.raises(ValueError):
        tf.losses.mean_pairwise_squared_error(labels, randn(2, 4))
