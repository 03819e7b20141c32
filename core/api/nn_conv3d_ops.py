"""``tw.nn``'s 3-D convolution and pooling, the N-D dispatchers ``convolution`` and ``pool``, and
TF 1.15's pooling aliases, with ``tf.compat.v1.nn``'s signatures: ``conv3d``,
``conv3d_backprop_filter(_v2)``, ``conv3d_transpose``, ``max_pool3d``, ``avg_pool3d``,
``max_pool1d``/``avg_pool1d``, ``max_pool2d``/``avg_pool2d``, ``max_pool_v2``/``avg_pool_v2``,
``conv1d_transpose`` and ``atrous_conv2d_transpose``.

Contract: each function builds TF's ops (``Conv3D``, ``Conv3DBackpropInputV2``, ``MaxPool3D``,
...) and validates its Python arguments at construction with TF's `ValueError`s. Where TF wraps
a dilated op in space-to-batch, tensorweave passes the dilation to the op itself, which computes
the same. Dilated pooling, which TF also builds with space-to-batch (zero padding for SAME), is
the max or mean of the window's strided slices of the zero-padded input.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.api import array_ops as _array
from tensorweave.api import math_ops as _math
from tensorweave.api.deprecation import deprecated_argument_lookup
from tensorweave.api.nn_conv_ops import (
    conv1d,
    conv2d_transpose,
    known_entry,
    set_known_shape,
    transpose_operands,
)
from tensorweave.api.nn_ops import _get_sequence, avg_pool, conv2d, max_pool
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "atrous_conv2d_transpose", "avg_pool1d", "avg_pool2d", "avg_pool3d", "avg_pool_v2",
    "conv1d_transpose", "conv3d", "conv3d_backprop_filter", "conv3d_backprop_filter_v2",
    "conv3d_transpose", "convolution", "max_pool1d", "max_pool2d", "max_pool3d", "max_pool_v2",
    "pool",
]


def _ints(value: Any) -> list[int]:
    return [int(v) for v in np.ravel(value)]


def _channels_first(data_format: str | None) -> bool:
    return data_format is not None and data_format.startswith("NC")


# -- 3-D convolution ------------------------------------------------------------------------------


def conv3d(input: Any, filter: Any = None, strides: Any = None, padding: str | None = None,  # noqa: A002
           data_format: str = "NDHWC", dilations: Any = (1, 1, 1, 1, 1),
           name: str | None = None, filters: Any = None) -> Tensor:
    """3-D convolution of an NDHWC `input` with a ``[depth, height, width, in, out]`` filter;
    `strides` and `dilations` have 5 entries."""
    kernel = deprecated_argument_lookup("filters", filters, "filter", filter)
    if kernel is None or strides is None or padding is None:
        raise ValueError("conv3d needs filter, strides and padding")
    attrs = {"strides": _ints(strides), "padding": padding, "data_format": data_format,
             "dilations": _ints(dilations)}
    return apply("Conv3D", [input, kernel], attrs, name=name)


def conv3d_backprop_filter_v2(input: Any, filter_sizes: Any, out_backprop: Any,  # noqa: A002
                              strides: Any, padding: str, data_format: str = "NDHWC",
                              dilations: Any = (1, 1, 1, 1, 1),
                              name: str | None = None) -> Tensor:
    """The gradient of ``conv3d`` with respect to its filter, of shape `filter_sizes`."""
    attrs = {"strides": _ints(strides), "padding": padding, "data_format": data_format,
             "dilations": _ints(dilations)}
    return apply("Conv3DBackpropFilterV2", [input, filter_sizes, out_backprop], attrs,
                 name=name)


conv3d_backprop_filter = conv3d_backprop_filter_v2


def conv3d_transpose(value: Any = None, filter: Any = None, output_shape: Any = None,  # noqa: A002
                     strides: Any = None, padding: str = "SAME", data_format: str = "NDHWC",
                     name: str | None = None, input: Any = None, filters: Any = None,  # noqa: A002
                     dilations: Any = None) -> Tensor:
    """The transpose (gradient) of ``conv3d``: `value` ``[batch, depth, height, width, in]``
    through a ``[depth, height, width, output_channels, in]`` filter, to `output_shape`."""
    value = deprecated_argument_lookup("input", input, "value", value)
    kernel = deprecated_argument_lookup("filters", filters, "filter", filter)
    with name_scope(name, "conv3d_transpose", [value, kernel, output_shape]) as scope:
        value, kernel, sizes = transpose_operands(value, kernel, output_shape, padding,
                                                  data_format, "DHW")
        attrs = {"strides": _get_sequence(strides, 3, 4, "strides"), "padding": padding,
                 "data_format": data_format,
                 "dilations": _get_sequence(dilations, 3, 4, "dilations")}
        result = apply("Conv3DBackpropInputV2", [sizes, kernel, value], attrs, name=scope)
        set_known_shape(result, output_shape)
        return result


def conv1d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any,  # noqa: A002
                     padding: str = "SAME", data_format: str = "NWC", dilations: Any = None,
                     name: str | None = None) -> Tensor:
    """The transpose of ``conv1d``: `input` ``[batch, width, in]`` through a
    ``[width, output_channels, in]`` filter, to `output_shape`; built as TF builds it, a
    ``conv2d_transpose`` over an added height of 1."""
    with name_scope(name, "conv1d_transpose", [input, filters, output_shape]) as scope:
        if data_format not in ("NWC", "NCW"):
            raise ValueError('data_format must be "NWC" or "NCW".')
        spatial, channel = (1, 2) if data_format == "NWC" else (2, 1)
        stride = _get_sequence(strides, 1, channel, "stride")
        rate = _get_sequence(dilations, 1, channel, "dilations")
        if isinstance(output_shape, (list, tuple, np.ndarray)):
            shape2d: Any = [*list(output_shape)[:spatial], 1, *list(output_shape)[spatial:]]
        else:
            sizes = convert_to_tensor(output_shape, dtype=dtypes.int32, name="output_shape")
            shape2d = _array.concat([sizes[:spatial], [1], sizes[spatial:]], 0)
        result = conv2d_transpose(
            _array.expand_dims(input, spatial), _array.expand_dims(filters, 0), shape2d,
            strides=stride[:spatial] + [1] + stride[spatial:],
            padding=padding, data_format="NHWC" if spatial == 1 else "NCHW",
            dilations=rate[:spatial] + [1] + rate[spatial:])
        return _array.squeeze(result, [spatial], name=scope)


def atrous_conv2d_transpose(value: Any, filters: Any, output_shape: Any, rate: int,
                            padding: str, name: str | None = None) -> Tensor:
    """The transpose of ``atrous_conv2d``: ``conv2d_transpose`` of NHWC `value` with `filters`
    ``[height, width, out_channels, in_channels]`` dilated by `rate`, stride 1."""
    with name_scope(name, "atrous_conv2d_transpose", [value, filters]) as scope:
        value = convert_to_tensor(value, name="value")
        filters = convert_to_tensor(filters, name="filters")
        value_channels = value.shape.with_rank(4)[3]
        filter_shape = filters.shape.with_rank(4)
        if not TensorShape([value_channels]).is_compatible_with([filter_shape[3]]):
            raise ValueError(f"value's input channels does not match filters' input channels, "
                             f"{value_channels} != {filter_shape[3]}")
        if int(rate) < 1:
            raise ValueError(f"rate {rate} cannot be less than one")
        if padding not in ("SAME", "VALID"):
            raise ValueError(f"padding must be either VALID or SAME: {padding}")
        sizes = convert_to_tensor(output_shape, dtype=dtypes.int32, name="output_shape")
        if not sizes.shape.is_compatible_with([4]):
            raise ValueError(f"output_shape must have shape (4,), got {sizes.shape}")
        wanted = known_entry(output_shape, 3)
        if wanted is not None and not TensorShape([wanted]).is_compatible_with(
                [filter_shape[2]]):
            raise ValueError(f"output_shape does not match filter's output channels, "
                             f"{wanted} != {filter_shape[2]}")
        rate = int(rate)
        result = conv2d_transpose(value, filters, sizes, strides=[1, 1, 1, 1], padding=padding,
                                  dilations=[1, rate, rate, 1], name=scope)
        set_known_shape(result, output_shape)
        return result


# -- pooling ------------------------------------------------------------------------------------


def _pool3d(op: str, input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
            data_format: str, name: str | None) -> Tensor:
    channel = 1 if _channels_first(data_format) else 4
    ksize = _get_sequence(ksize, 3, channel, "ksize")
    if any(v == 0 for v in ksize):
        raise ValueError("ksize cannot be zero.")
    attrs = {"ksize": ksize, "strides": _get_sequence(strides, 3, channel, "strides"),
             "padding": padding, "data_format": data_format}
    with name_scope(name, op, [input]) as scope:
        return apply(op, [convert_to_tensor(input, name="input")], attrs, name=scope)


def max_pool3d(input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
               data_format: str = "NDHWC", name: str | None = None) -> Tensor:
    """The maximum over each `ksize` window of an NDHWC `input`."""
    return _pool3d("MaxPool3D", input, ksize, strides, padding, data_format, name)


def avg_pool3d(input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
               data_format: str = "NDHWC", name: str | None = None) -> Tensor:
    """The mean over each `ksize` window of an NDHWC `input` (SAME windows count only the
    elements inside the volume)."""
    return _pool3d("AvgPool3D", input, ksize, strides, padding, data_format, name)


def _pool1d(pool2d: Callable[..., Tensor], scope_name: str, input: Any, ksize: Any,  # noqa: A002
            strides: Any, padding: str, data_format: str, name: str | None) -> Tensor:
    """A 1-D pool built as TF builds it: ``expand_dims`` + the 2-D pool + ``squeeze``."""
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"data_format must be 'NWC' or 'NCW', got {data_format!r}")
    spatial, channel = (1, 2) if data_format == "NWC" else (2, 1)
    ksize = [1, *_get_sequence(ksize, 1, channel, "ksize")]
    strides = [1, *_get_sequence(strides, 1, channel, "strides")]
    with name_scope(name, scope_name, [input]) as scope:
        expanded = _array.expand_dims(input, spatial)
        pooled = pool2d(expanded, ksize, strides, padding,
                        data_format="NHWC" if spatial == 1 else "NCHW")
        return _array.squeeze(pooled, [spatial], name=scope)


def max_pool1d(input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
               data_format: str = "NWC", name: str | None = None) -> Tensor:
    """The maximum over each `ksize` window of an NWC `input`."""
    return _pool1d(max_pool, "MaxPool1d", input, ksize, strides, padding, data_format, name)


def avg_pool1d(input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
               data_format: str = "NWC", name: str | None = None) -> Tensor:
    """The mean over each `ksize` window of an NWC `input`."""
    return _pool1d(avg_pool, "AvgPool1D", input, ksize, strides, padding, data_format, name)


def max_pool2d(input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
               data_format: str = "NHWC", name: str | None = None) -> Tensor:
    """``max_pool`` under TF 2's name and argument names."""
    return max_pool(input, ksize, strides, padding, data_format=data_format, name=name)


