"""`QueueRunner`: threads that keep a queue filled, as ``tf.compat.v1.train.QueueRunner``.

Contract: a runner holds a queue, its enqueue ops (one thread each), a close op (``close()``)
and a cancel op (``close(cancel_pending_enqueues=True)``). `create_threads(sess, coord)` makes
one thread per enqueue op that runs it until the coordinator stops; once every thread of a
session has seen the queue closed (an error of `queue_closed_exception_types`, by default
`OutOfRangeError`, e.g. from an input that ran out of epochs), the last one runs the close op,
so consumers drain the queue and then get `OutOfRangeError`. Any other error is reported to the
coordinator (or, without one, kept in `exceptions_raised` and re-raised in the thread). With a
coordinator an extra thread waits for the stop request and runs the cancel op, which releases
enqueues blocked on a full queue. A runner started again for a session whose threads still run
makes no new ones. `start_queue_runners` does this for every runner of the graph's
``QUEUE_RUNNERS`` collection.

A runner travels in a meta graph as TF's ``QueueRunnerDef`` message
(`tensorweave.formats.meta_graph_proto`; `to_proto`, `from_proto`). A runner rebuilt from one
holds the queue's operation as its `queue`, as TF's does.

Deviation from TF: TF's steps have no deadline unless configured; tensorweave's default to a
finite one, so the runner's enqueue steps run with a deadline of their own, `ENQUEUE_TIMEOUT_MS`
(~24.8 days): a thread waiting for room stays until the queue is closed, cancelled, or its
session aborts the step.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Sequence
from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.client.config import RunOptions
from tensorweave.engine.client.session import Session, get_default_session
from tensorweave.engine.graph.graph import GraphKeys, Operation, get_default_graph
from tensorweave.formats.meta_graph_proto import QueueRunnerDef
from tensorweave.train.coordinator import Coordinator

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]

_log = logging.getLogger(__name__)

ENQUEUE_TIMEOUT_MS = 2**31 - 1  # TF's largest operation timeout


class QueueRunner:
    """Runs a queue's enqueue ops in threads; see the module docstring."""

    def __init__(self, queue: Any = None, enqueue_ops: Sequence[Operation] | None = None,
                 close_op: Operation | None = None, cancel_op: Operation | None = None,
                 queue_closed_exception_types: tuple[type[errors.OpError], ...] | None = None,
                 queue_runner_def: QueueRunnerDef | None = None,
                 import_scope: str | None = None
                 ) -> None:
        if queue_runner_def is not None:
            if queue or enqueue_ops:
                raise ValueError("queue_runner_def and queue are mutually exclusive.")
            queue, enqueue_ops, close_op, cancel_op, queue_closed_exception_types = \
                _from_def(queue_runner_def, import_scope)
        if not queue or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        if queue_closed_exception_types is not None and (
                not isinstance(queue_closed_exception_types, tuple)
                or not queue_closed_exception_types
                or not all(isinstance(t, type) and issubclass(t, errors.OpError)
                           for t in queue_closed_exception_types)):
            raise TypeError("queue_closed_exception_types, when provided, must be a tuple of "
                            f"tf.error types, but saw: {queue_closed_exception_types}")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        # Close when no more will be produced, keeping pending enqueues; cancel them on a stop.
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None \
            else queue.close(cancel_pending_enqueues=True)
        self._queue_closed_exception_types = queue_closed_exception_types or \
            (errors.OutOfRangeError,)
        self._lock = threading.Lock()
        self._runs_per_session: weakref.WeakKeyDictionary[Any, int] = \
            weakref.WeakKeyDictionary()
        self._exceptions_raised: list[BaseException] = []

    @property
    def queue(self) -> Any:
        return self._queue

    @property
    def enqueue_ops(self) -> list[Operation]:
        return self._enqueue_ops

    @property
    def close_op(self) -> Operation:
        return self._close_op

    @property
    def cancel_op(self) -> Operation:
        return self._cancel_op

    @property
    def queue_closed_exception_types(self) -> tuple[type[errors.OpError], ...]:
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self) -> list[BaseException]:
        """Errors of threads run without a coordinator."""
        return self._exceptions_raised

    @property
    def name(self) -> str:
        return self._queue.name

    def to_proto(self, export_scope: str | None = None) -> QueueRunnerDef | None:
        """TF's ``QueueRunnerDef`` of this runner, names relative to `export_scope`; None if the
        queue is outside it."""
        def strip(name: str) -> str:
            return name[len(export_scope) + 1:] if export_scope else name

        if export_scope and not self.name.startswith(export_scope + "/"):
            return None
        return QueueRunnerDef(
            queue_name=strip(self.name),
            enqueue_op_name=[strip(op.name) for op in self._enqueue_ops],
            close_op_name=strip(self._close_op.name), cancel_op_name=strip(self._cancel_op.name),
            queue_closed_exception_types=[t.error_code
                                          for t in self._queue_closed_exception_types])

    @staticmethod
    def from_proto(queue_runner_def: QueueRunnerDef,
                   import_scope: str | None = None) -> QueueRunner:
        """The runner a ``QueueRunnerDef`` describes, over the default graph's operations."""
        return QueueRunner(queue_runner_def=queue_runner_def, import_scope=import_scope)

    def _run(self, sess: Session, enqueue_op: Operation, coord: Coordinator | None) -> None:
        decremented = False
        options = RunOptions(timeout_in_ms=ENQUEUE_TIMEOUT_MS)
        try:
            enqueue = sess.make_callable(enqueue_op)
            while not (coord and coord.should_stop()):
                try:
                    enqueue(options=options)
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        if self._runs_per_session[sess] == 0:
                            try:
                                sess.run(self._close_op)
                            except Exception as exc:  # noqa: BLE001 - TF ignores close errors
                                _log.debug("Ignored exception: %s", exc)
                    return
        except Exception as exc:
            if coord:
                coord.request_stop(exc)
            else:
                _log.error("Exception in QueueRunner: %s", exc)
                with self._lock:
                    self._exceptions_raised.append(exc)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess: Session, coord: Coordinator) -> None:
        coord.wait_for_stop()
        try:
            sess.run(self._cancel_op)
        except Exception as exc:  # noqa: BLE001 - TF ignores errors of the cancel op
            _log.debug("Ignored exception: %s", exc)

    def create_threads(self, sess: Session, coord: Coordinator | None = None,
                       daemon: bool = False, start: bool = False) -> list[threading.Thread]:
        """The threads that run the enqueue ops in `sess` (none if they run already)."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord),
                                    name=f"QueueRunnerThread-{self.name}-{op.name}")
                   for op in self._enqueue_ops]
        if coord:
            threads.append(threading.Thread(
                target=self._close_on_stop, args=(sess, coord),
                name=f"QueueRunnerThread-{self.name}-close_on_stop"))
        for thread in threads:
            if coord:
                coord.register_thread(thread)
            thread.daemon = daemon
            if start:
                thread.start()
        return threads


def _from_def(proto: QueueRunnerDef, import_scope: str | None) -> tuple[Any, ...]:
    """Queue, enqueue ops, close op, cancel op and closed-error types of a ``QueueRunnerDef``,
    looked up in the default graph (a missing name raises `KeyError`, as TF's lookup)."""
    graph = get_default_graph()
    prefix = f"{import_scope}/" if import_scope else ""

    def op(name: str) -> Operation:
        return graph.get_operation_by_name(prefix + name)

    if not (proto.queue_name and proto.enqueue_op_name and proto.close_op_name
            and proto.cancel_op_name):
        raise ValueError("Error parsing QueueRunnerDef: it lacks its queue, enqueue, close or "
                         "cancel op name")
    types = tuple(errors.exception_type_from_error_code(c)
                  for c in proto.queue_closed_exception_types) or None
    return (op(proto.queue_name), [op(n) for n in proto.enqueue_op_name],
            op(proto.close_op_name), op(proto.cancel_op_name), types)


def add_queue_runner(qr: QueueRunner, collection: str = GraphKeys.QUEUE_RUNNERS) -> None:
    """Add `qr` to the default graph's `collection` (``QUEUE_RUNNERS``)."""
    get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(sess: Any = None, coord: Coordinator | None = None, daemon: bool = True,
                        start: bool = True, collection: str = GraphKeys.QUEUE_RUNNERS
                        ) -> list[threading.Thread]:
    """Create (and by default start) the threads of every queue runner of `collection` in
    `sess` (default: the default session); returns them."""
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is registered. "
                             "Use `with sess.as_default()` or pass an explicit session to "
                             "tf.start_queue_runners(sess=sess)")
    if not isinstance(sess, Session):
        # TF: a monitored session starts its runners itself
        if type(sess).__name__ in ("MonitoredSession", "SingularMonitoredSession"):
            return []
        raise TypeError(f"sess must be a `tf.Session` object. Given class: {type(sess)}")
    runners = sess.graph.get_collection(collection)
    if not runners:
        _log.warning("`tf.train.start_queue_runners()` was called when no queue runners were "
                     "defined. You can safely remove the call to this deprecated function.")
    threads: list[threading.Thread] = []
    with sess.graph.as_default():
        for runner in runners:
            threads.extend(runner.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
