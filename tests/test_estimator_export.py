"""tw.estimator.export (serving input receivers, export outputs, signatures), the canned heads'
export outputs, and Estimator.export_saved_model: the SavedModel it writes loads with
``tw.saved_model.loader.load`` and serves the estimator's own predictions."""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.estimator.canned.binary_head import BinaryClassHead
from tensorweave.estimator.canned.multi_class_head import MultiClassHead
from tensorweave.estimator.canned.regression_head import RegressionHead
from tensorweave.estimator.export import (
    build_all_signature_defs,
    get_temp_export_dir,
    get_timestamped_export_dir,
)
from tests.canned_support import BINARY, COLOR, COLORS, X, Z, color, numeric, train_input
from tests.canned_support import config as canned_config
from tests.estimator_support import (
    FEATURES,
    closed_writer_cache,  # noqa: F401 - autouse fixture
    data,
    estimator,
    reference,
    train_input_fn,
)

export = tf.estimator.export
PREDICT, TRAIN = tf.estimator.ModeKeys.PREDICT, tf.estimator.ModeKeys.TRAIN
CLASSIFY = "tensorflow/serving/classify"
REGRESS = "tensorflow/serving/regress"
PREDICT_METHOD = "tensorflow/serving/predict"


def example(x: float, colour: str) -> bytes:
    return tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[x])),
        "color": tf.train.Feature(bytes_list=tf.train.BytesList(value=[colour.encode()])),
    })).SerializeToString()


def serve(path: Any, signature: str, feeds: dict[str, Any]) -> dict[str, np.ndarray]:
    """Load the SavedModel at `path` in a fresh graph and run `signature` on `feeds` (keyed by
    the signature's input names)."""
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.SERVING], path)
        sig = meta.signature_def[signature]
        return sess.run({k: v.name for k, v in sig.outputs.items()},
                        {sig.inputs[k].name: v for k, v in feeds.items()})


def signatures(path: Any) -> dict[str, Any]:
    with tf.Graph().as_default(), tf.Session() as sess:
        return dict(tf.saved_model.loader.load(sess, ["serve"], path).signature_def)


# -- receivers --------------------------------------------------------------------------------

def test_receiver_wraps_single_tensors_and_checks_them() -> None:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        receiver = export.ServingInputReceiver(x, x)
        assert receiver.features == {"feature": x}
        assert receiver.receiver_tensors == {"input": x}
        assert receiver.receiver_tensors_alternatives is None
        assert export.ServingInputReceiver({3: x}, {"in": x}).features == {3: x}
        alternatives = export.ServingInputReceiver(x, x, {"raw": x})
        assert alternatives.receiver_tensors_alternatives == {"raw": {"input": x}}
        sparse = tf.SparseTensor([[0, 0]], [1.0], [1, 1])
        assert export.ServingInputReceiver({"s": sparse}, x).features["s"] is sparse
        with pytest.raises(ValueError, match="features must be defined"):
            export.ServingInputReceiver(None, x)
        with pytest.raises(ValueError, match="feature x must be a Tensor, SparseTensor"):
            export.ServingInputReceiver({"x": np.ones(2)}, x)
        with pytest.raises(ValueError, match="receiver_tensor keys must be strings: 3"):
            export.ServingInputReceiver(x, {3: x})
        with pytest.raises(ValueError, match="feature keys must be strings or ints"):
            export.ServingInputReceiver({1.5: x}, x)
        with pytest.raises(ValueError, match="receiver_tensors_alternatives must be a dict"):
            export.ServingInputReceiver(x, x, [x])


def test_tensor_receiver_passes_its_one_feature_as_is() -> None:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        receiver = export.TensorServingInputReceiver(x, {"in": x})
        assert receiver.features is x and receiver.receiver_tensors == {"in": x}
        with pytest.raises(ValueError, match="feature must be a Tensor"):
            export.TensorServingInputReceiver({"x": x}, x)