def avg_pool2d(input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
               data_format: str = "NHWC", name: str | None = None) -> Tensor:
    """``avg_pool`` under TF 2's name and argument names."""
    return avg_pool(input, ksize, strides, padding, data_format=data_format, name=name)


def _spatial_rank(input: Tensor, data_format: str | None) -> int:  # noqa: A002
    if data_format is not None:
        return len(data_format) - 2
    if input.shape.ndims is None:
        raise ValueError("The input rank must be known when data_format is not given")
    return input.shape.ndims - 2


def _pool_v2(kind: str, input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
             data_format: str | None, name: str | None) -> Tensor:
    input = convert_to_tensor(input, name="input")
    n = _spatial_rank(input, data_format)
    if n not in (1, 2, 3):
        raise ValueError(f"Input tensor must be of rank 3, 4 or 5 but was {n + 2}.")
    fns = {"MAX": (max_pool1d, max_pool2d, max_pool3d), "AVG": (avg_pool1d, avg_pool2d,
                                                                 avg_pool3d)}[kind]
    defaults = ("NWC", "NHWC", "NDHWC")
    return fns[n - 1](input, ksize, strides, padding, data_format=data_format or defaults[n - 1],
                      name=name)


def max_pool_v2(input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
                data_format: str | None = None, name: str | None = None) -> Tensor:
    """Max pooling of a rank 3, 4 or 5 `input`, dispatched on its rank."""
    return _pool_v2("MAX", input, ksize, strides, padding, data_format, name)


