"""`LinearClassifier` / `LinearRegressor`: training on a separable problem over numeric and
categorical columns, TF's variable names, prediction keys, label vocabulary, weight column."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tests.canned_support import (
    BINARY,
    BINARY_NAMES,
    COLOR,
    COLORS,
    MULTI,
    N,
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

LINEAR_VARS = ["linear/linear_model/bias_weights", "linear/linear_model/color/weights",
               "linear/linear_model/x/weights"]


def test_binary_classifier_learns_and_reports_tf_metrics(tmp_path: Any) -> None:
    est = tf.estimator.LinearClassifier([numeric(), color()], model_dir=str(tmp_path),
                                        config=config())
    est.train(train_input(BINARY), steps=60)
    metrics = est.evaluate(eval_input(BINARY))
    assert {"accuracy", "precision", "recall", "auc", "auc_precision_recall", "average_loss",
            "label/mean", "prediction/mean", "accuracy_baseline", "loss",
            "global_step"} == set(metrics)
    assert metrics["global_step"] == 60
    assert metrics["accuracy"] > 0.9 and metrics["auc"] > 0.95
    np.testing.assert_allclose(metrics["label/mean"], BINARY.mean(), rtol=1e-5)
    np.testing.assert_allclose(metrics["accuracy_baseline"],
                               max(BINARY.mean(), 1 - BINARY.mean()), rtol=1e-5)
    preds = predictions(est)
    check_classifier_predictions(preds, 2, [b"0", b"1"])
    assert accuracy(preds, BINARY) == pytest.approx(metrics["accuracy"])


def test_variables_are_tf_names_with_ftrl_slots(tmp_path: Any) -> None:
    est = tf.estimator.LinearClassifier([numeric(), color()], model_dir=str(tmp_path),
                                        config=config())
    est.train(train_input(BINARY), steps=1)
    names = est.get_variable_names()
    assert set(LINEAR_VARS) <= set(names)
    assert {f"{v}/Ftrl" for v in LINEAR_VARS} | {f"{v}/Ftrl_1" for v in LINEAR_VARS} \
        <= set(names)
    assert est.get_variable_value("linear/linear_model/color/weights").shape == (3, 1)
    assert est.get_variable_value("linear/linear_model/x/weights").shape == (1, 1)


def test_logits_are_the_checkpointed_linear_model(tmp_path: Any) -> None:
    est = tf.estimator.LinearClassifier([numeric(), color()], model_dir=str(tmp_path),
                                        config=config(), optimizer="SGD")
    est.train(train_input(BINARY), steps=5)
    w_x = est.get_variable_value("linear/linear_model/x/weights")
    w_color = est.get_variable_value("linear/linear_model/color/weights")
    bias = est.get_variable_value("linear/linear_model/bias_weights")
    want = X[:, None] * w_x[0] + w_color[[COLORS.index(c) for c in COLOR]] + bias
    got = np.stack([p["logits"] for p in predictions(est)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_multi_class_with_string_label_vocabulary(tmp_path: Any) -> None:
    names = np.array(["low", "mid", "high"])
    est = tf.estimator.LinearClassifier(
        [numeric(), color()], model_dir=str(tmp_path), n_classes=3,
        label_vocabulary=["low", "mid", "high"], config=config(),
        optimizer=tf.train.FtrlOptimizer(0.5))
    est.train(train_input(names[MULTI]), steps=80)
    metrics = est.evaluate(eval_input(names[MULTI]))
    assert set(metrics) == {"accuracy", "average_loss", "loss", "global_step"}
    assert metrics["accuracy"] > 0.8
    preds = predictions(est)
    check_classifier_predictions(preds, 3, [b"low", b"mid", b"high"])
    assert est.get_variable_value("linear/linear_model/color/weights").shape == (3, 3)


def test_binary_label_vocabulary(tmp_path: Any) -> None:
    est = tf.estimator.LinearClassifier([numeric(), color()], model_dir=str(tmp_path),
                                        label_vocabulary=["no", "yes"], config=config())
    est.train(train_input(BINARY_NAMES), steps=60)
    assert est.evaluate(eval_input(BINARY_NAMES))["accuracy"] > 0.9
    check_classifier_predictions(predictions(est), 2, [b"no", b"yes"])


def test_weight_column_weights_the_loss(tmp_path: Any) -> None:
    weights = np.where(BINARY == 1, 3.0, 1.0).astype(np.float32)
    est = tf.estimator.LinearClassifier([numeric(), color()], model_dir=str(tmp_path),
                                        weight_column="w", config=config())
    est.train(train_input(BINARY, weights), steps=10)
    metrics = est.evaluate(eval_input(BINARY, weights))
    weighted_mean = (weights * BINARY).sum() / weights.sum()
    np.testing.assert_allclose(metrics["label/mean"], weighted_mean, rtol=1e-5)
    assert "linear/linear_model/w/weights" not in est.get_variable_names()


def test_regressor_fits_a_linear_target(tmp_path: Any) -> None:
    est = tf.estimator.LinearRegressor([numeric(), color()], model_dir=str(tmp_path),
                                       config=config(), optimizer=tf.train.FtrlOptimizer(0.5))
    est.train(train_input(Z), steps=80)
    metrics = est.evaluate(eval_input(Z))
    assert set(metrics) == {"average_loss", "label/mean", "prediction/mean", "loss",
                            "global_step"}
    assert metrics["average_loss"] < 0.05 * Z.var()
    np.testing.assert_allclose(metrics["label/mean"], Z.mean(), atol=1e-6)
    preds = predictions(est)
    assert len(preds) == N
    assert set(preds[0]) == {"predictions"}
    assert preds[0]["predictions"].dtype == np.float32 and preds[0]["predictions"].shape == (1,)
    assert set(LINEAR_VARS) <= set(est.get_variable_names())


def test_bad_arguments_raise_tf_errors(tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="n_classes must be > 2"):
        tf.estimator.LinearClassifier([numeric()], n_classes=1)
    est = tf.estimator.LinearClassifier([numeric()], model_dir=str(tmp_path),
                                        optimizer="Nope", config=config())
    with pytest.raises(ValueError, match="Unsupported optimizer name: Nope"):
        est.train(train_input(BINARY), steps=1)
    est = tf.estimator.LinearClassifier([numeric()], model_dir=str(tmp_path / "x"),
                                        config=config())
    array_input = tf.estimator.inputs.numpy_input_fn(np.zeros((4, 1), np.float32),
                                                     BINARY[:4], shuffle=False)
    with pytest.raises(ValueError, match="features should be a dictionary"):
        est.train(array_input, steps=1)
