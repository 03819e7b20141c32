"""The worker service of one task: its devices, registered graphs and step rendezvous.

Contract: `register_graph` takes this task's piece of a step's graph, splits it per device with
the partitioner, runs the post-partition passes, compiles each partition into an executor and
returns a `Registration` (handle, partitions, pass records). `run_graph` runs all partitions of a
handle for one step at once: host feeds (``_Arg`` index -> array) in, host fetches (``_Retval``
index -> array) out. It returns once every partition is done; the first error aborts the step's
rendezvous and is raised as the `OpError` it was. A step that outlives `timeout` seconds is
aborted with `DeadlineExceededError`. Straight-line partitions (no async kernel) run one after
the other on the calling thread; a straight-line piece that calls no function and sends nothing
is self-contained: its step's rendezvous is its own, and an in-process worker that remembers no
cleaned steps says so in its `Registration`, so its caller may skip that step's cleanup and
aborts (nothing can wait in it). `run_graph_async` and `recv_tensor_async` do the same
without blocking a thread: they call back once (a transport answers from the callback), and a
watchdog thread enforces their deadlines. Step state stays until `cleanup_step`, so peers can still
fetch sent tensors with `recv_tensor`; a step that was cleaned up cannot run or be received
from again (the last `remembered_steps` cleaned ids are kept to refuse late calls; a worker that
only its own process's master calls keeps none, as nothing can come late). `reap_stale_steps`
cleans steps whose master never did (a vanished client).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import attrs

from tensorweave.engine import errors
from tensorweave.engine.graph.func_graph import FunctionDef
from tensorweave.engine.graph.graph_def import GraphDef
from tensorweave.engine.plugin_manager import call_per_plugin
from tensorweave.engine.runtime.device import Device, DeviceAttributes, TaskSpec
from tensorweave.engine.runtime.executor import (
    Executor,
    ExecutorPlan,
    NodeStats,
    StepContext,
    node_error,
)
from tensorweave.engine.runtime.passes import PassContext, PassRecord, run_phase
from tensorweave.engine.runtime.rendezvous import Rendezvous, RendezvousManager, parse_key
from tensorweave.engine.runtime.threads import ThreadBudget
from tensorweave.engine.runtime.variables_store import FetchedRef

_RUNTIME_OPS = frozenset({"_Arg", "_Retval", "_Send", "_Recv"})
REMEMBERED_STEPS = 1 << 14  # late calls for a cleaned step come within seconds


def create_devices(task: TaskSpec, config: Any, registries: Any) -> list[Device]:
    """The devices every plugin offers to `task` (a plugin whose hook raises is reported and
    offers none)."""
    found = call_per_plugin(registries, "tensorweave_devices", task=task, config=config)
    return [d for devices in found for d in devices]


def _through_host(src: Device, dst: Device, value: Any) -> Any:
    return dst.from_host(src.to_host(value))


def _copy_with(fn: Callable[..., Any], argnames: Sequence[str]) -> Callable[..., Any]:
    """A ``tensorweave_copy_tensor`` implementation as ``copy(src, dst, value)`` (pluggy passes
    an implementation only the arguments it names)."""

    def copy(src: Device, dst: Device, value: Any) -> Any:
        args = {"src": src, "dst": dst, "value": value}
        return fn(**{name: args[name] for name in argnames})

    return copy


@attrs.frozen
class Registration:
    """What `register_graph` returns: the handle to run, and what the worker made of the graph."""

    handle: str
    partitions: dict[str, GraphDef]  # device name -> partition
    records: list[PassRecord]
    # Its steps run to their end inside `run_graph`, and nothing of them outlives it: the caller
    # may skip `cleanup_step` and aborts (only an in-process worker says so; a transport does
    # not carry it).
    self_contained: bool = False


@attrs.define
class _Registered:
    executors: dict[str, Executor]
    args: dict[int, str]  # _Arg index -> device name
    straight_line: bool  # every partition runs to its end on the calling thread
    calls_functions: bool  # runs function bodies (loops, conditionals): it may run for long
    # straight-line, calling no function and sending nothing: no other party can reach a step
    # of it (nothing to receive, nothing that waits for an abort), so it needs no shared state
    self_contained: bool = False
    runs: list[tuple[str, Executor, list[int]]] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        # (device name, executor, the _Arg indices it reads) per partition, found once
        self.runs = [(device, executor, [i for i, d in self.args.items() if d == device])
                     for device, executor in self.executors.items()]


RunResult = tuple[dict[int, Any], dict[str, list[NodeStats]]]


class Watchdog:
    """Calls a function once its deadline has passed, unless it was cancelled first. One daemon
    thread, started on first use, sleeps until the earliest pending deadline."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._cond = threading.Condition()
        self._pending: dict[int, tuple[float, Callable[[], None]]] = {}
        self._ids = itertools.count()
        self._wake_at = float("inf")
        self._thread: threading.Thread | None = None
        self._closed = False

    def add(self, seconds: float, fn: Callable[[], None]) -> int:
        deadline = time.monotonic() + seconds
        with self._cond:
            token = next(self._ids)
            self._pending[token] = (deadline, fn)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            if deadline < self._wake_at:
                self._cond.notify()
        return token

    def cancel(self, token: int) -> None:
        with self._cond:
            self._pending.pop(token, None)

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._closed:
                        return
                    now = time.monotonic()
                    due = [t for t, (deadline, _) in self._pending.items() if deadline <= now]
                    if due:
                        fns = [self._pending.pop(t)[1] for t in due]
                        break
                    self._wake_at = min((d for d, _ in self._pending.values()),
                                        default=float("inf"))
                    self._cond.wait(None if not self._pending else self._wake_at - now)
            for fn in fns:
                fn()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()


