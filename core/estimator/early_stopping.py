"""Early stopping of an `Estimator`'s training on its evaluation metrics, as
``tf.estimator.experimental``'s ``stop_if_*`` hooks and `make_early_stopping_hook`.

Contract: `make_early_stopping_hook(estimator, should_stop_fn)` returns, on the chief, a hook
that calls ``should_stop_fn()`` every `run_every_secs` seconds or `run_every_steps` global steps
(one of them; the first step always checks) and, when it answers true, sets the shared boolean
variable ``signal_early_stopping/STOP`` and stops training; on any other worker it returns a
hook that stops as soon as that variable is set, so every worker of a cluster stops with the
chief.

The ``stop_if_*`` hooks read the evaluations from the event files in `eval_dir` (default
``estimator.eval_dir()``, where `Estimator.evaluate` writes its metrics), ignoring those at a
global step below `min_steps`, and stop:

- `stop_if_higher_hook` / `stop_if_lower_hook`: once `metric_name` of some evaluation is
  strictly above / below `threshold`;
- `stop_if_no_decrease_hook` / `stop_if_no_increase_hook`: once an evaluation comes
  `max_steps_without_decrease` (or ``..._increase``) global steps or more after the one with
  the best value of `metric_name` (strictly better is an improvement).

`read_eval_metrics(eval_dir)` is what they read: ``{global step: {tag: value}}`` in step order,
the scalars of every event file in the directory merged per step.
"""

from __future__ import annotations

import glob
import logging
import operator
import os
from collections.abc import Callable
from typing import Any

from tensorweave.api import init_ops
from tensorweave.api.state_ops import assign
from tensorweave.api.variable_scope import AUTO_REUSE, get_variable, variable_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import GraphKeys
from tensorweave.estimator.estimator import Estimator
from tensorweave.estimator.exporter import read_eval_results
from tensorweave.train.basic_session_run_hooks import SecondOrStepTimer
from tensorweave.train.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from tensorweave.train.training_util import get_global_step

__all__ = ["make_early_stopping_hook", "read_eval_metrics", "stop_if_higher_hook",
           "stop_if_lower_hook", "stop_if_no_decrease_hook", "stop_if_no_increase_hook"]

_log = logging.getLogger(__name__)

_EVENT_FILE_GLOB_PATTERN = "events.out.tfevents.*"


def read_eval_metrics(eval_dir: str) -> dict[int, dict[str, float]]:
    """The evaluations in `eval_dir`'s event files; see the module docstring."""
    merged: dict[int, dict[str, float]] = {}
    for step, scalars in read_eval_results(os.path.join(glob.escape(eval_dir),
                                                        _EVENT_FILE_GLOB_PATTERN)):
        merged.setdefault(step, {}).update(scalars)
    return dict(sorted(merged.items()))


def _get_or_create_stop_var() -> Any:
    # A global variable, so that the chief's decision reaches the workers through the ps.
    with variable_scope("signal_early_stopping", values=[], reuse=AUTO_REUSE):
        return get_variable("STOP", shape=[], dtype=dtypes.bool_,
                            initializer=init_ops.constant_initializer(False),
                            collections=[GraphKeys.GLOBAL_VARIABLES], trainable=False)


class _StopOnPredicateHook(SessionRunHook):
    """The chief's hook: asks `should_stop_fn` on a timer and signals the stop."""

    def __init__(self, should_stop_fn: Callable[[], bool], run_every_secs: float | None,
                 run_every_steps: int | None) -> None:
        if not callable(should_stop_fn):
            raise TypeError(f"`should_stop_fn` must be callable, given: {should_stop_fn}")
        self._should_stop_fn = should_stop_fn
        self._timer = SecondOrStepTimer(every_secs=run_every_secs, every_steps=run_every_steps)

    def begin(self) -> None:
        self._global_step_tensor = get_global_step()
        stop_var = _get_or_create_stop_var()
        self._stop_op = assign(stop_var, True)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        global_step = int(run_values.results)
        if not self._timer.should_trigger_for_step(global_step):
            return
        self._timer.update_last_triggered_step(global_step)
        if self._should_stop_fn():
            _log.info("Requesting early stopping at global step %d", global_step)
            run_context.session.run(self._stop_op)
            run_context.request_stop()


class _CheckForStoppingHook(SessionRunHook):
    """A non-chief worker's hook: stops once the chief has set the stop variable."""

    def begin(self) -> None:
        self._stop_var = _get_or_create_stop_var()

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._stop_var)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if run_values.results:
            _log.info("Early stopping signal received.")
            run_context.request_stop()


