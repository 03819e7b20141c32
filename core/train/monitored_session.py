"""`MonitoredSession` and `MonitoredTrainingSession`: a session that initializes or restores
the model, runs hooks around every step and recovers from lost tasks, as ``tf.compat.v1.train``.

Contract: a `Scaffold` holds what a session needs (init op, readiness reports, local init op,
summary op, saver); `finalize` builds the missing ones from the graph's collections or defaults,
then finalizes the graph. A `SessionManager` makes sessions: `prepare_session` (the chief)
restores the newest checkpoint of `checkpoint_dir`, or runs the init op, then the local init op,
and checks the model is ready; `wait_for_session` (other workers) polls, with a fresh session every
`recovery_wait_secs`, until the chief has initialized the model, or raises
`DeadlineExceededError`. The model is ready when its ready op returns an empty tensor.

A `MonitoredSession` calls every hook's `begin`, creates its session with a `ChiefSessionCreator`
or `WorkerSessionCreator`, starts the graph's queue runners (with its coordinator), then calls
`after_create_session`. Each `run` merges the hooks' `before_run` fetches and feeds into the
caller's and hands each hook its results in `after_run`;
`should_stop` turns true once a hook requested a stop. Closing (or leaving the ``with`` block
without an error; `OutOfRangeError` and `StopIteration` count as a clean end and are swallowed)
calls the hooks' `end`, which is where `CheckpointSaverHook` writes the final checkpoint, and
un-finalizes the graph if it was not finalized before. A `MonitoredSession` (not a
`SingularMonitoredSession`) recovers: when a run fails with `AbortedError` or `UnavailableError`
(a ps task restarted, a worker lost), it closes the session and creates a new one, which restores
the last checkpoint, then runs the step again.

`MonitoredTrainingSession` on the chief writes summaries to `summary_dir` (default
`checkpoint_dir`): a `StepCounterHook` records ``global_step/sec`` every `log_step_count_steps`,
and a `SummarySaverHook` the scaffold's summary op (by default ``merge_all()``) every
`save_summaries_steps` (default 100) or `save_summaries_secs`.

Deviation from TF: the readiness reports list variable positions, not names (see
`report_uninitialized_variables`).
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tensorweave.api.control_flow_ops import group
from tensorweave.api.summary_ops import merge_all
from tensorweave.api.variables import (
    global_variables,
    global_variables_initializer,
    local_variables_initializer,
    report_uninitialized_variables,
    tables_initializer,
    uninitialized_variable_names,
)
from tensorweave.engine import errors
from tensorweave.engine.client.config import RunMetadata, RunOptions
from tensorweave.engine.client.session import Session
from tensorweave.engine.graph.graph import Graph, GraphKeys, get_default_graph
from tensorweave.train.basic_session_run_hooks import (
    CheckpointSaverHook,
    StepCounterHook,
    SummarySaverHook,
)
from tensorweave.train.checkpoint_management import get_checkpoint_state
from tensorweave.train.coordinator import Coordinator
from tensorweave.train.queue_runner import start_queue_runners
from tensorweave.train.saver import Saver
from tensorweave.train.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)

__all__ = [
    "ChiefSessionCreator", "MonitoredSession", "MonitoredTrainingSession", "Scaffold",
    "SessionCreator", "SessionManager", "SingularMonitoredSession", "WorkerSessionCreator",
]

_log = logging.getLogger(__name__)

# Errors after which a `MonitoredSession` makes a new session (TF's _PREEMPTION_ERRORS).
PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)
# How often the session managers of the session creators poll for the model to be ready, or
# for a checkpoint (TF's SessionManager default).
RECOVERY_WAIT_SECS = 30.0
USE_DEFAULT = object()


# -- scaffold ---------------------------------------------------------------------------------

class Scaffold:
    """The ops and saver a monitored session needs; unset ones are built by `finalize`."""

    def __init__(self, init_op: Any = None, init_feed_dict: dict[Any, Any] | None = None,
                 init_fn: Callable[[Scaffold, Any], None] | None = None, ready_op: Any = None,
                 ready_for_local_init_op: Any = None, local_init_op: Any = None,
                 summary_op: Any = None, saver: Saver | None = None,
                 copy_from_scaffold: Scaffold | None = None,
                 local_init_feed_dict: dict[Any, Any] | None = None) -> None:
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            other = copy_from_scaffold

            def coalesce(mine: Any, theirs: Any) -> Any:
                return mine if mine is not None else theirs

            init_op = coalesce(init_op, other.init_op)
            init_feed_dict = coalesce(init_feed_dict, other.init_feed_dict)
            init_fn = coalesce(init_fn, other._user_init_fn)
            ready_op = coalesce(ready_op, other.ready_op)
            ready_for_local_init_op = coalesce(ready_for_local_init_op,
                                               other.ready_for_local_init_op)
            local_init_op = coalesce(local_init_op, other.local_init_op)
            local_init_feed_dict = coalesce(local_init_feed_dict, other.local_init_feed_dict)
            summary_op = coalesce(summary_op, other.summary_op)
            saver = coalesce(saver, other.saver)
        self._user_init_fn = init_fn
        self._init_fn = None if init_fn is None else (lambda sess: init_fn(self, sess))
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver
        self._graph: Graph | None = None

    def finalize(self) -> Scaffold:
        """Build the missing ops (from the graph's collections, else the defaults) and the
        saver, then finalize the graph; later calls only finalize it again."""
        if self._graph is None:
            self._graph = get_default_graph()
        with self._graph.as_default():
            if self._init_op is None:
                self._init_op = Scaffold.get_or_default(
                    "init_op", GraphKeys.INIT_OP, lambda: group(global_variables_initializer()))
            if self._ready_op is None:
                self._ready_op = Scaffold.get_or_default(
                    "ready_op", GraphKeys.READY_OP, report_uninitialized_variables)
            if self._ready_for_local_init_op is None:
                self._ready_for_local_init_op = Scaffold.get_or_default(
                    "ready_for_local_init_op", GraphKeys.READY_FOR_LOCAL_INIT_OP,
                    lambda: report_uninitialized_variables(global_variables()))
            if self._local_init_op is None:
                self._local_init_op = Scaffold.get_or_default(
                    "local_init_op", GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op)
            if self._summary_op is None:
                self._summary_op = Scaffold.get_or_default("summary_op", GraphKeys.SUMMARY_OP,
                                                           merge_all)
            if self._saver is None:
                self._saver = _get_saver_or_default()
            self._saver.build()
        self._graph.finalize()
        _log.info("Graph was finalized.")
        return self

    @property
    def init_fn(self) -> Callable[[Any], None] | None:
        return self._init_fn

    @property
    def init_op(self) -> Any:
        return self._init_op

    @property
    def ready_op(self) -> Any:
        return self._ready_op

    @property
    def ready_for_local_init_op(self) -> Any:
        return self._ready_for_local_init_op

    @property
    def local_init_op(self) -> Any:
        return self._local_init_op

    @property
    def local_init_feed_dict(self) -> dict[Any, Any] | None:
        return self._local_init_feed_dict

    @property
    def summary_op(self) -> Any:
        return self._summary_op

    @property
    def saver(self) -> Saver | None:
        return self._saver

    @property
    def init_feed_dict(self) -> dict[Any, Any] | None:
        return self._init_feed_dict

    @staticmethod
    def get_or_default(arg_name: str, collection_key: str,
                       default_constructor: Callable[[], Any]) -> Any:
        """The only item of `collection_key`, or a new default added to it."""
        elements = get_default_graph().get_collection(collection_key)
        if elements:
            if len(elements) > 1:
                raise RuntimeError(
                    f'More than one item in the collection "{collection_key}". Please indicate '
                    "which one to use by passing it to the tf.Scaffold constructor as:  "
                    f"tf.Scaffold({arg_name}=item to use)")
            return elements[0]
        op = default_constructor()
        if op is not None:
            get_default_graph().add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op() -> Any:
        """Initializes the local variables and the lookup tables, as TF's."""
        return group(local_variables_initializer(), tables_initializer())


def _get_saver_or_default() -> Saver:
    savers = get_default_graph().get_collection(GraphKeys.SAVERS)
    if savers:
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please "
                               "indicate which one to use by passing it to the constructor.")
        return savers[0]
    saver = Saver(sharded=True, allow_empty=True)
    get_default_graph().add_to_collection(GraphKeys.SAVERS, saver)
    return saver


