"""``tw.nn``'s convolution variants and fused batch norm, with ``tf.compat.v1.nn``'s signatures:
``conv2d_transpose``, ``conv1d``, ``atrous_conv2d``, ``depthwise_conv2d``, ``separable_conv2d``,
``fused_batch_norm`` and the raw backprop wrappers (N-D ``pool`` lives in
`tensorweave.api.nn_conv3d_ops`).

Contract: each function builds TF's ops (``Conv2DBackpropInput``, ``DepthwiseConv2dNative``, a
``Conv2D`` with dilations where TF builds space-to-batch around one, which computes the same) and
validates its Python arguments at construction with TF's `ValueError`s. ``fused_batch_norm`` is
a composite of elementwise ops computing what ``FusedBatchNormV3`` does, including its gradient
contract: the returned statistics carry no gradient, and in inference the given mean and
variance get none either.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorweave.api import array_ops as _array
from tensorweave.api import math_ops as _math
from tensorweave.api.deprecation import deprecated_argument_lookup
from tensorweave.api.nn_ops import (
    _channel_index,
    _convert_padding,
    _get_sequence,
    conv2d,
)
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "atrous_conv2d", "conv1d", "conv2d_backprop_filter", "conv2d_backprop_input",
    "conv2d_transpose", "depthwise_conv2d", "depthwise_conv2d_native",
    "depthwise_conv2d_native_backprop_filter", "depthwise_conv2d_native_backprop_input",
    "fused_batch_norm", "separable_conv2d",
]

# cuDNN's floor, which TF applies on every device.
MIN_EPSILON = 1.001e-5


def _conv_attrs(strides: Any, padding: Any, data_format: str | None, dilations: Any) -> dict:
    channel = _channel_index(data_format)
    padding, explicit = _convert_padding(padding)
    return {"strides": _get_sequence(strides, 2, channel, "strides"), "padding": padding,
            "explicit_paddings": explicit, "data_format": data_format or "NHWC",
            "dilations": _get_sequence(dilations, 2, channel, "dilations")}


def conv2d_backprop_input(input_sizes: Any, filter: Any = None, out_backprop: Any = None,  # noqa: A002
                          strides: Any = None, padding: Any = None,
                          use_cudnn_on_gpu: bool = True, data_format: str = "NHWC",
                          dilations: Any = (1, 1, 1, 1), name: str | None = None,
                          filters: Any = None) -> Tensor:
    """The gradient of ``conv2d`` with respect to its input, of shape `input_sizes`."""
    kernel = deprecated_argument_lookup("filters", filters, "filter", filter)
    attrs = {**_conv_attrs(strides, padding, data_format, dilations),
             "use_cudnn_on_gpu": use_cudnn_on_gpu}
    return apply("Conv2DBackpropInput", [input_sizes, kernel, out_backprop], attrs, name=name)


def conv2d_backprop_filter(input: Any, filter_sizes: Any, out_backprop: Any, strides: Any,  # noqa: A002
                           padding: Any, use_cudnn_on_gpu: bool = True,
                           data_format: str = "NHWC", dilations: Any = (1, 1, 1, 1),
                           name: str | None = None) -> Tensor:
    """The gradient of ``conv2d`` with respect to its filter, of shape `filter_sizes`."""
    attrs = {**_conv_attrs(strides, padding, data_format, dilations),
             "use_cudnn_on_gpu": use_cudnn_on_gpu}
    return apply("Conv2DBackpropFilter", [input, filter_sizes, out_backprop], attrs, name=name)


def known_entry(shape: Any, axis: int) -> int | None:
    """Entry `axis` of a Python/numpy `shape` when it is a plain number."""
    if isinstance(shape, (list, tuple, np.ndarray)) and len(shape) > axis \
            and not isinstance(shape[axis], Tensor):
        return int(shape[axis])
    return None


def set_known_shape(result: Tensor, output_shape: Any) -> None:
    """Give a transposed convolution's `result` the known entries of its `output_shape`."""
    if isinstance(output_shape, (list, tuple)):
        # TF reads the known entries of a packed shape; the op sees only whole constants.
        result.set_shape([None if isinstance(d, Tensor) else int(d) for d in output_shape])


