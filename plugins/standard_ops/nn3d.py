"""OpDefs of the 3-D convolution and pooling ops: ``Conv3D``, its two backprops
(``Conv3DBackpropInputV2``, ``Conv3DBackpropFilterV2``), ``MaxPool3D``, ``AvgPool3D`` and their
gradient ops (``MaxPool3DGrad``, ``MaxPool3DGradGrad``, ``AvgPool3DGrad``).

Contract: names, inputs and attrs follow TF. Volumes are NDHWC only (as the 2-D ops are NHWC
only): ``NCDHW`` is rejected at construction. Padding is SAME or VALID; the output size of each
spatial dimension is `tensorweave.plugins.standard_ops.nn.output_dim` (``window_geometry``), so
shape inference and the kernels agree exactly; the attr checks are that module's too. Backprop
shapes come from their constant shape inputs when known.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.nn import (
    conv_window_attrs,
    merge_dim,
    output_dim,
    padding_attr,
    pool_window_attrs,
)
from tensorweave.plugins.standard_ops.shape_fns import with_rank

FLOAT = {"T": dtypes.FLOATS}
CONV3D_ATTRS = {"strides": REQUIRED, "padding": REQUIRED, "data_format": "NDHWC",
                "dilations": [1, 1, 1, 1, 1]}
POOL3D_ATTRS = {"ksize": REQUIRED, "strides": REQUIRED, "padding": REQUIRED,
                "data_format": "NDHWC"}
SPATIAL = (1, 2, 3)


def _ndhwc_only(ctx: InferContext) -> None:
    fmt = ctx.attr("data_format")
    if fmt != "NDHWC":
        raise ctx.shape_error(f"{ctx.op} supports data_format 'NDHWC' only (tensorweave "
                              f"implements channels-last volumes), got '{fmt}'")


def conv_attrs(ctx: InferContext) -> tuple[list[int], list[int], str]:
    """The checked (strides, dilations, padding) of a Conv3D-family op."""
    _ndhwc_only(ctx)
    strides, dilations = conv_window_attrs(ctx, "Conv3D", 5)
    return strides, dilations, padding_attr(ctx)


def pool_attrs(ctx: InferContext) -> tuple[list[int], list[int], str]:
    """The checked (ksize, strides, padding) of a 3-D pooling op."""
    _ndhwc_only(ctx)
    ksize, strides = pool_window_attrs(ctx, 5)
    return ksize, strides, padding_attr(ctx)


def _conv3d(ctx: InferContext) -> list[TensorSpec]:
    strides, dilations, padding = conv_attrs(ctx)
    image, kernel = with_rank(ctx, 0, 5), with_rank(ctx, 1, 5)
    merge_dim(ctx, image[4], kernel[3])
    dims = [image[0]]
    dims += [output_dim(ctx, image[i], kernel[i - 1], strides[i], dilations[i], padding)
             for i in SPATIAL]
    return [TensorSpec(ctx.dtype(0), TensorShape([*dims, kernel[4]]))]


def _shape_from(ctx: InferContext, i: int, dtype: dtypes.DType, what: str) -> TensorSpec:
    """A rank-5 tensor whose shape is the value of input `i`, when known."""
    with_rank(ctx, i, 1)
    value = ctx.constant_value(i)
    if value is None:
        return TensorSpec(dtype, TensorShape([None] * 5))
    dims = [int(d) for d in value.reshape(-1)]
    if len(dims) != 5:
        raise ctx.shape_error(f"{what} must have 5 elements, got {len(dims)}")
    return TensorSpec(dtype, TensorShape(dims))


def _conv3d_input(ctx: InferContext) -> list[TensorSpec]:
    conv_attrs(ctx)
    with_rank(ctx, 1, 5)
    with_rank(ctx, 2, 5)
    return [_shape_from(ctx, 0, ctx.dtype(1), "input_sizes")]


def _conv3d_filter(ctx: InferContext) -> list[TensorSpec]:
    conv_attrs(ctx)
    with_rank(ctx, 0, 5)
    with_rank(ctx, 2, 5)
    return [_shape_from(ctx, 1, ctx.dtype(0), "filter_sizes")]


def _pool3d(ctx: InferContext) -> list[TensorSpec]:
    ksize, strides, padding = pool_attrs(ctx)
    image = with_rank(ctx, 0, 5)
    dims = [output_dim(ctx, image[i], ksize[i], strides[i], 1, padding) for i in SPATIAL]
    return [TensorSpec(ctx.dtype(0), TensorShape([image[0], *dims, image[4]]))]


def _max_pool3d_grad(ctx: InferContext) -> list[TensorSpec]:
    pool_attrs(ctx)
    for i in range(3):
        with_rank(ctx, i, 5)
    return [TensorSpec(ctx.dtype(2), ctx.shape(0))]


def _max_pool3d_grad_grad(ctx: InferContext) -> list[TensorSpec]:
    pool_attrs(ctx)
    for i in range(3):
        with_rank(ctx, i, 5)
    return [TensorSpec(ctx.dtype(0), ctx.shape(1))]


def _avg_pool3d_grad(ctx: InferContext) -> list[TensorSpec]:
    pool_attrs(ctx)
    with_rank(ctx, 1, 5)
    return [_shape_from(ctx, 0, ctx.dtype(1), "orig_input_shape")]


def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
    T = {"T": REQUIRED}
    conv = {**T, **CONV3D_ATTRS}
    pool = {**T, **POOL3D_ATTRS}
    registry.op("Conv3D", ["input:T", "filter:T"], _conv3d, attrs=conv, type_constraints=FLOAT)
    registry.op("Conv3DBackpropInputV2", ["input_sizes:Tshape", "filter:T", "out_backprop:T"],
                _conv3d_input, attrs={**conv, "Tshape": dtypes.int32},
                type_constraints={**FLOAT, "Tshape": dtypes.INDEX})
    registry.op("Conv3DBackpropFilterV2", ["input:T", "filter_sizes:int32", "out_backprop:T"],
                _conv3d_filter, attrs=conv, type_constraints=FLOAT)
    registry.op("MaxPool3D", ["input:T"], _pool3d, attrs=pool, type_constraints=FLOAT)
    registry.op("AvgPool3D", ["input:T"], _pool3d, attrs=pool, type_constraints=FLOAT)
    registry.op("MaxPool3DGrad", ["orig_input:TInput", "orig_output:TInput", "grad:T"],
                _max_pool3d_grad, attrs={**pool, "TInput": REQUIRED},
                type_constraints={**FLOAT, "TInput": dtypes.FLOATS})
    registry.op("MaxPool3DGradGrad", ["orig_input:T", "orig_output:T", "grad:T"],
                _max_pool3d_grad_grad, attrs=pool, type_constraints=FLOAT)
    registry.op("AvgPool3DGrad", ["orig_input_shape:int32", "grad:T"], _avg_pool3d_grad,
                attrs=pool, type_constraints=FLOAT)
