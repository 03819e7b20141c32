"""OpDefs of the depthwise convolution and its two backprops: ``DepthwiseConv2dNative``,
``DepthwiseConv2dNativeBackpropInput`` and ``DepthwiseConv2dNativeBackpropFilter``.

Contract: names, inputs and attrs follow TF (the attrs are Conv2D's, ``use_cudnn_on_gpu``
aside). The filter is ``[height, width, in_channels, channel_multiplier]`` and the output has
``in_channels * channel_multiplier`` channels; windows, strides, dilations and padding are
Conv2D's, checked by the same helpers of `tensorweave.plugins.standard_ops.nn`, and NHWC only.
The backprops take the shape they produce as a constant-foldable int32 vector, as Conv2D's do.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.grad_ops import _shape_from
from tensorweave.plugins.standard_ops.nn import (
    PADDINGS,
    _explicit_paddings,
    _nhwc_only,
    conv_window_attrs,
    merge_dim,
    output_dim,
    padding_attr,
)
from tensorweave.plugins.standard_ops.shape_fns import with_rank

FLOAT = {"T": dtypes.FLOATS}
DEPTHWISE_ATTRS = {"strides": REQUIRED, "padding": REQUIRED, "explicit_paddings": [],
                   "data_format": "NHWC", "dilations": [1, 1, 1, 1]}


def _check_attrs(ctx: InferContext) -> tuple[list[int], list[int], str, list[tuple[int, int]]]:
    _nhwc_only(ctx)
    strides, dilations = conv_window_attrs(ctx, ctx.op, 4)
    padding = padding_attr(ctx, (*PADDINGS, "EXPLICIT"))
    return strides, dilations, padding, _explicit_paddings(ctx, padding)


def _depthwise(ctx: InferContext) -> list[TensorSpec]:
    strides, dilations, padding, explicit = _check_attrs(ctx)
    image, kernel = with_rank(ctx, 0, 4), with_rank(ctx, 1, 4)
    channels = merge_dim(ctx, image[3], kernel[2])
    dims = [image[0]]
    for i in (1, 2):
        dims.append(output_dim(ctx, image[i], kernel[i - 1], strides[i], dilations[i], padding,
                               explicit[i]))
    multiplier = kernel[3]
    dims.append(None if channels is None or multiplier is None else channels * multiplier)
    return [TensorSpec(ctx.dtype(0), TensorShape(dims))]


def _backprop_input(ctx: InferContext) -> list[TensorSpec]:
    _check_attrs(ctx)
    return [_shape_from(ctx, 0, 4, ctx.dtype(1))]


def _backprop_filter(ctx: InferContext) -> list[TensorSpec]:
    _check_attrs(ctx)
    return [_shape_from(ctx, 1, 4, ctx.dtype(0))]


def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
    attrs = {"T": REQUIRED, **DEPTHWISE_ATTRS}
    registry.op("DepthwiseConv2dNative", ["input:T", "filter:T"], _depthwise, attrs=attrs,
                type_constraints=FLOAT)
    registry.op("DepthwiseConv2dNativeBackpropInput",
                ["input_sizes:int32", "filter:T", "out_backprop:T"], _backprop_input,
                attrs=attrs, type_constraints=FLOAT)
    registry.op("DepthwiseConv2dNativeBackpropFilter",
                ["input:T", "filter_sizes:int32", "out_backprop:T"], _backprop_filter,
                attrs=attrs, type_constraints=FLOAT)