# -- session manager --------------------------------------------------------------------------

def _maybe_name(obj: Any) -> Any:
    return getattr(obj, "name", obj)


def _ready(op: Any, sess: Session, msg: str) -> tuple[bool, str | None]:
    """Whether `op` (a readiness report) says the model is ready, and if not, why."""
    if op is None:
        return True, None
    try:
        value = sess.run(op)
    except errors.FailedPreconditionError as exc:
        if "uninitialized" not in str(exc):
            _log.warning("%s raised: %s", msg, exc)
            raise
        return False, str(exc)
    # As TF: None and int32 answers count as ready (backward compatibility).
    if value is None or np.asarray(value).dtype == np.int32 or np.size(value) == 0:
        return True, None
    names = uninitialized_variable_names(op, value)
    return False, "Variables not initialized: " + ", ".join(names)


class _CountDownTimer:
    def __init__(self, duration_secs: float) -> None:
        self._start = time.time()
        self._duration = duration_secs

    def secs_remaining(self) -> float:
        return max(0.0, self._duration - (time.time() - self._start))


class SessionManager:
    """Creates sessions that are ready to train: restored or initialized (the chief), or
    waited for (other workers)."""

    def __init__(self, local_init_op: Any = None, ready_op: Any = None,
                 ready_for_local_init_op: Any = None, graph: Graph | None = None,
                 recovery_wait_secs: float = 30,
                 local_init_run_options: RunOptions | None = None,
                 local_init_feed_dict: dict[Any, Any] | None = None) -> None:
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a "
                             f"local_init_op , ready_for_local_init_op [{ready_for_local_init_op}]")
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict

    def _restore_checkpoint(self, master: str, saver: Saver | None = None,
                            checkpoint_dir: str | None = None,
                            checkpoint_filename_with_path: str | None = None,
                            wait_for_checkpoint: bool = False, max_wait_secs: float = 7200,
                            config: Any = None) -> tuple[Session, bool]:
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and "
                             "checkpoint_filename_with_path.")
        sess = Session(master, graph=self._graph, config=config)
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return sess, True
        assert checkpoint_dir is not None
        waited = 0.0
        state = get_checkpoint_state(checkpoint_dir)
        while state is None or not state.model_checkpoint_path:
            if not wait_for_checkpoint or waited >= max_wait_secs:
                return sess, False
            _log.info("Waiting for checkpoint to be available.")
            time.sleep(self._recovery_wait_secs)
            waited += self._recovery_wait_secs
            state = get_checkpoint_state(checkpoint_dir)
        saver.restore(sess, state.model_checkpoint_path)
        saver.recover_last_checkpoints(state.all_model_checkpoint_paths)
        return sess, True

    def prepare_session(self, master: str, init_op: Any = None, saver: Saver | None = None,
                        checkpoint_dir: str | None = None,
                        checkpoint_filename_with_path: str | None = None,
                        wait_for_checkpoint: bool = False, max_wait_secs: float = 7200,
                        config: Any = None, init_feed_dict: dict[Any, Any] | None = None,
                        init_fn: Callable[[Session], None] | None = None) -> Session:
        """A session with the model restored from a checkpoint, or initialized; `RuntimeError`
        if the model is still not ready after that."""
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir, checkpoint_filename_with_path, wait_for_checkpoint,
            max_wait_secs, config)
        if not restored:
            if init_op is None and not init_fn and self._local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or "
                                   "local_init_op was given")
            if init_op is not None:
                sess.run(init_op, feed_dict=init_feed_dict)
            if init_fn:
                init_fn(sess)
        local_init_ok, msg = self._try_run_local_init_op(sess)
        if not local_init_ok:
            raise RuntimeError("Init operations did not make model ready for local_init.  "
                               f"Init op: {_maybe_name(init_op)}, init fn: {init_fn}, "
                               f"error: {msg}")
        ready, msg = _ready(self._ready_op, sess, "Model not ready")
        if not ready:
            raise RuntimeError("Init operations did not make model ready.  Init op: "
                               f"{_maybe_name(init_op)}, init fn: {init_fn}, local_init_op: "
                               f"{self._local_init_op}, error: {msg}")
        return sess

    def recover_session(self, master: str, saver: Saver | None = None,
                        checkpoint_dir: str | None = None,
                        checkpoint_filename_with_path: str | None = None,
                        wait_for_checkpoint: bool = False, max_wait_secs: float = 7200,
                        config: Any = None) -> tuple[Session, bool]:
        """A session restored from a checkpoint if possible; the bool says whether it was
        restored and is ready."""
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir, checkpoint_filename_with_path, wait_for_checkpoint,
            max_wait_secs, config)
        local_init_ok, msg = self._try_run_local_init_op(sess)
        if not restored:
            return sess, False
        source = checkpoint_dir or checkpoint_filename_with_path
        if not local_init_ok:
            _log.info("Restoring model from %s did not make model ready for local init: %s",
                      source, msg)
            return sess, False
        ready, msg = _ready(self._ready_op, sess, "Model not ready")
        if not ready:
            _log.info("Restoring model from %s did not make model ready: %s", source, msg)
            return sess, False
        _log.info("Restored model from %s", source)
        return sess, True

    def wait_for_session(self, master: str, config: Any = None,
                         max_wait_secs: float | None = float("inf")) -> Session:
        """A session once the model is ready (another task initializes it); polls every
        `recovery_wait_secs`; `DeadlineExceededError` after `max_wait_secs`."""
        if max_wait_secs is None:
            max_wait_secs = float("inf")
        timer = _CountDownTimer(max_wait_secs)
        while True:
            sess = Session(master, graph=self._graph, config=config)
            not_ready_msg = None
            local_init_ok, not_ready_local_msg = self._try_run_local_init_op(sess)
            if local_init_ok:
                ready, not_ready_msg = _ready(self._ready_op, sess, "Model not ready")
                if ready:
                    return sess
            _safe_close(sess)
            if timer.secs_remaining() - self._recovery_wait_secs < 0:
                raise errors.DeadlineExceededError(
                    None, None, f"Session was not ready after waiting {max_wait_secs:g} secs.")
            _log.info("Waiting for model to be ready.  Ready_for_local_init_op:  %s, ready: %s",
                      not_ready_local_msg, not_ready_msg)
            time.sleep(self._recovery_wait_secs)

    def _try_run_local_init_op(self, sess: Session) -> tuple[bool, str | None]:
        if self._local_init_op is None:
            return True, None
        ready, msg = _ready(self._ready_for_local_init_op, sess,
                            "Model not ready for local init")
        if not ready:
            return False, msg
        _log.info("Running local_init_op.")
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict,
                 options=self._local_init_run_options)
        _log.info("Done running local_init_op.")
        return True, None


