"""`DNNClassifier` / `DNNRegressor`: training on a separable problem (numeric, embedding and
indicator columns), TF's variable names (hidden layers, logits, embeddings, batch norm),
prediction keys, label vocabulary, weight column, dropout and optimizer arguments."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tests.canned_support import (
    BINARY,
    BINARY_NAMES,
    MULTI,
    X,
    Z,
    accuracy,
    check_classifier_predictions,
    closed_writer_cache,  # noqa: F401 - autouse fixture
    color,
    config,
    eval_input,
    numeric,
    predictions,
    train_input,
)

EMBEDDING = "dnn/input_from_feature_columns/input_layer/color_embedding/embedding_weights"
NETWORK = ["dnn/hiddenlayer_0/kernel", "dnn/hiddenlayer_0/bias", "dnn/logits/kernel",
           "dnn/logits/bias"]


def columns() -> list[Any]:
    return [numeric(), tf.feature_column.embedding_column(color(), 2)]


def test_binary_classifier_learns_with_tf_names(tmp_path: Any) -> None:
    est = tf.estimator.DNNClassifier([6], columns(), model_dir=str(tmp_path), config=config(),
                                     optimizer=tf.train.AdagradOptimizer(0.3))
    est.train(train_input(BINARY), steps=60)
    metrics = est.evaluate(eval_input(BINARY))
    assert metrics["accuracy"] > 0.9 and metrics["auc"] > 0.95
    assert {"precision", "recall", "average_loss", "label/mean", "prediction/mean",
            "accuracy_baseline", "auc_precision_recall"} <= set(metrics)
    names = est.get_variable_names()
    assert set(NETWORK) | {EMBEDDING} <= set(names)
    assert est.get_variable_value("dnn/hiddenlayer_0/kernel").shape == (3, 6)
    assert est.get_variable_value("dnn/logits/kernel").shape == (6, 1)
    assert est.get_variable_value(EMBEDDING).shape == (3, 2)
    preds = predictions(est)
    check_classifier_predictions(preds, 2, [b"0", b"1"])
    assert accuracy(preds, BINARY) == pytest.approx(metrics["accuracy"])


def test_logits_are_the_checkpointed_relu_network(tmp_path: Any) -> None:
    est = tf.estimator.DNNRegressor([4, 3], [numeric()], model_dir=str(tmp_path),
                                    config=config())
    est.train(train_input(Z), steps=3)
    value = est.get_variable_value
    net = X[:, None]
    for layer in ("hiddenlayer_0", "hiddenlayer_1"):
        net = np.maximum(net @ value(f"dnn/{layer}/kernel") + value(f"dnn/{layer}/bias"), 0)
    want = net @ value("dnn/logits/kernel") + value("dnn/logits/bias")
    got = np.stack([p["predictions"] for p in predictions(est)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert any(n.endswith("/Adagrad") for n in est.get_variable_names())


def test_multi_class_with_label_vocabulary_and_indicator_column(tmp_path: Any) -> None:
    names = np.array(["low", "mid", "high"])
    est = tf.estimator.DNNClassifier(
        [8], [numeric(), tf.feature_column.indicator_column(color())], n_classes=3,
        label_vocabulary=["low", "mid", "high"], model_dir=str(tmp_path), config=config(),
        optimizer=tf.train.AdamOptimizer(0.05))
    est.train(train_input(names[MULTI]), steps=80)
    metrics = est.evaluate(eval_input(names[MULTI]))
    assert set(metrics) == {"accuracy", "average_loss", "loss", "global_step"}
    assert metrics["accuracy"] > 0.8
    check_classifier_predictions(predictions(est), 3, [b"low", b"mid", b"high"])
    assert est.get_variable_value("dnn/logits/kernel").shape == (8, 3)


def test_binary_label_vocabulary_and_weight_column(tmp_path: Any) -> None:
    weights = np.where(BINARY == 1, 2.0, 1.0).astype(np.float32)
    est = tf.estimator.DNNClassifier([4], columns(), label_vocabulary=["no", "yes"],
                                     weight_column="w", model_dir=str(tmp_path),
                                     config=config(), optimizer="Adam")
    est.train(train_input(BINARY_NAMES, weights), steps=5)
    metrics = est.evaluate(eval_input(BINARY_NAMES, weights))
    np.testing.assert_allclose(metrics["label/mean"],
                               (weights * BINARY).sum() / weights.sum(), rtol=1e-5)
    check_classifier_predictions(predictions(est), 2, [b"no", b"yes"])


def test_batch_norm_variables_and_dropout(tmp_path: Any) -> None:
    est = tf.estimator.DNNClassifier([4, 3], columns(), batch_norm=True, dropout=0.2,
                                     activation_fn=tf.nn.tanh, model_dir=str(tmp_path),
                                     config=config())
    est.train(train_input(BINARY), steps=3)
    names = set(est.get_variable_names())
    for i in (0, 1):
        for v in ("beta", "gamma", "moving_mean", "moving_variance"):
            assert f"dnn/hiddenlayer_{i}/batchnorm_{i}/{v}" in names
    # The train op also ran the moving-average updates.
    moving_mean = est.get_variable_value("dnn/hiddenlayer_0/batchnorm_0/moving_mean")
    assert np.any(moving_mean != 0.0)
    # No dropout outside TRAIN: prediction is deterministic.
    first = [p["logits"] for p in predictions(est)]
    np.testing.assert_array_equal(first, [p["logits"] for p in predictions(est)])


def test_regressor_with_label_dimension_two(tmp_path: Any) -> None:
    labels = np.stack([Z, -Z], 1).astype(np.float32)
    est = tf.estimator.DNNRegressor([6], columns(), label_dimension=2, model_dir=str(tmp_path),
                                    config=config(), optimizer=tf.train.AdagradOptimizer(0.3))
    est.train(train_input(labels), steps=80)
    metrics = est.evaluate(eval_input(labels))
    assert set(metrics) == {"average_loss", "label/mean", "prediction/mean", "loss",
                            "global_step"}
    assert metrics["average_loss"] < 0.2 * labels.var()
    preds = predictions(est)
    assert preds[0]["predictions"].shape == (2,)
    assert preds[0]["predictions"].dtype == np.float32


def test_bad_arguments_raise(tmp_path: Any) -> None:
    est = tf.estimator.DNNClassifier([2], columns(), model_dir=str(tmp_path), config=config(),
                                     optimizer=object())
    with pytest.raises(ValueError, match="The given object is not an Optimizer instance"):
        est.train(train_input(BINARY), steps=1)
    est = tf.estimator.DNNClassifier([2], [color()], model_dir=str(tmp_path / "x"),
                                     config=config())
    with pytest.raises(ValueError, match="must be a _DenseColumn"):
        est.train(train_input(BINARY), steps=1)
