"""Signature builders and TensorInfo utilities (signature_def_utils.py, utils.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.proto.framework import DATA_TYPES

sm = tf.saved_model
shape_of = sm.utils.tensor_shape


def test_predict_signature_def_describes_each_tensor() -> None:
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    k = tf.placeholder(tf.int64, [], name="k")
    y = tf.identity(x * 2.0, name="y")
    sig = sm.predict_signature_def({"x": x, "k": k}, {"y": y})
    assert sig.method_name == sm.PREDICT_METHOD_NAME == "tensorflow/serving/predict"
    assert (sig.inputs["x"].name, sig.inputs["x"].dtype) == ("x:0", DATA_TYPES["DT_FLOAT"])
    assert shape_of(sig.inputs["x"].tensor_shape).as_list() == [None, 3]
    assert [d.size for d in sig.inputs["x"].tensor_shape.dim] == [-1, 3]  # TF's unknown: -1
    assert (sig.inputs["k"].dtype, shape_of(sig.inputs["k"].tensor_shape).as_list()) == (
        DATA_TYPES["DT_INT64"], [])
    assert sig.inputs["k"].HasField("tensor_shape")  # a scalar's shape is written, empty
    assert sig.outputs["y"].name == "y:0"
    assert sm.is_valid_signature(sig)
    with pytest.raises(ValueError, match="Prediction inputs cannot be None or empty."):
        sm.predict_signature_def({}, {"y": y})
    with pytest.raises(ValueError, match="Prediction outputs cannot be None or empty."):
        sm.predict_signature_def({"x": x}, None)


def test_classification_signature_def_checks_dtypes() -> None:
    examples = tf.placeholder(tf.string, [None], name="examples")
    classes = tf.identity(examples, name="classes")
    scores = tf.zeros([2, 3], name="scores")
    sig = sm.classification_signature_def(examples, classes, scores)
    assert sig.method_name == "tensorflow/serving/classify"
    assert set(sig.outputs) == {"classes", "scores"}
    assert sig.inputs["inputs"].name == "examples:0"
    assert sm.is_valid_signature(sig)
    only_scores = sm.classification_signature_def(examples, None, scores)
    assert set(only_scores.outputs) == {"scores"}
    with pytest.raises(ValueError, match="Classification examples must be a string Tensor."):
        sm.classification_signature_def(scores, classes, scores)
    with pytest.raises(ValueError, match="Classification examples cannot be None."):
        sm.classification_signature_def(None, classes, scores)
    with pytest.raises(ValueError, match="classes and scores cannot both be None"):
        sm.classification_signature_def(examples, None, None)
    with pytest.raises(ValueError, match="Classification scores must be a float Tensor."):
        sm.classification_signature_def(examples, None, tf.zeros([2], tf.int32))
    with pytest.raises(ValueError, match="Classification classes must be a string Tensor."):
        sm.classification_signature_def(examples, scores, None)


def test_regression_signature_def_checks_dtypes() -> None:
    examples = tf.placeholder(tf.string, [None], name="examples")
    sig = sm.regression_signature_def(examples, tf.zeros([2, 1], name="pred"))
    assert (sig.method_name, sig.outputs["outputs"].name) == ("tensorflow/serving/regress",
                                                              "pred:0")
    assert sm.is_valid_signature(sig)
    with pytest.raises(ValueError, match="Regression output must be a float Tensor."):
        sm.regression_signature_def(examples, tf.zeros([2], tf.float64))
    with pytest.raises(ValueError, match="Regression examples must be a string Tensor."):
        sm.regression_signature_def(np.array([b"a"]), tf.zeros([2]))
    with pytest.raises(ValueError, match="Regression predictions cannot be None."):
        sm.regression_signature_def(examples, None)


def test_is_valid_signature_rejects_mismatched_methods() -> None:
    x = tf.placeholder(tf.float32, [None], name="x")
    predict = sm.predict_signature_def({"x": x}, {"y": x})
    assert not sm.is_valid_signature(sm.build_signature_def(predict.inputs, {},
                                                            sm.PREDICT_METHOD_NAME))
    assert not sm.is_valid_signature(sm.build_signature_def(predict.inputs, predict.outputs,
                                                            sm.REGRESS_METHOD_NAME))
    assert not sm.is_valid_signature(sm.build_signature_def(predict.inputs, predict.outputs))
    custom = sm.build_signature_def(predict.inputs, predict.outputs, "my/method")
    assert sm.is_valid_signature(custom) and custom.method_name == "my/method"


def test_tensor_info_round_trips_to_the_graph_tensor() -> None:
    y = tf.identity(tf.constant([1.0, 2.0]), name="y")
    info = sm.build_tensor_info(y)
    assert sm.get_tensor_from_tensor_info(info) is y
    assert sm.utils.get_tensor_from_tensor_info(info, graph=y.graph) is y
    with pytest.raises(KeyError):
        sm.get_tensor_from_tensor_info(info, import_scope="missing")
    with pytest.raises(ValueError, match="Invalid TensorInfo.encoding: None"):
        sm.get_tensor_from_tensor_info(sm.TensorInfo(dtype=DATA_TYPES["DT_FLOAT"]))
    with pytest.raises(TypeError, match="expects a Tensor or SparseTensor"):
        sm.build_tensor_info(np.zeros(2))


def test_sparse_tensor_info_names_its_three_tensors() -> None:
    sp = tf.SparseTensor(tf.constant([[0, 1]], tf.int64), tf.constant([5.0]),
                         tf.constant([2, 3], tf.int64))
    info = sm.build_tensor_info(sp)
    assert info.WhichOneof("encoding") == "coo_sparse"
    assert (info.coo_sparse.values_tensor_name, info.coo_sparse.indices_tensor_name,
            info.coo_sparse.dense_shape_tensor_name) == (sp.values.name, sp.indices.name,
                                                         sp.dense_shape.name)
    assert (info.dtype, shape_of(info.tensor_shape).as_list()) == (DATA_TYPES["DT_FLOAT"], [2, 3])
    back = sm.get_tensor_from_tensor_info(info)
    assert isinstance(back, tf.SparseTensor)
    with tf.Session() as sess:
        value = sess.run(back)
    np.testing.assert_array_equal(value.indices, [[0, 1]])
    np.testing.assert_array_equal(value.values, np.array([5.0], np.float32))
    assert value.values.dtype == np.float32