def transpose_operands(value: Any, kernel: Any, output_shape: Any, padding: str,
                       data_format: str, spatial: str) -> tuple[Tensor, Tensor, Tensor]:
    """The checked (value, filter, output sizes) of a transposed convolution over the `spatial`
    dimensions (``"HW"``, ``"DHW"``), with TF's `ValueError`s for ``conv{2,3}d_transpose``."""
    channels_last, channels_first = f"N{spatial}C", f"NC{spatial}"
    if data_format not in (channels_first, channels_last):
        raise ValueError(f"data_format has to be either {channels_first} or {channels_last}.")
    rank = len(spatial) + 2
    value = convert_to_tensor(value, name="value")
    kernel = convert_to_tensor(kernel, name="filter")
    axis = rank - 1 if data_format == channels_last else 1
    kernel_shape = kernel.shape.with_rank(rank)
    value_shape = value.shape.with_rank(rank)
    if not TensorShape([value_shape[axis]]).is_compatible_with([kernel_shape[rank - 1]]):
        raise ValueError(f"input channels does not match filter's input channels, "
                         f"{value_shape[axis]} != {kernel_shape[rank - 1]}")
    sizes = convert_to_tensor(output_shape, dtype=dtypes.int32, name="output_shape")
    if not sizes.shape.is_compatible_with([rank]):
        raise ValueError(f"output_shape must have shape ({rank},), got {sizes.shape}")
    wanted = known_entry(output_shape, axis)
    if wanted is not None and not TensorShape([wanted]).is_compatible_with(
            [kernel_shape[rank - 2]]):
        raise ValueError(f"output_shape does not match filter's output channels, "
                         f"{wanted} != {kernel_shape[rank - 2]}")
    if padding not in ("VALID", "SAME"):
        raise ValueError(f"padding must be either VALID or SAME: {padding}")
    return value, kernel, sizes


def conv2d_transpose(value: Any = None, filter: Any = None, output_shape: Any = None,  # noqa: A002
                     strides: Any = None, padding: str = "SAME", data_format: str = "NHWC",
                     name: str | None = None, input: Any = None, filters: Any = None,  # noqa: A002
                     dilations: Any = None) -> Tensor:
    """The transpose (gradient) of ``conv2d``: `value` ``[batch, height, width, in_channels]``
    through a ``[height, width, output_channels, in_channels]`` filter, to `output_shape`."""
    value = deprecated_argument_lookup("input", input, "value", value)
    kernel = deprecated_argument_lookup("filters", filters, "filter", filter)
    with name_scope(name, "conv2d_transpose", [value, kernel, output_shape]) as scope:
        value, kernel, sizes = transpose_operands(value, kernel, output_shape, padding,
                                                  data_format, "HW")
        attrs = _conv_attrs(strides, padding, data_format, dilations)
        result = apply("Conv2DBackpropInput", [sizes, kernel, value], attrs, name=scope)
        set_known_shape(result, output_shape)
        return result


def conv1d(value: Any = None, filters: Any = None, stride: Any = None, padding: Any = None,
           use_cudnn_on_gpu: bool | None = None, data_format: str | None = None,
           name: str | None = None, input: Any = None, dilations: Any = None) -> Tensor:  # noqa: A002
    """1-D convolution of a ``[batch, width, in]`` `value` with a ``[width, in, out]`` filter,
    built as TF builds it: ``expand_dims`` + ``Conv2D`` + ``squeeze``."""
    value = deprecated_argument_lookup("input", input, "value", value)
    with name_scope(name, "conv1d", [value, filters]) as scope:
        if data_format in (None, "NHWC", "NWC"):
            data_format, spatial, channel = "NHWC", 1, 2
        elif data_format in ("NCHW", "NCW"):
            data_format, spatial, channel = "NCHW", 2, 1
        else:
            raise ValueError('data_format must be "NWC" or "NCW".')
        strides = [1, *_get_sequence(stride, 1, channel, "stride")]
        rates = [1, *_get_sequence(dilations, 1, channel, "dilations")]
        value = _array.expand_dims(value, spatial)
        filters = _array.expand_dims(filters, 0)
        result = conv2d(value, filters, strides, padding,
                        use_cudnn_on_gpu=True if use_cudnn_on_gpu is None else use_cudnn_on_gpu,
                        data_format=data_format, dilations=rates, name=scope)
        return _array.squeeze(result, [spatial])


def _rates(rate: Any, what: str = "dilation_rate") -> list[int]:
    rates = [int(v) for v in np.ravel(rate)]
    if len(rates) != 2:
        raise ValueError(f"len({what})={len(rates)} but should be 2")
    if any(r < 1 for r in rates):
        raise ValueError(f"all values of {what} must be positive")
    return rates


