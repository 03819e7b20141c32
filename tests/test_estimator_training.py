"""`TrainSpec`, `EvalSpec` and local `train_and_evaluate`: evaluations follow the checkpoints."""

from __future__ import annotations

import glob
import os
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tests.estimator_support import (
    closed_writer_cache,  # noqa: F401 - autouse fixture
    data,
    estimator,
    eval_input_fn,
    reference,
    train_input_fn,
)


class EvalCounter(tf.train.SessionRunHook):
    """Counts the evaluations it is part of."""

    def __init__(self) -> None:
        self.evaluations = 0

    def begin(self) -> None:
        self.evaluations += 1


def test_train_and_evaluate_evaluates_each_checkpoint_and_returns_the_last(
        tmp_path: Any) -> None:
    est = estimator(tmp_path, save_checkpoints_steps=10)
    counter = EvalCounter()
    metrics, exports = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(train_input_fn(), max_steps=30),
        tf.estimator.EvalSpec(eval_input_fn(), steps=None, hooks=[counter], throttle_secs=0))
    assert exports == []
    assert counter.evaluations == 3  # steps 10, 20 and 30; not the one at session start
    assert metrics["global_step"] == 30
    x, y = data()
    np.testing.assert_allclose(metrics["mae"], np.mean(np.abs(reference(est, x) - y)),
                               rtol=1e-5)
    assert glob.glob(os.path.join(est.eval_dir(), "events.out.tfevents.*"))


def test_throttle_secs_skips_evaluations_but_not_the_final_one(tmp_path: Any) -> None:
    est = estimator(tmp_path, save_checkpoints_steps=5)
    counter = EvalCounter()
    metrics, _ = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(train_input_fn(), max_steps=20),
        tf.estimator.EvalSpec(eval_input_fn(), hooks=[counter], throttle_secs=3600,
                              name="held_out"))
    assert counter.evaluations == 2  # the first checkpoint after the start, then the last
    assert metrics["global_step"] == 20
    assert os.path.isdir(os.path.join(str(tmp_path), "eval_held_out"))


def test_max_steps_already_reached_trains_and_evaluates_nothing(tmp_path: Any) -> None:
    est = estimator(tmp_path)
    est.train(train_input_fn(), max_steps=5)
    metrics, _ = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(train_input_fn(), max_steps=5),
        tf.estimator.EvalSpec(eval_input_fn()))
    assert metrics is None


def test_spec_validation_errors() -> None:
    fn = eval_input_fn()
    with pytest.raises(TypeError, match="`input_fn` must be callable, given: 3"):
        tf.estimator.TrainSpec(3)
    with pytest.raises(ValueError, match="Must specify max_steps > 0, given: 0"):
        tf.estimator.TrainSpec(fn, max_steps=0)
    with pytest.raises(TypeError, match="All hooks must be `SessionRunHook` instances"):
        tf.estimator.TrainSpec(fn, hooks=["h"])
    with pytest.raises(ValueError, match="Must specify steps > 0, given: 0"):
        tf.estimator.EvalSpec(fn, steps=0)
    with pytest.raises(TypeError, match="`name` must be string, given: 1"):
        tf.estimator.EvalSpec(fn, name=1)
    with pytest.raises(ValueError, match="Must specify throttle_secs >= 0, given: -1"):
        tf.estimator.EvalSpec(fn, throttle_secs=-1)
    with pytest.raises(ValueError, match="Must specify start_delay_secs >= 0"):
        tf.estimator.EvalSpec(fn, start_delay_secs=-1)
    spec = tf.estimator.EvalSpec(fn)
    assert (spec.steps, spec.throttle_secs, spec.start_delay_secs, spec.hooks) == \
        (100, 600, 120, ())


def test_train_and_evaluate_argument_types(tmp_path: Any) -> None:
    est = estimator(tmp_path)
    train = tf.estimator.TrainSpec(train_input_fn(), max_steps=1)
    evaluation = tf.estimator.EvalSpec(eval_input_fn())
    with pytest.raises(TypeError, match="`estimator` must have type `tf.estimator.Estimator`"):
        tf.estimator.train_and_evaluate("est", train, evaluation)
    with pytest.raises(TypeError, match="`train_spec` must have type"):
        tf.estimator.train_and_evaluate(est, evaluation, evaluation)
    with pytest.raises(TypeError, match="`eval_spec` must have type"):
        tf.estimator.train_and_evaluate(est, train, train)