def test_parsing_receiver_parses_serialized_examples() -> None:
    spec = tf.feature_column.make_parse_example_spec([numeric(), color()])
    with tf.Graph().as_default():
        receiver = export.build_parsing_serving_input_receiver_fn(spec)()
        serialized = receiver.receiver_tensors["examples"]
        assert serialized.name == "input_example_tensor:0"
        assert serialized.dtype == tf.string and serialized.shape.as_list() == [None]
        with tf.Session() as sess:
            x, colours = sess.run([receiver.features["x"], receiver.features["color"]],
                                  {serialized: [example(1.5, "red"), example(-2.0, "blue")]})
        np.testing.assert_array_equal(x, np.array([[1.5], [-2.0]], np.float32))
        assert x.dtype == np.float32
        assert list(colours.values) == [b"red", b"blue"]
    with tf.Graph().as_default():
        fixed = export.build_parsing_serving_input_receiver_fn(spec, default_batch_size=4)()
        assert fixed.receiver_tensors["examples"].shape.as_list() == [4]


def test_raw_receiver_feeds_placeholders_shaped_like_the_features() -> None:
    with tf.Graph().as_default():
        features = {"x": tf.placeholder(tf.float32, [7, 3], name="x_in"),
                    "ids": tf.zeros([2], tf.int64, name="ids")}
    with tf.Graph().as_default() as g:
        receiver = export.build_raw_serving_input_receiver_fn(features, default_batch_size=5)()
        assert receiver.features == receiver.receiver_tensors
        assert receiver.features is not receiver.receiver_tensors
        x, ids = receiver.features["x"], receiver.features["ids"]
        assert x.graph is g and x.op.type == "Placeholder" and x.name == "x_in:0"
        assert x.dtype == tf.float32 and x.shape.as_list() == [5, 3]
        assert ids.dtype == tf.int64 and ids.shape.as_list() == [5]
    with tf.Graph().as_default():
        unknown = export.build_raw_serving_input_receiver_fn(features)()
        assert unknown.features["x"].shape.as_list() == [None, 3]


# -- export outputs ---------------------------------------------------------------------------

def test_classification_output_checks_and_signature() -> None:
    with tf.Graph().as_default():
        examples = tf.placeholder(tf.string, [None])
        scores = tf.placeholder(tf.float32, [None, 2])
        classes = tf.placeholder(tf.string, [None, 2])
        out = export.ClassificationOutput(scores=scores, classes=classes)
        sig = out.as_signature_def({"examples": examples})
        assert sig.method_name == CLASSIFY
        assert sig.inputs["inputs"].name == examples.name
        assert sig.outputs["scores"].name == scores.name
        assert sig.outputs["classes"].name == classes.name
        assert set(export.ClassificationOutput(scores=scores).as_signature_def(
            {"e": examples}).outputs) == {"scores"}
        with pytest.raises(ValueError, match="scores must be a float32 Tensor"):
            export.ClassificationOutput(scores=tf.zeros([2], tf.int32))
        with pytest.raises(ValueError, match="classes must be a string Tensor"):
            export.ClassificationOutput(classes=scores)
        with pytest.raises(ValueError, match="At least one of scores and classes"):
            export.ClassificationOutput()
        with pytest.raises(ValueError, match="input must be a single string Tensor"):
            out.as_signature_def({"a": examples, "b": examples})
        with pytest.raises(ValueError, match="input must be a single string Tensor"):
            out.as_signature_def({"x": scores})


def test_regression_and_predict_outputs() -> None:
    with tf.Graph().as_default():
        examples = tf.placeholder(tf.string, [None])
        value = tf.placeholder(tf.float32, [None, 1])
        sig = export.RegressionOutput(value).as_signature_def({"examples": examples})
        assert sig.method_name == REGRESS and sig.outputs["outputs"].name == value.name
        with pytest.raises(ValueError, match="Regression output value must be a float32"):
            export.RegressionOutput(tf.zeros([2], tf.int64))
        with pytest.raises(ValueError, match="Regression input must be a single string"):
            export.RegressionOutput(value).as_signature_def({"v": value})
        single = export.PredictOutput(value)
        assert single.outputs == {"output": value}
        assert export.PredictOutput({("head", "p"): value}).outputs == {"head/p": value}
        sig = single.as_signature_def({"v": value, "e": examples})
        assert sig.method_name == PREDICT_METHOD and set(sig.inputs) == {"v", "e"}
        with pytest.raises(ValueError, match="Prediction output value must be a Tensor"):
            export.PredictOutput({"p": 1.0})
        with pytest.raises(ValueError, match="Prediction output key must be a string"):
            export.PredictOutput({3: value})