def _safe_close(sess: Any) -> None:
    try:
        sess.close()
    except Exception:  # noqa: BLE001 - closing a session on a lost task may fail; it is gone
        pass


# -- session creators -------------------------------------------------------------------------

class SessionCreator:
    """Makes a `Session` for a `MonitoredSession`."""

    def create_session(self) -> Session:
        raise NotImplementedError(f"create_session is not implemented for {self}.")


def _session_manager(scaffold: Scaffold) -> SessionManager:
    """The `SessionManager` of a finalized `scaffold`'s ops, in the default graph."""
    return SessionManager(
        local_init_op=scaffold.local_init_op, local_init_feed_dict=scaffold.local_init_feed_dict,
        ready_op=scaffold.ready_op, ready_for_local_init_op=scaffold.ready_for_local_init_op,
        graph=get_default_graph(), recovery_wait_secs=RECOVERY_WAIT_SECS)


class ChiefSessionCreator(SessionCreator):
    """The chief's session: restored from `checkpoint_dir` (or the given checkpoint file), or
    initialized."""

    def __init__(self, scaffold: Scaffold | None = None, master: str = "", config: Any = None,
                 checkpoint_dir: str | None = None,
                 checkpoint_filename_with_path: str | None = None) -> None:
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config

    def create_session(self) -> Session:
        self._scaffold.finalize()
        return _session_manager(self._scaffold).prepare_session(
            self._master, saver=self._scaffold.saver, checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config, init_op=self._scaffold.init_op,
            init_feed_dict=self._scaffold.init_feed_dict, init_fn=self._scaffold.init_fn)


