"""The canned heads at graph level: predictions, loss and metrics against numpy, label
vocabularies, weight columns, and TF's construction errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.estimator.canned.binary_head import BinaryClassHead
from tensorweave.estimator.canned.multi_class_head import MultiClassHead
from tensorweave.estimator.canned.regression_head import RegressionHead

TRAIN, EVAL, PREDICT = (tf.estimator.ModeKeys.TRAIN, tf.estimator.ModeKeys.EVAL,
                        tf.estimator.ModeKeys.PREDICT)


def sigmoid_xent(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


def softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def run_spec(head: Any, mode: str, logits: np.ndarray, labels: Any = None,
             features: dict[str, Any] | None = None, metrics: bool = False) -> dict[str, Any]:
    """The spec's loss and predictions (and metric values after one update), evaluated; the
    tensors are built from the numpy `logits`, `labels` and `features` in a fresh graph."""
    with tf.Graph().as_default():
        tf.train.create_global_step()
        spec = head.create_estimator_spec(
            features={k: tf.constant(v) for k, v in (features or {}).items()}, mode=mode,
            logits=tf.constant(logits), labels=None if labels is None else tf.constant(labels),
            train_op_fn=(lambda loss: tf.no_op()) if mode == TRAIN else None)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            out = {"predictions": sess.run(spec.predictions)}
            if spec.loss is not None:
                out["loss"] = sess.run(spec.loss)
            if metrics:
                sess.run([update for _, update in spec.eval_metric_ops.values()])
                out["metrics"] = sess.run({k: v for k, (v, _) in spec.eval_metric_ops.items()})
            return out


LOGITS = np.array([[-1.0], [2.0], [0.5]], np.float32)
LABELS = np.array([[0.0], [1.0], [0.0]], np.float32)


def test_binary_predictions_match_numpy() -> None:
    p = run_spec(BinaryClassHead(), PREDICT, LOGITS)["predictions"]
    logistic = 1 / (1 + np.exp(-LOGITS))
    np.testing.assert_allclose(p["logistic"], logistic, rtol=1e-6)
    np.testing.assert_allclose(p["probabilities"], np.hstack([1 - logistic, logistic]),
                               rtol=1e-6)
    assert p["class_ids"].dtype == np.int64
    np.testing.assert_array_equal(p["class_ids"], [[0], [1], [1]])
    np.testing.assert_array_equal(p["classes"], [[b"0"], [b"1"], [b"1"]])
    np.testing.assert_array_equal(p["all_class_ids"], [[0, 1]] * 3)
    np.testing.assert_array_equal(p["all_classes"], [[b"0", b"1"]] * 3)


def test_binary_loss_is_the_summed_sigmoid_cross_entropy_and_metrics_match() -> None:
    out = run_spec(BinaryClassHead(), EVAL, LOGITS, LABELS, metrics=True)
    per_example = sigmoid_xent(LOGITS, LABELS)
    np.testing.assert_allclose(out["loss"], per_example.sum(), rtol=1e-5)
    m = out["metrics"]
    assert set(m) == {"accuracy", "precision", "recall", "auc", "auc_precision_recall",
                      "average_loss", "label/mean", "prediction/mean", "accuracy_baseline"}
    np.testing.assert_allclose(m["average_loss"], per_example.mean(), rtol=1e-5)
    np.testing.assert_allclose(m["accuracy"], 2 / 3, rtol=1e-6)
    np.testing.assert_allclose(m["precision"], 1 / 2, rtol=1e-6)
    np.testing.assert_allclose(m["recall"], 1.0, rtol=1e-6)
    np.testing.assert_allclose(m["label/mean"], 1 / 3, rtol=1e-6)
    np.testing.assert_allclose(m["accuracy_baseline"], 2 / 3, rtol=1e-6)
    np.testing.assert_allclose(m["prediction/mean"], np.mean(1 / (1 + np.exp(-LOGITS))),
                               rtol=1e-5)
    np.testing.assert_allclose(m["auc"], 1.0, atol=1e-3)


def test_binary_rank_one_labels_and_sum_over_batch_size() -> None:
    head = BinaryClassHead(loss_reduction=tf.losses.Reduction.SUM_OVER_BATCH_SIZE)
    out = run_spec(head, TRAIN, LOGITS, LABELS[:, 0])
    np.testing.assert_allclose(out["loss"], sigmoid_xent(LOGITS, LABELS).mean(), rtol=1e-5)


def test_binary_label_vocabulary_maps_strings_and_names_classes() -> None:
    head = BinaryClassHead(label_vocabulary=["neg", "pos"])
    labels = np.array([["neg"], ["pos"], ["neg"]], object)
    out = run_spec(head, EVAL, LOGITS, labels)
    np.testing.assert_allclose(out["loss"], sigmoid_xent(LOGITS, LABELS).sum(), rtol=1e-5)
    np.testing.assert_array_equal(out["predictions"]["classes"], [[b"neg"], [b"pos"], [b"pos"]])
    np.testing.assert_array_equal(out["predictions"]["all_classes"], [[b"neg", b"pos"]] * 3)


def test_label_outside_the_vocabulary_or_range_fails_at_run_time() -> None:
    head = BinaryClassHead(label_vocabulary=["neg", "pos"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Labels must"):
        run_spec(head, EVAL, LOGITS, np.array([["neg"], ["maybe"], ["pos"]], object))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Labels must <= n_classes - 1"):
        run_spec(BinaryClassHead(), EVAL, LOGITS, np.array([[0.0], [2.0], [1.0]], np.float32))


def test_weight_column_scales_each_example() -> None:
    weights = np.array([[1.0], [3.0], [0.5]], np.float32)
    out = run_spec(BinaryClassHead(weight_column="w"), EVAL, LOGITS, LABELS,
                   features={"w": weights[:, 0]}, metrics=True)
    per_example = sigmoid_xent(LOGITS, LABELS)
    np.testing.assert_allclose(out["loss"], (weights * per_example).sum(), rtol=1e-5)
    np.testing.assert_allclose(out["metrics"]["average_loss"],
                               (weights * per_example).sum() / weights.sum(), rtol=1e-5)
    np.testing.assert_allclose(out["metrics"]["label/mean"], 3.0 / 4.5, rtol=1e-6)


def test_multi_class_loss_predictions_and_accuracy() -> None:
    logits = np.array([[1.0, 2.0, 0.0], [3.0, -1.0, 0.5]], np.float32)
    labels = np.array([[1], [2]], np.int64)
    out = run_spec(MultiClassHead(3), EVAL, logits, labels, metrics=True)
    probs = softmax(logits)
    xent = -np.log(probs[np.arange(2), labels[:, 0]])
    np.testing.assert_allclose(out["loss"], xent.sum(), rtol=1e-5)
    p = out["predictions"]
    np.testing.assert_allclose(p["probabilities"], probs, rtol=1e-5)
    np.testing.assert_array_equal(p["class_ids"], [[1], [0]])
    np.testing.assert_array_equal(p["classes"], [[b"1"], [b"0"]])
    assert "logistic" not in p
    assert set(out["metrics"]) == {"accuracy", "average_loss"}
    np.testing.assert_allclose(out["metrics"]["accuracy"], 0.5)
    np.testing.assert_allclose(out["metrics"]["average_loss"], xent.mean(), rtol=1e-5)


def test_multi_class_checks_its_arguments_and_label_dtype() -> None:
    with pytest.raises(ValueError, match="n_classes must be > 2"):
        MultiClassHead(2)
    with pytest.raises(ValueError, match="label_vocabulary should be a list or a tuple"):
        MultiClassHead(3, label_vocabulary="abc")
    logits = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="Labels dtype should be integer"):
        run_spec(MultiClassHead(3), EVAL, logits, np.array([[1.0], [0.0]], np.float32))
    with pytest.raises(ValueError, match="Labels dtype should be string"):
        run_spec(MultiClassHead(3, label_vocabulary=["a", "b", "c"]), EVAL, logits,
                 np.array([[1], [0]], np.int64))


def test_regression_loss_metrics_and_label_dimension() -> None:
    logits = np.array([[1.0, 2.0], [0.0, -1.0]], np.float32)
    labels = np.array([[1.5, 2.0], [1.0, -3.0]], np.float32)
    out = run_spec(RegressionHead(label_dimension=2), EVAL, logits, labels,
                   metrics=True)
    np.testing.assert_allclose(out["loss"], ((logits - labels) ** 2).sum(), rtol=1e-6)
    np.testing.assert_array_equal(out["predictions"]["predictions"], logits)
    m = out["metrics"]
    assert set(m) == {"average_loss", "label/mean", "prediction/mean"}
    np.testing.assert_allclose(m["average_loss"], ((logits - labels) ** 2).mean(), rtol=1e-6)
    np.testing.assert_allclose(m["label/mean"], labels.mean(), rtol=1e-6)
    np.testing.assert_allclose(m["prediction/mean"], logits.mean(), rtol=1e-6)
    with pytest.raises(ValueError, match="Mismatched label shape"):
        run_spec(RegressionHead(label_dimension=2), EVAL, logits, labels[:, :1])


def test_bad_logits_labels_and_train_arguments_raise() -> None:
    with pytest.raises(ValueError, match="logits_dimension=1"):
        run_spec(BinaryClassHead(), PREDICT, np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match="You must provide a labels Tensor"):
        run_spec(BinaryClassHead(), EVAL, LOGITS, None)
    with pytest.raises(ValueError, match="Invalid loss_reduction"):
        BinaryClassHead(loss_reduction=tf.losses.Reduction.NONE)
    with pytest.raises(TypeError, match="label_vocabulary should be a list or a tuple"):
        BinaryClassHead(label_vocabulary="ab")
    with tf.Graph().as_default():
        head = RegressionHead()
        args = {"features": {}, "mode": TRAIN, "logits": tf.constant([[1.0]]),
                "labels": tf.constant([[1.0]])}
        with pytest.raises(ValueError, match="cannot both be None"):
            head.create_estimator_spec(**args)
        with pytest.raises(ValueError, match="cannot both be set"):
            head.create_estimator_spec(**args, optimizer=tf.train.GradientDescentOptimizer(0.1),
                                       train_op_fn=lambda loss: tf.no_op())
