"""The ``cpu`` plugin: CPU devices, and the standard kernels bound to numpy.

A task gets ``ConfigProto.device_count["CPU"]`` CPU devices (default 1); all share host memory,
so tensors pass between them without a copy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.engine.plugin_manager import hookimpl
from tensorweave.engine.runtime.device import Device, TaskSpec
from tensorweave.plugins.kernels import kernel_modules


@hookimpl
def tensorweave_devices(task: TaskSpec, config: Any) -> list[Device]:
    count = 1 if config is None else max(1, int(config.device_count.get("CPU", 1)))
    return [Device.create(task, "CPU", i, np) for i in range(count)]


@hookimpl
def tensorweave_register_kernels(registry: Any) -> None:
    for module in kernel_modules():
        module.register(registry, "CPU")
