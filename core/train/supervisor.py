"""`Supervisor`: TF1's legacy training helper around a `Coordinator`, a `Saver` and a
`SessionManager`, as ``tf.compat.v1.train.Supervisor``.

Contract: the constructor fills every argument left at `Supervisor.USE_DEFAULT` from the graph's
collections (``READY_OP``, ``READY_FOR_LOCAL_INIT_OP``, ``INIT_OP``, ``LOCAL_INIT_OP``,
``SAVERS``, ``SUMMARY_OP``, ``GLOBAL_STEP``), else builds TF's default (a report of uninitialized
variables, the global variables' initializer, the local variables' initializer, a `Saver` when
there are variables, ``merge_all()``, the tensor ``global_step:0``) and records it in its
collection; ``None`` turns the feature off. Then it finalizes the graph. A non-chief supervisor
needs every variable placed on a device (`ValueError` otherwise) and never saves or writes.

`prepare_or_wait_for_session` clears the coordinator's stop, then on the chief restores the
newest checkpoint of `logdir` or initializes the model (`SessionManager.prepare_session`),
writes ``graph.pbtxt`` and the graph event, and starts the standard services; a non-chief
waits for the chief (`wait_for_session`). With `start_standard_services` it also starts the
graph's queue runners. The standard services are `LooperThread`s of the coordinator: a summary
thread (`summary_op` every `save_summaries_secs`), a step counter (``global_step/sec`` on the
same period) and a checkpoint thread (``<logdir>/<checkpoint_basename>-<step>`` every
`save_model_secs`); a period of 0 turns its service off. Each runs once when started.

`managed_session` yields such a session. An exception from the block or from a service is
reported to the coordinator; on exit `stop` requests the stop, joins every thread (the services,
the queue runners, `loop` threads) within `stop_grace_secs`, closes the summary writer, and
re-raises the reported exception, except `OutOfRangeError` (a clean end of the input); then the
session is closed. `should_stop` is true from the first stop request on.

Deviations from TF: the event files get no ``SessionLog`` (START/STOP/CHECKPOINT) records and no
meta graph, which tensorweave's `FileWriter` does not write; the CamelCase aliases
(``PrepareSession`` ...) are not provided; `Supervisor.USE_DEFAULT` is a sentinel object, not
TF's ``0``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from tensorweave.api.summary_ops import merge_all
from tensorweave.api.variables import (
    global_variables,
    global_variables_initializer,
    report_uninitialized_variables,
)
from tensorweave.engine.client.config import RunOptions
from tensorweave.engine.client.session import Session
from tensorweave.engine.graph.graph import Graph, GraphKeys, get_default_graph
from tensorweave.formats.summary_proto import Summary
from tensorweave.namespaces.summary import FileWriter
from tensorweave.train.coordinator import Coordinator, LooperThread
from tensorweave.train.graph_io import write_graph
from tensorweave.train.monitored_session import Scaffold, SessionManager
from tensorweave.train.queue_runner import QueueRunner
from tensorweave.train.saver import Saver
from tensorweave.train.training_util import global_step as global_step_value

__all__ = ["Supervisor"]

_log = logging.getLogger(__name__)

_VARIABLE_OPS = ("Variable", "VariableV2", "VarHandleOp")


def _first_of_collection(graph: Graph, key: str) -> Any:
    items = graph.get_collection(key)
    if len(items) > 1:
        _log.info("Found %d %s operations. Returning the first one.", len(items), key)
    return items[0] if items else None


def _default_global_step(graph: Graph) -> Any:
    """The tensor ``global_step:0`` when it is an integer, else ``None`` (as TF)."""
    try:
        step = graph.get_tensor_by_name("global_step:0")
    except KeyError:
        return None
    if step.dtype.base_dtype.name in ("int32", "int64"):
        return step
    _log.warning("Found 'global_step' is not an int type: %s", step.dtype)
    return None


class Supervisor:
    """Initializes or restores the model, runs the checkpoint and summary services, and stops
    every thread together; see the module docstring."""

    USE_DEFAULT: Any = object()

    def __init__(self, graph: Graph | None = None, ready_op: Any = USE_DEFAULT,
                 ready_for_local_init_op: Any = USE_DEFAULT, is_chief: bool = True,
                 init_op: Any = USE_DEFAULT, init_feed_dict: dict[Any, Any] | None = None,
                 local_init_op: Any = USE_DEFAULT, logdir: str | None = None,
                 summary_op: Any = USE_DEFAULT, saver: Any = USE_DEFAULT,
                 global_step: Any = USE_DEFAULT, save_summaries_secs: float = 120,
                 save_model_secs: float = 600, recovery_wait_secs: float = 30,
                 stop_grace_secs: float = 120, checkpoint_basename: str = "model.ckpt",
                 session_manager: SessionManager | None = None,
                 summary_writer: Any = USE_DEFAULT,
                 init_fn: Callable[[Session], None] | None = None,
                 local_init_run_options: RunOptions | None = None) -> None:
        self._graph = graph if graph is not None else get_default_graph()
        with self._graph.as_default():
            self._ready_op = self._or_default(ready_op, GraphKeys.READY_OP,
                                              report_uninitialized_variables)
            # As TF: no default readiness check before the local init op.
            self._ready_for_local_init_op = self._or_default(
                ready_for_local_init_op, GraphKeys.READY_FOR_LOCAL_INIT_OP, lambda: None)
            self._init_op = self._or_default(init_op, GraphKeys.INIT_OP,
                                             global_variables_initializer)
            self._local_init_op = self._or_default(local_init_op, GraphKeys.LOCAL_INIT_OP,
                                                   Scaffold.default_local_init_op)
            self._saver: Saver | None = self._or_default(
                saver, GraphKeys.SAVERS, lambda: Saver() if global_variables() else None)
            self._summary_op = self._or_default(summary_op, GraphKeys.SUMMARY_OP, merge_all)
            self._global_step = self._or_default(global_step, GraphKeys.GLOBAL_STEP,
                                                 lambda: _default_global_step(self._graph))
        self._init_feed_dict = init_feed_dict
        self._is_chief = is_chief
        self._coord = Coordinator()
        self._recovery_wait_secs = recovery_wait_secs
        self._stop_grace_secs = stop_grace_secs
        self._init_fn = init_fn
        # Only a chief saves checkpoints and writes events.
        self._logdir: str | None = None
        self._save_summaries_secs: float | None = None
        self._save_model_secs: float | None = None
        self._save_path: str | None = None
        self._summary_writer: FileWriter | None = None
        self._graph_added_to_summary = False
        if is_chief:
            self._logdir = logdir
            self._save_summaries_secs = save_summaries_secs
            self._save_model_secs = save_model_secs
            if logdir:
                self._save_path = os.path.join(logdir, checkpoint_basename)
            if summary_writer is Supervisor.USE_DEFAULT:
                self._summary_writer = FileWriter(logdir) if logdir else None
            else:
                self._summary_writer = summary_writer
        self._session_manager = session_manager if session_manager is not None else \
            SessionManager(local_init_op=self._local_init_op, ready_op=self._ready_op,
                           ready_for_local_init_op=self._ready_for_local_init_op,
                           graph=self._graph, recovery_wait_secs=recovery_wait_secs,
                           local_init_run_options=local_init_run_options)
        self._verify_setup()
        self._graph.finalize()  # the supervisor's ops are all built: the graph may not change

    def _or_default(self, value: Any, key: str, build: Callable[[], Any]) -> Any:
        """`value`, unless it is `USE_DEFAULT`: then the collection's first item, or a new
        default recorded in the collection."""
        if value is not Supervisor.USE_DEFAULT:
            return value
        found = _first_of_collection(self._graph, key)
        if found is not None:
            return found
        built = build()
        if built is not None:
            self._graph.add_to_collection(key, built)
        return built

    def _verify_setup(self) -> None:
        # Replicas share the chief's variables, so each must live on a known (ps) device.
        if self._is_chief:
            return
        for op in self._graph.get_operations():
            if op.type in _VARIABLE_OPS and not op.device:
                raise ValueError(f"When using replicas, all Variables must have their device "
                                 f"set: {op.name}")

    # -- properties ---------------------------------------------------------------------------

    @property
    def is_chief(self) -> bool:
        return self._is_chief

    @property
    def session_manager(self) -> SessionManager:
        return self._session_manager

    @property
    def coord(self) -> Coordinator:
        """The coordinator of every thread the supervisor starts."""
        return self._coord

    @property
    def init_op(self) -> Any:
        return self._init_op

    @property
    def init_feed_dict(self) -> dict[Any, Any] | None:
        return self._init_feed_dict

    @property
    def ready_op(self) -> Any:
        return self._ready_op

    @property
    def ready_for_local_init_op(self) -> Any:
        return self._ready_for_local_init_op

    @property
    def summary_writer(self) -> FileWriter | None:
        return self._summary_writer

    @property
    def summary_op(self) -> Any:
        return self._summary_op

    @property
    def save_summaries_secs(self) -> float | None:
        return self._save_summaries_secs

    @property
    def global_step(self) -> Any:
        return self._global_step

    @property
    def saver(self) -> Saver | None:
        return self._saver

    @property
    def save_model_secs(self) -> float | None:
        return self._save_model_secs

    @property
    def save_path(self) -> str | None:
        return self._save_path

    # -- sessions and services ----------------------------------------------------------------

    def _write_graph(self) -> None:
        if self._logdir:
            write_graph(self._graph, self._logdir, "graph.pbtxt")
        if self._summary_writer is not None and not self._graph_added_to_summary:
            self._summary_writer.add_graph(self._graph)
            self._graph_added_to_summary = True

    def start_standard_services(self, sess: Session) -> list[threading.Thread]:
        """Start the summary, step-counter and checkpoint threads that the constructor's
        arguments call for; returns them (none without a `logdir`)."""
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. Because "
                               "only chief supervisors can write events.")
        if not self._logdir:
            _log.warning("Standard services need a 'logdir' passed to the SessionManager")
            return []
        threads: list[threading.Thread] = []
        if self._save_summaries_secs and self._summary_writer is not None:
            if self._summary_op is not None:
                threads.append(SVSummaryThread(self, sess))
            if self._global_step is not None:
                threads.append(SVStepCounterThread(self, sess))
        if self._saver is not None and self._save_model_secs:
            threads.append(SVTimerCheckpointThread(self, sess))
        for thread in threads:
            thread.start()
        return threads

    def prepare_or_wait_for_session(self, master: str = "", config: Any = None,
                                    wait_for_checkpoint: bool = False,
                                    max_wait_secs: float = 7200,
                                    start_standard_services: bool = True) -> Session:
        """A session whose model is ready: restored or initialized by the chief, waited for
        by the others; see the module docstring."""
        # A supervisor may make sessions again after a stop: its threads must be able to run.
        self._coord.clear_stop()
        if self._summary_writer is not None:
            self._summary_writer.reopen()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self._init_op, saver=self._saver, checkpoint_dir=self._logdir,
                wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
                config=config, init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            self._write_graph()
            if start_standard_services:
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config,
                                                          max_wait_secs=max_wait_secs)
        if start_standard_services:
            self.start_queue_runners(sess)
        return sess

    def start_queue_runners(self, sess: Session,
                            queue_runners: Sequence[QueueRunner] | None = None
                            ) -> list[threading.Thread]:
        """Start the threads of `queue_runners` (default: the graph's ``QUEUE_RUNNERS``)
        under the supervisor's coordinator; returns them."""
        if queue_runners is None:
            queue_runners = self._graph.get_collection(GraphKeys.QUEUE_RUNNERS)
        threads: list[threading.Thread] = []
        for runner in queue_runners:
            threads.extend(runner.create_threads(sess, coord=self._coord, daemon=True,
                                                 start=True))
        return threads

    def loop(self, timer_interval_secs: float | None, target: Callable[..., Any],
             args: Any = None, kwargs: dict[str, Any] | None = None) -> LooperThread:
        """Call `target(*args, **kwargs)` every `timer_interval_secs` (back to back if
        ``None``) in a thread that `stop` joins; returns the started thread."""
        return LooperThread.loop(self._coord, timer_interval_secs, target, args=args,
                                 kwargs=kwargs)

    def stop(self, threads: Sequence[threading.Thread] | None = None,
             close_summary_writer: bool = True, ignore_live_threads: bool = False) -> None:
        """Stop and join the coordinator's threads (and `threads`), then close the summary
        writer; re-raises the exception reported to the coordinator. The session stays
        open."""
        self._coord.request_stop()
        try:
            self._coord.join(threads, stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            # Last, as a service thread may still have been writing.
            if close_summary_writer and self._summary_writer is not None:
                self._summary_writer.close()
                self._graph_added_to_summary = False

    def request_stop(self, ex: Any = None) -> None:
        """Ask every thread to stop; `ex` is re-raised by `stop` (see `Coordinator`)."""
        self._coord.request_stop(ex=ex)

    def should_stop(self) -> bool:
        return self._coord.should_stop()

    def stop_on_exception(self) -> contextlib.AbstractContextManager[None]:
        """A context that reports an exception of its block to the coordinator."""
        return self._coord.stop_on_exception()

    def wait_for_stop(self) -> None:
        self._coord.wait_for_stop()

    def summary_computed(self, sess: Session, summary: Any, global_step: int | None = None
                         ) -> None:
        """Write `summary` (serialized, or a `Summary`) at `global_step` (default: the
        current global step)."""
        if self._summary_writer is None:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self._global_step is not None:
            global_step = global_step_value(sess, self._global_step)
        self._summary_writer.add_summary(summary, global_step)

    @contextlib.contextmanager
    def managed_session(self, master: str = "", config: Any = None,
                        start_standard_services: bool = True,
                        close_summary_writer: bool = True) -> Iterator[Session]:
        """A ready session for a ``with`` block; see the module docstring."""
        sess: Session | None = None
        try:
            sess = self.prepare_or_wait_for_session(
                master=master, config=config, start_standard_services=start_standard_services)
            yield sess
        except Exception as exc:  # noqa: BLE001 - reported here, re-raised by stop()
            self.request_stop(exc)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                if sess is not None:
                    # Also releases runs still blocked on a queue; its errors do not matter.
                    with contextlib.suppress(Exception):
                        sess.close()


# -- the standard services --------------------------------------------------------------------

class SVSummaryThread(LooperThread):
    """Runs the supervisor's summary op and writes its result, every `save_summaries_secs`."""

    def __init__(self, sv: Supervisor, sess: Session) -> None:
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv = sv
        self._sess = sess

    def run_loop(self) -> None:
        if self._sv.global_step is not None:
            summary, step = self._sess.run([self._sv.summary_op, self._sv.global_step])
        else:
            summary, step = self._sess.run(self._sv.summary_op), None
        writer = self._sv.summary_writer
        if writer is not None:
            _log.info("Recording summary at step %s.", step)
            writer.add_summary(summary, None if step is None else int(step))


class SVStepCounterThread(LooperThread):
    """Writes ``<step op name>/sec``, the steps per second since its last run, every
    `save_summaries_secs`."""

    def __init__(self, sv: Supervisor, sess: Session, step_counter: Any = None) -> None:
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv = sv
        self._sess = sess
        self._step_counter = sv.global_step if step_counter is None else step_counter
        self._summary_tag = f"{self._step_counter.op.name}/sec"
        self._last_time = 0.0
        self._last_step = 0

    def start_loop(self) -> None:
        self._last_time = time.time()
        self._last_step = global_step_value(self._sess, self._step_counter)

    def run_loop(self) -> None:
        current_step = global_step_value(self._sess, self._step_counter)
        added_steps = current_step - self._last_step
        self._last_step = current_step
        current_time = time.time()
        elapsed = current_time - self._last_time
        self._last_time = current_time
        steps_per_sec = added_steps / elapsed if elapsed > 0 else float("inf")
        writer = self._sv.summary_writer
        if writer is not None:
            writer.add_summary(Summary(value=[Summary.Value(tag=self._summary_tag,
                                                            simple_value=steps_per_sec)]),
                               current_step)


class SVTimerCheckpointThread(LooperThread):
    """Saves a checkpoint to the supervisor's `save_path` every `save_model_secs`."""

    def __init__(self, sv: Supervisor, sess: Session) -> None:
        super().__init__(sv.coord, sv.save_model_secs)
        self._sv = sv
        self._sess = sess

    def run_loop(self) -> None:
        saver, path = self._sv.saver, self._sv.save_path
        assert saver is not None and path is not None  # started only with both
        _log.info("Saving checkpoint to path %s", path)
        saver.save(self._sess, path, global_step=self._sv.global_step)
