"""The ``cpu`` plugin: CPU devices, and the standard kernels bound to numpy.

A task gets ``ConfigProto.device_count["CPU"]`` CPU devices (default 1); all share host memory,
so tensors pass between them without a copy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.plugin_manager import hookimpl
from tensorweave.plugins.kernels import (
    accumulators,
    array,
    control_flow,
    data_flow_ops,
    dataset,
    depthwise,
    grad,
    image,
    logging_ops,
    math,
    nn,
    parsing,
    random,
    scatter,
    script_ops,
    segment,
    sparse_ops,
    state,
    string_ops,
    summary,
    training,
)
from tensorweave.runtime.device import Device, TaskSpec

KERNEL_MODULES = (
    state, math, array, nn, random, training, grad, scatter, segment, control_flow, depthwise,
    image, sparse_ops,
)
# host-only kernels, which the gpu plugin does not mirror (as in TF): input pipelines,
# summaries, Assert and Print, py_func, string ops, queues, Example parsing, accumulators
HOST_KERNEL_MODULES = (dataset, summary, logging_ops, script_ops, string_ops, data_flow_ops,
                       parsing, accumulators)


@hookimpl
def tensorweave_devices(task: TaskSpec, config: Any) -> list[Device]:
    count = 1 if config is None else max(1, int(config.device_count.get("CPU", 1)))
    return [Device.create(task, "CPU", i, np) for i in range(count)]


@hookimpl
def tensorweave_register_kernels(registry: Any) -> None:
    for module in (*KERNEL_MODULES, *HOST_KERNEL_MODULES):
        module.register(registry, "CPU")