class Worker:
    """One task's worker service, called directly in-process or behind a transport."""

    def __init__(self, task: TaskSpec, config: Any, registries: Any,
                 devices: list[Device] | None = None,
                 rendezvous_mgr: RendezvousManager | None = None,
                 remembered_steps: int = REMEMBERED_STEPS) -> None:
        self.task = task
        self.config = config
        self.registries = registries
        self.devices = devices if devices is not None else create_devices(task, config,
                                                                          registries)
        self.device_by_name = {d.name: d for d in self.devices}
        self._copies: dict[tuple[str, str], Callable[[Device, Device, Any], Any]] = {}
        # (not `or`: an empty manager is falsy)
        self.rendezvous_mgr = RendezvousManager(Rendezvous) if rendezvous_mgr is None \
            else rendezvous_mgr
        self.budget = ThreadBudget.of(config)
        self.pool = ThreadPoolExecutor(self.budget.inter_op,
                                       thread_name_prefix=f"tw-{task.job}{task.task}")
        self.parallel = self.budget.inter_op > 1
        self._graphs: dict[str, _Registered] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._deadlines: dict[int, float] = {}  # live step -> when it may be reaped
        self._remembered_steps = remembered_steps
        self._cleaned: set[int] = set()
        self._cleaned_order: deque[int] = deque()
        self._watchdog = Watchdog(f"tw-deadlines-{task.job}{task.task}")

    def list_devices(self) -> list[DeviceAttributes]:
        return [DeviceAttributes.of(d) for d in self.devices]

    # -- graphs -------------------------------------------------------------------------------

    def register_graph(self, graph_def: GraphDef, protected: Collection[str] = ()) -> Registration:
        """Split this task's piece per device, optimize and compile it; see the module doc."""
        for node in graph_def.node:
            if node.device not in self.device_by_name:
                raise errors.InvalidArgumentError(
                    node.name, node.op, f"Node '{node.name}' is placed on {node.device or '(none)'}"
                    f", which is not a device of task {self.task.name}")
        incarnations = {d.name: d.incarnation for d in self.devices}
        split = self.registries.partitioner(graph_def, incarnations)
        keep = frozenset(protected) | {n.name for n in graph_def.node if n.op in _RUNTIME_OPS}
        ctx = PassContext(self.registries, keep, self.config)
        partitions: dict[str, GraphDef] = {}
        records: list[PassRecord] = []
        executors, args = {}, {}
        for device_name, part in split.items():
            part, more = run_phase(part, self.registries.passes, "post_partition", ctx)
            records += more
            partitions[device_name] = part
            plan = ExecutorPlan.build(part, self.device_by_name[device_name], self.registries,
                                      self.parallel)
            executors[device_name] = Executor(plan, self.pool)
            for node in part.node:
                if node.op == "_Arg":
                    args[node.attr["index"]] = device_name
        handle = f"{self.task.job}:{self.task.task}:g{next(self._ids)}"
        straight = all(e.plan.straight_line for e in executors.values())
        calls = any(isinstance(fn, FunctionDef) for part in partitions.values()
                    for node in part.node for value in node.attr.values()
                    for fn in (value if isinstance(value, list) else (value,)))
        sends = any(node.op == "_Send" for part in partitions.values() for node in part.node)
        contained = straight and not calls and not sends
        with self._lock:
            self._graphs[handle] = _Registered(executors, args, straight, calls, contained)
        # (remembering cleaned steps, to refuse late calls, needs every cleanup)
        return Registration(handle, partitions, records,
                            contained and not self._remembered_steps)

    def deregister_graph(self, handle: str) -> None:
        with self._lock:
            self._graphs.pop(handle, None)

    def copy_tensor(self, src_name: str, dst: Device, value: Any) -> Any:
        """`value` of device `src_name` on `dst`. The ``tensorweave_copy_tensor`` hook is resolved
        once per device pair: the first implementation that answers the pair's first copy
        serves every later copy of that pair (none answering: through host memory)."""
        src = self.device_by_name.get(src_name)
        if src is None:  # another task's device: the value came over the wire, in host memory
            return dst.from_host(value)
        pair = (src_name, dst.name)
        copy = self._copies.get(pair)
        if copy is not None:
            return copy(src, dst, value)
        hook = self.registries.manager.hook.tensorweave_copy_tensor
        for impl in reversed(hook.get_hookimpls()):  # pluggy's calling order
            copy = _copy_with(impl.function, impl.argnames)
            copied = copy(src, dst, value)
            if copied is not None:
                self._copies[pair] = copy
                return copied
        self._copies[pair] = _through_host
        return _through_host(src, dst, value)

    # -- steps --------------------------------------------------------------------------------

    def _begin(self, step_id: int, timeout: float) -> Rendezvous:
        """The step's rendezvous, after checking the step was not cleaned up already."""
        with self._lock:
            if step_id in self._cleaned:
                raise self._cleaned_error(step_id)
            until = time.monotonic() + timeout
            if self._deadlines.get(step_id, 0.0) < until:
                self._deadlines[step_id] = until
        return self.rendezvous_mgr.find_or_create(step_id)

    def _cleaned_error(self, step_id: int) -> errors.AbortedError:
        return errors.AbortedError(
            None, None, f"Step {step_id} was already cleaned up on task {self.task.name}")

    def run_graph(self, handle: str, step_id: int, args: dict[int, Any],
                  collect_stats: bool = False, timeout: float | None = None) -> RunResult:
        registered = self._registered(handle)
        if registered.straight_line:
            return self._run_here(registered, step_id, args, collect_stats, timeout)
        finished = threading.Event()
        outcome: list[tuple[BaseException | None, RunResult | None]] = []

        def done(error: BaseException | None, result: RunResult | None) -> None:
            outcome.append((error, result))
            finished.set()

        self._start(registered, step_id, args, collect_stats, timeout, done)
        finished.wait()
        error, result = outcome[0]
        if error is not None:
            raise error
        return result

    def _run_here(self, registered: _Registered, step_id: int, args: dict[int, Any],
                  collect_stats: bool, timeout: float | None) -> RunResult:
        """`run_graph` of straight-line partitions: each runs to its end on this thread, one
        after the other (none can wait on another), with no callback, event or watchdog;
        the first error (which aborted the step's rendezvous) is raised once all have run. A
        self-contained step's rendezvous is its own, never in the manager's table."""
        if registered.self_contained:
            if step_id in self._cleaned:
                raise self._cleaned_error(step_id)
            rendezvous = Rendezvous(step_id)
        else:
            rendezvous = self._begin(step_id, self.config.timeout_seconds if timeout is None
                                     else timeout)
        retvals: dict[int, Any] = {}
        stats: dict[str, list[NodeStats]] = {}
        error = None
        self.budget.apply()
        for device_name, executor, arg_indices in registered.runs:
            from_host = executor.plan.device.from_host
            step = StepContext(step_id, rendezvous, {i: from_host(args[i]) for i in arg_indices
                                                     if i in args},
                               retvals, [] if collect_stats else None, self.copy_tensor)
            stats[device_name] = step.stats if step.stats is not None else []
            failed = executor.run_straight_line(step)
            if error is None:
                error = failed
        if error is not None:
            raise error
        _read_fetched(retvals)
        return retvals, stats

    def run_graph_async(self, handle: str, step_id: int, args: dict[int, Any],
                        collect_stats: bool, timeout: float | None,
                        done: Callable[[BaseException | None, RunResult | None], None]) -> None:
        """`run_graph` without blocking: ``done(error, (retvals, stats))`` runs exactly once,
        perhaps before this returns, perhaps on another thread. A step that cannot start
        (unknown handle, cleaned-up step) raises here instead. A step that runs function bodies
        (a loop may run for long) starts on a thread of its own, so the caller (a transport's
        reader) stays free to deliver its aborts and tensors."""
        registered = self._registered(handle)
        if not registered.calls_functions:
            self._start(registered, step_id, args, collect_stats, timeout, done)
            return
        timeout = self.config.timeout_seconds if timeout is None else timeout
        self._begin(step_id, timeout)  # (refuses a cleaned-up step here, as `_start` would)

        def start() -> None:
            try:
                self._start(registered, step_id, args, collect_stats, timeout, done)
            except Exception as exc:  # noqa: BLE001 - cleaned up meanwhile: still answered
                done(exc, None)

        threading.Thread(target=start, name=f"tw-step-{step_id}", daemon=True).start()

    def _registered(self, handle: str) -> _Registered:
        registered = self._graphs.get(handle)  # (one read of a dict: the GIL makes it whole)
        if registered is None:
            # TF's type and words: the usual cause is a restarted task, and a client that
            # recreates its session (MonitoredSession) recovers from AbortedError.
            raise errors.AbortedError(None, None, f"Graph handle is not found: {handle} on task "
                                      f"{self.task.name}. Possibly, this worker just restarted.")
        return registered

    def _start(self, registered: _Registered, step_id: int, args: dict[int, Any],
               collect_stats: bool, timeout: float | None,
               done: Callable[[BaseException | None, RunResult | None], None]) -> None:
        timeout = self.config.timeout_seconds if timeout is None else timeout
        rendezvous = self._begin(step_id, timeout)
        retvals: dict[int, Any] = {}
        stats: dict[str, list[NodeStats]] = {}
        remaining = [len(registered.executors)]
        first_error: list[BaseException] = []
        lock = threading.Lock()
        watch: list[int] = []

        def partition_done(error: BaseException | None) -> None:
            with lock:
                if error is not None and not first_error:
                    first_error.append(error)
                remaining[0] -= 1
                last = remaining[0] == 0
            if error is not None:
                rendezvous.start_abort(error)
            if last:
                if watch:
                    self._watchdog.cancel(watch[0])
                if not first_error:
                    try:
                        _read_fetched(retvals)
                    except errors.OpError as exc:
                        first_error.append(exc)
                if first_error:
                    done(first_error[0], None)
                else:
                    done(None, (retvals, stats))

        steps = []
        for device_name, executor in registered.executors.items():
            device = executor.plan.device
            device_args = {i: device.from_host(v) for i, v in args.items()
                           if registered.args.get(i) == device_name}
            step = StepContext(step_id, rendezvous, device_args, retvals,
                               [] if collect_stats else None, self.copy_tensor)
            stats[device_name] = step.stats if step.stats is not None else []
            steps.append((executor, step))
        if not steps:
            done(None, (retvals, stats))
            return
        self.budget.apply()
        if not registered.straight_line:  # a straight-line step cannot wait on anything

            def expire() -> None:
                rendezvous.start_abort(errors.DeadlineExceededError(
                    None, None, f"Step {step_id} on task {self.task.name} exceeded its deadline "
                    f"of {timeout:.3f}s"))

            watch.append(self._watchdog.add(timeout, expire))
        for executor, step in steps:
            executor.run_async(step, partition_done)

    def _source_device(self, key: str) -> Device:
        parsed = parse_key(key)
        device = self.device_by_name.get(parsed.src_device)
        if device is None:
            raise errors.InvalidArgumentError(
                None, None, f"Rendezvous key {key} names source device {parsed.src_device}, "
                f"which is not a device of task {self.task.name}")
        return device

    def recv_tensor(self, step_id: int, key: str, timeout: float | None = None) -> Any:
        """The host value a partition of this task sent under `key` in step `step_id` (the
        worker service's RecvTensor): waits for it up to `timeout` seconds."""
        device = self._source_device(key)
        timeout = self.config.timeout_seconds if timeout is None else timeout
        rendezvous = self._begin(step_id, timeout)
        return device.to_host(rendezvous.recv(key, timeout))

    def recv_tensor_async(self, step_id: int, key: str, timeout: float | None,
                          done: Callable[[BaseException | None, Any], None]) -> None:
        """`recv_tensor` without blocking: ``done(error, host value)`` runs exactly once (on
        the producer's thread when the value comes later). A bad key or a cleaned-up step
        raises here instead."""
        device = self._source_device(key)
        timeout = self.config.timeout_seconds if timeout is None else timeout
        rendezvous = self._begin(step_id, timeout)
        watch: list[int] = []
        state = {"delivered": False}

        def on_value(error: BaseException | None, value: Any) -> None:
            state["delivered"] = True
            if watch:
                self._watchdog.cancel(watch[0])
            if error is None:
                try:
                    value = device.to_host(value)
                except Exception as exc:  # noqa: BLE001 - reported to the receiver
                    error, value = errors.InternalError(
                        None, None, f"copy of {key} to the host failed: {exc!r}"), None
            done(error, value)

        def expire() -> None:
            if rendezvous.cancel_recv(key, on_value):
                done(errors.DeadlineExceededError(
                    None, None, f"Timed out after {timeout}s waiting for rendezvous key {key}"),
                    None)

        rendezvous.recv_async(key, on_value)
        if not state["delivered"]:
            watch.append(self._watchdog.add(timeout, expire))

    def abort_step(self, step_id: int, error: BaseException) -> None:
        with self._lock:
            if step_id in self._cleaned:
                return
        self.rendezvous_mgr.abort(step_id, error)

    def cleanup_step(self, step_id: int) -> None:
        with self._lock:
            self._deadlines.pop(step_id, None)
            if self._remembered_steps and step_id not in self._cleaned:
                self._cleaned.add(step_id)
                self._cleaned_order.append(step_id)
                if len(self._cleaned_order) > self._remembered_steps:
                    self._cleaned.discard(self._cleaned_order.popleft())
        self.rendezvous_mgr.cleanup(step_id)

    def abort_all_steps(self, error: BaseException) -> None:
        """Abort every step in flight (the server is stopping)."""
        with self._lock:
            live = list(self._deadlines)
        for step_id in live:
            self.rendezvous_mgr.abort(step_id, error)

    def reap_stale_steps(self, grace: float) -> list[int]:
        """Clean up steps more than `grace` seconds past their deadline; returns their ids."""
        now = time.monotonic()
        with self._lock:
            stale = [s for s, until in self._deadlines.items() if until + grace < now]
        for step_id in stale:
            self.cleanup_step(step_id)
        return stale

    def close(self) -> None:
        self._watchdog.close()
        self.pool.shutdown(wait=False, cancel_futures=True)


def _read_fetched(retvals: dict[int, Any]) -> None:
    """Replace each `FetchedRef` of `retvals` by its value; an error names the fetching node."""
    for index, value in retvals.items():
        if type(value) is FetchedRef:
            try:
                retvals[index] = value.read()
            except errors.OpError as exc:
                raise node_error(exc, value.node, "_Retval", value.device.name) from None
