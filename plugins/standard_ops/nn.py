"""OpDefs for the nn ops: activations, softmax and cross-entropies, bias, convolution, pooling,
local response normalization and top-k.

Contract: names, inputs, attrs and output shapes follow TF. Images are NHWC only: Conv2D,
MaxPool and AvgPool reject ``data_format="NCHW"`` at construction (BiasAdd accepts both, as its
layout only decides which axis the bias runs along). `window_geometry` is TF's
``GetWindowedOutputSizeVerbose``: the output size of one spatial dimension and how SAME padding is
split (the smaller half before), shared with the kernels so both agree exactly. The window attr
checks (`window_attr`, `padding_attr`, `conv_window_attrs`, `pool_window_attrs`) and
`output_dim` serve the 3-D, depthwise and argmax/dilation ops too, whatever their rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import (
    broadcast_shape,
    unchanged,
    with_rank,
    with_rank_at_least,
)

FLOAT = {"T": dtypes.FLOATS}
REAL = {"T": dtypes.NUMERIC}
PADDINGS = ("SAME", "VALID")
# The attrs (and defaults) of the forward ops, which their gradient ops take too.
CONV2D_ATTRS = {"strides": REQUIRED, "padding": REQUIRED, "use_cudnn_on_gpu": True,
                "explicit_paddings": [], "data_format": "NHWC", "dilations": [1, 1, 1, 1]}
POOL_ATTRS = {"ksize": REQUIRED, "strides": REQUIRED, "padding": REQUIRED, "data_format": "NHWC"}
LRN_ATTRS = {"depth_radius": 5, "bias": 1.0, "alpha": 1.0, "beta": 0.5}
LRN_TYPES = {"T": frozenset({dtypes.float16, dtypes.float32})}


def window_geometry(size: int, window: int, stride: int, dilation: int, padding: str,
                    explicit: tuple[int, int] = (0, 0)) -> tuple[int, int, int]:
    """(output size, padding before, padding after) of one spatial dimension; the output size is
    negative when a VALID window does not fit."""
    effective = (window - 1) * dilation + 1
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + effective - size, 0)
        return out, total // 2, total - total // 2
    before, after = explicit if padding == "EXPLICIT" else (0, 0)
    return (size + before + after - effective) // stride + 1, before, after


def merge_dim(ctx: InferContext, a: int | None, b: int | None) -> int | None:
    if a is not None and b is not None and a != b:
        raise ctx.shape_error(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def _softmax(ctx: InferContext) -> list[TensorSpec]:
    with_rank_at_least(ctx, 0, 1)
    return [ctx.inputs[0]]


def _xent(ctx: InferContext) -> list[TensorSpec]:
    # TF merges two rank-2 shapes when it can, and otherwise broadcasts them, which must give
    # a matrix (labels of shape [1, classes] serve every row of the logits).
    logits, labels = ctx.shape(0), ctx.shape(1)
    matrix = TensorShape([None, None])
    if logits.is_compatible_with(matrix) and logits.is_compatible_with(labels):
        merged = matrix.merge_with(logits).merge_with(labels)
    else:
        merged = broadcast_shape(ctx, logits, labels)
        if merged.ndims is None:
            raise ctx.shape_error("Shape must be broadcasted with rank 2, but is rank is "
                                  "unknown.")
        if merged.ndims != 2:
            raise ctx.shape_error(f"Shape must be broadcasted with rank 2, but is rank "
                                  f"{merged.ndims}")
    return [TensorSpec(ctx.dtype(0), TensorShape([merged[0]])),
            TensorSpec(ctx.dtype(0), merged)]


def _sparse_xent(ctx: InferContext) -> list[TensorSpec]:
    logits, labels = with_rank(ctx, 0, 2), with_rank(ctx, 1, 1)
    batch = merge_dim(ctx, logits[0], labels[0])
    return [TensorSpec(ctx.dtype(0), TensorShape([batch])),
            TensorSpec(ctx.dtype(0), TensorShape([batch, logits[1]]))]


def _l2_loss(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(ctx.dtype(0), TensorShape([]))]


def _bias_add(ctx: InferContext) -> list[TensorSpec]:
    fmt = ctx.attr("data_format")
    if fmt not in ("NHWC", "NCHW"):
        raise ctx.shape_error(f"Invalid data format '{fmt}'")
    value = with_rank_at_least(ctx, 0, 2 if fmt == "NHWC" else 3)
    bias = with_rank(ctx, 1, 1)
    if value.ndims is None:
        return [ctx.inputs[0]]
    axis = -1 if fmt == "NHWC" else 1
    dims = list(value.dims)
    dims[axis] = merge_dim(ctx, dims[axis], bias[0])
    return [TensorSpec(ctx.dtype(0), TensorShape(dims))]


def _nhwc_only(ctx: InferContext) -> None:
    fmt = ctx.attr("data_format")
    if fmt != "NHWC":
        raise ctx.shape_error(
            f"{ctx.op} supports data_format 'NHWC' only (tensorweave implements NHWC images), "
            f"got '{fmt}'")


def window_attr(ctx: InferContext, attr: str, what: str, rank: int) -> list[int]:
    """The list attr `attr` (strides, ksize, dilations, rates): `rank` positive ints."""
    values = [int(v) for v in ctx.attr(attr)]
    if len(values) != rank:
        raise ctx.shape_error(f"{what} must specify {rank} dimensions, got {len(values)}")
    if any(v < 1 for v in values):
        raise ctx.shape_error(f"{what} must be positive, got {values}")
    return values


def padding_attr(ctx: InferContext, allowed: Sequence[str] = PADDINGS) -> str:
    padding = ctx.attr("padding")
    if padding not in allowed:
        raise ctx.shape_error(f"padding must be one of {list(allowed)}, got '{padding}'")
    return padding


def _explicit_paddings(ctx: InferContext, padding: str) -> list[tuple[int, int]]:
    """Per-dimension (before, after) of ``explicit_paddings`` (all zero unless EXPLICIT)."""
    flat = [int(v) for v in ctx.attrs.get("explicit_paddings", ())]
    if padding != "EXPLICIT":
        if flat:
            raise ctx.shape_error("explicit_paddings is only allowed with padding 'EXPLICIT'")
        return [(0, 0)] * 4
    if len(flat) != 8:
        raise ctx.shape_error(
            f"explicit_paddings must contain 8 values (2 per dimension), got {len(flat)}")
    pairs = [(flat[2 * i], flat[2 * i + 1]) for i in range(4)]
    if any(v < 0 for v in flat):
        raise ctx.shape_error(f"All elements of explicit_paddings must be nonnegative, "
                              f"got {flat}")
    if pairs[0] != (0, 0) or pairs[3] != (0, 0):
        raise ctx.shape_error("Explicit padding of the batch or depth dimension is not "
                              "supported")
    return pairs


def conv_window_attrs(ctx: InferContext, what: str, rank: int) -> tuple[list[int], list[int]]:
    """The checked (strides, dilations) of a convolution over rank-`rank` tensors (channels
    last), worded as TF's 3-D and depthwise convolutions word them."""
    strides = window_attr(ctx, "strides", f"{what} strides", rank)
    dilations = window_attr(ctx, "dilations", f"{what} dilations", rank)
    if strides[0] != 1 or strides[-1] != 1:
        raise ctx.shape_error("Current implementation does not yet support strides in the "
                              "batch and depth dimensions.")
    if dilations[0] != 1 or dilations[-1] != 1:
        raise ctx.shape_error("Current implementation does not yet support dilations in the "
                              "batch and depth dimensions.")
    return strides, dilations