def avg_pool_v2(input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
                data_format: str | None = None, name: str | None = None) -> Tensor:
    """Average pooling of a rank 3, 4 or 5 `input`, dispatched on its rank."""
    return _pool_v2("AVG", input, ksize, strides, padding, data_format, name)


# -- the N-D dispatchers --------------------------------------------------------------------------


def _spatial_list(value: Any, n: int, what: str) -> list[int]:
    values = [1] * n if value is None else _ints(value)
    if len(values) != n:
        raise ValueError(f"len({what})={len(values)} but should be {n}")
    if any(v < 1 for v in values):
        raise ValueError(f"all values of {what} must be positive")
    return values


def _check_spatial_input(input: Tensor, n: int) -> None:  # noqa: A002
    if input.shape.ndims is not None and input.shape.ndims != n + 2:
        raise ValueError(f"input tensor must have rank {n + 2}")
    if n not in (1, 2, 3):
        raise ValueError("It is required that 1 <= num_spatial_dims <= 3.")


def convolution(input: Any, filter: Any = None, padding: str | None = None,  # noqa: A002
                strides: Any = None, dilation_rate: Any = None, name: str | None = None,
                data_format: str | None = None, filters: Any = None,
                dilations: Any = None) -> Tensor:
    """N-D convolution (N = 1, 2 or 3, from the filter's rank) with optional `dilation_rate`
    (then all `strides` must be 1), dispatched to ``conv1d``, ``conv2d`` or ``conv3d``."""
    kernel = deprecated_argument_lookup("filters", filters, "filter", filter)
    dilation_rate = deprecated_argument_lookup("dilations", dilations, "dilation_rate",
                                               dilation_rate)
    with name_scope(name, "convolution", [input, kernel]) as scope:
        input = convert_to_tensor(input, name="input")
        kernel = convert_to_tensor(kernel, name="filter")
        if kernel.shape.ndims is None:
            raise ValueError("filter rank must be known")
        n = kernel.shape.ndims - 2
        _check_spatial_input(input, n)
        strides = _spatial_list(strides, n, "strides")
        rates = _spatial_list(dilation_rate, n, "dilation_rate")
        if max(rates) > 1 and max(strides) > 1:
            raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
        if padding not in ("SAME", "VALID"):
            raise ValueError(f"padding must be either VALID or SAME: {padding}")
        first = _channels_first(data_format)
        if data_format is not None and not first and not (
                data_format.startswith("N") and data_format.endswith("C")):
            raise ValueError(f"data_format must be of the form N...C or NC..., got "
                             f"{data_format!r}")
        channels = input.shape[1 if first else -1] if input.shape.ndims else None
        if channels is not None and kernel.shape[n] is not None and channels != kernel.shape[n]:
            raise ValueError(f"number of input channels does not match corresponding "
                             f"dimension of filter, {channels} != {kernel.shape[n]}")
        if n == 1:
            return conv1d(input, kernel, strides, padding, dilations=rates,
                          data_format="NCW" if first else "NWC", name=scope)
        full = ([1, 1, *strides], [1, 1, *rates]) if first else ([1, *strides, 1],
                                                                  [1, *rates, 1])
        if n == 2:
            return conv2d(input, kernel, full[0], padding, dilations=full[1],
                          data_format="NCHW" if first else "NHWC", name=scope)
        return conv3d(input, kernel, full[0], padding, dilations=full[1],
                      data_format="NCDHW" if first else "NDHWC", name=scope)


