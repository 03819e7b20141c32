"""`BaselineClassifier` / `BaselineRegressor`: one bias per logit that learns the label
distribution, ``baseline/bias``, TF's prediction keys."""

from __future__ import annotations

from typing import Any

import numpy as np

import tensorweave as tf
from tests.canned_support import (
    BINARY,
    MULTI,
    Z,
    check_classifier_predictions,
    closed_writer_cache,  # noqa: F401 - autouse fixture
    config,
    eval_input,
    predictions,
    train_input,
)


def test_classifier_learns_the_class_frequencies(tmp_path: Any) -> None:
    est = tf.estimator.BaselineClassifier(
        model_dir=str(tmp_path), n_classes=3, config=config(),
        optimizer=lambda: tf.train.GradientDescentOptimizer(0.01))
    est.train(train_input(MULTI), steps=100)
    freq = np.bincount(MULTI, minlength=3) / len(MULTI)
    preds = predictions(est)
    check_classifier_predictions(preds, 3, [b"0", b"1", b"2"])
    np.testing.assert_allclose(preds[0]["probabilities"], freq, atol=0.05)
    assert est.get_variable_value("baseline/bias").shape == (3,)
    metrics = est.evaluate(eval_input(MULTI))
    np.testing.assert_allclose(metrics["accuracy"], freq.max(), rtol=1e-5)


def test_binary_classifier_accuracy_is_the_baseline(tmp_path: Any) -> None:
    est = tf.estimator.BaselineClassifier(model_dir=str(tmp_path), config=config())
    est.train(train_input(BINARY), steps=40)
    metrics = est.evaluate(eval_input(BINARY))
    np.testing.assert_allclose(metrics["accuracy"], metrics["accuracy_baseline"], rtol=1e-6)
    check_classifier_predictions(predictions(est), 2, [b"0", b"1"])
    assert "baseline/bias/Ftrl" in est.get_variable_names()


def test_regressor_learns_the_label_mean(tmp_path: Any) -> None:
    est = tf.estimator.BaselineRegressor(model_dir=str(tmp_path), config=config(),
                                         optimizer=tf.train.GradientDescentOptimizer(0.005))
    est.train(train_input(Z), steps=100)
    bias = est.get_variable_value("baseline/bias")
    np.testing.assert_allclose(bias, [Z.mean()], atol=0.15)
    preds = predictions(est)
    assert set(preds[0]) == {"predictions"}
    np.testing.assert_allclose([p["predictions"][0] for p in preds], bias[0], rtol=1e-6)
