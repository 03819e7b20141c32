"""``tf.contrib.slim.evaluation``: evaluating a checkpoint once, or each new one as it appears.

Contract: `evaluate_once` restores `checkpoint_path` (`variables_to_restore`, all global
variables by default) into a fresh session, initializes the local variables and tables, runs
`initial_op`, then `eval_op` `num_evals` times, then `final_op`, and writes `summary_op` (the
merged summaries by default) to `logdir` at the restored global step; it returns `final_op`'s
value. `evaluation_loop` does that for every new checkpoint in `checkpoint_dir`, checking every
`eval_interval_secs`, until `max_number_of_evaluations` or no new checkpoint for `timeout`
seconds (then `timeout_fn`, if given, says whether to stop); it returns the last value.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from tensorweave.api.control_flow_ops import group
from tensorweave.api.summary_ops import merge_all
from tensorweave.api.variables import local_variables_initializer, tables_initializer
from tensorweave.engine.client.session import Session
from tensorweave.engine.graph.graph import get_default_graph
from tensorweave.namespaces.summary import FileWriter
from tensorweave.train.checkpoint_management import latest_checkpoint
from tensorweave.train.saver import Saver
from tensorweave.train.training_util import get_global_step

__all__ = ["evaluate_once", "evaluation_loop"]

_USE_DEFAULT: Any = object()


def evaluate_once(master: str, checkpoint_path: str, logdir: str | None, num_evals: int = 1,
                  initial_op: Any = None, initial_op_feed_dict: Any = None,
                  eval_op: Any = None, eval_op_feed_dict: Any = None, final_op: Any = None,
                  final_op_feed_dict: Any = None, summary_op: Any = _USE_DEFAULT,
                  summary_op_feed_dict: Any = None, variables_to_restore: Any = None,
                  session_config: Any = None, hooks: Any = None) -> Any:
    """`final_op`'s value after evaluating `checkpoint_path`; see the module docstring."""
    if hooks:
        raise ValueError("tensorweave's slim.evaluation does not run session hooks")
    if summary_op is _USE_DEFAULT:
        summary_op = merge_all()
    saver = Saver(variables_to_restore)
    local_init = group(local_variables_initializer(), tables_initializer())
    step_tensor = get_global_step()
    with Session(master, graph=get_default_graph(), config=session_config) as sess:
        saver.restore(sess, checkpoint_path)
        sess.run(local_init)
        if initial_op is not None:
            sess.run(initial_op, initial_op_feed_dict)
        if eval_op is not None:
            for _ in range(num_evals):
                sess.run(eval_op, eval_op_feed_dict)
        final_value = None if final_op is None else sess.run(final_op, final_op_feed_dict)
        if summary_op is not None and logdir:
            step = None if step_tensor is None else int(sess.run(step_tensor))
            writer = FileWriter(logdir)
            writer.add_summary(sess.run(summary_op, summary_op_feed_dict), step)
            writer.close()
    return final_value


def _new_checkpoints(checkpoint_dir: str, interval: float, timeout: float | None,
                     timeout_fn: Callable[[], bool] | None) -> Iterator[str]:
    """Each new latest checkpoint of `checkpoint_dir`, polled every `interval` seconds."""
    last = None
    while True:
        deadline = None if timeout is None else time.time() + timeout
        path = latest_checkpoint(checkpoint_dir)
        while path is None or path == last:
            if deadline is not None and time.time() + interval > deadline:
                break
            time.sleep(interval)
            path = latest_checkpoint(checkpoint_dir)
        if path is None or path == last:
            if timeout_fn is None or timeout_fn():
                return
            continue
        last = path
        started = time.time()
        yield path
        time.sleep(max(0.0, interval - (time.time() - started)))


def evaluation_loop(master: str, checkpoint_dir: str, logdir: str | None, num_evals: int = 1,
                    initial_op: Any = None, initial_op_feed_dict: Any = None,
                    init_fn: Callable[[Any], None] | None = None, eval_op: Any = None,
                    eval_op_feed_dict: Any = None, final_op: Any = None,
                    final_op_feed_dict: Any = None, summary_op: Any = _USE_DEFAULT,
                    summary_op_feed_dict: Any = None, variables_to_restore: Any = None,
                    eval_interval_secs: float = 60, max_number_of_evaluations: int | None = None,
                    session_config: Any = None, timeout: float | None = None,
                    timeout_fn: Callable[[], bool] | None = None, hooks: Any = None) -> Any:
    """`evaluate_once` over each new checkpoint of `checkpoint_dir`; returns the last
    `final_op` value."""
    if init_fn is not None:
        raise ValueError("tensorweave's slim.evaluation_loop does not take init_fn")
    if summary_op is _USE_DEFAULT:
        summary_op = merge_all()
    final_value = None
    evaluations = 0
    for path in _new_checkpoints(checkpoint_dir, eval_interval_secs, timeout, timeout_fn):
        final_value = evaluate_once(master, path, logdir, num_evals, initial_op,
                                    initial_op_feed_dict, eval_op, eval_op_feed_dict, final_op,
                                    final_op_feed_dict, summary_op, summary_op_feed_dict,
                                    variables_to_restore, session_config, hooks)
        evaluations += 1
        if max_number_of_evaluations is not None and evaluations >= max_number_of_evaluations:
            break
    return final_value