def pool_window_attrs(ctx: InferContext, rank: int) -> tuple[list[int], list[int]]:
    """The checked (ksize, strides) of a pooling op over rank-`rank` tensors (channels last),
    worded as TF's 3-D and argmax pooling word them."""
    ksize = window_attr(ctx, "ksize", "Sliding window ksize field", rank)
    strides = window_attr(ctx, "strides", "Sliding window stride field", rank)
    if ksize[0] != 1 or strides[0] != 1:
        raise ctx.shape_error("Pooling is not yet supported on the batch dimension.")
    if ksize[-1] != 1 or strides[-1] != 1:
        raise ctx.shape_error("Pooling is not yet supported on the depth dimension.")
    return ksize, strides


def output_dim(ctx: InferContext, size: int | None, window: int | None, stride: int,
               dilation: int, padding: str, explicit: tuple[int, int] = (0, 0)) -> int | None:
    """One spatial output dimension (unknown when `size` or `window` is), with TF's errors for
    a window that does not fit."""
    if size is None or window is None:
        return None
    out, _, _ = window_geometry(size, window, stride, dilation, padding, explicit)
    if out < 1 and padding == "VALID":
        effective = (window - 1) * dilation + 1
        raise ctx.shape_error(
            f"Negative dimension size caused by subtracting {effective} from {size}")
    if out < 0:
        raise ctx.shape_error(f"Computed output size would be negative: {out} "
                              f"[input_size: {size}, stride: {stride}]")
    return out


