"""Shared by the tw.estimator tests: a small linear-regression problem, its `model_fn`, a
hook that records the loss of every training step, and the numpy reference of the model."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.namespaces.summary import FileWriterCache

N, FEATURES = 64, 3
TRUE_W = np.array([[1.0], [-2.0], [0.5]], np.float32)
TRUE_B = 0.3


@pytest.fixture(autouse=True)
def closed_writer_cache() -> Iterator[None]:
    """Training and evaluation open cached summary writers: close them."""
    yield
    FileWriterCache.clear()


def data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    x = rng.randn(N, FEATURES).astype(np.float32)
    return x, (x @ TRUE_W + TRUE_B).astype(np.float32)


def linear_model_fn(features: Any, labels: Any, mode: str, params: dict[str, Any]) -> Any:
    """``y = x @ w + b`` with a mean squared error, trained by gradient descent; an ``mae``
    metric; predictions ``{"y": ..., "double": 2 y}``."""
    x = features["x"] if isinstance(features, dict) else features
    w = tf.get_variable("w", [FEATURES, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    pred = tf.matmul(x, w) + b
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": pred, "double": 2.0 * pred})
    loss = tf.reduce_mean(tf.square(pred - labels))
    train_op = tf.train.GradientDescentOptimizer(params.get("lr", 0.1)).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op,
        eval_metric_ops={"mae": tf.metrics.mean_absolute_error(labels, pred)})


def train_input_fn(batch_size: int = 16) -> Any:
    x, y = data()
    return tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=batch_size,
                                              num_epochs=None, shuffle=True)


def eval_input_fn(batch_size: int = 16) -> Any:
    x, y = data()
    return tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=batch_size,
                                              shuffle=False)


def estimator(model_dir: Any, **config: Any) -> tf.estimator.Estimator:
    config.setdefault("log_step_count_steps", None)
    return tf.estimator.Estimator(linear_model_fn, model_dir=str(model_dir), params={"lr": 0.1},
                                  config=tf.estimator.RunConfig(**config))


def reference(est: tf.estimator.Estimator, x: np.ndarray) -> np.ndarray:
    """The trained model's predictions, computed with numpy from its checkpoint."""
    return x @ est.get_variable_value("w") + est.get_variable_value("b")


class LossRecorder(tf.train.SessionRunHook):
    """Fetches the loss (the graph's ``LOSSES`` collection) with every run."""

    def __init__(self) -> None:
        self.losses: list[float] = []

    def begin(self) -> None:
        self._loss = tf.get_collection(tf.GraphKeys.LOSSES)[0]

    def before_run(self, run_context: Any) -> Any:
        return tf.train.SessionRunArgs(self._loss)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        self.losses.append(float(run_values.results))
