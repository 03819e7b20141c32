"""OpDefs of the ops that gradient graphs use (TF's ``*Grad`` and backprop ops).

Contract: names, inputs and attrs follow TF. The elementwise ones take two tensors of one shape:
``(y, dy)`` for the derivative through an output (``SigmoidGrad``, ``TanhGrad``, ``SqrtGrad``,
``RsqrtGrad``, ``ReciprocalGrad``) and ``(gradients, features)`` (``EluGrad``/``SeluGrad``: the
outputs) for activations. ``BroadcastGradientArgs`` gives, for two shapes, the axes along which
each operand was broadcast. The convolution and pooling backprops are NHWC only, like their
forward ops, and take the forward op's attrs. ``MirrorPadGrad`` folds the mirrored borders back
onto the input. Output shapes are inferred from constant shape inputs when they are known at
graph-construction time.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.nn import CONV2D_ATTRS, POOL_ATTRS
from tensorweave.plugins.standard_ops.shape_fns import with_rank, with_rank_at_least

T = {"T": REQUIRED}
FLOAT = {"T": dtypes.FLOATS}
REAL = {"T": dtypes.NUMERIC}
INDEX = {"T": dtypes.INDEX}

THROUGH_OUTPUT = ("SigmoidGrad", "TanhGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad")
ACTIVATIONS = {"ReluGrad": REAL, "Relu6Grad": REAL, "EluGrad": FLOAT, "SeluGrad": FLOAT,
               "SoftplusGrad": FLOAT, "SoftsignGrad": FLOAT}
CONV_GRAD_ATTRS = {**T, **CONV2D_ATTRS}
POOL_GRAD_ATTRS = {**T, **POOL_ATTRS}
SLICE_ATTRS = {"T": REQUIRED, "Index": REQUIRED, "begin_mask": 0, "end_mask": 0,
               "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0}


def _same_shapes(ctx: InferContext) -> list[TensorSpec]:
    a, b = ctx.shape(0), ctx.shape(1)
    if not a.is_compatible_with(b):
        raise ctx.shape_error(f"Shapes {a} and {b} are incompatible")
    return [TensorSpec(ctx.dtype(0), a.merge_with(b))]


def _broadcast_args(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 1)
    with_rank(ctx, 1, 1)
    return [TensorSpec(ctx.dtype(0), TensorShape([None]))] * 2


def _shape_from(ctx: InferContext, i: int, rank: int | None, dtype: dtypes.DType) -> TensorSpec:
    """A tensor whose shape is the value of input `i` (a shape vector), when known."""
    with_rank(ctx, i, 1)
    value = ctx.constant_value(i)
    if value is not None:
        return TensorSpec(dtype, TensorShape([int(d) for d in value.reshape(-1)]))
    length = ctx.shape(i)[0] if ctx.shape(i).ndims == 1 else rank
    return TensorSpec(dtype, TensorShape(None if length is None else [None] * length))


def _nhwc(ctx: InferContext) -> None:
    if ctx.attrs.get("data_format", "NHWC") != "NHWC":
        raise ctx.shape_error("tensorweave supports only the NHWC data format")


def _conv_input(ctx: InferContext) -> list[TensorSpec]:
    _nhwc(ctx)
    return [_shape_from(ctx, 0, 4, ctx.dtype(1))]


def _conv_filter(ctx: InferContext) -> list[TensorSpec]:
    _nhwc(ctx)
    return [_shape_from(ctx, 1, 4, ctx.dtype(0))]


def _max_pool_grad(ctx: InferContext) -> list[TensorSpec]:
    _nhwc(ctx)
    return [TensorSpec(ctx.dtype(0), ctx.shape(0))]


def _avg_pool_grad(ctx: InferContext) -> list[TensorSpec]:
    _nhwc(ctx)
    return [_shape_from(ctx, 0, 4, ctx.dtype(1))]


def _bias_add_grad(ctx: InferContext) -> list[TensorSpec]:
    shape = with_rank_at_least(ctx, 0, 2)
    if shape.ndims is None:
        return [TensorSpec(ctx.dtype(0), TensorShape([None]))]
    axis = 1 if ctx.attr("data_format") == "NCHW" else -1
    return [TensorSpec(ctx.dtype(0), TensorShape([shape[axis]]))]


def _mirror_pad_grad(ctx: InferContext) -> list[TensorSpec]:
    shape, paddings = ctx.shape(0), ctx.constant_value(1)
    if shape.ndims is None or paddings is None:
        return [TensorSpec(ctx.dtype(0), TensorShape(None if shape.ndims is None
                                                     else [None] * shape.ndims))]
    pads = paddings.reshape(-1, 2)
    if len(pads) != shape.ndims:
        raise ctx.shape_error(f"paddings must have {shape.ndims} rows, got {len(pads)}")
    dims = [None if d is None else d - int(b) - int(a) for d, (b, a) in zip(shape.dims, pads)]
    return [TensorSpec(ctx.dtype(0), TensorShape(dims))]


def _strided_slice_grad(ctx: InferContext) -> list[TensorSpec]:
    return [_shape_from(ctx, 0, None, ctx.dtype(4))]


def register(registry: Any) -> None:
    for name in THROUGH_OUTPUT:
        registry.op(name, ["y:T", "dy:T"], _same_shapes, attrs=T, type_constraints=FLOAT)
    for name, allowed in ACTIVATIONS.items():
        second = "outputs" if name in ("EluGrad", "SeluGrad") else "features"
        registry.op(name, ["gradients:T", f"{second}:T"], _same_shapes, attrs=T,
                    type_constraints=allowed)
    registry.op("LeakyReluGrad", ["gradients:T", "features:T"], _same_shapes,
                attrs={**T, "alpha": 0.2}, type_constraints=FLOAT)
    registry.op("BroadcastGradientArgs", ["s0:T", "s1:T"], _broadcast_args,
                attrs={"T": dtypes.int32}, type_constraints=INDEX)
    registry.op("BiasAddGrad", ["out_backprop:T"], _bias_add_grad,
                attrs={**T, "data_format": "NHWC"}, type_constraints=REAL)
    registry.op("Conv2DBackpropInput", ["input_sizes:int32", "filter:T", "out_backprop:T"],
                _conv_input, attrs=CONV_GRAD_ATTRS, type_constraints=FLOAT)
    registry.op("Conv2DBackpropFilter", ["input:T", "filter_sizes:int32", "out_backprop:T"],
                _conv_filter, attrs=CONV_GRAD_ATTRS, type_constraints=FLOAT)
    registry.op("MaxPoolGrad", ["orig_input:T", "orig_output:T", "grad:T"], _max_pool_grad,
                attrs=POOL_GRAD_ATTRS, type_constraints=REAL)
    registry.op("MaxPoolGradV2",
                ["orig_input:T", "orig_output:T", "grad:T", "ksize:int32", "strides:int32"],
                _max_pool_grad, attrs={**T, "padding": REQUIRED, "data_format": "NHWC"},
                type_constraints=REAL)
    registry.op("AvgPoolGrad", ["orig_input_shape:int32", "grad:T"], _avg_pool_grad,
                attrs=POOL_GRAD_ATTRS, type_constraints=FLOAT)
    registry.op("MirrorPadGrad", ["input:T", "paddings:Tpaddings"], _mirror_pad_grad,
                attrs={**T, "Tpaddings": dtypes.int32, "mode": REQUIRED},
                type_constraints={"Tpaddings": dtypes.INDEX})
    registry.op("StridedSliceGrad",
                ["shape:Index", "begin:Index", "end:Index", "strides:Index", "dy:T"],
                _strided_slice_grad, attrs=SLICE_ATTRS, type_constraints={"Index": dtypes.INDEX})
