"""The ``standard_ops`` plugin: OpDefs (signatures and shape functions) of the standard op set,
and their gradients.

Kernels live elsewhere (``tensorweave.plugins.kernels``, bound to devices by the ``cpu`` and
``gpu`` plugins), so a third party can add kernels for these ops on its own devices.
"""

from __future__ import annotations

from typing import Any

from tensorweave.plugin_manager import hookimpl
from tensorweave.plugins.standard_ops import (
    accumulators,
    array,
    array_grad,
    control_flow,
    control_flow_grad,
    conv_grad,
    data_flow_ops,
    dataset,
    depthwise,
    grad_ops,
    image,
    image_grad,
    logging_grad,
    logging_ops,
    math,
    math_grad,
    nn,
    nn_grad,
    parsing,
    random,
    scatter,
    scatter_grad,
    script_ops,
    script_ops_grad,
    segment,
    segment_grad,
    sparse_grad,
    sparse_ops,
    state,
    string_ops,
    summary,
    training,
    while_grad,
)

MODULES = (
    state, math, array, nn, random, training, grad_ops, scatter, segment, control_flow, logging_ops,
    depthwise, image, dataset, summary, script_ops, string_ops,
    sparse_ops, data_flow_ops, parsing, accumulators,
)
GRADIENT_MODULES = (
    math_grad, array_grad, nn_grad, scatter_grad, segment_grad, control_flow_grad, logging_grad,
    conv_grad, image_grad, while_grad, script_ops_grad,
    sparse_grad,
)


@hookimpl
def tensorweave_register_ops(registry: Any) -> None:
    for module in MODULES:
        module.register(registry)


@hookimpl
def tensorweave_register_gradients(registry: Any) -> None:
    for module in GRADIENT_MODULES:
        module.register(registry)
