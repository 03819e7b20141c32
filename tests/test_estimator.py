"""`Estimator`: train/evaluate/predict a linear regression against a numpy reference, with
real checkpoints in a temporary model_dir; input_fn and model_fn conventions; TF's errors."""

from __future__ import annotations

import glob
import os
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tests.estimator_support import (
    FEATURES,
    LossRecorder,
    closed_writer_cache,  # noqa: F401 - autouse fixture
    data,
    estimator,
    eval_input_fn,
    linear_model_fn,
    reference,
    train_input_fn,
)
from tests.training import scalar_summaries

# -- train ------------------------------------------------------------------------------------


def test_train_lowers_the_loss_and_writes_checkpoints_and_summaries(tmp_path: Any) -> None:
    est = estimator(tmp_path, save_checkpoints_steps=10, save_summary_steps=10)
    recorder = LossRecorder()
    assert est.train(train_input_fn(), steps=30, hooks=[recorder]) is est
    assert len(recorder.losses) == 30
    assert recorder.losses[-1] < 0.1 * recorder.losses[0]
    assert est.latest_checkpoint() == os.path.join(str(tmp_path), "model.ckpt-30")
    saved = sorted(os.path.basename(p).removesuffix(".index")
                   for p in glob.glob(str(tmp_path / "model.ckpt-*.index")))
    assert saved == ["model.ckpt-0", "model.ckpt-10", "model.ckpt-20", "model.ckpt-30"]
    # The loss scalar the Estimator adds, every save_summary_steps from the first step.
    loss_steps = [step for step, tag, _ in scalar_summaries(tmp_path) if tag == "loss"]
    assert loss_steps == [1, 11, 21]
    assert sorted(est.get_variable_names()) == ["b", "global_step", "w"]
    assert est.get_variable_value("global_step") == 30
    assert est.get_variable_value("w").shape == (FEATURES, 1)


def test_second_train_resumes_from_the_saved_global_step(tmp_path: Any) -> None:
    est = estimator(tmp_path)
    first = LossRecorder()
    est.train(train_input_fn(), steps=20, hooks=[first])
    second = LossRecorder()
    est.train(train_input_fn(), steps=10, hooks=[second])
    assert est.get_variable_value("global_step") == 30
    assert len(second.losses) == 10
    # Restored, not re-initialized: the second run starts where the first ended.
    assert second.losses[0] < 0.2 * first.losses[0]


def test_max_steps_is_a_global_step_and_a_reached_one_returns_at_once(tmp_path: Any) -> None:
    calls = []

    def counting_model_fn(features: Any, labels: Any, mode: str, params: Any) -> Any:
        calls.append(mode)
        return linear_model_fn(features, labels, mode, params)

    est = tf.estimator.Estimator(counting_model_fn, model_dir=str(tmp_path), params={},
                                 config=tf.estimator.RunConfig(log_step_count_steps=None))
    est.train(train_input_fn(), max_steps=25)
    assert est.get_variable_value("global_step") == 25
    est.train(train_input_fn(), max_steps=25)
    assert calls == ["train"]  # the second call built nothing
    est.train(train_input_fn(), max_steps=32)
    assert est.get_variable_value("global_step") == 32


def test_train_stops_at_the_end_of_a_finite_input(tmp_path: Any) -> None:
    est = estimator(tmp_path)
    est.train(eval_input_fn(batch_size=16))  # one epoch of 64 rows
    assert est.get_variable_value("global_step") == 4


def test_train_argument_errors(tmp_path: Any) -> None:
    est = estimator(tmp_path)
    with pytest.raises(ValueError, match="Can not provide both steps and max_steps."):
        est.train(train_input_fn(), steps=1, max_steps=2)
    with pytest.raises(ValueError, match="Must specify steps > 0, given: 0"):
        est.train(train_input_fn(), steps=0)
    with pytest.raises(ValueError, match="Must specify max_steps > 0, given: -1"):
        est.train(train_input_fn(), max_steps=-1)
    with pytest.raises(TypeError, match="Hooks must be a SessionRunHook, given: 3"):
        est.train(train_input_fn(), steps=1, hooks=[3])
    with pytest.raises(TypeError, match="saving_listeners must be a list"):
        est.train(train_input_fn(), steps=1, saving_listeners=["x"])


def test_saving_listeners_are_called_and_need_checkpoints(tmp_path: Any) -> None:
    class Listener(tf.train.CheckpointSaverListener):
        def __init__(self) -> None:
            self.saved: list[int] = []

        def after_save(self, session: Any, global_step_value: int) -> None:
            self.saved.append(global_step_value)

    listener = Listener()
    estimator(tmp_path, save_checkpoints_steps=5).train(train_input_fn(), steps=12,
                                                        saving_listeners=[listener])
    assert listener.saved == [0, 5, 10, 12]
    no_checkpoints = estimator(tmp_path / "b", save_checkpoints_secs=None)
    with pytest.raises(ValueError, match="There should be a CheckpointSaverHook"):
        no_checkpoints.train(train_input_fn(), steps=1, saving_listeners=[Listener()])


