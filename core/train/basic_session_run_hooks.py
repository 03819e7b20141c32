"""The standard `SessionRunHook`s, as ``tf.compat.v1.train``'s ``basic_session_run_hooks``.

Contract: `StopAtStepHook` stops once the global step reaches `last_step` (or `num_steps` past
its value when the session was created); `CheckpointSaverHook` saves when a session is created,
then every `save_secs` or `save_steps` global steps and at `end`; `LoggingTensorHook`,
`StepCounterHook` and `NanTensorHook` log through Python's ``logging`` at INFO (TF's
``tf.logging``). Hooks that watch the global step fetch its read with each run and, since that
read may come before or after the step's own update, read it again before acting, as TF does.
`SummarySaverHook` runs its summary op (its own, else the scaffold's) with the first run and then
every `save_steps` global steps or `save_secs` seconds, and adds the result at the global step;
`StepCounterHook` also records ``global_step/sec`` as a scalar summary when it has a
`summary_writer` or an `output_dir`. A hook given only an `output_dir` writes through
`FileWriterCache`, so hooks sharing a directory share its event file. Unlike TF, no
``SessionLog.START`` event is written when a session starts.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tensorweave.api.variables import Variable
from tensorweave.engine import errors
from tensorweave.engine.graph.graph import GraphKeys, Tensor, get_default_graph
from tensorweave.formats.summary_proto import Summary
from tensorweave.namespaces.summary import FileWriter, FileWriterCache
from tensorweave.train.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from tensorweave.train.training_util import get_global_step

__all__ = [
    "CheckpointSaverHook", "CheckpointSaverListener", "FeedFnHook", "FinalOpsHook",
    "LoggingTensorHook", "NanLossDuringTrainingError", "NanTensorHook", "SecondOrStepTimer",
    "StepCounterHook", "StopAtStepHook", "SummarySaverHook", "SummaryWriterCache",
]

# ``tf.compat.v1.train.SummaryWriterCache`` is ``tf.compat.v1.summary.FileWriterCache``.
SummaryWriterCache = FileWriterCache

_log = logging.getLogger(__name__)


def global_step_read(graph: Any = None) -> Tensor | None:
    """A tensor reading the global step (its variable's snapshot), or ``None`` if there is no
    global step. Reading creates no op, so it also works on a finalized graph."""
    step = get_global_step(graph)
    if step is None:
        return None
    return step._as_graph_element() if isinstance(step, Variable) else step


def _required_global_step_read(hook: str) -> Tensor:
    step = global_step_read()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook}.")
    return step


class SecondOrStepTimer:
    """Triggers at most once per step, every `every_secs` seconds or every `every_steps`
    steps (exactly one of them)."""

    def __init__(self, every_secs: float | None = None, every_steps: int | None = None) -> None:
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self) -> None:
        self._last_triggered_step: int | None = None
        self._last_triggered_time: float | None = None

    def should_trigger_for_step(self, step: int) -> bool:
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None:
            assert self._last_triggered_time is not None
            if time.time() >= self._last_triggered_time + self._every_secs:
                return True
        if self._every_steps is not None and step >= self._last_triggered_step + \
                self._every_steps:
            return True
        return False

    def update_last_triggered_step(self, step: int) -> tuple[float | None, int | None]:
        """Record a trigger at `step`; returns the seconds and steps since the previous one
        (``(None, None)`` the first time)."""
        now = time.time()
        if self._last_triggered_time is None or self._last_triggered_step is None:
            elapsed: tuple[float | None, int | None] = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self) -> int | None:
        return self._last_triggered_step


class _NeverTriggerTimer(SecondOrStepTimer):
    """A timer that never triggers (for hooks that act only at the end)."""

    def __init__(self) -> None:
        self.reset()

    def should_trigger_for_step(self, step: int) -> bool:
        return False

    def update_last_triggered_step(self, step: int) -> tuple[float | None, int | None]:
        return (None, None)


def _as_graph_element(obj: Any) -> Any:
    """A tensor of the default graph from a tensor or a name (``"op"`` means ``"op:0"``, and
    must have a single output)."""
    graph = get_default_graph()
    if not isinstance(obj, str):
        if getattr(obj, "graph", None) is not graph:
            raise ValueError(f"Passed {obj} should have graph attribute that is equal to current "
                             f"graph {graph}.")
        return obj
    if ":" in obj:
        return graph.as_graph_element(obj)
    element = graph.as_graph_element(obj + ":0")
    try:
        graph.as_graph_element(obj + ":1")
    except (KeyError, ValueError):
        return element
    raise ValueError(f"Name {obj} is ambiguous, as this `Operation` has multiple outputs "
                     "(at least 2).")


class LoggingTensorHook(SessionRunHook):
    """Logs tensors every `every_n_iter` runs or every `every_n_secs` seconds (exactly one),
    and/or at the end; `tensors` is a dict tag -> tensor (or name), or a list of them."""

    def __init__(self, tensors: Any, every_n_iter: int | None = None,
                 every_n_secs: float | None = None, at_end: bool = False,
                 formatter: Callable[[dict[Any, Any]], str] | None = None) -> None:
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs "
                             "must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if isinstance(tensors, dict):
            self._tag_order = sorted(tensors)
        else:
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        self._tensors = tensors
        self._formatter = formatter
        self._timer = _NeverTriggerTimer() if only_at_end else SecondOrStepTimer(
            every_secs=every_n_secs, every_steps=every_n_iter)
        self._log_at_end = at_end
        self._should_trigger = False

    def begin(self) -> None:
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {tag: _as_graph_element(t) for tag, t in self._tensors.items()}

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def _log_tensors(self, tensor_values: dict[Any, Any]) -> None:
        elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
        with np.printoptions(suppress=True):
            if self._formatter is not None:
                _log.info(self._formatter(tensor_values))
                return
            stats = ", ".join(f"{tag} = {tensor_values[tag]!s}" for tag in self._tag_order)
            if elapsed_secs is not None:
                _log.info("%s (%.3f sec)", stats, elapsed_secs)
            else:
                _log.info("%s", stats)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session: Any) -> None:
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches `last_step`, or `num_steps` past its value
    when the session is created (exactly one of them)."""

    def __init__(self, num_steps: int | None = None, last_step: int | None = None) -> None:
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self) -> None:
        self._global_step_tensor = _required_global_step_read("StopAtStepHook")

    def after_create_session(self, session: Any, coord: Any) -> None:
        if self._last_step is None:
            assert self._num_steps is not None
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        assert self._last_step is not None
        if run_values.results + 1 >= self._last_step:
            # The fetched read may predate this run's update: check the step itself.
            if run_context.session.run(self._global_step_tensor) >= self._last_step:
                run_context.request_stop()


