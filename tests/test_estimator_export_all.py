"""Estimator.experimental_export_all_saved_models: one SavedModel with the TRAIN, EVAL and
PREDICT graphs; each loads back and runs: the TRAIN graph's train op takes a gradient step,
the EVAL graph computes the metrics, the PREDICT graph serves."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.estimator.export_all import (
    EvalOutput,
    SupervisedInputReceiver,
    TrainOutput,
    build_supervised_input_receiver_fn_from_input_fn,
)
from tests.estimator_support import (
    FEATURES,
    closed_writer_cache,  # noqa: F401 - autouse fixture
    data,
    estimator,
    eval_input_fn,
    train_input_fn,
)

ModeKeys = tf.estimator.ModeKeys
LR = 0.1  # estimator_support's learning rate


def placeholders() -> tuple[Any, Any]:
    with tf.Graph().as_default():
        return (tf.placeholder(tf.float32, [None, FEATURES], name="x"),
                tf.placeholder(tf.float32, [None, 1], name="y"))


def receiver_fns() -> dict[str, Any]:
    x, y = placeholders()
    supervised = tf.estimator.experimental.build_raw_supervised_input_receiver_fn({"x": x}, y)
    return {ModeKeys.TRAIN: supervised, ModeKeys.EVAL: supervised,
            ModeKeys.PREDICT: tf.estimator.export.build_raw_serving_input_receiver_fn({"x": x})}


@pytest.fixture
def trained(tmp_path: Any) -> tf.estimator.Estimator:
    est = estimator(tmp_path / "model")
    est.train(train_input_fn(), steps=5)
    return est


def numpy_model(est: tf.estimator.Estimator) -> tuple[np.ndarray, np.ndarray]:
    return est.get_variable_value("w"), est.get_variable_value("b")


def test_all_three_graphs_are_exported_and_run(trained: tf.estimator.Estimator,
                                               tmp_path: Any) -> None:
    path = trained.experimental_export_all_saved_models(str(tmp_path / "export"),
                                                        receiver_fns())
    assert isinstance(path, bytes)
    assert os.path.dirname(path) == os.fsencode(tmp_path / "export")
    x, y = data()
    w, b = numpy_model(trained)
    pred = x @ w + b

    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["train"], path)
        sig = meta.signature_def["train"]
        assert sig.method_name == "tensorflow/supervised/training"
        assert set(sig.inputs) == {"x", "label"}
        assert set(sig.outputs) == {"loss", "metrics/mae/value", "metrics/mae/update_op"}
        feeds = {sig.inputs["x"].name: x, sig.inputs["label"].name: y}
        loss = sess.run(sig.outputs["loss"].name, feeds)
        np.testing.assert_allclose(loss, np.mean((pred - y) ** 2), rtol=1e-5)
        (train_op,) = tf.get_collection("saved_model_train_op")
        sess.run(train_op, feeds)
        variables = {v.op.name: v for v in tf.global_variables()}
        new_w, new_b, new_step = sess.run([variables["w"], variables["b"],
                                           variables["global_step"]])
    # One gradient-descent step on the mean squared error, from the checkpoint's weights.
    residual = pred - y
    np.testing.assert_allclose(new_w, w - LR * 2 * x.T @ residual / len(x), rtol=1e-4)
    np.testing.assert_allclose(new_b, b - LR * 2 * residual.mean(0), rtol=1e-4)
    assert new_step == 6

    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["eval"], path)
        sig = meta.signature_def["eval"]
        assert sig.method_name == "tensorflow/supervised/eval"
        feeds = {sig.inputs["x"].name: x[:32], sig.inputs["label"].name: y[:32]}
        sess.run(sig.outputs["metrics/mae/update_op"].name, feeds)
        feeds = {sig.inputs["x"].name: x[32:], sig.inputs["label"].name: y[32:]}
        sess.run(sig.outputs["metrics/mae/update_op"].name, feeds)
        mae = sess.run(sig.outputs["metrics/mae/value"].name)
        loss = sess.run(sig.outputs["loss"].name, feeds)
    np.testing.assert_allclose(mae, np.mean(np.abs(pred - y)), rtol=1e-5)
    np.testing.assert_allclose(loss, np.mean((pred[32:] - y[32:]) ** 2), rtol=1e-5)

    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.SERVING], path)
        sig = meta.signature_def["serving_default"]
        served = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: x})
        assert tf.get_collection("saved_model_train_op") == []  # PREDICT has no train op
    np.testing.assert_allclose(served, pred, rtol=1e-5, atol=1e-6)


def test_export_saved_model_with_experimental_mode_exports_that_mode_only(
        trained: tf.estimator.Estimator, tmp_path: Any) -> None:
    fns = receiver_fns()
    path = trained.export_saved_model(str(tmp_path / "e"), fns[ModeKeys.EVAL],
                                      experimental_mode=ModeKeys.EVAL)
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["eval"], path)
        assert list(meta.signature_def) == ["eval"]
        with pytest.raises(RuntimeError, match="MetaGraphDef associated with tags"):
            tf.saved_model.loader.load(sess, [tf.saved_model.SERVING], path)
    contrib_path = tf.contrib.estimator.export_all_saved_models(
        trained, str(tmp_path / "c"), {ModeKeys.TRAIN: fns[ModeKeys.TRAIN]})
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["train"], contrib_path)
        assert list(meta.signature_def) == ["train"]


def test_export_all_errors(trained: tf.estimator.Estimator, tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="No valid modes for exporting found"):
        trained.experimental_export_all_saved_models(str(tmp_path / "e"), {"other": lambda: 0})
    untrained = estimator(tmp_path / "untrained")
    with pytest.raises(ValueError, match="Couldn't find trained model"):
        untrained.experimental_export_all_saved_models(str(tmp_path / "u"), receiver_fns())
    assert not (tmp_path / "e").exists() and not (tmp_path / "u").exists()


def test_raw_supervised_receiver_fn_feeds_placeholders_like_the_tensors() -> None:
    x, y = placeholders()
    with tf.Graph().as_default():
        receiver = tf.estimator.experimental.build_raw_supervised_input_receiver_fn(
            x, y, default_batch_size=5)()
        assert set(receiver.receiver_tensors) == {"feature", "label"}
        assert receiver.features is receiver.receiver_tensors["feature"]
        assert receiver.features.get_shape().as_list() == [5, FEATURES]
        assert receiver.labels.dtype == tf.float32
        assert receiver.labels.op.type == "Placeholder"
        named = tf.estimator.experimental.build_raw_supervised_input_receiver_fn(
            {"x": x}, {"y": y})()
        assert set(named.receiver_tensors) == {"x", "y"}
        assert named.features["x"].get_shape().as_list() == [None, FEATURES]
    with pytest.raises(ValueError, match="Features and labels must have distinct keys"):
        tf.estimator.experimental.build_raw_supervised_input_receiver_fn({"x": x}, {"x": y})


def test_receiver_fn_from_input_fn_follows_its_features_and_labels() -> None:
    fn = build_supervised_input_receiver_fn_from_input_fn(eval_input_fn())
    with tf.Graph().as_default():
        receiver = fn()
        assert set(receiver.receiver_tensors) == {"x", "label"}
        assert receiver.features["x"].dtype == tf.float32
        assert receiver.features["x"].get_shape().as_list()[1:] == [FEATURES]
        assert receiver.labels.get_shape().as_list()[1:] == [1]


def test_supervised_receiver_checks_its_tensors() -> None:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        receiver = SupervisedInputReceiver({"x": x}, x, x)
        assert receiver.receiver_tensors == {"input": x}
        with pytest.raises(ValueError, match="features must be defined"):
            SupervisedInputReceiver(None, x, x)
        with pytest.raises(ValueError, match="label must be a Tensor"):
            SupervisedInputReceiver(x, np.ones(2), x)
        with pytest.raises(ValueError, match="feature x must be a Tensor"):
            SupervisedInputReceiver({"x": 3}, x, x)


def test_supervised_outputs_name_their_tensors() -> None:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        loss = tf.reduce_sum(x)
        value, update = tf.metrics.mean(x)
        update_op = tf.group(update)
        out = TrainOutput(loss=loss, predictions={"y": x, "predictions/z": x},
                          metrics={"m": (value, update_op)})
        assert out.loss == {"loss": loss}
        assert out.predictions == {"predictions/y": x, "predictions/z": x}
        assert set(out.metrics) == {"metrics/m/value", "metrics/m/update_op"}
        wrapped = out.metrics["metrics/m/update_op"]
        assert isinstance(wrapped, tf.Tensor)
        assert update_op in wrapped.op.control_inputs
        single = EvalOutput(loss=loss, predictions=x)
        assert single.predictions == {"predictions": x}
        sig = single.as_signature_def({"x": x})
        assert sig.method_name == "tensorflow/supervised/eval"
        assert set(sig.outputs) == {"loss", "predictions"}
        with pytest.raises(ValueError, match="inputs cannot be None or empty"):
            single.as_signature_def({})
        with pytest.raises(ValueError, match="metrics output value must be a dict"):
            EvalOutput(metrics=[value])
        with pytest.raises(ValueError, match="update_op must be a Tensor or Operation"):
            EvalOutput(metrics={"m": (value, 3)})
        with pytest.raises(ValueError, match="loss output value must be a Tensor"):
            EvalOutput(loss=3.0)
