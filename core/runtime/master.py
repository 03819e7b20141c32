"""The master: turns (feeds, fetches, targets) into partitions on workers, and runs steps.

Contract: a `MasterSession` holds the session's graph (grown with `extend`) and the workers of
its cluster. `run` looks the step signature (feeds, fetches, targets, graph version) up in its
cache; on a miss it prunes, runs the pass phases, places, partitions and registers the partitions
on their workers. Each step gets a fresh step id and runs every partition at once; the first
error aborts the step on every worker and is raised with its original type. Step state is cleaned
on every worker after success or failure. The same code runs in-process (workers called directly)
and behind a transport (workers reached through stubs with the same methods).
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import attrs

from tensorweave import errors
from tensorweave.device_spec import DeviceSpec
from tensorweave.framework.graph_def import GraphDef, NodeDef
from tensorweave.runtime.passes import PassContext, PassRecord, run_phase
from tensorweave.runtime.placement import place
from tensorweave.runtime.prune import prune


@attrs.define
class CompiledStep:
    """A signature compiled to registered partitions."""

    handles: dict[str, str]  # task name -> graph handle on that task's worker
    args_by_task: dict[str, list[int]]
    partitions: list[GraphDef]
    records: list[PassRecord]


class MasterSession:
    """The master side of one session."""

    def __init__(self, workers: Mapping[str, Any], default_task: DeviceSpec, config: Any,
                 registries: Any) -> None:
        self.workers = dict(workers)
        self.default_task = default_task
        self.config = config
        self.registries = registries
        self.devices = [d for w in self.workers.values() for d in w.list_devices()]
        self._nodes: dict[str, NodeDef] = {}
        self._order: list[str] = []
        self._version = 0
        self._cache: dict[tuple[Any, ...], CompiledStep] = {}
        self._lock = threading.Lock()
        self._step_ids = itertools.count(secrets.randbits(40) << 20)
        self._pool: ThreadPoolExecutor | None = None
        self.closed = False

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
            self._deregister(self._cache.pop(key))

    def _deregister(self, compiled: CompiledStep) -> None:
        for task, handle in compiled.handles.items():
            try:
                self.workers[task].deregister_graph(handle)
            except errors.OpError:
                pass  # a dead worker has nothing left to free

    @property
    def graph_def(self) -> GraphDef:
        return GraphDef(node=[self._nodes[n] for n in self._order])

    # -- compile ------------------------------------------------------------------------------

    def compile(self, feeds: Sequence[str], fetches: Sequence[str],
                targets: Sequence[str]) -> CompiledStep:
        key = (tuple(feeds), tuple(fetches), tuple(targets), self._version)
        with self._lock:
            compiled = self._cache.get(key)
            if compiled is None:
                compiled = self._cache[key] = self._compile(feeds, fetches, targets)
        return compiled

    def _compile(self, feeds: Sequence[str], fetches: Sequence[str],
                 targets: Sequence[str]) -> CompiledStep:
        reg = self.registries
        graph_def = prune(self.graph_def, feeds, fetches, targets)
        protected = frozenset(n.name for n in graph_def.node if n.op in ("_Arg", "_Retval"))
        protected |= frozenset(targets)
        ctx = PassContext(reg, protected, self.config)
        graph_def, records = run_phase(graph_def, reg.passes, "pre_placement", ctx)
        graph_def = place(graph_def, self.devices, self.default_task, reg.ops, reg.kernels,
                          self.config.allow_soft_placement, self.config.log_device_placement)
        graph_def, more = run_phase(graph_def, reg.passes, "post_placement", ctx)
        records += more
        incarnations = {d.name: d.incarnation for d in self.devices}
        partitions = reg.partitioner(graph_def, incarnations)
        by_task: dict[str, dict[str, GraphDef]] = {}
        for device_name, part in partitions.items():
            part, more = run_phase(part, reg.passes, "post_partition", ctx)
            records += more
            by_task.setdefault(device_name.rsplit("/device:", 1)[0], {})[device_name] = part
        handles: dict[str, str] = {}
        try:
            for task, parts in by_task.items():
                handles[task] = self.workers[task].register_graph(parts)
        except BaseException:
            self._deregister(CompiledStep(handles, {}, [], []))
            raise
        args_by_task = {
            task: [n.attr["index"] for p in parts.values() for n in p.node if n.op == "_Arg"]
            for task, parts in by_task.items()
        }
        return CompiledStep(handles, args_by_task,
                            [p for parts in by_task.values() for p in parts.values()], records)

    # -- run ----------------------------------------------------------------------------------

    def run(self, feeds: Mapping[str, Any], fetches: Sequence[str], targets: Sequence[str],
            collect_stats: bool = False, timeout: float | None = None,
            ) -> tuple[list[Any], dict[str, list[Any]], CompiledStep]:
        """Run one step; returns the fetched host arrays, per-device stats and the compiled
        step."""
        if self.closed:
            raise RuntimeError("Attempted to use a closed Session.")
        feed_names = list(feeds)
        compiled = self.compile(feed_names, fetches, targets)
        values = list(feeds.values())
        step_id = next(self._step_ids)
        timeout = self.config.timeout_seconds if timeout is None else timeout
        retvals: dict[int, Any] = {}
        stats: dict[str, list[Any]] = {}
        calls = [(task, handle, {i: values[i] for i in compiled.args_by_task.get(task, ())})
                 for task, handle in compiled.handles.items()]
        try:
            if len(calls) == 1:
                task, handle, args = calls[0]
                out, st = self.workers[task].run_graph(handle, step_id, args, collect_stats,
                                                       timeout)
                retvals.update(out)
                stats.update(st)
            else:
                self._run_parallel(calls, step_id, collect_stats, timeout, retvals, stats)
        finally:
            for task in compiled.handles:
                try:
                    self.workers[task].cleanup_step(step_id)
                except errors.OpError:
                    pass  # an unreachable worker reclaims the step on its own timeout
        return [retvals[i] for i in range(len(fetches))], stats, compiled

    def _run_parallel(self, calls: list[tuple[str, str, dict[int, Any]]], step_id: int,
                      collect_stats: bool, timeout: float, retvals: dict[int, Any],
                      stats: dict[str, list[Any]]) -> None:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(16, thread_name_prefix="tw-master")
        futures = {
            self._pool.submit(self.workers[task].run_graph, handle, step_id, args,
                              collect_stats, timeout): task
            for task, handle, args in calls
        }
        first: BaseException | None = None
        deadline = time.monotonic() + timeout
        pending = set(futures)
        while pending:
            done, pending = cf.wait(pending, timeout=max(0.0, deadline - time.monotonic()),
                                    return_when=cf.FIRST_COMPLETED)
            if not done:
                first = first or errors.DeadlineExceededError(
                    None, None, f"Step {step_id} exceeded its deadline of {timeout:.3f}s")
                for f in pending:
                    self._abort(futures[f], step_id, first)
                break
            for f in done:
                exc = f.exception()
                if exc is None:
                    out, st = f.result()
                    retvals.update(out)
                    stats.update(st)
                elif first is None:
                    first = exc
                    for task in self.workers:
                        if task != futures[f]:
                            self._abort(task, step_id, exc)
        if first is not None:
            raise first

    def _abort(self, task: str, step_id: int, error: BaseException) -> None:
        try:
            self.workers[task].abort_step(step_id, error)
        except errors.OpError:
            pass

    def close(self) -> None:
        with self._lock:
            for compiled in self._cache.values():
                self._deregister(compiled)
            self._cache.clear()
            self.closed = True
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
