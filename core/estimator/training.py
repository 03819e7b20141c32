"""`TrainSpec`, `EvalSpec` and `train_and_evaluate`, as ``tf.compat.v1.estimator``.

Contract: the specs validate their arguments with TF's errors. `train_and_evaluate` runs TF
1.15's training executor for the task of the estimator's `RunConfig` (from ``TF_CONFIG``):

- local (no cluster): one `Estimator.train` up to ``train_spec.max_steps`` (or to the end of
  its input) whose checkpoints drive the evaluations: a saving listener evaluates each new
  checkpoint, except the one saved when the session starts, when at least
  ``eval_spec.throttle_secs`` seconds have passed since the last evaluation, and evaluates the
  final checkpoint at the end if it was not evaluated yet. How often checkpoints come is the
  `RunConfig` (``save_checkpoints_steps``/``save_checkpoints_secs``). Returns
  ``(metrics, exports)``: the last evaluation's result and its exporters' results.
- ``ps``: starts this task's `tensorweave.train.Server` and joins it: it never returns.
- ``chief``/``worker``: starts this task's server, waits ``(task_id + 1) * 5`` seconds (at most
  ``experimental_max_worker_delay_secs``, default 60) if it is a ``worker``, then
  `Estimator.train` to ``max_steps`` on ``config.master`` (see `Estimator` for the chief's
  role); returns ``(None, [])``.
- ``master`` (legacy): trains as the chief and evaluates its checkpoints as in local mode;
  returns ``(metrics, exports)``.
- ``evaluator`` (index 0 only): waits ``eval_spec.start_delay_secs``, then evaluates each new
  checkpoint of `model_dir`, at most every ``throttle_secs`` seconds, until one reaches
  ``max_steps`` (forever without ``max_steps``); returns ``(metrics, exports)`` of the last
  one.

A one-task cluster starts no server: its master is local. Deviation from TF: a chief's,
worker's or master's server stops when its training ends (TF's lives until its process exits).
After each evaluation, every exporter of ``eval_spec.exporters`` (`tensorweave.estimator.
exporter`) is called on the evaluated checkpoint, with ``is_the_final_export`` true once the
evaluated global step reaches ``train_spec.max_steps``.
"""

from __future__ import annotations

import logging
import time
from collections import namedtuple
from collections.abc import Callable
from typing import Any

from tensorweave.engine.client.config import ConfigProto
from tensorweave.engine.graph.graph import GraphKeys
from tensorweave.estimator.estimator import Estimator
from tensorweave.estimator.exporter import check_exporters, export_eval_result
from tensorweave.estimator.run_config import RunConfig, TaskType
from tensorweave.train.basic_session_run_hooks import CheckpointSaverListener, SecondOrStepTimer
from tensorweave.train.server_lib import Server
from tensorweave.train.session_run_hook import SessionRunHook

__all__ = ["EvalSpec", "TrainSpec", "train_and_evaluate"]

_log = logging.getLogger(__name__)

# TF's stagger of asynchronous workers: worker i starts (i + 1) * 5 seconds after the chief,
# which helps the model converge; `RunConfig.experimental_max_worker_delay_secs` caps it.
_DELAY_SECS_PER_WORKER = 5
_MAX_DELAY_SECS = 60
_TRAINER_JOBS = (TaskType.CHIEF, TaskType.MASTER, TaskType.WORKER)


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
        if start_delay_secs < 0:
            raise ValueError(f"Must specify start_delay_secs >= 0, given: {start_delay_secs}")
        if throttle_secs < 0:
            raise ValueError(f"Must specify throttle_secs >= 0, given: {throttle_secs}")
        return super().__new__(cls, input_fn, steps, name, _validate_hooks(hooks),
                               check_exporters(exporters), start_delay_secs, throttle_secs)


class _Evaluator:
    """Evaluates the estimator's newest checkpoint, once per checkpoint, and exports it."""

    def __init__(self, estimator: Estimator, eval_spec: EvalSpec,
                 max_training_steps: int | None) -> None:
        self._estimator = estimator
        self._eval_spec = eval_spec
        self._max_training_steps = max_training_steps
        self._previous_ckpt_path: str | None = None
        self.export_results: list[Any] = []

    def evaluate(self) -> dict[str, Any] | None:
        """The metrics of the newest checkpoint, or ``None`` if there is no new one; the
        exporters' results are left in `export_results`."""
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
        is_the_final_export = bool(self._max_training_steps) and (
            metrics[GraphKeys.GLOBAL_STEP] >= self._max_training_steps)
        self.export_results = export_eval_result(self._estimator, self._eval_spec.exporters,
                                                 latest, metrics, is_the_final_export)
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
    """Run this task's part of training and evaluation; see the module docstring."""
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
    if config.task_type == TaskType.EVALUATOR and config.task_id > 0:
        raise ValueError("For distributed training, there can only be one `evaluator` task "
                         f"(with task id 0).  Given task id {config.task_id}")
    if not config.cluster_spec and config.task_type != TaskType.EVALUATOR:
        _log.info("Running training and evaluation locally (non-distributed).")
        return _run_local(estimator, train_spec, eval_spec)
    runners = {TaskType.CHIEF: _run_trainer, TaskType.WORKER: _run_trainer,
               TaskType.MASTER: _run_master, TaskType.EVALUATOR: _run_evaluator,
               TaskType.PS: _run_ps}
    if config.task_type not in runners:
        raise ValueError(f"Task type {config.task_type} is not supported. Supported task types "
                         f"are {sorted(runners)}")
    return runners[config.task_type](estimator, train_spec, eval_spec)


