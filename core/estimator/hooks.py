"""`InMemoryEvaluatorHook`: evaluating an `Estimator` during `train` without checkpoints, as
``tf.estimator.experimental.InMemoryEvaluatorHook``.

Contract: the hook builds the estimator's EVAL graph (on `input_fn`, with `hooks` and, with
`steps`, a stop after that many batches) when training begins. It evaluates when the training
session is created, every `every_n_iter` training iterations and at the end: it copies the
current values of the training graph's global variables into the EVAL graph's variables of the
same name (through placeholders: the EVAL session starts from initialized variables and feeds
them in its ``init_fn``), runs the evaluation and writes the metrics to the eval dir
(``eval`` or ``eval_<name>`` under `model_dir`), as `Estimator.evaluate` would for a checkpoint
of that moment. A scaffold with its own saver or ``init_fn`` cannot be evaluated this way
(``ValueError``), nor can `every_n_iter` <= 0.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from tensorweave.api.control_flow_ops import group
from tensorweave.api.state_ops import assign, placeholder
from tensorweave.engine.graph.graph import Graph, GraphKeys
from tensorweave.estimator.estimator import Estimator, _check_hooks_type
from tensorweave.estimator.evaluation import StopAfterNEvalsHook
from tensorweave.train.basic_session_run_hooks import SecondOrStepTimer
from tensorweave.train.monitored_session import Scaffold
from tensorweave.train.session_run_hook import (
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)

__all__ = ["InMemoryEvaluatorHook"]


class InMemoryEvaluatorHook(SessionRunHook):
    """Evaluates the model being trained from its in-memory variables; see the module
    docstring."""

    def __init__(self, estimator: Estimator, input_fn: Callable[..., Any],
                 steps: int | None = None, hooks: Any = None, name: str | None = None,
                 every_n_iter: int = 100) -> None:
        if every_n_iter is None or every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        self._estimator = estimator
        self._input_fn = input_fn
        self._eval_dir = os.path.join(estimator.model_dir, "eval" if not name else f"eval_{name}")
        self._hooks = _check_hooks_type(hooks)
        if steps is not None:
            self._hooks.append(StopAfterNEvalsHook(num_evals=steps))
        self._timer = SecondOrStepTimer(every_steps=every_n_iter)
        self._graph: Graph | None = None

    def begin(self) -> None:
        self._timer.reset()
        self._iter_count = 0
        self._graph = Graph()
        with self._graph.as_default():
            (self._scaffold, self._update_op, self._eval_dict,
             self._all_hooks) = self._estimator._evaluate_build_graph(self._input_fn,
                                                                      self._hooks, None)
            if self._scaffold.saver is not None:
                raise ValueError("InMemoryEvaluator does not support custom saver")
            if self._scaffold.init_fn is not None:
                raise ValueError("InMemoryEvaluator does not support custom init_fn")
            eval_vars = self._graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
            self._eval_vars = {v.name: v for v in eval_vars}
            self._placeholders = {v.name: placeholder(v.dtype.base_dtype, v.get_shape())
                                  for v in eval_vars}

    def after_create_session(self, session: Any, coord: Any) -> None:
        train_vars = {v.name: v
                      for v in session.graph.get_collection(GraphKeys.GLOBAL_VARIABLES)}
        # Variables only one of the graphs has (optimizer slots, ...) are not copied.
        shared = sorted(set(train_vars) & set(self._eval_vars))
        self._train_vars = {name: train_vars[name] for name in shared}
        assert self._graph is not None
        with self._graph.as_default():
            self._var_feed_op = group(*[assign(self._eval_vars[name], self._placeholders[name])
                                        for name in shared])
        self._evaluate(session)

    def _evaluate(self, train_session: Any) -> None:
        values = train_session.run(self._train_vars)
        feeds = {self._placeholders[name]: value for name, value in values.items()}

        def feed_variables(scaffold: Scaffold, session: Any) -> None:
            session.run(self._var_feed_op, feed_dict=feeds)

        scaffold = Scaffold(init_fn=feed_variables, copy_from_scaffold=self._scaffold)
        assert self._graph is not None
        with self._graph.as_default():
            self._estimator._evaluate_run(None, scaffold, self._update_op, self._eval_dict,
                                          self._all_hooks, self._eval_dir)
        self._timer.update_last_triggered_step(self._iter_count)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        self._iter_count += 1
        if self._timer.should_trigger_for_step(self._iter_count):
            self._evaluate(run_context.session)

    def end(self, session: Any) -> None:
        self._evaluate(session)