def _conv2d(ctx: InferContext) -> list[TensorSpec]:
    _nhwc_only(ctx)
    strides = window_attr(ctx, "strides", "Conv2D strides", 4)
    dilations = window_attr(ctx, "dilations", "Conv2D dilations", 4)
    if strides[0] != 1 or strides[3] != 1:
        raise ctx.shape_error("Current implementation does not yet support strides in the "
                              "batch and depth dimensions")
    if dilations[0] != 1 or dilations[3] != 1:
        raise ctx.shape_error("Current implementation does not yet support dilations in the "
                              "batch and depth dimensions")
    padding = padding_attr(ctx, (*PADDINGS, "EXPLICIT"))
    explicit = _explicit_paddings(ctx, padding)
    image, kernel = with_rank(ctx, 0, 4), with_rank(ctx, 1, 4)
    merge_dim(ctx, image[3], kernel[2])
    dims = [image[0]]
    for i in (1, 2):
        dims.append(output_dim(ctx, image[i], kernel[i - 1], strides[i], dilations[i], padding,
                               explicit[i]))
    dims.append(kernel[3])
    return [TensorSpec(ctx.dtype(0), TensorShape(dims))]


def _pool(ctx: InferContext) -> list[TensorSpec]:
    ksize = window_attr(ctx, "ksize", "Sliding window ksize field", 4)
    strides = window_attr(ctx, "strides", "Sliding window stride field", 4)
    return [TensorSpec(ctx.dtype(0), _pool_shape(ctx, ksize, strides))]


def _max_pool_v2(ctx: InferContext) -> list[TensorSpec]:
    """MaxPool with `ksize` and `strides` as int32 inputs: the output shape is known when
    both are constants, and unknown otherwise (they may be fed)."""
    windows = []
    for i, field in ((1, "ksize"), (2, "stride")):
        with_rank(ctx, i, 1)
        value = ctx.constant_value(i)
        if value is None:
            return [TensorSpec(ctx.dtype(0), TensorShape(None))]
        values = [int(v) for v in np.reshape(value, -1)]
        if len(values) != 4:
            raise ctx.shape_error(f"Sliding window {field} field must specify 4 dimensions")
        windows.append(values)
    return [TensorSpec(ctx.dtype(0), _pool_shape(ctx, *windows))]


def _pool_shape(ctx: InferContext, ksize: list[int], strides: list[int]) -> TensorShape:
    """The NHWC output shape of a pooling op. Max pooling may pool over depth instead of over
    rows and columns (its kernel checks the window tiles the depth); average pooling may not."""
    _nhwc_only(ctx)
    if ksize[0] != 1 or strides[0] != 1:
        raise ctx.shape_error("Pooling is not yet supported on the batch dimension")
    over_depth = ksize[3] != 1 or strides[3] != 1
    if over_depth and not ctx.op.startswith("MaxPool"):
        raise ctx.shape_error("Pooling over the depth dimension is not supported")
    padding = padding_attr(ctx)
    image = with_rank(ctx, 0, 4)
    dims = [image[0]]
    for i in (1, 2, 3):
        dims.append(output_dim(ctx, image[i], ksize[i], strides[i], 1, padding))
    return TensorShape(dims)


