"""Kernels of the depthwise convolution and its backprops, written once against ``ctx.xp``.

Contract: as Conv2D's kernels (`tensorweave.plugins.kernels.nn` and ``grad``), whose window
helpers they share: the padded image is viewed as windows ``(N, OH, OW, KH, KW, C)`` with stride
tricks, and each channel is contracted with its own ``channel_multiplier`` filters by one
``einsum``; the input backprop adds each window offset's share into a padded buffer. Output
channel ``c * multiplier + m`` is input channel `c` through filter ``[:, :, c, m]``. float16 is
computed in float32. Shape mismatches raise `InvalidArgumentError`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels import grad, nn


def _params(ctx: KernelContext) -> tuple[tuple[int, int], tuple[int, int]]:
    strides = tuple(int(v) for v in ctx.attrs["strides"][1:3])
    dilations = tuple(int(v) for v in ctx.attrs["dilations"][1:3])
    return strides, dilations


def depthwise_conv2d(ctx: KernelContext, image: Any, kernel: Any) -> Any:
    if image.ndim != 4 or kernel.ndim != 4 or image.shape[3] != kernel.shape[2]:
        raise nn._invalid(ctx, f"input and filter must have the same depth: input shape "
                               f"{list(image.shape)}, filter shape {list(kernel.shape)}")
    strides, dilations = _params(ctx)
    window = (kernel.shape[0], kernel.shape[1])
    out_hw, pads = nn._geometry(ctx, image, window, strides, dilations)
    padded = nn._pad(ctx, nn._wide(ctx, image), pads, 0)
    patches = nn._windows(ctx, padded, out_hw, window, strides, dilations)
    out = ctx.xp.einsum("nijhwc,hwcm->nijcm", patches, nn._wide(ctx, kernel))
    return nn._out(ctx, out.reshape(*out.shape[:3], -1))


def _split_channels(ctx: KernelContext, dy: Any, batch: int, out_hw: tuple[int, ...],
                    channels: int, multiplier: int) -> Any:
    """`dy` as ``(N, OH, OW, C, M)``, after checking it is the forward output's shape."""
    grad._check_out(ctx, dy, batch, out_hw, channels * multiplier)
    return nn._wide(ctx, dy).reshape(*dy.shape[:3], channels, multiplier)


def depthwise_backprop_input(ctx: KernelContext, input_sizes: Any, kernel: Any,
                             dy: Any) -> Any:
    shape = tuple(grad._ints(ctx, input_sizes))
    if len(shape) != 4 or kernel.ndim != 4 or shape[3] != kernel.shape[2]:
        raise grad._fail(ctx, f"input_sizes {list(shape)} do not match filter shape "
                              f"{list(kernel.shape)}")
    strides, dilations = _params(ctx)
    window = (kernel.shape[0], kernel.shape[1])
    out_hw, pads = grad._geometry(ctx, shape[1:3], window, strides, dilations)
    dy5 = _split_channels(ctx, dy, shape[0], out_hw, shape[3], kernel.shape[3])
    contributions = ctx.xp.einsum("nijcm,hwcm->nijhwc", dy5, nn._wide(ctx, kernel))
    return grad._out(ctx, grad._scatter_windows(ctx.xp, contributions, shape, pads, out_hw,
                                                strides, dilations))


def depthwise_backprop_filter(ctx: KernelContext, image: Any, filter_sizes: Any,
                              dy: Any) -> Any:
    fshape = tuple(grad._ints(ctx, filter_sizes))
    if len(fshape) != 4 or image.ndim != 4 or image.shape[3] != fshape[2]:
        raise grad._fail(ctx, f"filter_sizes {list(fshape)} do not match input shape "
                              f"{list(image.shape)}")
    strides, dilations = _params(ctx)
    window = (fshape[0], fshape[1])
    out_hw, pads = grad._geometry(ctx, image.shape[1:3], window, strides, dilations)
    dy5 = _split_channels(ctx, dy, image.shape[0], out_hw, fshape[2], fshape[3])
    padded = grad._padded(ctx.xp, nn._wide(ctx, image), pads, out_hw, window, strides,
                          dilations, 0)
    patches = grad._windows(ctx.xp, padded, out_hw, window, strides, dilations)
    return grad._out(ctx, ctx.xp.einsum("nijhwc,nijcm->hwcm", patches, dy5))


def register(registry: Any, device_type: str) -> None:
    """Register this module's kernels for `device_type`."""
    for op, fn in {
        "DepthwiseConv2dNative": depthwise_conv2d,
        "DepthwiseConv2dNativeBackpropInput": depthwise_backprop_input,
        "DepthwiseConv2dNativeBackpropFilter": depthwise_backprop_filter,
    }.items():
        registry.add(op, device_type, fn, expensive=True)
