"""``tf.contrib.slim.learning``: building a train op and running TF1's Supervisor training loop.

Contract: `create_train_op` makes `total_loss` wait for `update_ops` (``UPDATE_OPS`` by
default), takes the optimizer's gradients for `variables_to_train` (the trainable variables by
default), multiplies them by `gradient_multipliers`, clips each to `clip_gradient_norm` (its
own norm, not the global one), optionally summarizes them, applies them (incrementing
`global_step`) and returns the loss tensor that runs the update (checked for inf/nan with
`check_numerics`); the train op is added to ``TRAIN_OP``.

`train` builds its stop and log tensors, then runs ``train_step_fn(sess, train_op, global_step,
kwargs)`` in a `Supervisor`'s managed session (init, ``init_fn``, restore from `logdir`,
summary and checkpoint threads) until `number_of_steps` global steps or an
``OutOfRangeError``, saves a final checkpoint in `logdir` and returns the last loss.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from tensorweave.api import math_ops
from tensorweave.api.control_flow_ops import group, identity, no_op
from tensorweave.api.indexed_slices import IndexedSlices

# the name `check_numerics` is create_train_op's flag
from tensorweave.api.numerics import check_numerics as _check_numerics
from tensorweave.api.scopes import control_dependencies, name_scope
from tensorweave.api.summary_ops import histogram, merge_all, scalar
from tensorweave.api.variables import (
    global_variables_initializer,
    local_variables_initializer,
    report_uninitialized_variables,
    tables_initializer,
    trainable_variables,
)
from tensorweave.engine import errors
from tensorweave.engine.graph.constant_op import constant
from tensorweave.engine.graph.graph import GraphKeys, get_default_graph
from tensorweave.train.optimizers import Optimizer
from tensorweave.train.saver import Saver
from tensorweave.train.supervisor import Supervisor
from tensorweave.train.training_util import get_or_create_global_step

__all__ = [
    "add_gradients_summaries", "clip_gradient_norms", "create_train_op", "multiply_gradients",
    "train", "train_step",
]

_log = logging.getLogger(__name__)
_USE_DEFAULT: Any = object()
_USE_GLOBAL_STEP: Any = object()

GradsAndVars = list[tuple[Any, Any]]


def _after(dependencies: list[Any], tensor: Any) -> Any:
    """`tensor`'s value, produced once `dependencies` have run."""
    with name_scope(None, "control_dependency", [*dependencies, tensor]) as scope:
        with control_dependencies(dependencies):
            return identity(tensor, name=scope)


def _map_gradient(grad: Any, fn: Callable[[Any], Any]) -> Any:
    """`fn` applied to a dense gradient or to an ``IndexedSlices``' values."""
    if isinstance(grad, IndexedSlices):
        return IndexedSlices(fn(grad.values), grad.indices, grad.dense_shape)
    return fn(grad)


def clip_gradient_norms(gradients_to_variables: GradsAndVars, max_norm: float
                        ) -> GradsAndVars:
    """Each gradient clipped to L2 norm `max_norm` on its own."""
    return [(None if g is None else _map_gradient(g, lambda t: math_ops.clip_by_norm(t, max_norm)),
             v) for g, v in gradients_to_variables]


def multiply_gradients(grads_and_vars: GradsAndVars, gradient_multipliers: dict[Any, Any]
                       ) -> GradsAndVars:
    """Each gradient times its variable's (or variable op name's) multiplier, if any."""
    if not isinstance(grads_and_vars, list):
        raise ValueError("`grads_and_vars` must be a list.")
    if not gradient_multipliers:
        raise ValueError("`gradient_multipliers` is empty.")
    multiplied = []
    for grad, var in grads_and_vars:
        key = var if var in gradient_multipliers else var.op.name
        if grad is not None and key in gradient_multipliers:
            factor = gradient_multipliers[key]
            grad = _map_gradient(grad, lambda t, f=factor: math_ops.multiply(
                t, math_ops.cast(f, t.dtype.base_dtype)))
        multiplied.append((grad, var))
    return multiplied


def add_gradients_summaries(grads_and_vars: GradsAndVars) -> list[Any]:
    """A histogram and a norm summary per gradient, named after its variable."""
    summaries = []
    for grad, var in grads_and_vars:
        if grad is None:
            _log.info("Var %s has no gradient", var.op.name)
            continue
        values = grad.values if isinstance(grad, IndexedSlices) else grad
        summaries.append(histogram(f"{var.op.name}_gradient", values))
        summaries.append(scalar(f"{var.op.name}_gradient_norm", math_ops.global_norm([values])))
    return summaries