class CheckpointSaverListener:
    """Called around the saves of a `CheckpointSaverHook`; `after_save` returning True asks
    training to stop."""

    def begin(self) -> None:
        pass

    def before_save(self, session: Any, global_step_value: int) -> None:
        pass

    def after_save(self, session: Any, global_step_value: int) -> bool | None:
        return None

    def end(self, session: Any, global_step_value: int) -> None:
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves checkpoints every `save_secs` seconds or `save_steps` global steps (exactly one),
    when a session is created, and at the end. The saver is `saver`, else `scaffold.saver`,
    else the only one of the ``SAVERS`` collection."""

    def __init__(self, checkpoint_dir: str, save_secs: float | None = None,
                 save_steps: int | None = None, saver: Any = None,
                 checkpoint_basename: str = "model.ckpt", scaffold: Any = None,
                 listeners: Sequence[CheckpointSaverListener] | None = None) -> None:
        _log.info("Create CheckpointSaverHook.")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])

    def begin(self) -> None:
        self._global_step_tensor = _required_global_step_read("CheckpointSaverHook")
        self._graph = get_default_graph()
        # TF's hook opens a summary writer on the directory here, which creates it.
        os.makedirs(self._checkpoint_dir, exist_ok=True)
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session: Any, coord: Any) -> None:
        # The checkpoint saved here is the state at the session's first global step.
        global_step = int(session.run(self._global_step_tensor))
        self._save(session, global_step)
        self._timer.update_last_triggered_step(global_step)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._timer.should_trigger_for_step(int(run_values.results) + 1):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._save(run_context.session, global_step):
                    run_context.request_stop()

    def end(self, session: Any) -> None:
        last_step = int(session.run(self._global_step_tensor))
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)

    def _save(self, session: Any, step: int) -> bool:
        """Save the checkpoint of `step`; returns whether a listener asked to stop."""
        for listener in self._listeners:
            listener.before_save(session, step)
        _log.info("Saving checkpoints for %d into %s.", step, self._save_path)
        self._get_saver().save(session, self._save_path, global_step=step)
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                _log.info("A CheckpointSaverListener requested that training be stopped. "
                          "listener: %s", listener)
                should_stop = True
        return should_stop

    def _get_saver(self) -> Any:
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = self._graph.get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(f"No items in collection {GraphKeys.SAVERS}. Please add a saver "
                               "to the collection or provide a saver or scaffold.")
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please "
                               "indicate which one to use by passing it to the constructor.")
        self._saver = savers[0]
        return self._saver


class StepCounterHook(SessionRunHook):
    """Logs ``global_step/sec`` every `every_n_steps` global steps or `every_n_secs` seconds
    (exactly one), and adds it as a scalar summary to `summary_writer` (else the cached writer
    of `output_dir`, if given)."""

    def __init__(self, every_n_steps: int | None = 100, every_n_secs: float | None = None,
                 output_dir: str | None = None, summary_writer: FileWriter | None = None
                 ) -> None:
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._output_dir = output_dir
        self._summary_writer = summary_writer
        self._last_global_step: int | None = None
        self._warnings_left = 5

    def begin(self) -> None:
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._global_step_tensor = _required_global_step_read("StepCounterHook")
        self._summary_tag = get_global_step().op.name + "/sec"

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step_tensor)

    def _log_and_record(self, elapsed_steps: int, elapsed_time: float, global_step: int) -> None:
        steps_per_sec = elapsed_steps / max(elapsed_time, 1e-9)
        if self._summary_writer is not None:
            summary = Summary(value=[Summary.Value(tag=self._summary_tag,
                                                   simple_value=steps_per_sec)])
            self._summary_writer.add_summary(summary, global_step)
        _log.info("%s: %g", self._summary_tag, steps_per_sec)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        stale_global_step = int(run_values.results)
        if self._timer.should_trigger_for_step(stale_global_step + 1):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(global_step)
                if elapsed_time is not None and elapsed_steps is not None:
                    self._log_and_record(elapsed_steps, elapsed_time, global_step)
        if stale_global_step == self._last_global_step and self._warnings_left > 0:
            self._warnings_left -= 1
            _log.warning(
                "It seems that global step (tf.train.get_global_step) has not been increased. "
                "Current value (could be stable): %s vs previous value: %s. You could increase "
                "the global step by passing tf.train.get_global_step() to "
                "Optimizer.apply_gradients or Optimizer.minimize.", stale_global_step,
                self._last_global_step)
        self._last_global_step = stale_global_step


class SummarySaverHook(SessionRunHook):
    """Adds the value of a summary op to `summary_writer` (else the cached writer of
    `output_dir`) at the first run, then every `save_steps` global steps or `save_secs` seconds
    (exactly one). The op is `summary_op` (a tensor or a list of them) or, evaluated at each
    run, `scaffold.summary_op` (exactly one of `summary_op` and `scaffold`); when it is None,
    nothing is written."""

    def __init__(self, save_steps: int | None = None, save_secs: float | None = None,
                 output_dir: str | None = None, summary_writer: FileWriter | None = None,
                 scaffold: Any = None, summary_op: Any = None) -> None:
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self) -> None:
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._next_step: int | None = None
        self._global_step_tensor = _required_global_step_read("SummarySaverHook")

    def _get_summary_op(self) -> list[Any] | None:
        summary_op = self._summary_op if self._summary_op is not None \
            else self._scaffold.summary_op
        if summary_op is None:
            return None
        return summary_op if isinstance(summary_op, list) else [summary_op]

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        # The global step after this run is only known afterwards: trigger on the expected one.
        self._request_summary = (self._next_step is None
                                 or self._timer.should_trigger_for_step(self._next_step))
        requests: dict[str, Any] = {"global_step": self._global_step_tensor}
        summary_op = self._get_summary_op() if self._request_summary else None
        if summary_op is not None:
            requests["summary"] = summary_op
        return SessionRunArgs(requests)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._summary_writer is None:
            return
        global_step = int(run_values.results["global_step"]) + 1
        if self._next_step is None or self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", ()):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session: Any) -> None:
        if self._summary_writer is not None:
            self._summary_writer.flush()


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self) -> str:
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Raises `NanLossDuringTrainingError` when `loss_tensor` is NaN, or with
    `fail_on_nan_loss` False logs a warning and requests a stop."""

    def __init__(self, loss_tensor: Any, fail_on_nan_loss: bool = True) -> None:
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if np.isnan(run_values.results):
            message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                _log.error(message)
                raise NanLossDuringTrainingError
            _log.warning(message)
            run_context.request_stop()


class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` at the end of the session; their values are `final_ops_values`."""

    def __init__(self, final_ops: Any, final_ops_feed_dict: dict[Any, Any] | None = None
                 ) -> None:
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values: Any = None

    @property
    def final_ops_values(self) -> Any:
        return self._final_ops_values

    def end(self, session: Any) -> None:
        if self._final_ops is None:
            return
        try:
            self._final_ops_values = session.run(self._final_ops,
                                                 feed_dict=self._final_ops_feed_dict)
        except (errors.OutOfRangeError, StopIteration):
            _log.warning("An OutOfRangeError or StopIteration exception is raised by the code in "
                         "FinalOpsHook. This typically means the Ops running by the FinalOpsHook "
                         "have a dependency back to some input source, which should not happen.")
            raise


class FeedFnHook(SessionRunHook):
    """Adds the feeds `feed_fn()` returns to every run."""

    def __init__(self, feed_fn: Callable[[], dict[Any, Any]]) -> None:
        self.feed_fn = feed_fn

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())
