"""Shared by the canned-estimator tests: a small separable problem over a numeric and a
categorical feature, its input functions, and helpers to check predictions."""

from __future__ import annotations

from typing import Any

import numpy as np

import tensorweave as tf
from tests.estimator_support import closed_writer_cache  # noqa: F401 - re-exported fixture

N = 96
COLORS = ["red", "green", "blue"]
_SHIFT = {"red": 1.5, "green": -1.5, "blue": 0.0}

_rng = np.random.RandomState(0)
X = _rng.randn(N).astype(np.float32)
COLOR = _rng.choice(COLORS, N)
# A linear score of both features: the labels below are separable by it.
Z = (2.0 * X + np.array([_SHIFT[c] for c in COLOR], np.float32)).astype(np.float32)
BINARY = (Z > 0).astype(np.int64)
MULTI = np.digitize(Z, [-1.0, 1.0]).astype(np.int64)
BINARY_NAMES = np.array(["no", "yes"])[BINARY]


def numeric() -> Any:
    return tf.feature_column.numeric_column("x")


def color() -> Any:
    return tf.feature_column.categorical_column_with_vocabulary_list("color", COLORS)


def features(weights: np.ndarray | None = None) -> dict[str, np.ndarray]:
    out = {"x": X, "color": COLOR}
    if weights is not None:
        out["w"] = weights
    return out


def train_input(labels: np.ndarray, weights: np.ndarray | None = None) -> Any:
    return tf.estimator.inputs.numpy_input_fn(features(weights), labels, batch_size=32,
                                              num_epochs=None, shuffle=True)


def eval_input(labels: np.ndarray, weights: np.ndarray | None = None) -> Any:
    return tf.estimator.inputs.numpy_input_fn(features(weights), labels, batch_size=32,
                                              num_epochs=1, shuffle=False)


def config() -> Any:
    return tf.estimator.RunConfig(log_step_count_steps=None, tf_random_seed=7)


def predictions(est: Any) -> list[dict[str, np.ndarray]]:
    return list(est.predict(eval_input(BINARY)))


def check_classifier_predictions(preds: list[dict[str, np.ndarray]], n_classes: int,
                                 names: list[bytes]) -> None:
    """TF's classifier prediction keys, shapes and dtypes, consistent with each other."""
    expected = {"logits", "probabilities", "class_ids", "classes", "all_class_ids",
                "all_classes"} | ({"logistic"} if n_classes == 2 else set())
    assert len(preds) == N
    for p in preds:
        assert set(p) == expected
        assert p["logits"].dtype == np.float32
        assert p["logits"].shape == ((1,) if n_classes == 2 else (n_classes,))
        assert p["probabilities"].shape == (n_classes,)
        np.testing.assert_allclose(p["probabilities"].sum(), 1.0, rtol=1e-5)
        assert p["class_ids"].dtype == np.int64 and p["class_ids"].shape == (1,)
        assert p["class_ids"][0] == np.argmax(p["probabilities"])
        assert p["classes"].shape == (1,) and p["classes"][0] == names[p["class_ids"][0]]
        np.testing.assert_array_equal(p["all_class_ids"], np.arange(n_classes))
        assert list(p["all_classes"]) == names
        if n_classes == 2:
            np.testing.assert_allclose(p["logistic"], 1 / (1 + np.exp(-p["logits"])),
                                       rtol=1e-5)


def accuracy(preds: list[dict[str, np.ndarray]], labels: np.ndarray) -> float:
    return float(np.mean([p["class_ids"][0] for p in preds] == labels))
