"""tw.estimator.experimental's early stopping hooks: they read the evaluations from the eval
dir's event files and stop training at the expected global step, alone or under
`train_and_evaluate`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.estimator.early_stopping import read_eval_metrics
from tensorweave.estimator.evaluation import write_dict_to_summary
from tensorweave.namespaces.summary import FileWriterCache
from tests.estimator_support import (
    closed_writer_cache,  # noqa: F401 - autouse fixture
    estimator,
    eval_input_fn,
    train_input_fn,
)

experimental = tf.estimator.experimental

# Evaluations written before training: loss is best at step 20, acc at steps 20 and 30.
# (Summaries hold float32: these values are exact.)
HISTORY = {10: {"loss": 1.0, "acc": 0.5}, 20: {"loss": 0.5, "acc": 0.625},
           30: {"loss": 0.75, "acc": 0.625}, 40: {"loss": 0.875, "acc": 0.5625}}


def with_history(path: Any) -> tf.estimator.Estimator:
    est = estimator(path)
    for step, metrics in HISTORY.items():
        write_dict_to_summary(est.eval_dir(), metrics, step)
    FileWriterCache.clear()
    return est


def trained_steps(est: tf.estimator.Estimator, hook_fn: Any, **kwargs: Any) -> int:
    """The global step that training up to step 4 reaches with the hook checking every step."""
    hook = hook_fn(est, **kwargs, run_every_secs=None, run_every_steps=1)
    est.train(train_input_fn(), hooks=[hook], max_steps=4)
    return int(est.get_variable_value("global_step"))


@pytest.mark.parametrize(("hook_fn", "kwargs", "stops"), [
    (experimental.stop_if_no_decrease_hook,
     {"metric_name": "loss", "max_steps_without_decrease": 20}, True),
    (experimental.stop_if_no_decrease_hook,
     {"metric_name": "loss", "max_steps_without_decrease": 21}, False),
    # An equal value is no improvement: acc's best stays at step 20.
    (experimental.stop_if_no_increase_hook,
     {"metric_name": "acc", "max_steps_without_increase": 20}, True),
    (experimental.stop_if_no_increase_hook,
     {"metric_name": "acc", "max_steps_without_increase": 21}, False),
    (experimental.stop_if_no_decrease_hook,  # from step 30 on, the best is at 30
     {"metric_name": "loss", "max_steps_without_decrease": 20, "min_steps": 30}, False),
    (experimental.stop_if_higher_hook, {"metric_name": "acc", "threshold": 0.6}, True),
    (experimental.stop_if_higher_hook, {"metric_name": "acc", "threshold": 0.625}, False),
    (experimental.stop_if_lower_hook, {"metric_name": "loss", "threshold": 0.51}, True),
    (experimental.stop_if_lower_hook, {"metric_name": "loss", "threshold": 0.5}, False),
    (experimental.stop_if_lower_hook,
     {"metric_name": "loss", "threshold": 0.8, "min_steps": 30}, True),
    (experimental.stop_if_lower_hook,
     {"metric_name": "loss", "threshold": 0.75, "min_steps": 30}, False),
])
def test_stop_if_hooks_stop_at_the_first_step_when_the_history_says_so(
        tmp_path: Any, hook_fn: Any, kwargs: dict[str, Any], stops: bool) -> None:
    est = with_history(tmp_path)
    assert trained_steps(est, hook_fn, **kwargs) == (1 if stops else 4)
    variables = dict(tf.train.list_variables(str(tmp_path)))
    assert "signal_early_stopping/STOP" in variables
    assert bool(tf.train.load_variable(str(tmp_path), "signal_early_stopping/STOP")) is stops


def test_hooks_read_another_eval_dir(tmp_path: Any) -> None:
    est = estimator(tmp_path / "model")
    other = str(tmp_path / "other_eval")
    write_dict_to_summary(other, {"loss": 0.1}, 5)
    FileWriterCache.clear()
    assert trained_steps(est, experimental.stop_if_lower_hook, metric_name="loss",
                         threshold=0.2, eval_dir=other) == 1


def test_read_eval_metrics_merges_files_per_step_in_step_order(tmp_path: Any) -> None:
    eval_dir = str(tmp_path)
    write_dict_to_summary(eval_dir, {"loss": 2.0}, 20)
    write_dict_to_summary(eval_dir, {"loss": 0.0, "acc": 0.25}, 10)
    FileWriterCache.clear()
    writer = tf.summary.FileWriter(eval_dir)  # a second event file
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="auc", simple_value=0.75)]), 20)
    writer.close()
    assert read_eval_metrics(eval_dir) == {10: {"loss": 0.0, "acc": 0.25},
                                           20: {"loss": 2.0, "auc": 0.75}}
    assert read_eval_metrics(str(tmp_path / "missing")) == {}


def test_make_early_stopping_hook_calls_the_predicate_on_its_schedule(tmp_path: Any) -> None:
    est = estimator(tmp_path)
    calls: list[int] = []

    def should_stop() -> bool:
        calls.append(1)
        return len(calls) == 3

    hook = experimental.make_early_stopping_hook(est, should_stop, run_every_secs=None,
                                                 run_every_steps=2)
    est.train(train_input_fn(), hooks=[hook], max_steps=20)
    # Checked after the first step, then every second step: stops after step 5.
    assert len(calls) == 3
    assert est.get_variable_value("global_step") == 5


def test_make_early_stopping_hook_argument_errors(tmp_path: Any) -> None:
    est = estimator(tmp_path)
    with pytest.raises(TypeError, match="`estimator` must have type `tf.estimator.Estimator`"):
        experimental.make_early_stopping_hook(3, lambda: True)
    with pytest.raises(ValueError, match="Only one of `run_every_secs` and `run_every_steps`"):
        experimental.make_early_stopping_hook(est, lambda: True, run_every_secs=1,
                                              run_every_steps=1)


def counting_model_fn(features: Any, labels: Any, mode: str) -> Any:
    """Each step adds 1 to ``w``; the loss is ``(w - 3)^2``, so evaluations after steps 2, 4,
    6 ... give 1, 1, 9, ...: no decrease after step 2."""
    w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
    loss = tf.square(w - 3.0) + 0.0 * tf.reduce_sum(features["x"])
    train_op = tf.group(tf.assign_add(w, 1.0),
                        tf.assign_add(tf.train.get_global_step(), 1))
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_stop_if_no_decrease_under_train_and_evaluate(tmp_path: Any) -> None:
    est = tf.estimator.Estimator(counting_model_fn, model_dir=str(tmp_path),
                                 config=tf.estimator.RunConfig(save_checkpoints_steps=2,
                                                               log_step_count_steps=None))
    hook = experimental.stop_if_no_decrease_hook(est, "loss", 4, run_every_secs=None,
                                                 run_every_steps=1)
    metrics, _ = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(train_input_fn(), max_steps=100, hooks=[hook]),
        tf.estimator.EvalSpec(eval_input_fn(), steps=1, throttle_secs=0))
    # The evaluation of step 6 (loss 9, 4 steps after the best, 1 at step 2) is written by the
    # checkpoint saver, which runs before the user's hooks: training stops right at step 6.
    assert est.get_variable_value("global_step") == 6
    assert metrics["global_step"] == 6
    np.testing.assert_allclose(metrics["loss"], 9.0)
    assert sorted(read_eval_metrics(est.eval_dir())) == [2, 4, 6]


def test_a_worker_stops_when_the_chief_sets_the_stop_variable(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"chief": ["localhost:2222"], "worker": '
                                    '["localhost:2223"]}, "task": {"type": "worker", '
                                    '"index": 0}}')
    worker = estimator(tmp_path)
    assert not worker.config.is_chief
    asked: list[int] = []
    with tf.Graph().as_default():
        hook = experimental.make_early_stopping_hook(worker, lambda: bool(asked.append(1)))
        with tf.variable_scope("signal_early_stopping", reuse=tf.AUTO_REUSE):
            stop = tf.get_variable("STOP", [], tf.bool, initializer=tf.zeros_initializer(),
                                   trainable=False)
        signal = tf.assign(stop, True)  # what the chief's hook runs
        step = tf.assign_add(tf.train.get_or_create_global_step(), 1)
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            sess.run(step)
            assert not sess.should_stop()
            sess.run(signal)
            if not sess.should_stop():  # the hook's read may have preceded the assignment
                sess.run(step)
            assert sess.should_stop()
    assert asked == []  # a worker never evaluates the predicate itself