def test_estimator_spec_export_outputs_in_predict_mode() -> None:
    with tf.Graph().as_default():
        p = tf.constant([[1.0]])
        default = tf.estimator.EstimatorSpec(PREDICT, predictions={"p": p}).export_outputs
        assert list(default) == ["serving_default"]
        assert default["serving_default"].outputs == {"p": p}
        regress = export.RegressionOutput(p)
        single = tf.estimator.EstimatorSpec(PREDICT, predictions=p,
                                            export_outputs={"r": regress}).export_outputs
        assert single == {"r": regress, "serving_default": regress}
        with pytest.raises(ValueError, match="none of them is specified as the default"):
            tf.estimator.EstimatorSpec(PREDICT, predictions=p, export_outputs={
                "a": regress, "b": export.PredictOutput(p)})
        with pytest.raises(TypeError, match="Values in export_outputs must be ExportOutput"):
            tf.estimator.EstimatorSpec(PREDICT, predictions=p, export_outputs={"a": p})
        with pytest.raises(TypeError, match="export_outputs must be dict"):
            tf.estimator.EstimatorSpec(PREDICT, predictions=p, export_outputs=[regress])
        train = tf.estimator.EstimatorSpec(TRAIN, loss=tf.constant(1.0), train_op=tf.no_op())
        assert train.export_outputs is None


def test_signatures_drop_outputs_the_receiver_cannot_feed() -> None:
    with tf.Graph().as_default():
        examples = tf.placeholder(tf.string, [None])
        raw = tf.placeholder(tf.float32, [None, 1])
        outputs = {"serving_default": export.RegressionOutput(raw),
                   "predict": export.PredictOutput({"y": raw})}
        sigs = build_all_signature_defs({"examples": examples}, outputs, {"raw": raw})
        assert set(sigs) == {"serving_default", "predict", "raw:predict"}
        assert sigs["serving_default"].method_name == REGRESS
        assert sigs["raw:predict"].inputs["input"].name == raw.name
        with pytest.raises(ValueError, match="export_outputs must be a dict"):
            build_all_signature_defs(examples, None)


@pytest.mark.parametrize("head, logits, keys", [
    (BinaryClassHead(label_vocabulary=["no", "yes"]), [[0.3], [-2.0]],
     {"serving_default", "classification", "regression", "predict"}),
    (MultiClassHead(3), [[0.3, 1.0, -1.0], [2.0, 0.0, 0.0]],
     {"serving_default", "classification", "predict"}),
    (RegressionHead(), [[0.3], [-2.0]], {"serving_default", "regression", "predict"}),
])
def test_canned_heads_export_tf_signatures(head: Any, logits: list[list[float]],
                                           keys: set[str]) -> None:
    with tf.Graph().as_default():
        tf.train.create_global_step()
        spec = head.create_estimator_spec(features={}, mode=PREDICT,
                                          logits=tf.constant(logits, tf.float32))
        outputs = spec.export_outputs
        assert set(outputs) == keys
        assert outputs["predict"].outputs == spec.predictions
        with tf.Session() as sess:
            if "classification" in keys:
                classify = outputs["classification"]
                assert outputs["serving_default"] is classify
                scores, classes = sess.run([classify.scores, classify.classes])
                np.testing.assert_allclose(scores, sess.run(spec.predictions["probabilities"]))
                names = [b"no", b"yes"] if len(logits[0]) == 1 else [b"0", b"1", b"2"]
                assert classes.tolist() == [names, names]
            if "regression" in keys:
                value = sess.run(outputs["regression"].value)
                expected = (1 / (1 + np.exp(-np.array(logits))) if "classification" in keys
                            else np.array(logits))
                np.testing.assert_allclose(value, expected, rtol=1e-6)


