"""The ``GPU`` devices of one task: which CUDA devices, in which order, and how values move.

Contract: `create_devices(task, config)` returns one `Device` per CUDA device the session or
server may use (none when CUDA is unusable): ``GPU:i`` is the i-th entry of
``config.gpu_options.visible_device_list`` (all CUDA devices, in order, when empty), capped by
``config.device_count["GPU"]``, as in TF. Its array module is cupy and its `to_host`/`from_host`
are the asynchronous copies of `tensorweave.plugins.gpu.copies`. `cuda_device_of(device)` is the
`CudaDevice` behind a device made here, ``None`` for any other device.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.runtime.device import Device, TaskSpec
from tensorweave.plugins.gpu import copies
from tensorweave.plugins.gpu.cuda import CudaDevice, cuda_device, probe

_cuda_of: weakref.WeakKeyDictionary[Device, CudaDevice] = weakref.WeakKeyDictionary()


def select_ordinals(visible_count: int, config: Any) -> list[int]:
    """The CUDA ordinals behind ``GPU:0``, ``GPU:1``, ... for `config` (a `ConfigProto`)."""
    listed = config.gpu_options.visible_device_list.strip() if config is not None else ""
    ordinals: list[int] = []
    if listed:
        for entry in (e.strip() for e in listed.split(",")):
            if not entry.isdigit() or int(entry) >= visible_count:
                raise errors.InvalidArgumentError(
                    None, None, f"'visible_device_list' listed an invalid GPU id '{entry}' but "
                    f"visible device count is {visible_count}")
            if int(entry) in ordinals:
                raise errors.InvalidArgumentError(
                    None, None, f"visible_device_list contained a duplicate entry: {listed}")
            ordinals.append(int(entry))
    else:
        ordinals = list(range(visible_count))
    cap = config.device_count.get("GPU") if config is not None else None
    return ordinals if cap is None else ordinals[:max(0, int(cap))]


def create_devices(task: TaskSpec, config: Any) -> list[Device]:
    """The GPU devices of `task`; see the module docstring."""
    status = probe()
    if not status.available:
        return []
    devices = []
    for index, ordinal in enumerate(select_ordinals(len(status.device_names), config)):
        gpu = cuda_device(ordinal)
        device = Device.create(
            task, "GPU", index, xp=status.cupy,
            to_host=functools.partial(copies.device_to_host, gpu),
            from_host=functools.partial(copies.host_to_device, gpu),
            memory_limit=int(status.cupy.cuda.Device(ordinal).mem_info[1]),
            description=f"device: {ordinal}, name: {gpu.name}")
        _cuda_of[device] = gpu
        devices.append(device)
    return devices


def cuda_device_of(device: Device) -> CudaDevice | None:
    return _cuda_of.get(device)