def test_nan_loss_stops_training_with_an_error(tmp_path: Any) -> None:
    est = tf.estimator.Estimator(linear_model_fn, model_dir=str(tmp_path), params={"lr": 1e30},
                                 config=tf.estimator.RunConfig(log_step_count_steps=None))
    with pytest.raises(tf.train.NanLossDuringTrainingError):
        est.train(train_input_fn(), steps=50)


# -- evaluate ---------------------------------------------------------------------------------


def test_evaluate_matches_numpy_with_the_trained_weights(tmp_path: Any) -> None:
    est = estimator(tmp_path)
    est.train(train_input_fn(), steps=15)
    x, y = data()
    results = est.evaluate(eval_input_fn(batch_size=16))
    pred = reference(est, x)
    batch_losses = [np.mean(np.square(pred[i:i + 16] - y[i:i + 16])) for i in range(0, 64, 16)]
    assert set(results) == {"mae", "loss", "global_step"}
    np.testing.assert_allclose(results["mae"], np.mean(np.abs(pred - y)), rtol=1e-5)
    np.testing.assert_allclose(results["loss"], np.mean(batch_losses), rtol=1e-5)
    assert results["global_step"] == 15
    assert results["loss"].dtype == np.float32 and results["global_step"].dtype == np.int64
    written = {tag: (step, value) for step, tag, value in scalar_summaries(est.eval_dir())}
    assert set(written) == {"mae", "loss"} and written["loss"][0] == 15
    np.testing.assert_allclose(written["loss"][1], results["loss"], rtol=1e-6)


def test_evaluate_steps_name_and_checkpoint_path(tmp_path: Any) -> None:
    est = estimator(tmp_path, save_checkpoints_steps=5)
    est.train(train_input_fn(), steps=10)
    x, y = data()
    results = est.evaluate(eval_input_fn(batch_size=16), steps=2, name="head")
    pred = reference(est, x)[:32]
    np.testing.assert_allclose(results["mae"], np.mean(np.abs(pred - y[:32])), rtol=1e-5)
    assert os.path.isdir(os.path.join(str(tmp_path), "eval_head"))
    older = est.evaluate(eval_input_fn(), checkpoint_path=os.path.join(str(tmp_path),
                                                                       "model.ckpt-5"))
    assert older["global_step"] == 5 and older["loss"] > results["loss"]
    with pytest.raises(ValueError, match="Must specify steps > 0, given: 0"):
        est.evaluate(eval_input_fn(), steps=0)


def test_evaluate_without_a_checkpoint_uses_initialized_variables(tmp_path: Any) -> None:
    x, y = data()
    results = estimator(tmp_path).evaluate(eval_input_fn(batch_size=64))
    # w and b start at zero: the predictions are 0.
    np.testing.assert_allclose(results["loss"], np.mean(np.square(y)), rtol=1e-5)
    assert results["global_step"] == 0


def test_evaluate_refuses_a_loss_metric(tmp_path: Any) -> None:
    def model_fn(features: Any, labels: Any, mode: str) -> Any:
        loss = tf.reduce_mean(tf.square(features["x"]))
        return tf.estimator.EstimatorSpec(mode, loss=loss,
                                          eval_metric_ops={"loss": tf.metrics.mean(loss)})

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match='Metric with name "loss" is not allowed'):
        est.evaluate(eval_input_fn())


# -- predict ----------------------------------------------------------------------------------


def test_predict_yields_one_dict_per_example(tmp_path: Any) -> None:
    est = estimator(tmp_path)
    est.train(train_input_fn(), steps=10)
    x, _ = data()
    fn = tf.estimator.inputs.numpy_input_fn({"x": x[:10]}, batch_size=4, shuffle=False)
    predictions = list(est.predict(fn))
    expected = reference(est, x[:10])
    assert len(predictions) == 10
    assert all(set(p) == {"y", "double"} for p in predictions)
    np.testing.assert_allclose(np.stack([p["y"] for p in predictions]), expected, rtol=1e-5)
    np.testing.assert_allclose(np.stack([p["double"] for p in predictions]), 2 * expected,
                               rtol=1e-5)
    assert predictions[0]["y"].dtype == np.float32 and predictions[0]["y"].shape == (1,)
    only_y = list(est.predict(fn, predict_keys=["y"]))
    assert [set(p) for p in only_y] == [{"y"}] * 10
    batches = list(est.predict(fn, yield_single_examples=False))
    assert [b["y"].shape for b in batches] == [(4, 1), (4, 1), (2, 1)]
    with pytest.raises(ValueError, match="Expected to run at least one output"):
        list(est.predict(fn, predict_keys=["nope"]))


