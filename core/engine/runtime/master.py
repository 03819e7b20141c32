"""The master: turns (feeds, fetches, targets) into partitions on workers, and runs steps.

Contract: a `MasterSession` holds the session's graph (grown with `extend`) and the workers of
its cluster, one per task. It lists their devices when created, waiting for a task that cannot
be reached up to the operation timeout (as TF's master does), except that a task whose calls
fail at once (it refuses connections: it is dead, or restarting) is asked only
`REFUSED_RETRIES` times more, over a few seconds; one still unreachable then is left out, and a
graph placed on it fails with `UnavailableError` naming it. `run` looks
the step signature (feeds, fetches, targets, graph version) up in its cache; on a miss it
prunes, runs the pre- and post-placement passes, places (keeping the devices chosen for
the whole graph once per graph version), splits the graph per task and registers
each task's piece on its worker, which splits it per device. Each step gets a fresh step id and
runs every task's piece at once; the first error aborts the step on every other task and is
raised with its original type (a `CancelledError` caused by that abort never hides the cause).
Step state is cleaned on every worker after success or failure (a self-contained step, one
in-process task whose worker says nothing of it outlives its run, has none). `run_compiled`
runs a step already compiled, for a caller that keeps it while it is `current`. `run_async` runs
a step without a thread waiting for it (its deadline, plus the grace, is a timer's). The same
code runs in-process (workers called directly) and behind a transport (workers reached through
stubs with the same methods).
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import MappingProxyType
from typing import Any

import attrs

from tensorweave.engine import errors
from tensorweave.engine.device_spec import DeviceSpec
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef
from tensorweave.engine.runtime.passes import PassContext, PassRecord, run_phase
from tensorweave.engine.runtime.placement import assign_devices, log_placement, place
from tensorweave.engine.runtime.prune import prune
from tensorweave.engine.runtime.worker import Watchdog, Worker

# Workers enforce the step deadline themselves and report it; the master waits this much longer
# before it gives up on a task that does not answer at all.
DEADLINE_GRACE_SECONDS = 2.0
# the first pause before a session asks an unreachable task for its devices again
DISCOVERY_RETRY_SECONDS = 0.1
# A task whose calls fail at once (within FAST_FAILURE_SECONDS: nothing listens on its port)
# this many times in a row is left out, so a dead task does not hold a new session for the
# whole operation timeout; with the pauses (doubling up to 1 s) that is about 6 s, in which a
# restarting task comes back. A task that fails slowly (a network that drops packets) is waited
# for up to the operation timeout, as by TF's master.
REFUSED_RETRIES = 8
FAST_FAILURE_SECONDS = 1.0

# the deadlines of steps run with `MasterSession.run_async` (no thread waits for those)
_DEADLINES = Watchdog("tw-step-deadlines")


@attrs.define
class CompiledStep:
    """A signature compiled to registered partitions."""

    handles: dict[str, str]  # task name -> graph handle on that task's worker
    args_by_task: dict[str, list[int]]
    partitions: list[GraphDef]  # per device, as the workers split and optimized them
    records: list[PassRecord]
    id: int = 0
    fetches: tuple[str, ...] = ()
    version: int = 0  # the graph version it was compiled for
    self_contained: bool = False  # one task's piece, self-contained (`Registration`)
    # (task, handle, the feed indices its piece reads) per task, and the tasks: what each step
    # of it starts with
    calls: list[tuple[str, str, list[int]]] = attrs.field(init=False)
    tasks: list[str] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.calls = [(task, handle, self.args_by_task.get(task, []))
                      for task, handle in self.handles.items()]
        self.tasks = list(self.handles)


def task_of(device: str) -> str:
    """``/job:w/replica:0/task:1/device:CPU:0`` -> ``/job:w/replica:0/task:1``."""
    return device.rsplit("/device:", 1)[0]


def _list_devices(worker: Any) -> tuple[float, list[Any], errors.OpError | None]:
    """(seconds it took, `worker`'s devices, or the error that it cannot be reached)."""
    start = time.monotonic()
    try:
        devices = list(worker.list_devices())
    except (errors.UnavailableError, errors.DeadlineExceededError) as exc:
        return time.monotonic() - start, [], exc
    return time.monotonic() - start, devices, None


def _filtered(workers: Mapping[str, Any], filters: Sequence[str]) -> dict[str, Any]:
    """The workers whose task matches one of TF's partial device names in `filters` (all of
    them without filters), so a session never contacts a task it was told to ignore. A
    filter's device part is not looked at: filters pick tasks."""
    if not filters:
        return dict(workers)
    specs = [DeviceSpec.from_string(f) for f in filters]

    def within(spec: DeviceSpec, task: DeviceSpec) -> bool:
        return all(getattr(spec, part) in (None, getattr(task, part))
                   for part in ("job", "replica", "task"))

    return {name: worker for name, worker in workers.items()
            if any(within(spec, DeviceSpec.from_string(name)) for spec in specs)}


class MasterSession:
    """The master side of one session."""

    def __init__(self, workers: Mapping[str, Any], default_task: DeviceSpec, config: Any,
                 registries: Any) -> None:
        self.workers = _filtered(workers, getattr(config, "device_filters", ()))
        self.default_task = default_task
        self.config = config
        self.registries = registries
        self.unavailable: dict[str, errors.OpError] = {}
        self.devices = self._discover()
        self._nodes: dict[str, NodeDef] = {}
        self._order: list[str] = []
        self._version = 0
        self._cache: dict[tuple[Any, ...], CompiledStep] = {}
        self._device_map: dict[str, str] = {}
        self._placed_version = -1
        self._by_id: dict[int, CompiledStep] = {}
        self._compiled_ids = itertools.count(1)
        self._lock = threading.Lock()
        self._step_ids = itertools.count(secrets.randbits(40) << 20)
        self._in_flight: dict[int, list[str]] = {}  # step id -> its tasks
        self.closed = False

    def _discover(self) -> list[Any]:
        """Every task's devices. A task that cannot be reached is asked again (after
        `DISCOVERY_RETRY_SECONDS`, then longer) until the operation timeout, as TF's master
        waits for its workers, or until it failed at once `REFUSED_RETRIES` times more in a
        row; one still unreachable then goes to `unavailable`."""
        if len(self.workers) == 1:
            return list(next(iter(self.workers.values())).list_devices())
        deadline = time.monotonic() + self.config.timeout_seconds
        found: dict[str, list[Any]] = {}
        refused: dict[str, int] = {}  # failures in a row that came at once, per task
        pending = list(self.workers)
        pause = DISCOVERY_RETRY_SECONDS
        with ThreadPoolExecutor(min(16, len(self.workers))) as pool:
            while True:
                listed = {task: pool.submit(_list_devices, self.workers[task])
                          for task in pending}
                for task, future in listed.items():
                    took, devices, exc = future.result()
                    if exc is None:
                        found[task] = devices
                        self.unavailable.pop(task, None)
                        continue
                    self.unavailable[task] = exc
                    refused[task] = refused.get(task, 0) + 1 if took < FAST_FAILURE_SECONDS \
                        else 0
                pending = [task for task in pending if task not in found
                           and refused.get(task, 0) <= REFUSED_RETRIES]
                if not pending or time.monotonic() + pause > deadline:
                    break
                time.sleep(pause)
                pause = min(1.0, 2 * pause)
        return [d for task in self.workers if task in found for d in found[task]]

    # -- graph --------------------------------------------------------------------------------

    def extend(self, nodes: Sequence[NodeDef]) -> None:
        """Add nodes to the session's graph (TF's ExtendSession)."""
        with self._lock:
            for node in nodes:
                if node.name not in self._nodes:
                    self._order.append(node.name)
                self._nodes[node.name] = node
            if nodes:
                self._version += 1
                self._drop_stale()

    def _drop_stale(self) -> None:
        stale = [k for k in self._cache if k[-1] != self._version]
        for key in stale:
            compiled = self._cache.pop(key)
            self._by_id.pop(compiled.id, None)
            self._deregister(compiled)

    def _deregister(self, compiled: CompiledStep) -> None:
        for task, handle in compiled.handles.items():
            try:
                self.workers[task].deregister_graph(handle)
            except errors.OpError:
                pass  # a dead worker has nothing left to free

    @property
    def graph_def(self) -> GraphDef:
        return GraphDef(node=[self._nodes[n] for n in self._order])

    @property
    def nodes(self) -> Mapping[str, NodeDef]:
        """The session's graph by node name (read-only)."""
        return MappingProxyType(self._nodes)

    # -- compile ------------------------------------------------------------------------------

    def compile(self, feeds: Sequence[str], fetches: Sequence[str],
                targets: Sequence[str], ran: Sequence[str] = ()) -> CompiledStep:
        """The step of this signature, compiled on first use; `ran` names the nodes a partial
        run already ran (see `prune`)."""
        key = (tuple(feeds), tuple(fetches), tuple(targets), tuple(ran), self._version)
        with self._lock:
            compiled = self._cache.get(key)
            if compiled is None:
                compiled = self._cache[key] = self._compile(feeds, fetches, targets, ran)
                self._by_id[compiled.id] = compiled
        return compiled

    def compiled_step(self, compiled_id: int) -> CompiledStep:
        """A compiled step of the current graph version by its id (for remote clients)."""
        with self._lock:
            compiled = self._by_id.get(compiled_id)
        if compiled is None:
            raise errors.NotFoundError(None, None, f"Compiled step {compiled_id} is not (or no "
                                       "longer) cached in this session")
        return compiled

    def _compile(self, feeds: Sequence[str], fetches: Sequence[str],
                 targets: Sequence[str], ran: Sequence[str]) -> CompiledStep:
        reg = self.registries
        graph_def = prune(self.graph_def, feeds, fetches, targets, frozenset(ran))
        protected = frozenset(n.name for n in graph_def.node if n.op in ("_Arg", "_Retval"))
        protected |= frozenset(targets)
        ctx = PassContext(reg, protected, self.config)
        graph_def, records = run_phase(graph_def, reg.passes, "pre_placement", ctx)
        try:
            graph_def = place(graph_def, self.devices, self.default_task, reg.ops, reg.kernels,
                              self.config.allow_soft_placement, self.config.log_device_placement,
                              fixed=self._whole_graph_placement())
        except errors.InvalidArgumentError as exc:
            raise self._unreachable_placement(graph_def, exc) or exc from None
        graph_def, more = run_phase(graph_def, reg.passes, "post_placement", ctx)
        records += more
        incarnations = {d.name: d.incarnation for d in self.devices}
        pieces = reg.partitioner(graph_def, incarnations, location=task_of)
        handles: dict[str, str] = {}
        partitions: list[GraphDef] = []
        contained = len(pieces) == 1
        try:
            for task, piece in pieces.items():
                registration = self.workers[task].register_graph(piece, protected)
                handles[task] = registration.handle
                partitions.extend(registration.partitions.values())
                records += registration.records
                contained = contained and registration.self_contained
        except BaseException:
            self._deregister(CompiledStep(handles, {}, [], []))
            raise
        args_by_task = {
            task: [n.attr["index"] for n in piece.node if n.op == "_Arg"]
            for task, piece in pieces.items()
        }
        return CompiledStep(handles, args_by_task, partitions, records, next(self._compiled_ids),
                            tuple(fetches), self._version, contained)

    def _whole_graph_placement(self) -> dict[str, str]:
        """Every placeable node's device, chosen once per graph version over the whole graph
        (as TF's placer does), so a variable and the ops that use it agree in every step."""
        if self._placed_version != self._version:
            reg = self.registries
            graph_def = self.graph_def
            self._device_map = assign_devices(
                graph_def, self.devices, self.default_task, reg.ops, reg.kernels,
                self.config.allow_soft_placement, strict=False)
            self._placed_version = self._version
            if self.config.log_device_placement:
                log_placement([n.copy(device=self._device_map[n.name]) for n in graph_def.node
                               if n.name in self._device_map])
        return self._device_map

    def _unreachable_placement(self, graph_def: GraphDef,
                               exc: errors.InvalidArgumentError) -> errors.OpError | None:
        """An `UnavailableError` if the node that could not be placed asked for a task that was
        unreachable when the session was created."""
        node = graph_def.by_name().get(exc.node_def) if isinstance(exc.node_def, str) else None
        if node is None or not self.unavailable:
            return None
        try:
            request = self.default_task.make_merged_spec(DeviceSpec.from_string(node.device))
        except ValueError:
            return None
        wanted = DeviceSpec(job=request.job, replica=request.replica, task=request.task)
        for task, error in self.unavailable.items():
            if wanted.is_compatible_with(DeviceSpec.from_string(task)):
                return errors.UnavailableError(
                    node.name, node.op, f"Cannot place node '{node.name}' on '{node.device}': "
                    f"task {task} was unreachable when the session was created ({error.message})")
        return None

    # -- run ----------------------------------------------------------------------------------

    def cached(self, feeds: Sequence[str], fetches: Sequence[str],
               targets: Sequence[str], ran: Sequence[str] = ()) -> CompiledStep | None:
        """The compiled step of this signature if it is compiled already (never compiles)."""
        key = (tuple(feeds), tuple(fetches), tuple(targets), tuple(ran), self._version)
        with self._lock:
            return self._cache.get(key)

    def current(self, compiled: CompiledStep) -> bool:
        """Whether `compiled` may still run: compiled for the graph as it is now (no `extend`
        since), and the session is open."""
        return compiled.version == self._version and not self.closed

    def _prepare(self, compiled: CompiledStep, values: Sequence[Any], timeout: float | None,
                 cancellation: Any = None,
                 ) -> tuple[int, float, list[tuple[str, str, dict[int, Any]]]]:
        """(step id, timeout, per-task calls) of one step of `compiled` with the feed `values`
        (in its signature's order); the step is aborted on every task if `cancellation` (its
        client is gone) cancels."""
        if self.closed:
            raise RuntimeError("Attempted to use a closed Session.")
        calls = [(task, handle, {i: values[i] for i in indices})
                 for task, handle, indices in compiled.calls]
        timeout = self.config.timeout_seconds if timeout is None else timeout
        step_id = next(self._step_ids)
        with self._lock:
            self._in_flight[step_id] = compiled.tasks
        if cancellation is not None:
            cancellation.add(lambda: self.abort_step(step_id, errors.CancelledError(
                None, None, f"Step {step_id} was cancelled: its client is gone")))
        return step_id, timeout, calls

    def run(self, feeds: Mapping[str, Any], fetches: Sequence[str], targets: Sequence[str],
            collect_stats: bool = False, timeout: float | None = None, cancellation: Any = None,
            ran: Sequence[str] = (),
            ) -> tuple[list[Any], dict[str, list[Any]], CompiledStep]:
        """Run one step; returns the fetched host arrays, per-device stats and the compiled
        step. A `transport.Cancellation` that cancels aborts the step on every task. `ran`
        names the nodes a partial run already ran (see `prune`)."""
        if self.closed:
            raise RuntimeError("Attempted to use a closed Session.")
        compiled = self.compile(list(feeds), fetches, targets, ran)
        values, stats = self.run_compiled(compiled, list(feeds.values()), collect_stats,
                                          timeout, cancellation)
        return values, stats, compiled

    def run_compiled(self, compiled: CompiledStep, values: Sequence[Any],
                     collect_stats: bool = False, timeout: float | None = None,
                     cancellation: Any = None) -> tuple[list[Any], dict[str, list[Any]]]:
        """`run` of a step compiled already (`compile`; it must be `current`), fed `values`
        in its signature's order: the fetched host arrays and per-device stats. A
        self-contained step is run by its worker alone: nothing of it is left to abort or to
        clean up."""
        if compiled.self_contained:
            if self.closed:
                raise RuntimeError("Attempted to use a closed Session.")
            task, handle, indices = compiled.calls[0]
            step_id = next(self._step_ids)
            retvals, stats = self.workers[task].run_graph(
                handle, step_id, {i: values[i] for i in indices}, collect_stats, timeout)
            return self._fetched(compiled.fetches, retvals, step_id), stats
        step_id, timeout, calls = self._prepare(compiled, values, timeout, cancellation)
        try:
            if len(calls) == 1:
                task, handle, args = calls[0]
                retvals, stats = self.workers[task].run_graph(handle, step_id, args,
                                                              collect_stats, timeout)
            else:
                retvals, stats = {}, {}
                self._run_parallel(calls, step_id, collect_stats, timeout, retvals, stats)
        finally:
            self._cleanup(compiled, step_id)
        return self._fetched(compiled.fetches, retvals, step_id), stats

    def run_async(self, feeds: Mapping[str, Any], fetches: Sequence[str],
                  targets: Sequence[str], collect_stats: bool, timeout: float | None,
                  done: Callable[[BaseException | None, Any], None],
                  cancellation: Any = None, ran: Sequence[str] = ()) -> None:
        """`run` without waiting for the step: ``done(error, (values, stats, compiled))`` runs
        exactly once, on the thread that ends the step (the last task's answer, or the deadline
        timer when a task does not answer within the deadline and its grace), so it must be
        quick. A signature not compiled yet compiles on the calling thread first; a step that
        cannot start raises here."""
        if self.closed:
            raise RuntimeError("Attempted to use a closed Session.")
        compiled = self.compile(list(feeds), fetches, targets, ran)
        step_id, timeout, calls = self._prepare(compiled, list(feeds.values()), timeout,
                                                cancellation)
        retvals: dict[int, Any] = {}
        stats: dict[str, list[Any]] = {}
        watch: list[int] = []

        def finish(error: BaseException | None) -> None:
            _DEADLINES.cancel(watch[0])
            self._cleanup(compiled, step_id)
            values: list[Any] = []
            if error is None:
                try:
                    values = self._fetched(fetches, retvals, step_id)
                except errors.OpError as exc:
                    error = exc
            done(error, None if error is not None else (values, stats, compiled))

        step = _StepRun(self, step_id, [task for task, _, _ in calls], retvals, stats, finish)
        watch.append(_DEADLINES.add(timeout + DEADLINE_GRACE_SECONDS, step.expire))
        self._start_tasks(step, calls, step_id, collect_stats, timeout)

    def _cleanup(self, compiled: CompiledStep, step_id: int) -> None:
        with self._lock:
            self._in_flight.pop(step_id, None)
        for task in compiled.handles:
            try:
                self.workers[task].cleanup_step(step_id)
            except errors.OpError:
                pass  # an unreachable worker reclaims the step on its own timeout

    @staticmethod
    def _fetched(fetches: Sequence[str], retvals: dict[int, Any], step_id: int) -> list[Any]:
        try:
            return [retvals[i] for i in range(len(fetches))]
        except KeyError:
            missing = [fetches[i] for i in range(len(fetches)) if i not in retvals]
            raise errors.InternalError(None, None, f"Step {step_id} produced no value for "
                                       f"{missing}") from None

    def _run_parallel(self, calls: list[tuple[str, str, dict[int, Any]]], step_id: int,
                      collect_stats: bool, timeout: float, retvals: dict[int, Any],
                      stats: dict[str, list[Any]]) -> None:
        """Run every task's piece at once and wait for all of them (or the deadline)."""
        finished = threading.Event()
        outcome: list[BaseException | None] = []

        def finish(error: BaseException | None) -> None:
            outcome.append(error)
            finished.set()

        step = _StepRun(self, step_id, [task for task, _, _ in calls], retvals, stats, finish)
        self._start_tasks(step, calls, step_id, collect_stats, timeout)
        if not finished.wait(timeout + DEADLINE_GRACE_SECONDS):
            step.expire()
            finished.wait()  # (a task's answer that won the race with the deadline ends it)
        if outcome[0] is not None:
            raise outcome[0]

    def _start_tasks(self, step: _StepRun, calls: list[tuple[str, str, dict[int, Any]]],
                     step_id: int, collect_stats: bool, timeout: float) -> None:
        """Start every task's piece through the workers' async entry points: remote pieces
        first, so an in-process piece that runs to completion inside its call does not delay
        them."""
        for task, handle, args in sorted(calls, key=lambda c: isinstance(self.workers[c[0]],
                                                                         Worker)):
            finished = step.callback(task)
            try:
                self.workers[task].run_graph_async(handle, step_id, args, collect_stats,
                                                   timeout, finished)
            except errors.OpError as exc:  # e.g. no channel to the task any more
                finished(exc, None)

    def abort_step(self, step_id: int, error: BaseException) -> None:
        """Abort step `step_id` on every task, if it is still in flight (its runs then end with
        `error`)."""
        with self._lock:
            tasks = list(self._in_flight.get(step_id, ()))
        for task in tasks:
            self._abort(task, step_id, error)

    def _abort(self, task: str, step_id: int, error: BaseException) -> None:
        try:
            self.workers[task].abort_step(step_id, error)
        except errors.OpError:
            pass

    def close(self) -> None:
        """Cancel the steps in flight (their runs end with `CancelledError`, as TF's), then
        release the compiled steps."""
        with self._lock:
            in_flight = list(self._in_flight.items())
        cancelled = errors.CancelledError(None, None, "Session has been closed.")
        for step_id, tasks in in_flight:
            for task in tasks:
                self._abort(task, step_id, cancelled)
        with self._lock:
            for compiled in self._cache.values():
                self._deregister(compiled)
            self._cache.clear()
            self._by_id.clear()
            self.closed = True


class _StepRun:
    """The tasks of one step in flight: gathers results, on the first failure aborts the step
    on every task still running, and calls `finish(error)` exactly once: when the last task
    answers, or at `expire` (the deadline), whichever comes first."""

    def __init__(self, master: MasterSession, step_id: int, tasks: list[str],
                 retvals: dict[int, Any], stats: dict[str, list[Any]],
                 finish: Callable[[BaseException | None], None]) -> None:
        self.master = master
        self.step_id = step_id
        self.running = set(tasks)
        self.retvals = retvals
        self.stats = stats
        self.finish = finish
        self.failures: list[BaseException] = []
        self.lock = threading.Lock()
        self.over = False

    def callback(self, task: str) -> Any:
        def finished(error: BaseException | None, result: Any) -> None:
            with self.lock:
                if self.over:
                    return  # past the deadline: the step failed already
                self.running.discard(task)
                if error is None:
                    out, st = result
                    self.retvals.update(out)
                    self.stats.update(st)
                else:
                    self.failures.append(error)
                abort = list(self.running) if error is not None and len(self.failures) == 1 \
                    else []
                self.over = not self.running
                failure = self._failure() if self.over else None
                last = self.over
            for other in abort:
                self.master._abort(other, self.step_id, error)
            if last:
                self.finish(failure)

        return finished

    def expire(self) -> None:
        """The deadline (and its grace) passed: fail the step, aborting the tasks that have not
        answered, unless it ended already."""
        with self.lock:
            if self.over:
                return
            self.over = True
            pending = sorted(self.running)
            error = errors.DeadlineExceededError(
                None, None, f"Step {self.step_id} exceeded its deadline; no answer from "
                f"{pending}")
            self.failures.append(error)
            failure = self._failure()
        for task in pending:
            self.master._abort(task, self.step_id, error)
        self.finish(failure)

    def _failure(self) -> BaseException | None:
        """The step's error: the first failure that is not a `CancelledError` caused by the
        abort."""
        if not self.failures:
            return None
        return next((e for e in self.failures if not isinstance(e, errors.CancelledError)),
                    self.failures[0])
