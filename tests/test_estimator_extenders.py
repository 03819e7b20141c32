"""tw.estimator.add_metrics and tw.contrib.estimator.forward_features: wrapped estimators on
the same model_dir evaluate extra metrics and predict (and serve) forwarded features."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tests.estimator_support import (
    FEATURES,
    closed_writer_cache,  # noqa: F401 - autouse fixture
    data,
    estimator,
    eval_input_fn,
    reference,
    train_input_fn,
)


@pytest.fixture
def trained(tmp_path: Any) -> tf.estimator.Estimator:
    est = estimator(tmp_path)
    est.train(train_input_fn(), steps=5)
    return est


def test_add_metrics_evaluates_the_new_metrics_too(trained: tf.estimator.Estimator) -> None:
    def metric_fn(labels: Any, predictions: Any, features: Any, config: Any) -> Any:
        assert isinstance(config, tf.estimator.RunConfig)
        assert set(features) == {"x"}
        # linear_model_fn gives no predictions in EVAL mode: TF passes the spec's as is.
        assert predictions == {}
        return {"max_x": tf.metrics.mean(tf.reduce_max(features["x"])),
                "mae": tf.metrics.mean(tf.zeros_like(labels))}

    wrapped = tf.estimator.add_metrics(trained, metric_fn)
    assert wrapped.model_dir == trained.model_dir
    metrics = wrapped.evaluate(eval_input_fn(batch_size=64))
    x, y = data()
    np.testing.assert_allclose(metrics["max_x"], x.max(), rtol=1e-6)
    assert metrics["mae"] == 0.0  # the new metric replaces the model's own
    np.testing.assert_allclose(metrics["loss"], np.mean((reference(trained, x) - y) ** 2),
                               rtol=1e-5)
    assert metrics["global_step"] == 5
    assert tf.contrib.estimator.add_metrics is tf.estimator.add_metrics


def test_add_metrics_rejects_unknown_metric_fn_args(trained: tf.estimator.Estimator) -> None:
    with pytest.raises(ValueError, match=r"has following not expected args: \['mode'\]"):
        tf.estimator.add_metrics(trained, lambda labels, mode: {})


def test_forward_features_adds_features_to_predictions_and_exports(
        trained: tf.estimator.Estimator, tmp_path: Any) -> None:
    x, _ = data()
    ids = np.arange(len(x), dtype=np.int64)
    wrapped = tf.contrib.estimator.forward_features(trained, "id")
    input_fn = tf.estimator.inputs.numpy_input_fn({"x": x, "id": ids}, batch_size=16,
                                                  shuffle=False)
    predictions = list(wrapped.predict(input_fn))
    assert [p["id"] for p in predictions] == list(ids)
    np.testing.assert_allclose([p["y"][0] for p in predictions], reference(trained, x)[:, 0],
                               rtol=1e-5, atol=1e-6)
    with tf.Graph().as_default():
        feeds = {"x": tf.placeholder(tf.float32, [None, FEATURES]),
                 "id": tf.placeholder(tf.int64, [None])}
    path = wrapped.export_saved_model(
        str(tmp_path / "export"), tf.estimator.export.build_raw_serving_input_receiver_fn(feeds))
    with tf.Graph().as_default(), tf.Session() as sess:
        sig = tf.saved_model.loader.load(sess, ["serve"], path).signature_def["serving_default"]
        assert set(sig.outputs) == {"y", "double", "id"}
        served = sess.run(sig.outputs["id"].name, {sig.inputs["x"].name: x[:3],
                                                   sig.inputs["id"].name: ids[:3] + 7})
    np.testing.assert_array_equal(served, ids[:3] + 7)


def test_forward_features_densifies_sparse_features(trained: tf.estimator.Estimator) -> None:
    x, _ = data()

    def input_fn() -> Any:
        dense = tf.constant(x[:4])
        sparse = tf.SparseTensor([[0, 0], [2, 1]], tf.constant([5, 6], tf.int64), [4, 2])
        return {"x": dense, "s": sparse}  # one batch, read once below

    wrapped = tf.contrib.estimator.forward_features(trained, ["s"],
                                                    sparse_default_values={"s": -1})
    got = next(wrapped.predict(input_fn, yield_single_examples=False))
    np.testing.assert_array_equal(got["s"], [[5, -1], [-1, -1], [-1, 6], [-1, -1]])
    unfilled = tf.contrib.estimator.forward_features(trained, "s")
    with pytest.raises(ValueError, match=r"Feature \(s\) should be a Tensor"):
        next(unfilled.predict(input_fn))


def test_forward_features_errors(trained: tf.estimator.Estimator) -> None:
    with pytest.raises(TypeError, match="keys should be either a string or a list"):
        tf.contrib.estimator.forward_features(trained, ("x",))
    with pytest.raises(TypeError, match="All items in the given keys list should be a string"):
        tf.contrib.estimator.forward_features(trained, ["x", 1])
    x, _ = data()
    input_fn = tf.estimator.inputs.numpy_input_fn({"x": x}, batch_size=16, shuffle=False)
    with pytest.raises(ValueError, match='Key "id" is not in features dict'):
        next(tf.contrib.estimator.forward_features(trained, "id").predict(input_fn))
    clashing = tf.contrib.estimator.forward_features(trained, "x")

    with pytest.raises(ValueError, match=r"Cannot forward feature key \(y\)"):
        next(tf.contrib.estimator.forward_features(trained, "y").predict(
            tf.estimator.inputs.numpy_input_fn({"x": x, "y": x}, batch_size=16,
                                               shuffle=False)))
    assert next(clashing.predict(input_fn))["x"].shape == (FEATURES,)
