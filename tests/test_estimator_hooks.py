"""tw.estimator.experimental.InMemoryEvaluatorHook: evaluations during `train`, from the
training session's variables, land in the eval dir at the expected steps with the values
`Estimator.evaluate` gives for the same weights."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.estimator.early_stopping import read_eval_metrics
from tests.estimator_support import (
    closed_writer_cache,  # noqa: F401 - autouse fixture
    data,
    estimator,
    eval_input_fn,
    reference,
    train_input_fn,
)


def test_evaluates_at_start_every_n_iterations_and_at_the_end(tmp_path: Any) -> None:
    est = estimator(tmp_path)
    hook = tf.estimator.experimental.InMemoryEvaluatorHook(est, eval_input_fn(), every_n_iter=4)
    est.train(train_input_fn(), hooks=[hook], steps=10)
    history = read_eval_metrics(est.eval_dir())
    assert sorted(history) == [0, 4, 8, 10]
    x, y = data()
    # Before the first step the weights are zero: the loss is the mean of y^2.
    np.testing.assert_allclose(history[0]["loss"], np.mean(y ** 2), rtol=1e-5)
    final = reference(est, x)  # the checkpoint written at the end holds the same weights
    np.testing.assert_allclose(history[10]["mae"], np.mean(np.abs(final - y)), rtol=1e-5)
    np.testing.assert_allclose(history[10]["loss"], np.mean((final - y) ** 2), rtol=1e-5)
    assert history[4]["loss"] < history[0]["loss"]


def test_steps_name_and_hooks(tmp_path: Any) -> None:
    est = estimator(tmp_path)

    class Counter(tf.train.SessionRunHook):
        runs = 0

        def after_run(self, run_context: Any, run_values: Any) -> None:
            Counter.runs += 1

    hook = tf.contrib.estimator.InMemoryEvaluatorHook(
        est, eval_input_fn(batch_size=8), steps=2, hooks=[Counter()], name="mem",
        every_n_iter=100)
    est.train(train_input_fn(), hooks=[hook], steps=3)
    assert sorted(read_eval_metrics(est.eval_dir("mem"))) == [0, 3]
    assert Counter.runs == 4  # two evaluations of two batches each


def test_argument_errors(tmp_path: Any) -> None:
    est = estimator(tmp_path)
    with pytest.raises(ValueError, match="invalid every_n_iter=0"):
        tf.estimator.experimental.InMemoryEvaluatorHook(est, eval_input_fn(), every_n_iter=0)

    def saver_model_fn(features: Any, labels: Any, mode: str) -> Any:
        w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
        loss = tf.square(w) + 0.0 * tf.reduce_sum(features["x"])
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, train_op=tf.assign_add(tf.train.get_global_step(), 1),
            scaffold=tf.train.Scaffold(saver=tf.train.Saver()))

    custom = tf.estimator.Estimator(saver_model_fn, model_dir=str(tmp_path / "custom"))
    hook = tf.estimator.experimental.InMemoryEvaluatorHook(custom, eval_input_fn())
    with pytest.raises(ValueError, match="does not support custom saver"):
        custom.train(train_input_fn(), hooks=[hook], steps=1)