def test_predict_with_tensor_predictions_yields_arrays(tmp_path: Any) -> None:
    def model_fn(features: Any, mode: str) -> Any:
        return tf.estimator.EstimatorSpec(mode, predictions=features * 3.0)

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    fn = tf.estimator.inputs.numpy_input_fn(x, batch_size=2, shuffle=False)
    predictions = list(est.predict(fn))
    np.testing.assert_array_equal(np.stack(predictions), x * 3)
    with pytest.raises(ValueError, match="predict_keys argument is not valid"):
        list(est.predict(fn, predict_keys=["a"]))


# -- input_fn and model_fn conventions --------------------------------------------------------


def test_input_fn_may_return_a_dataset_or_tensors_and_receives_mode_params_config(
        tmp_path: Any) -> None:
    x, y = data()
    seen: list[tuple[str, Any, Any]] = []

    def dataset_input_fn(mode: str, params: Any, config: Any) -> Any:
        seen.append((mode, params, config.model_dir))
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(16)

    def tensor_input_fn() -> Any:
        return tf.constant(x), tf.constant(y)

    est = estimator(tmp_path)
    est.train(dataset_input_fn)
    assert est.get_variable_value("global_step") == 4
    assert seen == [("train", {"lr": 0.1}, str(tmp_path))]
    est.train(tensor_input_fn, steps=3)  # constant tensors never end
    assert est.get_variable_value("global_step") == 7
    with pytest.raises(ValueError, match=r"input_fn should return \(features, labels\)"):
        est.train(lambda: (tf.constant(x), tf.constant(y), tf.constant(y)), steps=1)


def test_model_fn_gets_only_the_arguments_it_names(tmp_path: Any) -> None:
    seen: dict[str, Any] = {}

    def model_fn(features: Any, labels: Any, config: Any) -> Any:
        seen["config"] = config
        w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(features["x"] * w - 1.0))
        train_op = tf.assign_add(tf.train.get_global_step(), 1)
        return tf.estimator.EstimatorSpec("train", loss=loss, train_op=train_op)

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(train_input_fn(), steps=2)
    assert isinstance(seen["config"], tf.estimator.RunConfig)
    assert seen["config"].model_dir == str(tmp_path)
    assert est.params == {} and est.model_dir == str(tmp_path)


def test_model_fn_signature_errors(tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="must include features argument"):
        tf.estimator.Estimator(lambda x, labels: None, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="does not include params argument"):
        tf.estimator.Estimator(lambda features: None, model_dir=str(tmp_path), params={"a": 1})
    with pytest.raises(ValueError, match=r"has following not expected args: \['extra'\]"):
        tf.estimator.Estimator(lambda features, extra: None, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="model_fn must be provided to Estimator."):
        tf.estimator.Estimator(None, model_dir=str(tmp_path))

    def no_labels(features: Any, mode: str) -> Any:
        return linear_model_fn(features, None, mode, {})

    with pytest.raises(ValueError, match="model_fn does not take labels, but input_fn returns"):
        tf.estimator.Estimator(no_labels, model_dir=str(tmp_path)).train(train_input_fn(),
                                                                          steps=1)


def test_model_fn_must_return_an_estimator_spec(tmp_path: Any) -> None:
    def model_fn(features: Any, labels: Any) -> Any:
        return {"loss": tf.reduce_sum(features["x"])}

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="model_fn should return an EstimatorSpec."):
        est.train(train_input_fn(), steps=1)


def test_constructor_config_errors_and_model_dir_resolution(tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="config must be an instance of `RunConfig`"):
        tf.estimator.Estimator(linear_model_fn, params={}, config={"model_dir": "x"})
    with pytest.raises(ValueError, match="`model_dir` are set both in constructor and"):
        tf.estimator.Estimator(linear_model_fn, model_dir=str(tmp_path / "a"), params={},
                               config=tf.estimator.RunConfig(model_dir=str(tmp_path / "b")))
    from_config = tf.estimator.Estimator(
        linear_model_fn, params={}, config=tf.estimator.RunConfig(model_dir=str(tmp_path)))
    assert from_config.model_dir == str(tmp_path)
    temporary = tf.estimator.Estimator(linear_model_fn, params={})
    assert os.path.isdir(temporary.model_dir) and temporary.config.model_dir == \
        temporary.model_dir


def test_checkpoint_queries_need_a_checkpoint(tmp_path: Any) -> None:
    est = estimator(tmp_path)
    assert est.latest_checkpoint() is None
    with pytest.raises(ValueError, match="Could not find trained model in model_dir"):
        est.get_variable_value("w")
    with pytest.raises(ValueError, match="Could not find trained model in model_dir"):
        est.get_variable_names()


def test_subclasses_cannot_override_estimator_methods(tmp_path: Any) -> None:
    class Custom(tf.estimator.Estimator):
        def train(self, *args: Any, **kwargs: Any) -> Any:
            return None

    with pytest.raises(ValueError, match=r"cannot override members of Estimator.*'train'"):
        Custom(linear_model_fn, model_dir=str(tmp_path), params={})
