"""Kernels of the 3-D convolution and pooling ops, written once against ``ctx.xp``.

Contract: volumes are NDHWC. float16 is computed in float32 and cast back. A convolution is one
tensordot over a copy-free view of the padded volume's windows; its backprops are the adjoint
(`windows.scatter`) and a tensordot of the same view with the output gradient. Max pooling routes
each window's gradient to its first maximal element (in window order), as ``MaxPoolGrad`` does;
average pooling divides by the window's elements inside the volume, as TF does. Bad runtime
shapes raise `InvalidArgumentError`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels.windows import Plan, lowest, padded, plan, scatter, view

WINDOW_AXES = (4, 5, 6)


def _fail(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _wide(ctx: KernelContext, x: Any) -> Any:
    return x.astype(ctx.xp.float32) if x.dtype == ctx.xp.float16 else x


def _out(ctx: KernelContext, value: Any) -> Any:
    return ctx.xp.asarray(value).astype(ctx.out_np, copy=False)


def _ints(ctx: KernelContext, x: Any) -> list[int]:
    return [int(v) for v in ctx.device.to_host(x).reshape(-1).tolist()]


def _rank5(ctx: KernelContext, what: str, shape: tuple[int, ...]) -> None:
    if len(shape) != 5:
        raise _fail(ctx, f"{what} must be 5-dimensional, got shape {list(shape)}")


def _conv_plan(ctx: KernelContext, image_shape: tuple[int, ...],
               kernel_shape: tuple[int, ...]) -> Plan:
    _rank5(ctx, "input", image_shape)
    _rank5(ctx, "filter", kernel_shape)
    if image_shape[4] != kernel_shape[3]:
        raise _fail(ctx, f"Input depth must be equal to filter in_depth: {image_shape[4]} vs "
                         f"{kernel_shape[3]}")
    return plan(ctx, image_shape[1:4], kernel_shape[:3], ctx.attrs["strides"][1:4],
                ctx.attrs["dilations"][1:4])


def _check_backprop(ctx: KernelContext, dy: Any, batch: int, p: Plan, depth: int) -> None:
    want = (batch, *p.out, depth)
    if tuple(dy.shape) != want:
        raise _fail(ctx, f"out_backprop has shape {list(dy.shape)}, expected {list(want)}")


def conv3d(ctx: KernelContext, image: Any, kernel: Any) -> Any:
    xp = ctx.xp
    p = _conv_plan(ctx, tuple(image.shape), tuple(kernel.shape))
    patches = view(xp, padded(xp, _wide(ctx, image), p, 0), p)
    return _out(ctx, xp.tensordot(patches, _wide(ctx, kernel), axes=4))


def conv3d_backprop_input(ctx: KernelContext, input_sizes: Any, kernel: Any, dy: Any) -> Any:
    xp = ctx.xp
    shape = tuple(_ints(ctx, input_sizes))
    p = _conv_plan(ctx, shape, tuple(kernel.shape))
    _check_backprop(ctx, dy, shape[0], p, kernel.shape[4])
    # (N, OD, OH, OW, O) x (KD, KH, KW, C, O) -> (N, OD, OH, OW, KD, KH, KW, C)
    contributions = xp.tensordot(_wide(ctx, dy), _wide(ctx, kernel), axes=([4], [4]))
    return _out(ctx, scatter(xp, contributions, shape, p))


def conv3d_backprop_filter(ctx: KernelContext, image: Any, filter_sizes: Any, dy: Any) -> Any:
    xp = ctx.xp
    fshape = tuple(_ints(ctx, filter_sizes))
    p = _conv_plan(ctx, tuple(image.shape), fshape)
    _check_backprop(ctx, dy, image.shape[0], p, fshape[4])
    patches = view(xp, padded(xp, _wide(ctx, image), p, 0), p)
    return _out(ctx, xp.tensordot(patches, _wide(ctx, dy), axes=([0, 1, 2, 3], [0, 1, 2, 3])))


def _pool_plan(ctx: KernelContext, shape: tuple[int, ...]) -> Plan:
    _rank5(ctx, "tensor_in", shape)
    return plan(ctx, shape[1:4], ctx.attrs["ksize"][1:4], ctx.attrs["strides"][1:4])


def _counts(ctx: KernelContext, shape: tuple[int, ...], p: Plan, dtype: Any) -> Any:
    """How many elements of each window lie inside the volume, shaped ``(1, *out, 1)``."""
    xp = ctx.xp
    inside = padded(xp, xp.ones((1, *shape[1:4], 1), dtype=dtype), p, 0)
    return view(xp, inside, p).sum(axis=WINDOW_AXES)


def max_pool3d(ctx: KernelContext, image: Any) -> Any:
    xp = ctx.xp
    p = _pool_plan(ctx, tuple(image.shape))
    return view(xp, padded(xp, image, p, lowest(xp, image.dtype)), p).max(axis=WINDOW_AXES)


def avg_pool3d(ctx: KernelContext, image: Any) -> Any:
    xp = ctx.xp
    shape = tuple(image.shape)
    p = _pool_plan(ctx, shape)
    sums = view(xp, padded(xp, _wide(ctx, image), p, 0), p).sum(axis=WINDOW_AXES)
    return _out(ctx, sums / _counts(ctx, shape, p, sums.dtype))


def _first_max(ctx: KernelContext, image: Any, p: Plan) -> Any:
    """Per window, the flat index (in window order) of its first maximal element:
    ``(N, *out, C)``."""
    xp = ctx.xp
    patches = view(xp, padded(xp, image, p, lowest(xp, image.dtype)), p)
    n, *out, c = patches.shape[:4] + patches.shape[-1:]
    flat = patches.reshape(n, *out, -1, c)
    return xp.argmax(flat, axis=4)


def max_pool3d_grad(ctx: KernelContext, image: Any, output: Any, dy: Any) -> Any:
    xp = ctx.xp
    shape = tuple(image.shape)
    p = _pool_plan(ctx, shape)
    _check_backprop(ctx, dy, shape[0], p, shape[4])
    first = _first_max(ctx, image, p)[:, :, :, :, None, :]
    size = p.window[0] * p.window[1] * p.window[2]
    chosen = xp.arange(size).reshape(1, 1, 1, 1, -1, 1) == first
    contributions = xp.where(chosen, _wide(ctx, dy)[:, :, :, :, None, :], 0)
    contributions = contributions.reshape(*dy.shape[:4], *p.window, dy.shape[4])
    return _out(ctx, scatter(xp, contributions, shape, p))


def max_pool3d_grad_grad(ctx: KernelContext, image: Any, output: Any, grad: Any) -> Any:
    """The gradient of ``MaxPool3DGrad`` with respect to its `grad`: each window's incoming
    `grad` at the window's first maximal element."""
    xp = ctx.xp
    shape = tuple(image.shape)
    p = _pool_plan(ctx, shape)
    if tuple(grad.shape) != shape:
        raise _fail(ctx, f"grad must have the shape of orig_input {list(shape)}, got "
                         f"{list(grad.shape)}")
    first = _first_max(ctx, image, p)
    patches = view(xp, padded(xp, grad, p, 0), p)
    flat = patches.reshape(*first.shape[:4], -1, first.shape[4])
    return _out(ctx, xp.take_along_axis(flat, first[:, :, :, :, None, :], axis=4)[:, :, :, :, 0])


def avg_pool3d_grad(ctx: KernelContext, input_shape: Any, dy: Any) -> Any:
    xp = ctx.xp
    shape = tuple(_ints(ctx, input_shape))
    p = _pool_plan(ctx, shape)
    _check_backprop(ctx, dy, shape[0], p, shape[4])
    wide = _wide(ctx, dy)
    share = wide / _counts(ctx, shape, p, wide.dtype)
    contributions = xp.broadcast_to(share[:, :, :, :, None, None, None, :],
                                    (*share.shape[:4], *p.window, share.shape[4]))
    return _out(ctx, scatter(xp, contributions, shape, p))


def register(registry: Any, device_type: str) -> None:
    """Register this module's kernels for `device_type`."""
    for op, fn in {
        "Conv3D": conv3d, "Conv3DBackpropInputV2": conv3d_backprop_input,
        "Conv3DBackpropFilterV2": conv3d_backprop_filter, "MaxPool3D": max_pool3d,
        "AvgPool3D": avg_pool3d, "MaxPool3DGrad": max_pool3d_grad,
        "MaxPool3DGradGrad": max_pool3d_grad_grad, "AvgPool3DGrad": avg_pool3d_grad,
    }.items():
        registry.add(op, device_type, fn, expensive=True)