# -- export directories -----------------------------------------------------------------------

def test_export_dirs_are_timestamped_bytes(tmp_path: Any) -> None:
    before = int(time.time())
    path = get_timestamped_export_dir(str(tmp_path))
    assert isinstance(path, bytes) and os.path.dirname(path) == os.fsencode(tmp_path)
    assert before <= int(os.path.basename(path)) <= time.time()
    assert get_temp_export_dir(path) == os.path.join(os.fsencode(tmp_path),
                                                     b"temp-" + os.path.basename(path))


# -- Estimator.export_saved_model -------------------------------------------------------------

@pytest.fixture(scope="module")
def trained_linear(tmp_path_factory: pytest.TempPathFactory) -> tf.estimator.Estimator:
    est = estimator(tmp_path_factory.mktemp("linear"))
    est.train(train_input_fn(), steps=5)
    return est


def raw_receiver_fn() -> Any:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, FEATURES], name="x")
    return export.build_raw_serving_input_receiver_fn({"x": x})


def test_export_serves_the_estimators_predictions(trained_linear: Any, tmp_path: Any) -> None:
    extra = tmp_path / "vocab.txt"
    extra.write_text("hello")
    path = trained_linear.export_saved_model(str(tmp_path / "export"), raw_receiver_fn(),
                                             assets_extra={"sub/vocab.txt": str(extra)})
    assert isinstance(path, bytes)
    assert os.listdir(tmp_path / "export") == [os.path.basename(path).decode()]
    assert os.path.isfile(os.path.join(path, b"saved_model.pb"))
    assert (tmp_path / "export" / os.fsdecode(os.path.basename(path)) / "assets.extra" / "sub"
            / "vocab.txt").read_text() == "hello"
    x, _ = data()
    served = serve(path, "serving_default", {"x": x[:10]})
    predicted = list(trained_linear.predict(
        tf.estimator.inputs.numpy_input_fn({"x": x[:10]}, shuffle=False)))
    np.testing.assert_allclose(served["y"], np.stack([p["y"] for p in predicted]), rtol=1e-6)
    np.testing.assert_allclose(served["y"], reference(trained_linear, x[:10]), rtol=1e-5)
    np.testing.assert_allclose(served["double"], 2 * served["y"], rtol=1e-6)
    assert served["y"].dtype == np.float32


def test_export_savedmodel_alias_and_text_and_checkpoint_path(trained_linear: Any,
                                                               tmp_path: Any) -> None:
    path = trained_linear.export_savedmodel(str(tmp_path), raw_receiver_fn(), as_text=True,
                                            checkpoint_path=trained_linear.latest_checkpoint())
    assert sorted(os.listdir(path)) == [b"saved_model.pbtxt", b"variables"]
    assert b'method_name: "tensorflow/serving/predict"' in open(
        os.path.join(path, b"saved_model.pbtxt"), "rb").read()


def test_export_without_a_checkpoint_fails(tmp_path: Any) -> None:
    est = estimator(tmp_path / "model")
    with pytest.raises(ValueError, match="Couldn't find trained model at"):
        est.export_saved_model(str(tmp_path / "export"), raw_receiver_fn())
    with pytest.raises(ValueError, match="An input_receiver_fn must be defined"):
        est.export_saved_model(str(tmp_path / "export"), None)
    assert not (tmp_path / "export").exists()


def test_export_falls_back_to_the_warm_start_checkpoint(trained_linear: Any,
                                                         tmp_path: Any) -> None:
    est = tf.estimator.Estimator(trained_linear.model_fn, model_dir=str(tmp_path / "model"),
                                 warm_start_from=trained_linear.model_dir)
    path = est.export_saved_model(str(tmp_path / "export"), raw_receiver_fn())
    x, _ = data()
    np.testing.assert_allclose(serve(path, "serving_default", {"x": x[:4]})["y"],
                               reference(trained_linear, x[:4]), rtol=1e-5)