class WorkerSessionCreator(SessionCreator):
    """A non-chief worker's session: waits (at most `max_wait_secs`) for the chief to
    initialize the model."""

    def __init__(self, scaffold: Scaffold | None = None, master: str = "", config: Any = None,
                 max_wait_secs: float = 30 * 60) -> None:
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._max_wait_secs = max_wait_secs

    def create_session(self) -> Session:
        self._scaffold.finalize()
        return _session_manager(self._scaffold).wait_for_session(
            self._master, config=self._config, max_wait_secs=self._max_wait_secs)


# -- session wrappers -------------------------------------------------------------------------

class _WrappedSession:
    """A session wrapped by another; `should_stop` asks every layer."""

    def __init__(self, sess: Any) -> None:
        self._sess = sess
        self._wrapped_is_stoppable = isinstance(sess, _WrappedSession)

    @property
    def graph(self) -> Graph:
        return self._sess.graph

    @property
    def sess_str(self) -> str:
        return self._sess.sess_str

    def should_stop(self) -> bool:
        if self._check_stop():
            return True
        if self._sess:
            return self._wrapped_is_stoppable and self._sess.should_stop()
        return True

    def _check_stop(self) -> bool:
        return False

    def close(self) -> None:
        if self._sess:
            try:
                self._sess.close()
            except PREEMPTION_ERRORS as exc:
                _log.error("An error occurred when attempting to close the session. This may "
                           "be due to a preemption in a connected worker or parameter server. "
                           "Error: %s", exc)
            finally:
                self._sess = None

    def run(self, *args: Any, **kwargs: Any) -> Any:
        return self._sess.run(*args, **kwargs)

    def run_step_fn(self, step_fn: Callable[[Any], Any], raw_session: Any,
                    run_with_hooks: Callable[..., Any] | None) -> Any:
        run_with_hooks = run_with_hooks or self.run
        return step_fn(_StepContext(raw_session, run_with_hooks))