def _run_local(estimator: Estimator, train_spec: TrainSpec,
               eval_spec: EvalSpec) -> tuple[dict[str, Any] | None, list[Any]]:
    config = estimator.config
    _log.info("Start train and evaluate loop. The evaluate will happen after every checkpoint. "
              "Checkpoint frequency is determined based on RunConfig arguments: "
              "save_checkpoints_steps %s or save_checkpoints_secs %s.",
              config.save_checkpoints_steps, config.save_checkpoints_secs)
    evaluator = _Evaluator(estimator, eval_spec, train_spec.max_steps)
    listener = _NewCheckpointListenerForEvaluate(evaluator, eval_spec.throttle_secs)
    estimator.train(input_fn=train_spec.input_fn, max_steps=train_spec.max_steps,
                    hooks=list(train_spec.hooks), saving_listeners=[listener])
    return listener.eval_result, evaluator.export_results


def _run_ps(estimator: Estimator, train_spec: TrainSpec,
            eval_spec: EvalSpec) -> tuple[dict[str, Any] | None, list[Any]]:
    server = _start_std_server(estimator.config)
    assert server is not None  # a ps task always has a master: its own address
    server.join()
    return None, []


def _run_trainer(estimator: Estimator, train_spec: TrainSpec,
                 eval_spec: EvalSpec) -> tuple[dict[str, Any] | None, list[Any]]:
    _start_distributed_training(estimator, train_spec, [])
    return None, []


def _run_master(estimator: Estimator, train_spec: TrainSpec,
                eval_spec: EvalSpec) -> tuple[dict[str, Any] | None, list[Any]]:
    evaluator = _Evaluator(estimator, eval_spec, train_spec.max_steps)
    listener = _NewCheckpointListenerForEvaluate(evaluator, eval_spec.throttle_secs)
    _start_distributed_training(estimator, train_spec, [listener])
    return listener.eval_result, evaluator.export_results


def _run_evaluator(estimator: Estimator, train_spec: TrainSpec,
                   eval_spec: EvalSpec) -> tuple[dict[str, Any] | None, list[Any]]:
    """Evaluate each new checkpoint until one reaches ``train_spec.max_steps``."""
    if eval_spec.start_delay_secs:
        _log.info("Waiting %f secs before starting eval.", eval_spec.start_delay_secs)
        time.sleep(eval_spec.start_delay_secs)
    evaluator = _Evaluator(estimator, eval_spec, train_spec.max_steps)
    while True:
        start = time.monotonic()
        metrics = evaluator.evaluate()
        if metrics is not None:
            global_step = metrics[GraphKeys.GLOBAL_STEP]
            if train_spec.max_steps and global_step >= train_spec.max_steps:
                _log.info("Exiting evaluation, global_step=%s >= train max_steps=%s",
                          global_step, train_spec.max_steps)
                return metrics, evaluator.export_results
        # Evaluations are throttled, not synchronized: checkpoints come when the chief saves.
        remaining = eval_spec.throttle_secs - (time.monotonic() - start)
        if remaining > 0:
            _log.info("Waiting %f secs before starting next eval run.", remaining)
            time.sleep(remaining)
        elif eval_spec.throttle_secs == 0 and metrics is None:
            _log.warning("EvalSpec.throttle_secs is set as 0. This might overload the job "
                         "before finding (next) new checkpoint. Please consider to increase "
                         "it.")


def _start_distributed_training(estimator: Estimator, train_spec: TrainSpec,
                                saving_listeners: list[CheckpointSaverListener]) -> None:
    config = estimator.config
    # The server starts before the delay, so that the other tasks can reach this one.
    server = _start_std_server(config)
    try:
        delay = 0
        if config.task_type == TaskType.WORKER:
            max_delay = config.experimental_max_worker_delay_secs
            max_delay = _MAX_DELAY_SECS if max_delay is None else int(max_delay)
            delay = min(max_delay, (config.task_id + 1) * _DELAY_SECS_PER_WORKER)
        if delay > 0:
            _log.info("Waiting %d secs before starting training.", delay)
            time.sleep(delay)
        estimator.train(input_fn=train_spec.input_fn, max_steps=train_spec.max_steps,
                        hooks=list(train_spec.hooks), saving_listeners=saving_listeners)
    finally:
        if server is not None:
            server.stop()


def _start_std_server(config: RunConfig) -> Server | None:
    """This task's server, started; ``None`` for a one-task cluster, whose master is local."""
    if not config.cluster_spec or not config.task_type or config.task_id is None:
        raise RuntimeError("Could not start server; be sure to specify cluster_spec, "
                           "task_type, and task in RunConfig or set the TF_CONFIG environment "
                           "variable.")
    if not config.master:
        if len(config.cluster_spec.tasks()) == 1 and config.task_type in _TRAINER_JOBS:
            _log.info("Skip starting Tensorflow server as there is only one node in the "
                      "cluster.")
            return None
        raise RuntimeError("Could not start server; be sure to specify master in RunConfig or "
                           "set the TF_CONFIG environment variable.")
    _log.info("Start Tensorflow server.")
    session_config = ConfigProto(log_device_placement=False)
    if config.session_config is not None:
        session_config.gpu_options = config.session_config.gpu_options
    server = Server(config.cluster_spec, job_name=config.task_type, task_index=config.task_id,
                    config=session_config, start=False, protocol=config.protocol)
    server.start()
    _log.info("Started server /job:%s/task:%d on %s.", config.task_type, config.task_id,
              server.target)
    return server