def create_train_op(total_loss: Any, optimizer: Optimizer, global_step: Any = _USE_GLOBAL_STEP,
                    update_ops: Iterable[Any] | None = None,
                    variables_to_train: list[Any] | None = None,
                    clip_gradient_norm: float = 0, summarize_gradients: bool = False,
                    gate_gradients: int = Optimizer.GATE_OP, aggregation_method: Any = None,
                    colocate_gradients_with_ops: bool = False,
                    gradient_multipliers: dict[Any, Any] | None = None,
                    check_numerics: bool = True) -> Any:
    """The loss tensor whose evaluation runs one training step; see the module docstring."""
    graph = get_default_graph()
    if global_step is _USE_GLOBAL_STEP:
        global_step = get_or_create_global_step()
    registered = graph.get_collection(GraphKeys.UPDATE_OPS)
    update_ops = registered if update_ops is None else list(update_ops)
    if any(all(op is not u for u in update_ops) for op in registered):
        _log.warning("update_ops in create_train_op does not contain all the update_ops in "
                     "GraphKeys.UPDATE_OPS")
    if update_ops:
        with control_dependencies(update_ops):
            barrier = no_op(name="update_barrier")
        total_loss = _after([barrier], total_loss)
    if variables_to_train is None:
        variables_to_train = trainable_variables()
    if not variables_to_train:
        raise ValueError("No variables to train.")
    grads = optimizer.compute_gradients(
        total_loss, variables_to_train, gate_gradients=gate_gradients,
        aggregation_method=aggregation_method,
        colocate_gradients_with_ops=colocate_gradients_with_ops)
    if gradient_multipliers:
        with name_scope("multiply_grads"):
            grads = multiply_gradients(grads, gradient_multipliers)
    if clip_gradient_norm > 0:
        with name_scope("clip_grads"):
            grads = clip_gradient_norms(grads, clip_gradient_norm)
    if summarize_gradients:
        with name_scope("summarize_grads"):
            add_gradients_summaries(grads)
    with name_scope("train_op"):
        grad_updates = optimizer.apply_gradients(grads, global_step=global_step)
        if check_numerics:
            total_loss = _check_numerics(total_loss, "LossTensor is inf or nan")
        train_op = _after([grad_updates], total_loss)
    train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
    if all(op is not train_op for op in train_ops):
        train_ops.append(train_op)
    return train_op



def train_step(sess: Any, train_op: Any, global_step: Any, train_step_kwargs: dict[str, Any]
               ) -> tuple[Any, bool]:
    """One run of `train_op`; returns the loss and whether ``should_stop`` says to stop."""
    start = time.time()
    total_loss, np_global_step = sess.run([train_op, global_step])
    elapsed = time.time() - start
    if "should_log" in train_step_kwargs and sess.run(train_step_kwargs["should_log"]):
        _log.info("global step %d: loss = %.4f (%.3f sec/step)", np_global_step, total_loss,
                  elapsed)
    should_stop = bool(sess.run(train_step_kwargs["should_stop"])) \
        if "should_stop" in train_step_kwargs else False
    return total_loss, should_stop


def _default_step_kwargs(global_step: Any, number_of_steps: int | None,
                         log_every_n_steps: int) -> dict[str, Any]:
    with name_scope("train_step"):
        kwargs: dict[str, Any] = {
            "should_stop": math_ops.greater_equal(global_step, number_of_steps)
            if number_of_steps else constant(False)}
        if log_every_n_steps > 0:
            kwargs["should_log"] = math_ops.equal(
                math_ops.mod(global_step, log_every_n_steps), 0)
    return kwargs