class _RecoverableSession(_WrappedSession):
    """Makes a new session when the current one fails with a preemption error."""

    def __init__(self, sess_creator: _CoordinatedSessionCreator) -> None:
        self._sess_creator = sess_creator
        super().__init__(self._create_session())

    def _create_session(self) -> Any:
        while True:
            try:
                return self._sess_creator.create_session()
            except PREEMPTION_ERRORS as exc:
                _log.info("An error was raised while a session was being created. This may be "
                          "due to a preemption of a connected worker or parameter server. A new "
                          "session will be created. Error: %s", exc)

    def _check_stop(self) -> bool:
        try:
            if self._sess:
                return self._sess._check_stop()
            return True
        except PREEMPTION_ERRORS as exc:
            _log.info("An error was raised while considering whether the session is complete. "
                      "This may be due to a preemption in a connected worker or parameter "
                      "server. The current session will be closed and a new session will be "
                      "created. Error: %s", exc)
            self.close()
            self._sess = self._create_session()
            return False  # a session was just made again: the computation goes on
        except Exception:  # noqa: BLE001 - TF: should_stop answers True rather than raising
            return True

    def _recovering(self, call: Callable[[Any], Any]) -> Any:
        """``call(session)``, on a new session after each preemption error."""
        while True:
            try:
                if not self._sess:
                    self._sess = self._create_session()
                return call(self._sess)
            except PREEMPTION_ERRORS as exc:
                _log.info("An error was raised. This may be due to a preemption in a connected "
                          "worker or parameter server. The current session will be closed and "
                          "a new session will be created. Error: %s", exc)
                self.close()
                self._sess = None

    def run(self, fetches: Any, feed_dict: dict[Any, Any] | None = None,
            options: RunOptions | None = None, run_metadata: RunMetadata | None = None) -> Any:
        return self._recovering(lambda sess: sess.run(
            fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata))

    def run_step_fn(self, step_fn: Callable[[Any], Any], raw_session: Any,
                    run_with_hooks: Callable[..., Any] | None) -> Any:
        # The raw session of the current session (TF hands on the one it was given, closed
        # after a recovery).
        return self._recovering(lambda sess: sess.run_step_fn(
            step_fn, self._sess_creator.tf_sess, sess.run))