def _scalar_value(ctx: InferContext, i: int, what: str) -> int | None:
    shape = ctx.shape(i)
    if shape.ndims not in (None, 0):
        raise ctx.shape_error(f"Shape must be rank 0 but is rank {shape.ndims} ({what})")
    value = ctx.constant_value(i)
    return None if value is None else int(value)


def _top_k(ctx: InferContext) -> list[TensorSpec]:
    shape = with_rank_at_least(ctx, 0, 1)
    k = _scalar_value(ctx, 1, "k")
    if k is not None and k < 0:
        raise ctx.shape_error(f"Need k >= 0, got {k}")
    if shape.ndims is None:
        out = TensorShape(None)
    else:
        last = shape[-1]
        if k is not None and last is not None and last < k:
            raise ctx.shape_error(f"input must have last dimension >= k = {k} but is {last}")
        out = TensorShape([*shape.dims[:-1], k])
    return [TensorSpec(ctx.dtype(0), out), TensorSpec(dtypes.int32, out)]


def _in_top_k(ctx: InferContext) -> list[TensorSpec]:
    predictions, targets = with_rank(ctx, 0, 2), with_rank(ctx, 1, 1)
    _scalar_value(ctx, 2, "k")
    batch = merge_dim(ctx, predictions[0], targets[0])
    return [TensorSpec(dtypes.bool_, TensorShape([batch]))]


def _lrn(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(ctx.dtype(0), with_rank(ctx, 0, 4))]


def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
    T = {"T": REQUIRED}
    for name in ("Relu", "Relu6"):
        registry.op(name, ["features:T"], unchanged, attrs=T, type_constraints=REAL)
    for name in ("Elu", "Selu", "Softplus", "Softsign"):
        registry.op(name, ["features:T"], unchanged, attrs=T, type_constraints=FLOAT)
    registry.op("LeakyRelu", ["features:T"], unchanged, attrs={**T, "alpha": 0.2},
                type_constraints=FLOAT)
    for name in ("Softmax", "LogSoftmax"):
        registry.op(name, ["logits:T"], _softmax, attrs=T, type_constraints=FLOAT)
    registry.op("SoftmaxCrossEntropyWithLogits", ["features:T", "labels:T"], _xent, attrs=T,
                type_constraints=FLOAT)
    registry.op("SparseSoftmaxCrossEntropyWithLogits", ["features:T", "labels:Tlabels"],
                _sparse_xent, attrs={**T, "Tlabels": REQUIRED},
                type_constraints={**FLOAT, "Tlabels": dtypes.INDEX})
    registry.op("L2Loss", ["t:T"], _l2_loss, attrs=T, type_constraints=FLOAT)
    registry.op("BiasAdd", ["value:T", "bias:T"], _bias_add,
                attrs={**T, "data_format": "NHWC"}, type_constraints=REAL)
    registry.op("Conv2D", ["input:T", "filter:T"], _conv2d, attrs={**T, **CONV2D_ATTRS},
                type_constraints=FLOAT)
    registry.op("MaxPool", ["input:T"], _pool, attrs={**T, **POOL_ATTRS}, type_constraints=REAL)
    registry.op("MaxPoolV2", ["input:T", "ksize:int32", "strides:int32"], _max_pool_v2,
                attrs={**T, "padding": REQUIRED, "data_format": "NHWC"}, type_constraints=REAL)
    registry.op("AvgPool", ["value:T"], _pool, attrs={**T, **POOL_ATTRS},
                type_constraints=FLOAT)
    registry.op("LRN", ["input:T"], _lrn, attrs={**T, **LRN_ATTRS}, type_constraints=LRN_TYPES)
    registry.op("LRNGrad", ["input_grads:T", "input_image:T", "output_image:T"],
                lambda ctx: [ctx.inputs[1]], attrs={**T, **LRN_ATTRS},
                type_constraints=LRN_TYPES)
    registry.op("TopKV2", ["input:T", "k:int32"], _top_k, attrs={**T, "sorted": True},
                type_constraints=REAL)
    registry.op("InTopKV2", ["predictions:float32", "targets:T", "k:T"], _in_top_k,
                attrs=T, type_constraints={"T": dtypes.INDEX})