def _dilated_pool(input: Tensor, window: list[int], rates: list[int], pooling_type: str,  # noqa: A002
                  padding: str, first: bool, name: str) -> Tensor:
    """Pooling with holes at stride 1, as TF's space-to-batch construction computes it: the
    input zero-padded for SAME, then the max or mean of one strided slice per window offset."""
    n = len(window)
    axes = list(range(2, 2 + n)) if first else list(range(1, 1 + n))
    if padding == "SAME":
        pads = [[0, 0] for _ in range(n + 2)]
        for axis, k, r in zip(axes, window, rates):
            total = (k - 1) * r
            pads[axis] = [total // 2, total - total // 2]
        input = _array.pad(input, pads)
    parts = []
    for offset in np.ndindex(*window):
        index: list[slice] = [slice(None)] * (n + 2)
        for axis, o, k, r in zip(axes, offset, window, rates):
            stop = (k - 1 - o) * r
            index[axis] = slice(o * r, -stop if stop else None)
        parts.append(input[tuple(index)])
    if pooling_type == "MAX":
        return apply("Identity", [functools.reduce(_math.maximum, parts)], name=name)
    return apply("RealDiv", [_math.add_n(parts), np.asarray(len(parts), input.dtype.np_type)],
                 name=name)


def pool(input: Any, window_shape: Any, pooling_type: str, padding: str,  # noqa: A002
         dilation_rate: Any = None, strides: Any = None, name: str | None = None,
         data_format: str | None = None, dilations: Any = None) -> Tensor:
    """N-D max or average pooling (N = ``len(window_shape)``: 1, 2 or 3) with optional
    `dilation_rate` (then all `strides` must be 1)."""
    dilation_rate = deprecated_argument_lookup("dilations", dilations, "dilation_rate",
                                               dilation_rate)
    with name_scope(name, f"{pooling_type.lower()}_pool", [input]) as scope:
        input = convert_to_tensor(input, name="input")
        window = _ints(window_shape)
        n = len(window)
        _check_spatial_input(input, n)
        if pooling_type not in ("MAX", "AVG"):
            raise ValueError(f"Invalid pooling_type: {pooling_type}")
        if padding not in ("SAME", "VALID"):
            raise ValueError(f"padding must be either VALID or SAME: {padding}")
        strides = _spatial_list(strides, n, "strides")
        rates = _spatial_list(dilation_rate, n, "dilation_rate")
        if padding == "SAME" and any(s > k for s, k in zip(strides, window)):
            raise ValueError("strides > window_shape not supported due to inconsistency "
                             "between CPU and GPU implementations")
        if max(rates) > 1 and max(strides) > 1:
            raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
        first = _channels_first(data_format)
        if max(rates) > 1:
            return _dilated_pool(input, window, rates, pooling_type, padding, first, scope)
        formats = (("NCW", "NCHW", "NCDHW") if first else ("NWC", "NHWC", "NDHWC"))[n - 1]
        fn = (max_pool1d, max_pool2d, max_pool3d) if pooling_type == "MAX" else (
            avg_pool1d, avg_pool2d, avg_pool3d)
        return fn[n - 1](input, window, strides, padding, data_format=formats, name=scope)