class _CoordinatedSession(_WrappedSession):
    """Stops and joins the coordinator's threads on close; prefers the coordinator's
    preemption error to the one a run raised because of it."""

    def __init__(self, sess: Any, coord: Coordinator, stop_grace_period_secs: float = 120
                 ) -> None:
        super().__init__(sess)
        self._coord = coord
        self._stop_grace_period_secs = stop_grace_period_secs

    def _check_stop(self) -> bool:
        self._coord.raise_requested_exception()
        return self._coord.should_stop()

    def close(self) -> None:
        self._coord.request_stop()
        try:
            self._coord.join(stop_grace_period_secs=self._stop_grace_period_secs,
                             ignore_live_threads=True)
        finally:
            try:
                _WrappedSession.close(self)
            except Exception:  # noqa: BLE001 - TF ignores errors closing a session here
                pass

    def _coordinated(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except PREEMPTION_ERRORS:
            raise
        except Exception:
            # A preemption the coordinator saw may be the root cause of this error.
            try:
                self._coord.raise_requested_exception()
            except PREEMPTION_ERRORS:
                raise
            except Exception:  # noqa: BLE001 - the run's own error is the one to raise
                pass
            raise

    def run(self, *args: Any, **kwargs: Any) -> Any:
        return self._coordinated(lambda: self._sess.run(*args, **kwargs))

    def run_step_fn(self, step_fn: Callable[[Any], Any], raw_session: Any,
                    run_with_hooks: Callable[..., Any] | None) -> Any:
        return self._coordinated(
            lambda: self._sess.run_step_fn(step_fn, raw_session, run_with_hooks))


class _HookedSession(_WrappedSession):
    """Calls the hooks around each run, merging their fetches, feeds and options in."""

    def __init__(self, sess: Session, hooks: Sequence[SessionRunHook]) -> None:
        super().__init__(sess)
        self._hooks = list(hooks)
        self._should_stop = False

    def _check_stop(self) -> bool:
        return self._should_stop

    def run(self, fetches: Any, feed_dict: dict[Any, Any] | None = None,
            options: RunOptions | None = None, run_metadata: RunMetadata | None = None) -> Any:
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        actual_fetches: dict[Any, Any] = {"caller": fetches}
        run_context = SessionRunContext(original_args=SessionRunArgs(fetches, feed_dict),
                                        session=self._sess)
        options = options or RunOptions()
        feed_dict = self._call_hook_before_run(run_context, actual_fetches, feed_dict, options)
        run_metadata = run_metadata or RunMetadata()
        outputs = self._sess.run(actual_fetches, feed_dict=feed_dict, options=options,
                                 run_metadata=run_metadata)
        for hook in self._hooks:
            hook.after_run(run_context, SessionRunValues(results=outputs.get(hook),
                                                         options=options,
                                                         run_metadata=run_metadata))
        self._should_stop = self._should_stop or run_context.stop_requested
        return outputs["caller"]

    def _call_hook_before_run(self, run_context: SessionRunContext,
                              fetch_dict: dict[Any, Any], user_feed_dict: dict[Any, Any] | None,
                              options: RunOptions) -> dict[Any, Any] | None:
        hook_feeds: dict[Any, Any] = {}
        for hook in self._hooks:
            request = hook.before_run(run_context)
            if request is None:
                continue
            if request.fetches is not None:
                fetch_dict[hook] = request.fetches
            if request.feed_dict:
                _raise_if_feeds_intersect(hook_feeds, request.feed_dict,
                                          "Same tensor is fed by two hooks.")
                hook_feeds.update(request.feed_dict)
            if request.options:
                _merge_run_options(options, request.options)
        if not hook_feeds:
            return user_feed_dict
        if not user_feed_dict:
            return hook_feeds
        _raise_if_feeds_intersect(user_feed_dict, hook_feeds,
                                  "Same tensor is fed by a SessionRunHook and user.")
        hook_feeds.update(user_feed_dict)
        return hook_feeds


def _raise_if_feeds_intersect(feeds1: dict[Any, Any], feeds2: dict[Any, Any], message: str
                              ) -> None:
    intersection = set(feeds1) & set(feeds2)
    if intersection:
        raise RuntimeError(f"{message} Conflict(s): {sorted(map(str, intersection))}")


def _merge_run_options(options: RunOptions, incoming: RunOptions) -> None:
    """Fold a hook's options into the run's: the strongest of each setting wins."""
    options.trace_level = max(options.trace_level, incoming.trace_level)
    options.timeout_in_ms = max(options.timeout_in_ms, incoming.timeout_in_ms)
    options.output_partition_graphs = max(options.output_partition_graphs,
                                          incoming.output_partition_graphs)


class _StepContext:
    """What a `run_step_fn` step function gets: the raw session, and `run_with_hooks`."""

    def __init__(self, session: Session, run_with_hooks_fn: Callable[..., Any]) -> None:
        self._session = session
        self._run_with_hooks_fn = run_with_hooks_fn

    @property
    def session(self) -> Session:
        return self._session

    def run_with_hooks(self, *args: Any, **kwargs: Any) -> Any:
        return self._run_with_hooks_fn(*args, **kwargs)

    def request_stop(self) -> None:
        """Stop the iterations: raises `StopIteration`, which closing the monitored session
        treats as a clean end."""
        raise StopIteration("step_fn has requested the iterations to stop.")


class _CoordinatedSessionCreator(SessionCreator):
    """Creates the raw session, a coordinator, calls the hooks' `after_create_session`, and
    wraps it all into a `_CoordinatedSession` of a `_HookedSession`."""

    def __init__(self, session_creator: SessionCreator, hooks: Sequence[SessionRunHook],
                 stop_grace_period_secs: float, graph: Graph) -> None:
        self._session_creator = session_creator
        self._hooks = hooks
        self._stop_grace_period_secs = stop_grace_period_secs
        self._graph = graph
        self.coord: Coordinator | None = None
        self.tf_sess: Session | None = None

    def create_session(self) -> Any:  # type: ignore[override]
        # A session made again after a recovery runs outside the caller's graph scope.
        with self._graph.as_default():
            self.tf_sess = self._session_creator.create_session()
            self.coord = Coordinator()
            if self._graph.get_collection(GraphKeys.QUEUE_RUNNERS):
                start_queue_runners(sess=self.tf_sess, coord=self.coord)
            for hook in self._hooks:
                hook.after_create_session(self.tf_sess, self.coord)
        return _CoordinatedSession(_HookedSession(self.tf_sess, self._hooks), self.coord,
                                   self._stop_grace_period_secs)


# -- monitored sessions -----------------------------------------------------------------------

class _MonitoredSession:
    """What `MonitoredSession` and `SingularMonitoredSession` share."""

    def __init__(self, session_creator: SessionCreator | None,
                 hooks: Sequence[SessionRunHook] | None, should_recover: bool,
                 stop_grace_period_secs: float = 120) -> None:
        self._graph = get_default_graph()
        self._graph_was_finalized = self._graph.finalized
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._coordinated_creator = _CoordinatedSessionCreator(
            session_creator or ChiefSessionCreator(), self._hooks, stop_grace_period_secs,
            self._graph)
        self._sess: Any = _RecoverableSession(self._coordinated_creator) if should_recover \
            else self._coordinated_creator.create_session()

    @property
    def graph(self) -> Graph | None:
        """The graph that was launched in this session."""
        sess = self._tf_sess()
        return None if sess is None else sess.graph

    def run(self, fetches: Any, feed_dict: dict[Any, Any] | None = None,
            options: RunOptions | None = None, run_metadata: RunMetadata | None = None) -> Any:
        """Run one step with the hooks; see the module docstring."""
        return self._sess.run(fetches, feed_dict=feed_dict, options=options,
                              run_metadata=run_metadata)

    def run_step_fn(self, step_fn: Callable[[Any], Any]) -> Any:
        """Run ``step_fn(step_context)``: it may use ``step_context.session`` (no hooks),
        ``step_context.run_with_hooks(...)``, and ``step_context.request_stop()``."""
        params = list(inspect.signature(step_fn).parameters)
        if params not in (["step_context"], ["self", "step_context"]):
            raise ValueError("`step_fn` may either have one `step_context` argument, or `self` "
                             "and `step_context` arguments if it's an instance method. Got "
                             f"{tuple(params)} instead.")
        return self._sess.run_step_fn(step_fn, self._tf_sess(), None)

    def should_stop(self) -> bool:
        return self._sess is None or self._sess.should_stop()

    def close(self) -> None:
        self._close_internal()

    def __enter__(self) -> _MonitoredSession:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: Any) -> bool:
        if exc_type is not None and issubclass(exc_type, (errors.OutOfRangeError,
                                                          StopIteration)):
            exc_type = None
        self._close_internal(exc_type)
        return exc_type is None  # swallows the clean ends

    def _close_internal(self, exception_type: type[BaseException] | None = None) -> None:
        try:
            if not exception_type:
                for hook in self._hooks:
                    hook.end(self._coordinated_creator.tf_sess)
        finally:
            try:
                if self._sess is None:
                    raise RuntimeError("Session is already closed.")
                self._sess.close()
            finally:
                self._sess = None
                self._coordinated_creator.tf_sess = None
                self._coordinated_creator.coord = None
                if not self._graph_was_finalized:
                    self._graph._unsafe_unfinalize()

    def _is_closed(self) -> bool:
        return self._sess is None

    def _tf_sess(self) -> Session | None:
        return self._coordinated_creator.tf_sess


