"""`DNNLinearCombinedClassifier` / `DNNLinearCombinedRegressor`: both parts train with their own
optimizer over their own variables, TF's names, one global step per train step, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tests.canned_support import (
    BINARY,
    MULTI,
    X,
    Z,
    check_classifier_predictions,
    closed_writer_cache,  # noqa: F401 - autouse fixture
    color,
    config,
    eval_input,
    numeric,
    predictions,
    train_input,
)


def test_classifier_trains_both_parts_with_their_optimizers(tmp_path: Any) -> None:
    est = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path), linear_feature_columns=[color(), numeric()],
        dnn_feature_columns=[numeric()], dnn_hidden_units=[4], config=config(),
        linear_optimizer=tf.train.FtrlOptimizer(0.5),
        dnn_optimizer=tf.train.GradientDescentOptimizer(0.05))
    est.train(train_input(BINARY), steps=60)
    metrics = est.evaluate(eval_input(BINARY))
    assert metrics["global_step"] == 60
    assert metrics["accuracy"] > 0.9
    names = set(est.get_variable_names())
    assert {"linear/linear_model/color/weights", "linear/linear_model/x/weights",
            "linear/linear_model/bias_weights", "dnn/hiddenlayer_0/kernel",
            "dnn/hiddenlayer_0/bias", "dnn/logits/kernel", "dnn/logits/bias"} <= names
    # Ftrl slots only on the linear part; plain gradient descent has none.
    assert "linear/linear_model/x/weights/Ftrl" in names
    assert not any(n.startswith("dnn/") and "Ftrl" in n for n in names)
    check_classifier_predictions(predictions(est), 2, [b"0", b"1"])


def test_logits_are_the_sum_of_both_parts(tmp_path: Any) -> None:
    est = tf.estimator.DNNLinearCombinedRegressor(
        model_dir=str(tmp_path), linear_feature_columns=[numeric()],
        dnn_feature_columns=[numeric()], dnn_hidden_units=[3], config=config(),
        linear_optimizer="SGD", dnn_optimizer="SGD")
    est.train(train_input(Z), steps=4)
    v = est.get_variable_value
    x = X[:, None]
    hidden = np.maximum(x @ v("dnn/hiddenlayer_0/kernel") + v("dnn/hiddenlayer_0/bias"), 0)
    dnn = hidden @ v("dnn/logits/kernel") + v("dnn/logits/bias")
    linear = x * v("linear/linear_model/x/weights")[0] + v("linear/linear_model/bias_weights")
    got = np.stack([p["predictions"] for p in predictions(est)])
    np.testing.assert_allclose(got, dnn + linear, rtol=1e-5, atol=1e-6)


def test_only_one_part_and_multi_class(tmp_path: Any) -> None:
    est = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path), linear_feature_columns=[color(), numeric()], n_classes=3,
        config=config(), linear_optimizer=tf.train.FtrlOptimizer(0.5))
    est.train(train_input(MULTI), steps=60)
    assert est.evaluate(eval_input(MULTI))["accuracy"] > 0.8
    assert not any(n.startswith("dnn/") for n in est.get_variable_names())
    check_classifier_predictions(predictions(est), 3, [b"0", b"1", b"2"])


def test_missing_columns_or_hidden_units_raise(tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="Either linear_feature_columns or dnn_feature_columns"):
        tf.estimator.DNNLinearCombinedClassifier()
    with pytest.raises(ValueError, match="Either linear_feature_columns or dnn_feature_columns"):
        tf.estimator.DNNLinearCombinedRegressor()
    est = tf.estimator.DNNLinearCombinedRegressor(
        model_dir=str(tmp_path), dnn_feature_columns=[numeric()], config=config())
    with pytest.raises(ValueError, match="dnn_hidden_units must be defined"):
        est.train(train_input(Z), steps=1)
