"""The ``standard_ops`` plugin: OpDefs (signatures and shape functions) of the standard op set,
and their gradients.

Kernels live elsewhere (``tensorweave.plugins.kernels``, bound to devices by the ``cpu`` and
``gpu`` plugins), so a third party can add kernels for these ops on its own devices.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine.plugin_manager import hookimpl
from tensorweave.plugins.standard_ops import (
    accumulators,
    array,
    array_extra,
    array_extra_grad,
    array_grad,
    array_grad_grad,
    bitwise,
    bitwise_grad,
    candidate_sampling,
    complex,
    complex_grad,
    control_flow,
    control_flow_grad,
    conv_grad,
    csv,
    ctc,
    ctc_grad,
    data_flow_ops,
    dataset,
    depthwise,
    example_json,
    fractional_pool,
    grad_grad_ops,
    grad_ops,
    image,
    image_box,
    image_color,
    image_glimpse,
    image_grad,
    image_io,
    image_nms,
    image_patches,
    image_patches_grad,
    image_resize,
    image_resize_grad,
    linalg,
    linalg_grad,
    logging_grad,
    logging_ops,
    lookup,
    math,
    math_grad,
    math_grad_grad,
    matrix_diag_v2,
    matrix_diag_v2_grad,
    misc_ops,
    misc_ops_grad,
    nn,
    nn3d,
    nn3d_grad,
    nn_extra,
    nn_extra_grad,
    nn_grad,
    nn_grad_grad,
    not_differentiable,
    parsing,
    random,
    random_distributions,
    random_grad,
    readers,
    scatter,
    scatter_grad,
    script_ops,
    script_ops_grad,
    segment,
    segment_grad,
    seq2seq,
    sparse_cross,
    sparse_extra,
    sparse_extra_grad,
    sparse_grad,
    sparse_ops,
    special_math,
    special_math_grad,
    spectral,
    spectral_grad,
    state,
    string_ops,
    summary,
    training,
    unicode_ops,
    while_grad,
)

MODULES = (
    ctc,
    unicode_ops,
    seq2seq,
    array_extra,
    example_json,
    image_nms, image_glimpse, matrix_diag_v2, fractional_pool,
    special_math,
    sparse_extra,
    nn3d, nn_extra,
    state, math, array, nn, random, training, grad_ops, scatter, segment, control_flow, logging_ops,
    lookup, depthwise, image, image_color, image_resize, image_box,
    image_patches, dataset, summary, script_ops, string_ops,
    sparse_ops, data_flow_ops, parsing, accumulators, readers, candidate_sampling, sparse_cross,
    csv, random_distributions, image_io, misc_ops, linalg, complex, spectral, bitwise,
    grad_grad_ops,
)
GRADIENT_MODULES = (
    matrix_diag_v2_grad,
    ctc_grad,
    array_extra_grad,
    special_math_grad,
    nn3d_grad, nn_extra_grad,
    math_grad, array_grad, nn_grad, scatter_grad, segment_grad, control_flow_grad, logging_grad,
    conv_grad, image_grad, image_resize_grad, image_patches_grad, while_grad, script_ops_grad,
    sparse_grad, sparse_extra_grad, misc_ops_grad, linalg_grad,
    complex_grad, spectral_grad, bitwise_grad,
    nn_grad_grad, math_grad_grad, array_grad_grad, random_grad, not_differentiable,
)


@hookimpl
def tensorweave_register_ops(registry: Any) -> None:
    for module in MODULES:
        module.register(registry)


@hookimpl
def tensorweave_register_gradients(registry: Any) -> None:
    for module in GRADIENT_MODULES:
        module.register(registry)
