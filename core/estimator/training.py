"""`TrainSpec`, `EvalSpec` and `train_and_evaluate`, as ``tf.compat.v1.estimator``.

Contract: the specs validate their arguments with TF's errors. `train_and_evaluate` runs TF's
local executor: one `Estimator.train` up to ``train_spec.max_steps`` (or to the end of its input)
whose checkpoints drive the evaluations: a saving listener evaluates each new checkpoint, except
the one saved when the session starts, when at least ``eval_spec.throttle_secs`` seconds have
passed since the last evaluation, and evaluates the final checkpoint at the end if it was not
evaluated yet. How often checkpoints come is the estimator's `RunConfig`
(``save_checkpoints_steps``/``save_checkpoints_secs``). It returns ``(metrics, export_results)``:
the last evaluation's result and an empty list. Only local mode exists: `RunConfig` refuses a
``TF_CONFIG`` cluster, and exporters are not implemented (a non-empty `exporters` raises
``ValueError``).
"""

from __future__ import annotations

import logging
from collections import namedtuple
from collections.abc import Callable
from typing import Any

from tensorweave.estimator.estimator import Estimator
from tensorweave.framework.graph import GraphKeys
from tensorweave.train.basic_session_run_hooks import CheckpointSaverListener, SecondOrStepTimer
from tensorweave.train.session_run_hook import SessionRunHook

__all__ = ["EvalSpec", "TrainSpec", "train_and_evaluate"]

_log = logging.getLogger(__name__)


def _validate_hooks(hooks: Any) -> tuple[SessionRunHook, ...]:
    hooks = tuple(hooks or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"All hooks must be `SessionRunHook` instances, given: {hook}")
    return hooks


def _validate_input_fn(input_fn: Any) -> None:
    if not callable(input_fn):
        raise TypeError(f"`input_fn` must be callable, given: {input_fn}")


class TrainSpec(namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks"])):
    """What `train_and_evaluate` trains on, and for how long."""

    __slots__ = ()

    def __new__(cls, input_fn: Callable[..., Any], max_steps: int | None = None,
                hooks: Any = None) -> TrainSpec:
        _validate_input_fn(input_fn)
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        return super().__new__(cls, input_fn, max_steps, _validate_hooks(hooks))


class EvalSpec(namedtuple("EvalSpec", ["input_fn", "steps", "name", "hooks", "exporters",
                                       "start_delay_secs", "throttle_secs"])):
    """What `train_and_evaluate` evaluates on, and how often at most."""

    __slots__ = ()

    def __new__(cls, input_fn: Callable[..., Any], steps: int | None = 100,
                name: str | None = None, hooks: Any = None, exporters: Any = None,
                start_delay_secs: float = 120, throttle_secs: float = 600) -> EvalSpec:
        _validate_input_fn(input_fn)
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"`name` must be string, given: {name}")
        if exporters:
            raise ValueError("EvalSpec(exporters=...) is not supported: tensorweave has no "
                             "SavedModel export.")
        if start_delay_secs < 0:
            raise ValueError(f"Must specify start_delay_secs >= 0, given: {start_delay_secs}")
        if throttle_secs < 0:
            raise ValueError(f"Must specify throttle_secs >= 0, given: {throttle_secs}")
        return super().__new__(cls, input_fn, steps, name, _validate_hooks(hooks), (),
                               start_delay_secs, throttle_secs)


class _Evaluator:
    """Evaluates the estimator's newest checkpoint, once per checkpoint."""

    def __init__(self, estimator: Estimator, eval_spec: EvalSpec) -> None:
        self._estimator = estimator
        self._eval_spec = eval_spec
        self._previous_ckpt_path: str | None = None

    def evaluate(self) -> dict[str, Any] | None:
        """The metrics of the newest checkpoint, or ``None`` if there is no new one."""
        latest = self._estimator.latest_checkpoint()
        if not latest:
            _log.warning("Estimator is not trained yet. Will start an evaluation when a "
                         "checkpoint is ready.")
            return None
        if latest == self._previous_ckpt_path:
            _log.warning("No new checkpoint ready for evaluation. Skip the current evaluation "
                         "pass as evaluation results are expected to be same for the same "
                         "checkpoint.")
            return None
        metrics = self._estimator.evaluate(
            input_fn=self._eval_spec.input_fn, steps=self._eval_spec.steps,
            name=self._eval_spec.name, checkpoint_path=latest, hooks=self._eval_spec.hooks)
        if not metrics:
            raise RuntimeError("Internal error: `Estimator.evaluate` should never return empty "
                               "metrics.")
        if GraphKeys.GLOBAL_STEP not in metrics:
            raise RuntimeError("Internal error: `Estimator.evaluate` result should have "
                               f"`global_step` in result. Given {metrics}")
        self._previous_ckpt_path = latest
        return metrics


class _NewCheckpointListenerForEvaluate(CheckpointSaverListener):
    """Evaluates after checkpoint saves, at most every `eval_throttle_secs` seconds."""

    def __init__(self, evaluator: _Evaluator, eval_throttle_secs: float) -> None:
        self._evaluator = evaluator
        self._eval_throttle_secs = eval_throttle_secs
        self.eval_result: dict[str, Any] | None = None

    def begin(self) -> None:
        self._timer = SecondOrStepTimer(every_secs=self._eval_throttle_secs)
        self._is_first_run = True

    def after_save(self, session: Any, global_step_value: int) -> None:
        if self._is_first_run:
            # The checkpoint saved when the session starts holds nothing new to evaluate.
            self._is_first_run = False
            return
        if self._timer.should_trigger_for_step(global_step_value):
            self._evaluate(global_step_value)
        else:
            _log.info("Skip the current checkpoint eval due to throttle secs (%s secs).",
                      self._eval_throttle_secs)

    def end(self, session: Any, global_step_value: int) -> None:
        if global_step_value != self._timer.last_triggered_step():
            self._evaluate(global_step_value)

    def _evaluate(self, global_step_value: int) -> None:
        self._timer.update_last_triggered_step(global_step_value)
        result = self._evaluator.evaluate()
        if result is None:
            raise RuntimeError("There was no new checkpoint after the training.")
        self.eval_result = result


def train_and_evaluate(estimator: Estimator, train_spec: TrainSpec,
                       eval_spec: EvalSpec) -> tuple[dict[str, Any] | None, list[Any]]:
    """Train `estimator` and evaluate its checkpoints; see the module docstring."""
    if not isinstance(estimator, Estimator):
        raise TypeError("`estimator` must have type `tf.estimator.Estimator`, given "
                        f"{type(estimator)}")
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must have type `tf.estimator.TrainSpec`. Got: "
                        f"{type(train_spec)}")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec`. Got: "
                        f"{type(eval_spec)}")
    config = estimator.config
    _log.info("Start train and evaluate loop. The evaluate will happen after every checkpoint. "
              "Checkpoint frequency is determined based on RunConfig arguments: "
              "save_checkpoints_steps %s or save_checkpoints_secs %s.",
              config.save_checkpoints_steps, config.save_checkpoints_secs)
    listener = _NewCheckpointListenerForEvaluate(_Evaluator(estimator, eval_spec),
                                                 eval_spec.throttle_secs)
    estimator.train(input_fn=train_spec.input_fn, max_steps=train_spec.max_steps,
                    hooks=list(train_spec.hooks), saving_listeners=[listener])
    return listener.eval_result, []
