"""Kernels of max pooling with argmax and of morphological dilation, written once against
``ctx.xp``.

Contract: images are NHWC. Both ops pick, per window, the first maximal element in window order
(row-major over the window), as TF's CPU kernels do, and their gradients route each output's
gradient to that element only. Padding never wins: it is masked out rather than filled, so
integer images cannot overflow through the fill. Argmax gradients scatter with ``bincount`` and
reject indices outside the image with `InvalidArgumentError`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels.windows import Plan, lowest, padded, plan, scatter, view


def _fail(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _out(ctx: KernelContext, value: Any) -> Any:
    return ctx.xp.asarray(value).astype(ctx.out_np, copy=False)


def _rank4(ctx: KernelContext, what: str, x: Any) -> None:
    if x.ndim != 4:
        raise _fail(ctx, f"{what} must be 4-dimensional, got shape {list(x.shape)}")


def _masked_windows(ctx: KernelContext, image: Any, p: Plan) -> tuple[Any, Any]:
    """The windows view of `image` and a matching boolean view of which entries lie inside."""
    xp = ctx.xp
    inside = padded(xp, xp.ones((1, *image.shape[1:3], 1), dtype=bool), p, False)
    return view(xp, padded(xp, image, p, 0), p), view(xp, inside, p)


def _first_max(ctx: KernelContext, values: Any, inside: Any) -> tuple[Any, Any]:
    """Per window of ``(N, OH, OW, KH, KW, C)`` `values`: (its max, the flat window index of
    its first maximal element), ignoring entries outside the image."""
    xp = ctx.xp
    n, oh, ow, kh, kw, c = values.shape
    masked = xp.where(inside, values, lowest(xp, values.dtype))
    flat = masked.reshape(n, oh, ow, kh * kw, c)
    first = xp.argmax(flat, axis=3)
    return xp.take_along_axis(flat, first[:, :, :, None, :], axis=3)[:, :, :, 0], first


def _one_hot(ctx: KernelContext, first: Any, dy: Any, window: tuple[int, ...]) -> Any:
    """``(N, OH, OW, KH, KW, C)`` holding `dy` at each window's chosen element."""
    xp = ctx.xp
    chosen = xp.arange(window[0] * window[1]).reshape(1, 1, 1, -1, 1) == first[:, :, :, None]
    hot = xp.where(chosen, dy[:, :, :, None, :], xp.zeros((), dtype=dy.dtype))
    return hot.reshape(*dy.shape[:3], *window, dy.shape[3])


# -- max pooling with argmax --------------------------------------------------------------------


def _argmax_plan(ctx: KernelContext, image: Any) -> Plan:
    _rank4(ctx, "input", image)
    return plan(ctx, image.shape[1:3], ctx.attrs["ksize"][1:3], ctx.attrs["strides"][1:3])


def max_pool_with_argmax(ctx: KernelContext, image: Any) -> tuple[Any, Any]:
    xp = ctx.xp
    p = _argmax_plan(ctx, image)
    values, inside = _masked_windows(ctx, image, p)
    best, first = _first_max(ctx, values, inside)
    n, h, w, c = image.shape
    oh, ow = p.out
    rows = (xp.arange(oh) * p.strides[0] - p.pads[0][0]).reshape(1, -1, 1, 1) \
        + first // p.window[1]
    cols = (xp.arange(ow) * p.strides[1] - p.pads[1][0]).reshape(1, 1, -1, 1) \
        + first % p.window[1]
    index = (rows * w + cols) * c + xp.arange(c).reshape(1, 1, 1, -1)
    if ctx.attrs["include_batch_in_index"]:
        index = index + xp.arange(n).reshape(-1, 1, 1, 1) * (h * w * c)
    return best.astype(image.dtype, copy=False), index.astype(ctx.output_dtypes[1].np_type)


def _flat_argmax(ctx: KernelContext, image: Any, argmax: Any) -> Any:
    """`argmax` as indices into the flattened `image`, checked to lie inside it."""
    xp = ctx.xp
    index = argmax.astype(xp.int64)
    if not ctx.attrs["include_batch_in_index"]:
        per_image = image.shape[1] * image.shape[2] * image.shape[3]
        index = index + xp.arange(argmax.shape[0], dtype=xp.int64).reshape(-1, 1, 1, 1) \
            * per_image
    if index.size and bool(((index < 0) | (index >= image.size)).any()):
        raise _fail(ctx, f"Invalid argmax index: an index is outside [0, {image.size})")
    return index.reshape(-1)


