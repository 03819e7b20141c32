"""One evaluation pass of an `Estimator`, as TF's ``training/evaluation.py``.

Contract: `evaluate_once` counts the evaluation steps in a local int64 ``eval_step`` variable,
restores `checkpoint_path` (or initializes the model when it is ``None``) through a
`ChiefSessionCreator`, runs `eval_ops` until an input ends (`OutOfRangeError`), a hook asks to
stop (`StopAfterNEvalsHook` after `num_evals` steps), and then reads `final_ops` once, at the
end; it returns their values. `write_dict_to_summary` adds the numeric results as scalar
summaries at the global step in `output_dir` (``global_step`` itself and non-numeric values
are left out; TF also records ``checkpoint_path`` as a string tensor, which is not done here).
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

import numpy as np

from tensorweave.api import init_ops
from tensorweave.api.control_flow_ops import identity
from tensorweave.api.scopes import control_dependencies
from tensorweave.api.state_ops import assign_add
from tensorweave.api.variable_scope import get_variable
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import GraphKeys, get_default_graph
from tensorweave.formats.summary_proto import Summary
from tensorweave.namespaces.summary import FileWriterCache
from tensorweave.train.basic_session_run_hooks import FinalOpsHook
from tensorweave.train.monitored_session import ChiefSessionCreator, MonitoredSession, Scaffold
from tensorweave.train.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)

__all__ = ["StopAfterNEvalsHook", "evaluate_once", "get_or_create_eval_step",
           "write_dict_to_summary"]

_log = logging.getLogger(__name__)

EVAL_STEP = "eval_step"  # TF's GraphKeys.EVAL_STEP


def get_or_create_eval_step() -> Any:
    """The graph's local ``eval_step`` counter, created on first use."""
    graph = get_default_graph()
    steps = graph.get_collection(EVAL_STEP)
    if len(steps) == 1:
        return steps[0]
    if len(steps) > 1:
        raise ValueError("Multiple tensors added to tf.GraphKeys.EVAL_STEP")
    with graph.name_scope(None):
        return get_variable(EVAL_STEP, shape=[], dtype=dtypes.int64,
                            initializer=init_ops.zeros_initializer(), trainable=False,
                            collections=[GraphKeys.LOCAL_VARIABLES, EVAL_STEP])


class StopAfterNEvalsHook(SessionRunHook):
    """Requests a stop once `num_evals` evaluation steps have run."""

    def __init__(self, num_evals: int | None, log_progress: bool = True) -> None:
        self._num_evals = num_evals
        self._evals_completed: Any = None
        self._log_progress = log_progress
        self._log_frequency = (1 if num_evals is None or num_evals < 20
                               else math.floor(num_evals / 10.0))

    def set_evals_completed_tensor(self, updated_eval_step: Any) -> None:
        self._evals_completed = updated_eval_step

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs({"evals_completed": self._evals_completed})

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        evals_completed = int(run_values.results["evals_completed"])
        if self._log_progress and (evals_completed % self._log_frequency == 0
                                   or evals_completed == self._num_evals):
            _log.info("Evaluation [%d/%s]", evals_completed, self._num_evals)
        if self._num_evals is None or evals_completed >= self._num_evals:
            run_context.request_stop()


def evaluate_once(checkpoint_path: str | None, master: str, scaffold: Scaffold, eval_ops: Any,
                  final_ops: dict[str, Any], hooks: list[SessionRunHook],
                  config: Any = None) -> dict[str, Any]:
    """Run one evaluation; see the module docstring."""
    eval_step = get_or_create_eval_step()
    hooks = list(hooks)
    update_eval_step = assign_add(eval_step, 1, use_locking=True)
    eval_ops = [eval_ops, update_eval_step]
    with control_dependencies(eval_ops):
        eval_step_value = identity(eval_step.read_value())
    for hook in hooks:
        if isinstance(hook, StopAfterNEvalsHook):
            hook.set_evals_completed_tensor(eval_step_value)
    _log.info("Starting evaluation at %s", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    start = time.time()
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_filename_with_path=checkpoint_path,
                                  master=master, config=config)
    final_ops_hook = FinalOpsHook(final_ops)
    hooks.append(final_ops_hook)
    with MonitoredSession(session_creator=creator, hooks=hooks) as session:
        while not session.should_stop():
            session.run(eval_ops)
    _log.info("Inference Time : %.5fs", time.time() - start)
    _log.info("Finished evaluation at %s",
              time.strftime("%Y-%m-%d-%H:%M:%S", time.localtime()))
    return final_ops_hook.final_ops_values


def write_dict_to_summary(output_dir: str, dictionary: dict[str, Any],
                          current_global_step: int) -> None:
    """Add `dictionary`'s numeric values as scalar summaries; see the module docstring."""
    _log.info("Saving dict for global step %d: %s", current_global_step,
              ", ".join(f"{k} = {v}" for k, v in sorted(dictionary.items())))
    values = []
    for key, value in dictionary.items():
        if value is None or key == GraphKeys.GLOBAL_STEP:
            continue
        if isinstance(value, (float, int, np.floating, np.integer)) and not isinstance(value,
                                                                                       bool):
            values.append(Summary.Value(tag=key, simple_value=float(value)))
        else:
            _log.warning("Skipping summary for %s, must be a float, np.float32, np.int64, "
                         "np.int32 or int.", key)
    writer = FileWriterCache.get(output_dir)
    writer.add_summary(Summary(value=values), current_global_step)
    writer.flush()