class MonitoredSession(_MonitoredSession):
    """A session that runs hooks and recovers from preemption errors; see the module
    docstring. The default creator is a `ChiefSessionCreator`."""

    def __init__(self, session_creator: SessionCreator | None = None,
                 hooks: Sequence[SessionRunHook] | None = None,
                 stop_grace_period_secs: float = 120) -> None:
        super().__init__(session_creator, hooks, should_recover=True,
                         stop_grace_period_secs=stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A chief's monitored session that does not recover, and gives its raw session."""

    def __init__(self, hooks: Sequence[SessionRunHook] | None = None,
                 scaffold: Scaffold | None = None, master: str = "", config: Any = None,
                 checkpoint_dir: str | None = None, stop_grace_period_secs: float = 120,
                 checkpoint_filename_with_path: str | None = None) -> None:
        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                      checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, should_recover=False,
                         stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self) -> Session | None:
        """The underlying `Session`, for running ops without the hooks."""
        return self._tf_sess()


def MonitoredTrainingSession(
        master: str = "", is_chief: bool = True, checkpoint_dir: str | None = None,
        scaffold: Scaffold | None = None, hooks: Sequence[SessionRunHook] | None = None,
        chief_only_hooks: Sequence[SessionRunHook] | None = None,
        save_checkpoint_secs: Any = USE_DEFAULT, save_summaries_steps: Any = USE_DEFAULT,
        save_summaries_secs: Any = USE_DEFAULT, config: Any = None,
        stop_grace_period_secs: float = 120, log_step_count_steps: int | None = 100,
        max_wait_secs: float = 7200, save_checkpoint_steps: Any = USE_DEFAULT,
        summary_dir: str | None = None) -> MonitoredSession:
    """A `MonitoredSession` for training: the chief restores or initializes the model; writes
    ``global_step/sec`` every `log_step_count_steps` and the scaffold's summaries every 100
    global steps by default (`save_summaries_steps`/`save_summaries_secs`) to `summary_dir`
    (default `checkpoint_dir`); and checkpoints to `checkpoint_dir` every 600 seconds by
    default (`save_checkpoint_secs`/`save_checkpoint_steps`) and at the end. Other workers
    wait at most `max_wait_secs` for the chief. `chief_only_hooks` run on the chief only,
    before `hooks`."""
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    scaffold = scaffold or Scaffold()
    if not is_chief:
        worker_creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config,
                                              max_wait_secs=max_wait_secs)
        return MonitoredSession(session_creator=worker_creator, hooks=list(hooks or []),
                                stop_grace_period_secs=stop_grace_period_secs)
    all_hooks: list[SessionRunHook] = list(chief_only_hooks or [])
    chief_creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir,
                                        master=master, config=config)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(StepCounterHook(output_dir=summary_dir,
                                             every_n_steps=log_step_count_steps))
        if ((save_summaries_steps and save_summaries_steps > 0)
                or (save_summaries_secs and save_summaries_secs > 0)):
            all_hooks.append(SummarySaverHook(scaffold=scaffold, save_steps=save_summaries_steps,
                                              save_secs=save_summaries_secs,
                                              output_dir=summary_dir))
    if checkpoint_dir and ((save_checkpoint_secs and save_checkpoint_secs > 0)
                           or (save_checkpoint_steps and save_checkpoint_steps > 0)):
        all_hooks.append(CheckpointSaverHook(checkpoint_dir, save_steps=save_checkpoint_steps,
                                             save_secs=save_checkpoint_secs, scaffold=scaffold))
    all_hooks.extend(hooks or [])
    return MonitoredSession(session_creator=chief_creator, hooks=all_hooks,
                            stop_grace_period_secs=stop_grace_period_secs)
