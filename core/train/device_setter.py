"""`replica_device_setter`: variables on parameter-server tasks, everything else on the worker.

Contract (``tf.compat.v1.train.replica_device_setter``): returns a device function for
``tw.device(...)``, or ``None`` when there are no ps tasks. Ops whose type is in `ps_ops`
(``Variable``, ``VariableV2``, ``VarHandleOp`` by default) go to `ps_device` with a task chosen by
`ps_strategy` (round-robin over the ps tasks by default); every other op goes to
`worker_device`. The op's own device request is merged over the result, so explicit fields win.
With `cluster`, the number of ps tasks is that of the cluster's ps job.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tensorweave.engine.device_spec import DeviceSpec
from tensorweave.train.cluster import ClusterSpec

__all__ = ["replica_device_setter"]

# TF's list also names hash-table and boosted-tree resources, which tensorweave does not have.
STANDARD_PS_OPS = ("Variable", "VariableV2", "VarHandleOp")


class _RoundRobinStrategy:
    """Hands out ps task indices 0, 1, ..., n-1, 0, ... in creation order."""

    def __init__(self, num_tasks: int) -> None:
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op: Any) -> int:
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


def _op_type(op: Any) -> str:
    return op.type if hasattr(op, "type") else op.op  # an Operation, or a NodeDef


class _ReplicaDeviceChooser:
    """The device function `replica_device_setter` returns (only when there are ps tasks)."""

    def __init__(self, ps_device: str, worker_device: str, merge_devices: bool,
                 ps_ops: Sequence[str], ps_strategy: Callable[[Any], int]) -> None:
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = frozenset(ps_ops)
        self._ps_strategy = ps_strategy

    def device_function(self, op: Any) -> str:
        if not self._merge_devices and op.device:
            return op.device
        current = DeviceSpec.from_string(op.device or "")
        if self._ps_device and _op_type(op) in self._ps_ops:
            ps = DeviceSpec.from_string(self._ps_device)
            if ps.job and (not current.job or current.job == ps.job):
                ps = DeviceSpec(ps.job, ps.replica, self._ps_strategy(op), ps.device_type,
                                ps.device_index)
            return ps.make_merged_spec(current).to_string()
        worker = DeviceSpec.from_string(self._worker_device or "")
        return worker.make_merged_spec(current).to_string()


def replica_device_setter(ps_tasks: int = 0, ps_device: str = "/job:ps",
                          worker_device: str = "/job:worker", merge_devices: bool = True,
                          cluster: Any = None, ps_ops: Sequence[str] | None = None,
                          ps_strategy: Callable[[Any], int] | None = None,
                          ) -> Callable[[Any], str] | None:
    """A device function placing variables on ps tasks; see the module docstring."""
    if cluster is not None:
        spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
        ps_job = DeviceSpec.from_string(ps_device).job
        if ps_job not in spec.jobs:
            return None
        ps_tasks = spec.num_tasks(ps_job)
    if ps_tasks == 0:
        return None
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    chooser = _ReplicaDeviceChooser(ps_device, worker_device, merge_devices,
                                    STANDARD_PS_OPS if ps_ops is None else ps_ops, ps_strategy)
    return chooser.device_function