def train(train_op: Any, logdir: str | None,
          train_step_fn: Callable[..., tuple[Any, bool]] = train_step,
          train_step_kwargs: Any = _USE_DEFAULT, log_every_n_steps: int = 1, graph: Any = None,
          master: str = "", is_chief: bool = True, global_step: Any = None,
          number_of_steps: int | None = None, init_op: Any = _USE_DEFAULT,
          init_feed_dict: dict[Any, Any] | None = None, local_init_op: Any = _USE_DEFAULT,
          init_fn: Callable[[Any], None] | None = None, ready_op: Any = _USE_DEFAULT,
          summary_op: Any = _USE_DEFAULT, save_summaries_secs: float = 600,
          summary_writer: Any = _USE_DEFAULT, startup_delay_steps: int = 0,
          saver: Any = None, save_interval_secs: float = 600, sync_optimizer: Any = None,
          session_config: Any = None, session_wrapper: Callable[[Any], Any] | None = None,
          trace_every_n_steps: int | None = None, ignore_live_threads: bool = False) -> Any:
    """Run `train_op` under a Supervisor; returns the last loss. See the module docstring."""
    if train_op is None:
        raise ValueError("train_op cannot be None.")
    if logdir is None:
        if summary_op is not _USE_DEFAULT:
            raise ValueError("Cannot provide summary_op because logdir=None")
        if saver is not None:
            raise ValueError("Cannot provide saver because logdir=None")
        if trace_every_n_steps is not None:
            raise ValueError("Cannot provide trace_every_n_steps because logdir=None")
    if sync_optimizer is not None:
        raise ValueError("tensorweave's slim.learning.train does not support sync_optimizer")
    if trace_every_n_steps is not None:
        raise ValueError("tensorweave's slim.learning.train does not support "
                         "trace_every_n_steps")
    if number_of_steps is not None and number_of_steps <= 0:
        raise ValueError("`number_of_steps` must be either None or a positive number.")
    graph = graph or get_default_graph()
    with graph.as_default():
        if global_step is None:
            global_step = get_or_create_global_step()
        saver = saver or Saver()
        with name_scope("init_ops"):
            if init_op is _USE_DEFAULT:
                init_op = global_variables_initializer()
            if ready_op is _USE_DEFAULT:
                ready_op = report_uninitialized_variables()
            if local_init_op is _USE_DEFAULT:
                local_init_op = group(local_variables_initializer(), tables_initializer())
        if summary_op is _USE_DEFAULT:
            summary_op = merge_all()
        if summary_writer is _USE_DEFAULT:
            summary_writer = Supervisor.USE_DEFAULT
        if train_step_kwargs is _USE_DEFAULT:
            train_step_kwargs = _default_step_kwargs(global_step, number_of_steps,
                                                     log_every_n_steps)
    sv = Supervisor(graph=graph, is_chief=is_chief, logdir=logdir, init_op=init_op,
                    init_feed_dict=init_feed_dict, local_init_op=local_init_op,
                    ready_op=ready_op, summary_op=summary_op, summary_writer=summary_writer,
                    global_step=global_step, saver=saver,
                    save_summaries_secs=save_summaries_secs,
                    save_model_secs=save_interval_secs, init_fn=init_fn)
    if summary_writer is not None:
        train_step_kwargs["summary_writer"] = sv.summary_writer
    total_loss = None
    while True:
        try:
            with sv.managed_session(master, start_standard_services=False,
                                    config=session_config) as sess:
                if session_wrapper is not None:
                    sess = session_wrapper(sess)
                if is_chief and logdir:
                    sv.start_standard_services(sess)
                elif not is_chief and startup_delay_steps > 0:
                    _wait_for_step(sess, global_step,
                                   min(startup_delay_steps, number_of_steps or startup_delay_steps))
                threads = sv.start_queue_runners(sess)
                try:
                    while not sv.should_stop():
                        total_loss, should_stop = train_step_fn(sess, train_op, global_step,
                                                                train_step_kwargs)
                        if should_stop:
                            _log.info("Stopping Training.")
                            sv.request_stop()
                            break
                except errors.OutOfRangeError as exc:
                    _log.info("Caught OutOfRangeError. Stopping Training. %s", exc)
                if logdir and sv.is_chief:
                    _log.info("Finished training! Saving model to disk.")
                    sv.saver.save(sess, sv.save_path, global_step=sv.global_step)
                    sv.stop(threads, close_summary_writer=True,
                            ignore_live_threads=ignore_live_threads)
            return total_loss
        except errors.AbortedError:
            _log.info("Retrying training!")


def _wait_for_step(sess: Any, global_step: Any, step: int) -> None:
    """Block a non-chief worker until the chief's global step reaches `step`."""
    while sess.run(global_step) < step:
        time.sleep(1.0)
