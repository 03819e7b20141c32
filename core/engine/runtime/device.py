"""Devices: one named compute device of one task.

Contract: a `Device` has a canonical full name (``/job:j/replica:0/task:t/device:CPU:0``), a type,
an array module `xp` (numpy, cupy), a random incarnation (distinguishing restarts in rendezvous
keys), and a resource store holding variables across steps. `to_host`/`from_host` move arrays
to and from host memory (identity for CPU).
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from tensorweave.engine.device_spec import DeviceSpec


@attrs.frozen
class TaskSpec:
    """The job, replica and index of one task (process) of a cluster."""

    job: str = "localhost"
    replica: int = 0
    task: int = 0

    @property
    def name(self) -> str:
        return f"/job:{self.job}/replica:{self.replica}/task:{self.task}"


@attrs.define(eq=False)
class Device:
    """A device of a task, with its array module and resources."""

    name: str
    device_type: str
    index: int
    xp: Any
    incarnation: int = attrs.field(factory=lambda: secrets.randbits(63) or 1)
    to_host: Callable[[Any], np.ndarray] = np.asarray
    from_host: Callable[[np.ndarray], Any] = np.asarray
    resources: dict[str, Any] = attrs.field(factory=dict)
    lock: threading.Lock = attrs.field(factory=threading.Lock)
    kernel_states: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    # what `device_lib.list_local_devices` reports; 0 bytes means the host's memory
    memory_limit: int = 0
    description: str = ""
    # a server's --file-root: every file its kernels touch must be under it (None: anywhere)
    file_root: str | None = None

    @classmethod
    def create(cls, task: TaskSpec, device_type: str, index: int, xp: Any,
               **kwargs: Any) -> Device:
        return cls(name=f"{task.name}/device:{device_type}:{index}", device_type=device_type,
                   index=index, xp=xp, **kwargs)

    def kernel_state(self, node_name: str) -> dict[str, Any]:
        """The state dict of a stateful node's kernel on this device, kept across plans."""
        with self.lock:
            return self.kernel_states.setdefault(node_name, {})

    @property
    def spec(self) -> DeviceSpec:
        return DeviceSpec.from_string(self.name)

    @property
    def task_name(self) -> str:
        return self.name.rsplit("/device:", 1)[0]

    def __repr__(self) -> str:
        return f"<Device {self.name}>"


@attrs.frozen
class DeviceAttributes:
    """What a master knows of a device: its name, type and incarnation."""

    name: str
    device_type: str
    incarnation: int

    @classmethod
    def of(cls, device: Device) -> DeviceAttributes:
        return cls(device.name, device.device_type, device.incarnation)


_host: Device | None = None


def host_device() -> Device:
    """A numpy CPU device outside any session, for evaluating constants at build time."""
    global _host
    if _host is None:
        _host = Device.create(TaskSpec(), "CPU", 0, np)
    return _host