def max_pool_grad_with_argmax(ctx: KernelContext, image: Any, grad: Any, argmax: Any) -> Any:
    xp = ctx.xp
    _rank4(ctx, "input", image)
    if grad.shape != argmax.shape:
        raise _fail(ctx, f"grad and argmax must have the same shape, got {list(grad.shape)} "
                         f"and {list(argmax.shape)}")
    index = _flat_argmax(ctx, image, argmax)
    summed = xp.bincount(index, weights=grad.reshape(-1).astype(xp.float64),
                         minlength=image.size)
    return _out(ctx, summed.reshape(image.shape))


def max_pool_grad_grad_with_argmax(ctx: KernelContext, image: Any, grad: Any,
                                   argmax: Any) -> Any:
    _rank4(ctx, "input", image)
    if grad.shape != image.shape:
        raise _fail(ctx, f"grad must have the shape of input {list(image.shape)}, got "
                         f"{list(grad.shape)}")
    index = _flat_argmax(ctx, image, argmax)
    return _out(ctx, grad.reshape(-1)[index].reshape(argmax.shape))


# -- morphological dilation ---------------------------------------------------------------------


def _dilation(ctx: KernelContext, image: Any, kernel: Any) -> tuple[Plan, Any, Any]:
    """The plan and the masked ``image + filter`` windows of a Dilation2D-family op."""
    _rank4(ctx, "input", image)
    if kernel.ndim != 3 or kernel.shape[2] != image.shape[3]:
        raise _fail(ctx, f"filter must be 3-dimensional with depth {image.shape[3]}, got shape "
                         f"{list(kernel.shape)}")
    p = plan(ctx, image.shape[1:3], kernel.shape[:2], ctx.attrs["strides"][1:3],
             ctx.attrs["rates"][1:3])
    values, inside = _masked_windows(ctx, image, p)
    return p, values + kernel, inside


def _check_backprop(ctx: KernelContext, dy: Any, image: Any, p: Plan) -> None:
    want = (image.shape[0], *p.out, image.shape[3])
    if tuple(dy.shape) != want:
        raise _fail(ctx, f"out_backprop has shape {list(dy.shape)}, expected {list(want)}")


def dilation2d(ctx: KernelContext, image: Any, kernel: Any) -> Any:
    _, values, inside = _dilation(ctx, image, kernel)
    return _out(ctx, _first_max(ctx, values, inside)[0])


def dilation2d_backprop_input(ctx: KernelContext, image: Any, kernel: Any, dy: Any) -> Any:
    p, values, inside = _dilation(ctx, image, kernel)
    _check_backprop(ctx, dy, image, p)
    hot = _one_hot(ctx, _first_max(ctx, values, inside)[1], dy, p.window)
    return _out(ctx, scatter(ctx.xp, hot, tuple(image.shape), p))


def dilation2d_backprop_filter(ctx: KernelContext, image: Any, kernel: Any, dy: Any) -> Any:
    p, values, inside = _dilation(ctx, image, kernel)
    _check_backprop(ctx, dy, image, p)
    hot = _one_hot(ctx, _first_max(ctx, values, inside)[1], dy, p.window)
    return _out(ctx, hot.sum(axis=(0, 1, 2)))


def register(registry: Any, device_type: str) -> None:
    """Register this module's kernels for `device_type`."""
    for op, fn in {
        "MaxPoolWithArgmax": max_pool_with_argmax,
        "MaxPoolGradWithArgmax": max_pool_grad_with_argmax,
        "MaxPoolGradGradWithArgmax": max_pool_grad_grad_with_argmax,
        "Dilation2D": dilation2d, "Dilation2DBackpropInput": dilation2d_backprop_input,
        "Dilation2DBackpropFilter": dilation2d_backprop_filter,
    }.items():
        registry.add(op, device_type, fn, expensive=True)
