"""OpDefs of max pooling with argmax (``MaxPoolWithArgmax`` and its gradient ops) and of
grayscale morphological dilation (``Dilation2D`` and its two backprops).

Contract: names, inputs, attrs and shapes follow TF; images are NHWC. ``MaxPoolWithArgmax``
returns the pooled image and, per output, the flat index of the chosen input element:
``(y * width + x) * channels + c``, with ``+ b * height * width * channels`` when
``include_batch_in_index``. ``Dilation2D`` takes a ``[filter_height, filter_width, depth]``
filter; its ``rates`` dilate the filter as a convolution's dilations do.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.nn import (
    merge_dim,
    output_dim,
    padding_attr,
    pool_window_attrs,
    window_attr,
)
from tensorweave.plugins.standard_ops.shape_fns import with_rank

REAL = {"T": dtypes.NUMERIC}
ARGMAX_ATTRS = {"ksize": REQUIRED, "strides": REQUIRED, "padding": REQUIRED,
                "include_batch_in_index": False, "Targmax": dtypes.int64}
DILATION_ATTRS = {"strides": REQUIRED, "rates": REQUIRED, "padding": REQUIRED}


def _pooled(ctx: InferContext) -> TensorShape:
    ksize, strides = pool_window_attrs(ctx, 4)
    padding = padding_attr(ctx)
    image = with_rank(ctx, 0, 4)
    dims = [output_dim(ctx, image[i], ksize[i], strides[i], 1, padding) for i in (1, 2)]
    return TensorShape([image[0], *dims, image[3]])


def _max_pool_with_argmax(ctx: InferContext) -> list[TensorSpec]:
    shape = _pooled(ctx)
    return [TensorSpec(ctx.dtype(0), shape), TensorSpec(ctx.attr("Targmax"), shape)]


def _max_pool_grad_with_argmax(ctx: InferContext) -> list[TensorSpec]:
    _pooled(ctx)
    with_rank(ctx, 1, 4)
    with_rank(ctx, 2, 4)
    return [TensorSpec(ctx.dtype(0), ctx.shape(0))]


def _max_pool_grad_grad_with_argmax(ctx: InferContext) -> list[TensorSpec]:
    shape = _pooled(ctx)
    with_rank(ctx, 1, 4)
    with_rank(ctx, 2, 4)
    return [TensorSpec(ctx.dtype(0), shape.merge_with(ctx.shape(2)))]


def dilation_attrs(ctx: InferContext) -> tuple[list[int], list[int], str]:
    """The checked (strides, rates, padding) of a Dilation2D-family op."""
    strides = window_attr(ctx, "strides", "Dilation2D strides", 4)
    rates = window_attr(ctx, "rates", "Dilation2D rates", 4)
    if strides[0] != 1 or strides[3] != 1 or rates[0] != 1 or rates[3] != 1:
        raise ctx.shape_error("Dilation2D supports strides and rates only in the spatial "
                              "dimensions")
    return strides, rates, padding_attr(ctx)


def _dilation2d(ctx: InferContext) -> list[TensorSpec]:
    strides, rates, padding = dilation_attrs(ctx)
    image, kernel = with_rank(ctx, 0, 4), with_rank(ctx, 1, 3)
    depth = merge_dim(ctx, image[3], kernel[2])
    dims = [output_dim(ctx, image[i], kernel[i - 1], strides[i], rates[i], padding)
            for i in (1, 2)]
    return [TensorSpec(ctx.dtype(0), TensorShape([image[0], *dims, depth]))]


def _dilation2d_backprop(index: int, rank: int) -> Any:
    def infer(ctx: InferContext) -> list[TensorSpec]:
        dilation_attrs(ctx)
        with_rank(ctx, 0, 4)
        with_rank(ctx, 1, 3)
        with_rank(ctx, 2, 4)
        return [TensorSpec(ctx.dtype(0), with_rank(ctx, index, rank))]

    return infer


def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
    T = {"T": REQUIRED}
    argmax = {**T, **ARGMAX_ATTRS}
    argmax_types = {**REAL, "Targmax": dtypes.INDEX}
    registry.op("MaxPoolWithArgmax", ["input:T"], _max_pool_with_argmax, attrs=argmax,
                type_constraints=argmax_types)
    registry.op("MaxPoolGradWithArgmax", ["input:T", "grad:T", "argmax:Targmax"],
                _max_pool_grad_with_argmax, attrs=argmax, type_constraints=argmax_types)
    registry.op("MaxPoolGradGradWithArgmax", ["input:T", "grad:T", "argmax:Targmax"],
                _max_pool_grad_grad_with_argmax, attrs=argmax, type_constraints=argmax_types)
    dilation = {**T, **DILATION_ATTRS}
    registry.op("Dilation2D", ["input:T", "filter:T"], _dilation2d, attrs=dilation,
                type_constraints=REAL)
    registry.op("Dilation2DBackpropInput", ["input:T", "filter:T", "out_backprop:T"],
                _dilation2d_backprop(0, 4), attrs=dilation, type_constraints=REAL)
    registry.op("Dilation2DBackpropFilter", ["input:T", "filter:T", "out_backprop:T"],
                _dilation2d_backprop(1, 3), attrs=dilation, type_constraints=REAL)