def atrous_conv2d(value: Any, filters: Any, rate: int, padding: str,
                  name: str | None = None) -> Tensor:
    """``conv2d`` with holes: `filters` read every `rate`-th pixel (stride 1)."""
    rates = _rates(np.broadcast_to(rate, (2,)))
    return conv2d(value, filters, [1, 1, 1, 1], padding, dilations=[1, *rates, 1], name=name)


def depthwise_conv2d_native(input: Any, filter: Any, strides: Any, padding: Any,  # noqa: A002
                            data_format: str = "NHWC", dilations: Any = (1, 1, 1, 1),
                            name: str | None = None) -> Tensor:
    """The raw ``DepthwiseConv2dNative``: each input channel through its own filters."""
    return apply("DepthwiseConv2dNative", [input, filter],
                 _depthwise_attrs(strides, padding, data_format, dilations), name=name)


def depthwise_conv2d_native_backprop_input(input_sizes: Any, filter: Any, out_backprop: Any,  # noqa: A002
                                           strides: Any, padding: Any,
                                           data_format: str = "NHWC",
                                           dilations: Any = (1, 1, 1, 1),
                                           name: str | None = None) -> Tensor:
    """The gradient of the depthwise convolution with respect to its input."""
    return apply("DepthwiseConv2dNativeBackpropInput", [input_sizes, filter, out_backprop],
                 _depthwise_attrs(strides, padding, data_format, dilations), name=name)


def depthwise_conv2d_native_backprop_filter(input: Any, filter_sizes: Any, out_backprop: Any,  # noqa: A002
                                            strides: Any, padding: Any,
                                            data_format: str = "NHWC",
                                            dilations: Any = (1, 1, 1, 1),
                                            name: str | None = None) -> Tensor:
    """The gradient of the depthwise convolution with respect to its filter."""
    return apply("DepthwiseConv2dNativeBackpropFilter", [input, filter_sizes, out_backprop],
                 _depthwise_attrs(strides, padding, data_format, dilations), name=name)


def _depthwise_attrs(strides: Any, padding: Any, data_format: str | None,
                     dilations: Any) -> dict:
    attrs = _conv_attrs(strides, padding, data_format, dilations)
    if len(attrs["strides"]) != 4:
        raise ValueError(f"strides must have 4 elements, got {attrs['strides']}")
    return attrs


def _depthwise(input: Any, kernel: Tensor, strides: Any, padding: Any, rate: Any,  # noqa: A002
               data_format: str | None, name: str) -> Tensor:
    rates = _rates([1, 1] if rate is None else rate, "rate")
    stride_list = [int(v) for v in np.ravel(strides)]
    if max(rates) > 1 and any(s > 1 for s in stride_list):
        raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
    channel = _channel_index(data_format)
    dilations = [1, 1, *rates] if channel == 1 else [1, *rates, 1]
    return depthwise_conv2d_native(input, kernel, stride_list, padding,
                                   data_format=data_format or "NHWC", dilations=dilations,
                                   name=name)


def depthwise_conv2d(input: Any, filter: Any, strides: Any, padding: Any, rate: Any = None,  # noqa: A002
                     name: str | None = None, data_format: str | None = None,
                     dilations: Any = None) -> Tensor:
    """Depthwise 2-D convolution: channel `k` through ``filter[:, :, k, :]``, giving
    ``in_channels * channel_multiplier`` channels; `rate` dilates the filter."""
    rate = deprecated_argument_lookup("dilations", dilations, "rate", rate)
    with name_scope(name, "depthwise", [input, filter]) as scope:
        input = convert_to_tensor(input, name="tensor_in")
        kernel = convert_to_tensor(filter, name="filter_in")
        return _depthwise(input, kernel, strides, padding, rate, data_format, scope)


