"""The worker service of one task: its devices, registered partitions and step rendezvous.

Contract: `register_graph` compiles the partitions of one step signature (one per device of this
task) into executors and returns a handle. `run_graph` runs all partitions of a handle for one
step at once: host feeds (``_Arg`` index -> array) in, host fetches (``_Retval`` index -> array)
out. It returns once every partition is done; the first error aborts the step's rendezvous and
is raised as the `OpError` it was. A step that outlives `timeout` seconds is aborted with
`DeadlineExceededError`. Step state stays until `cleanup_step`, so peers can still fetch sent
tensors.
"""

from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import attrs

from tensorweave import errors
from tensorweave.framework.graph_def import GraphDef
from tensorweave.runtime.device import Device, DeviceAttributes, TaskSpec
from tensorweave.runtime.executor import Executor, ExecutorPlan, NodeStats, StepContext
from tensorweave.runtime.rendezvous import Rendezvous, RendezvousManager


def create_devices(task: TaskSpec, config: Any, registries: Any) -> list[Device]:
    """The devices every plugin offers to `task`."""
    found = registries.manager.hook.tensorweave_devices(task=task, config=config)
    return [d for devices in found for d in devices]


@attrs.define
class _Registered:
    executors: dict[str, Executor]
    args: dict[int, str]  # _Arg index -> device name
    partitions: dict[str, GraphDef]


class Worker:
    """One task's worker service, called directly in-process or behind a transport."""

    def __init__(self, task: TaskSpec, config: Any, registries: Any,
                 devices: list[Device] | None = None,
                 rendezvous_mgr: RendezvousManager | None = None) -> None:
        self.task = task
        self.config = config
        self.registries = registries
        self.devices = devices if devices is not None else create_devices(task, config,
                                                                          registries)
        self.device_by_name = {d.name: d for d in self.devices}
        self.rendezvous_mgr = rendezvous_mgr or RendezvousManager(Rendezvous)
        threads = config.inter_op_parallelism_threads or min(8, (os.cpu_count() or 2) + 2)
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix=f"tw-{task.job}{task.task}")
        self.parallel = threads > 1
        self._graphs: dict[str, _Registered] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def list_devices(self) -> list[DeviceAttributes]:
        return [DeviceAttributes.of(d) for d in self.devices]

    def register_graph(self, partitions: dict[str, GraphDef]) -> str:
        executors, args = {}, {}
        for device_name, graph_def in partitions.items():
            device = self.device_by_name.get(device_name)
            if device is None:
                raise errors.InvalidArgumentError(
                    None, None, f"Device {device_name} is not a device of task {self.task.name}")
            plan = ExecutorPlan.build(graph_def, device, self.registries, self.parallel)
            executors[device_name] = Executor(plan, self.pool)
            for node in graph_def.node:
                if node.op == "_Arg":
                    args[node.attr["index"]] = device_name
        handle = f"{self.task.job}:{self.task.task}:g{next(self._ids)}"
        with self._lock:
            self._graphs[handle] = _Registered(executors, args, partitions)
        return handle

    def deregister_graph(self, handle: str) -> None:
        with self._lock:
            self._graphs.pop(handle, None)

    def copy_tensor(self, src_name: str, dst: Device, value: Any) -> Any:
        src = self.device_by_name[src_name]
        copied = self.registries.manager.hook.tensorweave_copy_tensor(src=src, dst=dst,
                                                                      value=value)
        return copied if copied is not None else dst.from_host(src.to_host(value))

    def run_graph(self, handle: str, step_id: int, args: dict[int, Any],
                  collect_stats: bool = False, timeout: float | None = None,
                  ) -> tuple[dict[int, Any], dict[str, list[NodeStats]]]:
        with self._lock:
            registered = self._graphs.get(handle)
        if registered is None:
            raise errors.NotFoundError(None, None, f"Graph handle {handle} is not registered "
                                       f"on task {self.task.name}")
        rendezvous = self.rendezvous_mgr.find_or_create(step_id)
        retvals: dict[int, Any] = {}
        stats: dict[str, list[NodeStats]] = {}
        remaining = [len(registered.executors)]
        first_error: list[BaseException] = []
        finished = threading.Event()
        lock = threading.Lock()

        def done(error: BaseException | None) -> None:
            with lock:
                if error is not None and not first_error:
                    first_error.append(error)
                remaining[0] -= 1
                last = remaining[0] == 0
            if error is not None:
                rendezvous.start_abort(error)
            if last:
                finished.set()

        steps = []
        for device_name, executor in registered.executors.items():
            device = executor.plan.device
            device_args = {i: device.from_host(v) for i, v in args.items()
                           if registered.args.get(i) == device_name}
            step = StepContext(step_id, rendezvous, device_args, retvals,
                               [] if collect_stats else None, self.copy_tensor)
            stats[device_name] = step.stats if step.stats is not None else []
            steps.append((executor, step))
        for executor, step in steps:
            executor.run_async(step, done)
        if not finished.wait(timeout):
            rendezvous.start_abort(errors.DeadlineExceededError(
                None, None, f"Step {step_id} on task {self.task.name} exceeded its deadline of "
                f"{timeout:.3f}s"))
            finished.wait()
        if first_error:
            raise first_error[0]
        return retvals, stats

    def abort_step(self, step_id: int, error: BaseException) -> None:
        self.rendezvous_mgr.abort(step_id, error)

    def cleanup_step(self, step_id: int) -> None:
        self.rendezvous_mgr.cleanup(step_id)

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)