def test_export_of_variables_missing_from_the_checkpoint_fails(trained_linear: Any,
                                                               tmp_path: Any) -> None:
    def model_fn(features: Any, mode: str) -> Any:
        extra = tf.get_variable("not_in_checkpoint", [1])
        return tf.estimator.EstimatorSpec(mode, predictions=features["x"] * extra)

    est = tf.estimator.Estimator(model_fn, model_dir=trained_linear.model_dir)
    with pytest.raises(ValueError, match="Could not load all requested variables"):
        est.export_saved_model(str(tmp_path), raw_receiver_fn())
    assert os.listdir(tmp_path) == []  # the temp directory is removed


def test_canned_classifier_serves_classify_regress_and_predict(tmp_path: Any) -> None:
    est = tf.estimator.LinearClassifier([numeric(), color()], model_dir=str(tmp_path / "m"),
                                        config=canned_config())
    est.train(train_input(BINARY), steps=5)
    spec = tf.feature_column.make_parse_example_spec([numeric(), color()])
    path = est.export_saved_model(str(tmp_path / "export"),
                                  export.build_parsing_serving_input_receiver_fn(spec))
    sigs = signatures(path)
    assert {k: s.method_name for k, s in sigs.items()} == {
        "serving_default": CLASSIFY, "classification": CLASSIFY, "regression": REGRESS,
        "predict": PREDICT_METHOD}
    examples = [example(float(x), c) for x, c in zip(X[:8], COLOR[:8])]
    predicted = list(est.predict(tf.estimator.inputs.numpy_input_fn(
        {"x": X[:8], "color": COLOR[:8]}, shuffle=False)))
    classified = serve(path, "serving_default", {"inputs": examples})
    np.testing.assert_allclose(classified["scores"],
                               np.stack([p["probabilities"] for p in predicted]), rtol=1e-5)
    assert classified["classes"].tolist() == [[b"0", b"1"]] * 8
    regressed = serve(path, "regression", {"inputs": examples})
    np.testing.assert_allclose(regressed["outputs"],
                               np.stack([p["logistic"] for p in predicted]), rtol=1e-5)
    served = serve(path, "predict", {"examples": examples})
    np.testing.assert_array_equal(served["class_ids"],
                                  np.stack([p["class_ids"] for p in predicted]))


def test_canned_regressor_serves_regress(tmp_path: Any) -> None:
    est = tf.estimator.LinearRegressor([numeric()], model_dir=str(tmp_path / "m"),
                                       config=canned_config())
    est.train(train_input(Z), steps=3)
    spec = tf.feature_column.make_parse_example_spec([numeric()])
    path = est.export_saved_model(str(tmp_path / "export"),
                                  export.build_parsing_serving_input_receiver_fn(spec))
    examples = [example(float(x), COLORS[0]) for x in X[:4]]
    served = serve(path, "serving_default", {"inputs": examples})
    weight = est.get_variable_value("linear/linear_model/x/weights")
    bias = est.get_variable_value("linear/linear_model/bias_weights")
    np.testing.assert_allclose(served["outputs"], X[:4, None] * weight[0] + bias, rtol=1e-5)


def test_train_and_eval_outputs_are_reachable_as_in_tf() -> None:
    from tensorweave.estimator import export_all

    export = tf.estimator.export
    assert export.TrainOutput is export_all.TrainOutput
    assert export.EvalOutput is export_all.EvalOutput
    assert issubclass(export.EvalOutput, export.ExportOutput)
    loss = tf.constant(1.5)
    x = tf.placeholder(tf.float32, [None], name="x")
    sig = export.TrainOutput(loss=loss, predictions=x).as_signature_def({"x": x})
    assert sig.method_name == "tensorflow/supervised/training"
    assert set(sig.outputs) == {"loss", "predictions"}
    with pytest.raises(AttributeError, match="no attribute 'NopeOutput'"):
        export.NopeOutput  # noqa: B018