def make_early_stopping_hook(estimator: Estimator, should_stop_fn: Callable[[], bool],
                             run_every_secs: float | None = 60,
                             run_every_steps: int | None = None) -> SessionRunHook:
    """A hook that stops training when `should_stop_fn` says so; see the module docstring."""
    if not isinstance(estimator, Estimator):
        raise TypeError("`estimator` must have type `tf.estimator.Estimator`. Got: "
                        f"{type(estimator)}")
    if run_every_secs is not None and run_every_steps is not None:
        raise ValueError("Only one of `run_every_secs` and `run_every_steps` can be set.")
    if estimator.config.is_chief:
        return _StopOnPredicateHook(should_stop_fn, run_every_secs, run_every_steps)
    return _CheckForStoppingHook()


def _stop_if_threshold_crossed_hook(estimator: Estimator, metric_name: str, threshold: float,
                                    higher_is_better: bool, eval_dir: str | None,
                                    min_steps: int, run_every_secs: float | None,
                                    run_every_steps: int | None) -> SessionRunHook:
    eval_dir = eval_dir or estimator.eval_dir()
    crosses = operator.gt if higher_is_better else operator.lt
    relation = "greater than" if higher_is_better else "less than"

    def stop_if_threshold_crossed() -> bool:
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            value = metrics[metric_name]
            if crosses(value, threshold):
                _log.info('At step %s, metric "%s" has value %s which is %s the configured '
                          "threshold (%s) for early stopping.", step, metric_name, value,
                          relation, threshold)
                return True
        return False

    return make_early_stopping_hook(estimator, stop_if_threshold_crossed, run_every_secs,
                                    run_every_steps)


def _stop_if_no_metric_improvement_hook(estimator: Estimator, metric_name: str,
                                        max_steps_without_improvement: int,
                                        higher_is_better: bool, eval_dir: str | None,
                                        min_steps: int, run_every_secs: float | None,
                                        run_every_steps: int | None) -> SessionRunHook:
    eval_dir = eval_dir or estimator.eval_dir()
    improves = operator.gt if higher_is_better else operator.lt
    direction = "increase" if higher_is_better else "decrease"

    def stop_if_no_metric_improvement() -> bool:
        best_value, best_step = None, 0
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            value = metrics[metric_name]
            if best_value is None or improves(value, best_value):
                best_value, best_step = value, step
            if step - best_step >= max_steps_without_improvement:
                _log.info('No %s in metric "%s" for %s steps, which is greater than or equal '
                          "to max steps (%s) configured for early stopping.", direction,
                          metric_name, step - best_step, max_steps_without_improvement)
                return True
        return False

    return make_early_stopping_hook(estimator, stop_if_no_metric_improvement, run_every_secs,
                                    run_every_steps)


def stop_if_higher_hook(estimator: Estimator, metric_name: str, threshold: float,
                        eval_dir: str | None = None, min_steps: int = 0,
                        run_every_secs: float | None = 60,
                        run_every_steps: int | None = None) -> SessionRunHook:
    """Stops once `metric_name` exceeds `threshold`."""
    return _stop_if_threshold_crossed_hook(estimator, metric_name, threshold, True, eval_dir,
                                           min_steps, run_every_secs, run_every_steps)


def stop_if_lower_hook(estimator: Estimator, metric_name: str, threshold: float,
                       eval_dir: str | None = None, min_steps: int = 0,
                       run_every_secs: float | None = 60,
                       run_every_steps: int | None = None) -> SessionRunHook:
    """Stops once `metric_name` falls below `threshold`."""
    return _stop_if_threshold_crossed_hook(estimator, metric_name, threshold, False, eval_dir,
                                           min_steps, run_every_secs, run_every_steps)


def stop_if_no_increase_hook(estimator: Estimator, metric_name: str,
                             max_steps_without_increase: int, eval_dir: str | None = None,
                             min_steps: int = 0, run_every_secs: float | None = 60,
                             run_every_steps: int | None = None) -> SessionRunHook:
    """Stops once `metric_name` has not increased for `max_steps_without_increase` steps."""
    return _stop_if_no_metric_improvement_hook(estimator, metric_name,
                                               max_steps_without_increase, True, eval_dir,
                                               min_steps, run_every_secs, run_every_steps)


def stop_if_no_decrease_hook(estimator: Estimator, metric_name: str,
                             max_steps_without_decrease: int, eval_dir: str | None = None,
                             min_steps: int = 0, run_every_secs: float | None = 60,
                             run_every_steps: int | None = None) -> SessionRunHook:
    """Stops once `metric_name` has not decreased for `max_steps_without_decrease` steps."""
    return _stop_if_no_metric_improvement_hook(estimator, metric_name,
                                               max_steps_without_decrease, False, eval_dir,
                                               min_steps, run_every_secs, run_every_steps)