def separable_conv2d(input: Any, depthwise_filter: Any, pointwise_filter: Any, strides: Any,  # noqa: A002
                     padding: Any, rate: Any = None, name: str | None = None,
                     data_format: str | None = None, dilations: Any = None) -> Tensor:
    """A depthwise convolution followed by a 1x1 ``conv2d`` with `pointwise_filter`
    ``[1, 1, in_channels * channel_multiplier, out_channels]``."""
    rate = deprecated_argument_lookup("dilations", dilations, "rate", rate)
    with name_scope(name, "separable_conv2d",
                    [input, depthwise_filter, pointwise_filter]) as scope:
        input = convert_to_tensor(input, name="tensor_in")
        depthwise_filter = convert_to_tensor(depthwise_filter, name="depthwise_filter")
        pointwise_filter = convert_to_tensor(pointwise_filter, name="pointwise_filter")
        pointwise_shape = pointwise_filter.shape.with_rank(4)
        for i in (0, 1):
            if pointwise_shape[i] not in (None, 1):
                raise ValueError(f"Dimensions {pointwise_shape[i]} and 1 are not compatible")
        depthwise = _depthwise(input, depthwise_filter, strides, padding, rate, data_format,
                               "depthwise")
        return conv2d(depthwise, pointwise_filter, [1, 1, 1, 1], padding="VALID",
                      data_format=data_format or "NHWC", name=scope)


def _as_float32(value: Any, name: str) -> Tensor:
    tensor = convert_to_tensor(value, dtype=dtypes.float32, name=name)
    if tensor.dtype != dtypes.float32:
        raise TypeError(f"{name} must be float32, got {tensor.dtype.name}")
    return tensor


def _channel_vector(value: Tensor, channels: int | None, shape: Sequence[int]) -> Tensor:
    """A per-channel vector checked against `channels` and shaped to broadcast over x."""
    dims = value.shape.with_rank(1)
    if channels is not None and dims[0] is not None and dims[0] != channels:
        raise ValueError(f"Dimensions must be equal, but are {channels} and {dims[0]}")
    return _array.reshape(value, shape)


def fused_batch_norm(x: Any, scale: Any, offset: Any, mean: Any = None, variance: Any = None,
                     epsilon: float = 0.001, data_format: str = "NHWC",
                     is_training: bool = True,
                     name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Batch normalization of a 4-D `x` over all axes but the channels: ``(y, batch_mean,
    batch_var)``. Training normalizes with the batch's (biased) variance and returns the
    Bessel-corrected one; inference uses `mean` and `variance` and returns them."""
    with name_scope(name, "FusedBatchNormV3", [x, scale, offset, mean, variance]) as scope:
        x = convert_to_tensor(x, name="input")
        if x.dtype not in (dtypes.float16, dtypes.float32):
            raise TypeError(f"Value passed to parameter 'x' has DataType {x.dtype.name} not in "
                            f"list of allowed values: float16, float32")
        if data_format not in ("NHWC", "NCHW"):
            raise ValueError(f"Invalid data format: {data_format}")
        dims = x.shape.with_rank(4)
        axis = 3 if data_format == "NHWC" else 1
        axes = [i for i in range(4) if i != axis]
        channels = dims[axis]
        shape = [1, 1, 1, -1] if axis == 3 else [1, -1, 1, 1]
        scale = _channel_vector(_as_float32(scale, "scale"), channels, shape)
        offset = _channel_vector(_as_float32(offset, "offset"), channels, shape)
        epsilon = max(float(epsilon), MIN_EPSILON)
        wide = _math.cast(x, dtypes.float32) if x.dtype == dtypes.float16 else x
        if is_training:
            if mean is not None or variance is not None:
                raise ValueError("Both 'mean' and 'variance' must be None when is_training "
                                 "is True.")
            batch_mean = _math.reduce_mean(wide, axes, keepdims=True)
            centered = wide - batch_mean
            batch_var = _math.reduce_mean(centered * centered, axes, keepdims=True)
            count = _math.cast(_array.size(wide) // _array.shape(wide)[axis], dtypes.float32)
            corrected = batch_var * count / _math.maximum(count - 1.0, 1.0)
            stats = (_array.reshape(batch_mean, [-1]), _array.reshape(corrected, [-1]))
        else:
            if mean is None or variance is None:
                raise ValueError("Both 'mean' and 'variance' must be a 1D tensor when "
                                 "is_training is False.")
            given = [apply("StopGradient", [_as_float32(v, n)])
                     for v, n in ((mean, "mean"), (variance, "variance"))]
            batch_mean, batch_var = (_channel_vector(v, channels, shape) for v in given)
            centered = wide - batch_mean
            stats = tuple(given)
        y = centered * _math.rsqrt(batch_var + epsilon) * scale + offset
        y = _math.cast(y, x.dtype) if x.dtype == dtypes.float16 else y
        y = apply("Identity", [y], name=scope)
        return y, apply("StopGradient", [stats[0]]), apply("StopGradient", [stats[1]])

