"""`ModeKeys` and `EstimatorSpec`'s validation, with TF's errors."""

from __future__ import annotations

import pytest

import tensorweave as tf
from tensorweave.estimator import EstimatorSpec, ModeKeys


def test_mode_keys_are_tfs_strings() -> None:
    assert (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT) == ("train", "eval", "infer")


def test_a_valid_train_spec_keeps_its_fields_and_defaults_the_rest() -> None:
    loss = tf.constant(1.0)
    train_op = tf.no_op()
    spec = EstimatorSpec(ModeKeys.TRAIN, loss=loss, train_op=train_op)
    assert spec.loss is loss and spec.train_op is train_op
    assert spec.predictions == {} and spec.eval_metric_ops == {}
    assert spec.training_hooks == () and spec.evaluation_hooks == ()
    assert isinstance(spec.scaffold, tf.train.Scaffold)


def test_required_fields_per_mode() -> None:
    loss = tf.constant(1.0)
    with pytest.raises(ValueError, match="Missing train_op."):
        EstimatorSpec(ModeKeys.TRAIN, loss=loss)
    with pytest.raises(ValueError, match="Missing loss."):
        EstimatorSpec(ModeKeys.TRAIN, train_op=tf.no_op())
    with pytest.raises(ValueError, match="Missing loss."):
        EstimatorSpec(ModeKeys.EVAL)
    with pytest.raises(ValueError, match="Missing predictions."):
        EstimatorSpec(ModeKeys.PREDICT)
    assert EstimatorSpec(ModeKeys.EVAL, loss=loss).train_op is None


def test_loss_must_be_a_one_element_tensor() -> None:
    with pytest.raises(TypeError, match="loss must be Tensor, given: 1.0"):
        EstimatorSpec(ModeKeys.EVAL, loss=1.0)
    with pytest.raises(ValueError, match="Loss must be scalar, given:"):
        EstimatorSpec(ModeKeys.EVAL, loss=tf.constant([1.0, 2.0]))
    spec = EstimatorSpec(ModeKeys.EVAL, loss=tf.constant([3.0]))
    assert spec.loss.shape.as_list() == []
    with tf.Session() as sess:
        assert sess.run(spec.loss) == 3.0


def test_tensors_must_come_from_the_default_graph() -> None:
    other = tf.Graph()
    with other.as_default():
        foreign = tf.constant(1.0)
    with pytest.raises(ValueError, match="loss with .* must be from the default graph"):
        EstimatorSpec(ModeKeys.EVAL, loss=foreign)
    with pytest.raises(ValueError, match="prediction values with .* must be from the default"):
        EstimatorSpec(ModeKeys.PREDICT, predictions={"p": foreign})


def test_types_of_train_op_predictions_metrics_hooks_and_scaffold() -> None:
    loss = tf.constant(1.0)
    with pytest.raises(TypeError, match="train_op must be Operation or Tensor, given: 3"):
        EstimatorSpec(ModeKeys.TRAIN, loss=loss, train_op=3)
    with pytest.raises(TypeError, match=r"predictions\[a\] must be Tensor"):
        EstimatorSpec(ModeKeys.PREDICT, predictions={"a": 1})
    with pytest.raises(TypeError, match="eval_metric_ops must be a dict"):
        EstimatorSpec(ModeKeys.EVAL, loss=loss, eval_metric_ops=[loss])
    with pytest.raises(TypeError, match=r"must be \(metric_value, update_op\) tuples"):
        EstimatorSpec(ModeKeys.EVAL, loss=loss, eval_metric_ops={"m": loss})
    with pytest.raises(TypeError, match="All hooks must be SessionRunHook instances"):
        EstimatorSpec(ModeKeys.EVAL, loss=loss, evaluation_hooks=["h"])
    with pytest.raises(TypeError, match="scaffold must be tf.train.Scaffold"):
        EstimatorSpec(ModeKeys.EVAL, loss=loss, scaffold="s")


def test_replace_keeps_the_mode() -> None:
    spec = EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0))
    other_loss = tf.constant(2.0)
    assert spec._replace(loss=other_loss).loss is other_loss
    with pytest.raises(ValueError, match="mode of EstimatorSpec cannot be changed."):
        spec._replace(mode=ModeKeys.TRAIN)
