"""The ``cpu`` plugin: CPU devices, and the standard kernels bound to numpy.

A task gets ``ConfigProto.device_count["CPU"]`` CPU devices (default 1); all share host memory,
so tensors pass between them without a copy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.engine.plugin_manager import hookimpl
from tensorweave.engine.runtime.device import Device, TaskSpec
from tensorweave.plugins.kernels import (
    accumulators,
    array,
    array_extra,
    bitwise,
    candidate_sampling,
    complex,
    control_flow,
    csv,
    ctc,
    data_flow_ops,
    dataset,
    depthwise,
    example_json,
    fractional_pool,
    grad,
    grad_grad,
    image,
    image_box,
    image_color,
    image_glimpse,
    image_io,
    image_nms,
    image_patches,
    image_resize,
    linalg,
    logging_ops,
    lookup,
    math,
    matrix_diag_v2,
    misc_host_ops,
    misc_ops,
    nn,
    nn3d,
    nn_extra,
    parsing,
    random,
    random_distributions,
    readers,
    scatter,
    script_ops,
    segment,
    seq2seq,
    sparse_cross,
    sparse_extra,
    sparse_host,
    sparse_ops,
    sparse_segment,
    special_math,
    spectral,
    state,
    string_ops,
    summary,
    training,
    unicode_ops,
)

KERNEL_MODULES = (
    array_extra,
    seq2seq,
    special_math,
    sparse_extra, sparse_segment,
    nn3d, nn_extra,
    state, math, array, nn, random, training, grad, scatter, segment, control_flow, depthwise,
    image, sparse_ops, random_distributions, image_color, image_resize,
    image_box, image_patches, misc_ops, linalg, bitwise, complex, spectral,
    image_nms, image_glimpse, matrix_diag_v2, fractional_pool,
    grad_grad,
)
# host-only kernels, which the gpu plugin does not mirror (as in TF): input pipelines,
# summaries, Assert and Print, py_func, string ops, queues, Example parsing, accumulators,
# candidate samplers
HOST_KERNEL_MODULES = (ctc, dataset, summary, logging_ops, script_ops, string_ops, data_flow_ops,
                       parsing, accumulators, readers, candidate_sampling, sparse_cross,
                       csv, image_io, lookup, misc_host_ops,
                       sparse_host, example_json, unicode_ops)


@hookimpl
def tensorweave_devices(task: TaskSpec, config: Any) -> list[Device]:
    count = 1 if config is None else max(1, int(config.device_count.get("CPU", 1)))
    return [Device.create(task, "CPU", i, np) for i in range(count)]


@hookimpl
def tensorweave_register_kernels(registry: Any) -> None:
    for module in (*KERNEL_MODULES, *HOST_KERNEL_MODULES):
        module.register(registry, "CPU")
