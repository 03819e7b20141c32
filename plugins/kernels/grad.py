"""Kernels of the gradient ops (`tensorweave.plugins.standard_ops.grad_ops`), against ``ctx.xp``.

Contract: each kernel returns exactly the node's output dtype and never writes into its inputs.
Shape inputs (``input_sizes``, ``s0``, ...) are read back to the host, as TF keeps them in host
memory. No convolution or pooling backprop loops over pixels. Conv2DBackpropFilter is one
matrix product of the image's windows with the output gradient (`im2col`). Conv2DBackpropInput is,
at stride 1, the convolution of the padded output gradient with the flipped filter; otherwise
(or where that convolution would copy many more values than the result holds) the product
``dy @ filter.T`` added back window offset by window offset (``KH * KW`` whole-array slices).
The pooling backprops also go one window offset at a time (`pool2d`).
"""

from __future__ import annotations

import math
from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels import im2col, pool2d
from tensorweave.plugins.kernels.windows import Plan
from tensorweave.plugins.standard_ops.nn import window_geometry
from tensorweave.plugins.standard_ops.slicing import SliceError, strided_slice_spec

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _fail(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _out(ctx: KernelContext, value: Any) -> Any:
    return ctx.xp.asarray(value).astype(ctx.out_np, copy=False)


def _ints(ctx: KernelContext, x: Any) -> list[int]:
    return [int(v) for v in ctx.device.to_host(x).reshape(-1).tolist()]


def _same_shape(ctx: KernelContext, a: Any, b: Any) -> None:
    if a.shape != b.shape:
        raise _fail(ctx, f"Inputs to operation {ctx.node_name} of type {ctx.op} must have the "
                         f"same size and shape.  Input 0: {list(a.shape)} != input 1: "
                         f"{list(b.shape)}")


def _elementwise(op: str, fn: Any) -> Any:
    def kernel(ctx: KernelContext, a: Any, b: Any) -> Any:
        _same_shape(ctx, a, b)
        return _out(ctx, fn(ctx.xp, a, b, ctx.attrs))

    kernel.__name__ = op
    return kernel


ELEMENTWISE = {
    "SigmoidGrad": lambda xp, y, dy, a: dy * y * (1 - y),
    "TanhGrad": lambda xp, y, dy, a: dy * (1 - y * y),
    "SqrtGrad": lambda xp, y, dy, a: dy * 0.5 / y,
    "RsqrtGrad": lambda xp, y, dy, a: dy * -0.5 * y * y * y,
    "ReciprocalGrad": lambda xp, y, dy, a: -dy * y * y,
    "ReluGrad": lambda xp, g, f, a: xp.where(f > 0, g, 0),
    "Relu6Grad": lambda xp, g, f, a: xp.where((f > 0) & (f < 6), g, 0),
    "EluGrad": lambda xp, g, y, a: xp.where(y < 0, g * (y + 1), g),
    "SeluGrad": lambda xp, g, y, a: xp.where(y < 0, g * (y + SELU_SCALE * SELU_ALPHA),
                                             g * SELU_SCALE),
    "SoftplusGrad": lambda xp, g, f, a: g / (1 + xp.exp(-f)),
    "SoftsignGrad": lambda xp, g, f, a: g / ((1 + xp.abs(f)) ** 2),
    "LeakyReluGrad": lambda xp, g, f, a: xp.where(f > 0, g, g * a["alpha"]),
}


def broadcast_gradient_args(ctx: KernelContext, s0: Any, s1: Any) -> tuple[Any, Any]:
    """The axes each operand was broadcast along (TF's ``BCast`` reduction indices)."""
    x, y = _ints(ctx, s0), _ints(ctx, s1)
    n = max(len(x), len(y))
    px, py = [1] * (n - len(x)) + x, [1] * (n - len(y)) + y
    rx, ry = [], []
    for i, (a, b) in enumerate(zip(px, py)):
        if a == b:
            if a == 1:  # summing a size-1 axis is free and keeps both sides' rank aligned
                rx.append(i)
                ry.append(i)
        elif a == 1:
            rx.append(i)
        elif b == 1:
            ry.append(i)
        else:
            raise _fail(ctx, f"Incompatible shapes: [{','.join(map(str, x))}] vs. "
                             f"[{','.join(map(str, y))}]")
    xp = ctx.xp
    return xp.asarray(rx, dtype=ctx.out_np), xp.asarray(ry, dtype=ctx.out_np)


def bias_add_grad(ctx: KernelContext, dy: Any) -> Any:
    if dy.ndim < 2:
        raise _fail(ctx, f"Input tensor must be at least 2D: [{','.join(map(str, dy.shape))}]")
    axis = 1 if ctx.attrs["data_format"] == "NCHW" else dy.ndim - 1
    return _out(ctx, dy.sum(axis=tuple(i for i in range(dy.ndim) if i != axis)))


# -- convolution and pooling --------------------------------------------------------------------


def _geometry(ctx: KernelContext, size_hw: tuple[int, int], window: tuple[int, int],
              strides: tuple[int, int], dilations: tuple[int, int]) -> tuple[Any, ...]:
    """Output (OH, OW) and (before, after) padding of each spatial dimension."""
    flat = [int(v) for v in ctx.attrs.get("explicit_paddings", ())] or [0] * 8
    out, pads = [], []
    for i in (0, 1):
        n, before, after = window_geometry(size_hw[i], window[i], strides[i], dilations[i],
                                           ctx.attrs["padding"],
                                           (flat[2 + 2 * i], flat[3 + 2 * i]))
        out.append(n)
        pads.append((before, after))
    return tuple(out), pads


def _check_out(ctx: KernelContext, dy: Any, batch: int, out_hw: tuple[int, ...],
               depth: int) -> None:
    want = (batch, *out_hw, depth)
    if tuple(dy.shape) != want:
        raise _fail(ctx, f"Conv2D/pool backprop: out_backprop has shape {list(dy.shape)}, "
                         f"expected {list(want)}")


def _scatter_windows(xp: Any, contributions: Any, shape: tuple[int, ...],
                     pads: list[tuple[int, int]], out_hw: tuple[int, ...],
                     strides: tuple[int, int], dilations: tuple[int, int]) -> Any:
    """Sum window contributions ``(N, OH, OW, KH, KW, C)`` into an image of `shape` (NHWC)."""
    n, h, w, c = shape
    kh, kw = contributions.shape[3:5]
    # The buffer reaches every window, also when the last stride overshoots the padding.
    need_h = (out_hw[0] - 1) * strides[0] + (kh - 1) * dilations[0] + 1
    need_w = (out_hw[1] - 1) * strides[1] + (kw - 1) * dilations[1] + 1
    buffer = xp.zeros((n, max(h + sum(pads[0]), need_h), max(w + sum(pads[1]), need_w), c),
                      dtype=contributions.dtype)
    for i in range(kh):
        for j in range(kw):
            top, left = i * dilations[0], j * dilations[1]
            buffer[:, top:top + (out_hw[0] - 1) * strides[0] + 1:strides[0],
                   left:left + (out_hw[1] - 1) * strides[1] + 1:strides[1], :] += \
                contributions[:, :, :, i, j, :]
    return buffer[:, pads[0][0]:pads[0][0] + h, pads[1][0]:pads[1][0] + w, :]


def _windows(xp: Any, image: Any, out_hw: tuple[int, ...], window: tuple[int, int],
             strides: tuple[int, int], dilations: tuple[int, int]) -> Any:
    """A read-only view (N, OH, OW, KH, KW, C) of `image`'s sliding windows."""
    sn, sh, sw, sc = image.strides
    shape = (image.shape[0], *out_hw, *window, image.shape[3])
    steps = (sn, sh * strides[0], sw * strides[1], sh * dilations[0], sw * dilations[1], sc)
    return xp.lib.stride_tricks.as_strided(image, shape, steps)


def _padded(xp: Any, image: Any, pads: list[tuple[int, int]], out_hw: tuple[int, ...],
            window: tuple[int, int], strides: tuple[int, int], dilations: tuple[int, int],
            fill: Any) -> Any:
    """`image` padded so every window lies inside it."""
    need = [(out_hw[i] - 1) * strides[i] + (window[i] - 1) * dilations[i] + 1 for i in (0, 1)]
    extra = [max(0, need[i] - (image.shape[1 + i] + sum(pads[i]))) for i in (0, 1)]
    widths = [(0, 0), (pads[0][0], pads[0][1] + extra[0]), (pads[1][0], pads[1][1] + extra[1]),
              (0, 0)]
    if not any(a or b for a, b in widths):
        return xp.ascontiguousarray(image)
    return xp.pad(image, widths, mode="constant", constant_values=fill)


def _conv_params(ctx: KernelContext) -> tuple[tuple[int, int], tuple[int, int]]:
    strides = tuple(int(v) for v in ctx.attrs["strides"][1:3])
    dilations = tuple(int(v) for v in ctx.attrs["dilations"][1:3])
    return strides, dilations


def conv2d_backprop_input(ctx: KernelContext, input_sizes: Any, kernel: Any, dy: Any) -> Any:
    shape = tuple(_ints(ctx, input_sizes))
    if len(shape) != 4 or kernel.ndim != 4 or shape[3] != kernel.shape[2]:
        raise _fail(ctx, f"Conv2DBackpropInput: input_sizes {list(shape)} do not match filter "
                         f"shape {list(kernel.shape)}")
    strides, dilations = _conv_params(ctx)
    window = (kernel.shape[0], kernel.shape[1])
    out_hw, pads = _geometry(ctx, shape[1:3], window, strides, dilations)
    _check_out(ctx, dy, shape[0], out_hw, kernel.shape[3])
    # The flipped filter's windows hold O values per offset where the scatter's hold C; past
    # O = 2C the scatter's strided adds cost less than the larger copy (measured at the
    # benchmark CNN's sizes).
    if strides == (1, 1) and kernel.shape[3] <= 2 * kernel.shape[2]:
        return _out(ctx, _flipped_correlation(ctx.xp, dy, kernel, shape, pads, dilations))
    # (N, OH, OW, O) x (KH, KW, C, O) -> (N, OH, OW, KH, KW, C)
    contributions = ctx.xp.tensordot(dy, kernel, axes=([3], [3]))
    return _out(ctx, _scatter_windows(ctx.xp, contributions, shape, pads, out_hw, strides,
                                      dilations))


def _flipped_correlation(xp: Any, dy: Any, kernel: Any, shape: tuple[int, ...],
                         pads: list[tuple[int, int]], dilations: tuple[int, int]) -> Any:
    """Conv2DBackpropInput of a stride-1 Conv2D: ``dx[h] = sum_k dy[h + before - k*d] f[k]``
    per spatial dimension, i.e. the VALID correlation of `dy`, shifted by ``(K-1)*d - before``
    (padded, or cropped where negative), with the filter flipped in space and transposed to
    ``(KH, KW, O, C)``."""
    widths, keep = [(0, 0)], [slice(None)]
    for i in (0, 1):
        reach = (kernel.shape[i] - 1) * dilations[i]
        before = reach - pads[i][0]
        after = shape[1 + i] + reach - dy.shape[1 + i] - before
        widths.append((max(before, 0), max(after, 0)))
        keep.append(slice(max(-before, 0), dy.shape[1 + i] - max(-after, 0)))
    widths.append((0, 0))
    keep.append(slice(None))
    shifted = xp.pad(dy[tuple(keep)], widths)
    flipped = kernel[::-1, ::-1].transpose(0, 1, 3, 2)
    return im2col.correlate(xp, shifted, flipped, shape[1:3], (1, 1), dilations)


def conv2d_backprop_filter(ctx: KernelContext, image: Any, filter_sizes: Any, dy: Any) -> Any:
    fshape = tuple(_ints(ctx, filter_sizes))
    if len(fshape) != 4 or image.ndim != 4 or image.shape[3] != fshape[2]:
        raise _fail(ctx, f"Conv2DBackpropFilter: filter_sizes {list(fshape)} do not match "
                         f"input shape {list(image.shape)}")
    strides, dilations = _conv_params(ctx)
    window = (fshape[0], fshape[1])
    out_hw, pads = _geometry(ctx, image.shape[1:3], window, strides, dilations)
    _check_out(ctx, dy, image.shape[0], out_hw, fshape[3])
    padded = _padded(ctx.xp, image, pads, out_hw, window, strides, dilations, 0)
    return _out(ctx, im2col.filter_gradient(ctx.xp, padded, dy, window, strides, dilations))


def _pool_params(ctx: KernelContext, shape: tuple[int, ...], ksize: Any = None,
                 strides: Any = None) -> tuple[Any, ...]:
    if len(shape) != 4:
        raise _fail(ctx, f"input must be 4-dimensional, got shape {list(shape)}")
    ksize = ctx.attrs["ksize"] if ksize is None else ksize
    strides = ctx.attrs["strides"] if strides is None else strides
    window = tuple(int(v) for v in ksize[1:3])
    steps = tuple(int(v) for v in strides[1:3])
    out_hw, pads = _geometry(ctx, shape[1:3], window, steps, (1, 1))
    return window, steps, out_hw, pads


def _max_pool_grad(ctx: KernelContext, image: Any, dy: Any, ksize: list[int],
                   strides: list[int]) -> Any:
    """Each window's gradient goes to its first maximal element."""
    xp = ctx.xp
    if ksize[3] != 1 or strides[3] != 1:
        raise errors.UnimplementedError(ctx.node_name, ctx.op, "MaxPoolingGrad is not yet "
                                        "supported on the depth dimension.")
    window, steps, out_hw, pads = _pool_params(ctx, tuple(image.shape), ksize, strides)
    _check_out(ctx, dy, image.shape[0], out_hw, image.shape[3])
    fill = -xp.inf if image.dtype.kind == "f" else xp.iinfo(image.dtype).min
    padded = _padded(xp, image, pads, out_hw, window, steps, (1, 1), fill)
    plan = Plan(out_hw, tuple(pads), window, steps, (1, 1))
    return _out(ctx, pool2d.route(xp, padded, dy, plan, tuple(image.shape)))


def max_pool_grad(ctx: KernelContext, image: Any, output: Any, dy: Any) -> Any:
    return _max_pool_grad(ctx, image, dy, list(ctx.attrs["ksize"]), list(ctx.attrs["strides"]))


def max_pool_grad_v2(ctx: KernelContext, image: Any, output: Any, dy: Any, ksize: Any,
                     strides: Any) -> Any:
    return _max_pool_grad(ctx, image, dy, _ints(ctx, ksize), _ints(ctx, strides))


def avg_pool_grad(ctx: KernelContext, input_shape: Any, dy: Any) -> Any:
    """Each window's gradient is shared by the window's elements inside the image."""
    xp = ctx.xp
    shape = tuple(_ints(ctx, input_shape))
    window, strides, out_hw, pads = _pool_params(ctx, shape)
    _check_out(ctx, dy, shape[0], out_hw, shape[3])
    plan = Plan(out_hw, tuple(pads), window, strides, (1, 1))
    share = dy / pool2d.counts(xp, plan, shape[1:3], dy.dtype)
    return _out(ctx, pool2d.spread(xp, share, plan, shape))


def mirror_pad_grad(ctx: KernelContext, grad: Any, paddings: Any) -> Any:
    """Adds each mirrored border back onto the elements it copied, one axis at a time."""
    pads = _ints(ctx, paddings)
    if len(pads) != 2 * grad.ndim:
        raise _fail(ctx, f"paddings must be a matrix with {grad.ndim} rows, got "
                         f"{len(pads) // 2}")
    # REFLECT leaves out the edge element, SYMMETRIC repeats it.
    skip = 1 if ctx.attrs["mode"] == "REFLECT" else 0
    out = grad
    for axis in range(grad.ndim):
        before, after = pads[2 * axis], pads[2 * axis + 1]
        n = out.shape[axis] - before - after

        def at(start: int, stop: int, axis: int = axis) -> tuple[Any, ...]:
            return (slice(None),) * axis + (slice(start, stop),)

        core = out[at(before, before + n)].copy()
        if before:
            core[at(skip, skip + before)] += ctx.xp.flip(out[at(0, before)], axis)
        if after:
            core[at(n - skip - after, n - skip)] += ctx.xp.flip(out[at(before + n, None)], axis)
        out = core
    return _out(ctx, out)


def strided_slice_grad(ctx: KernelContext, shape: Any, begin: Any, end: Any, strides: Any,
                       dy: Any) -> Any:
    """Zeros of `shape` with `dy` written where StridedSlice read its output."""
    a = ctx.attrs
    dims = _ints(ctx, shape)
    try:
        spec = strided_slice_spec(dims, _ints(ctx, begin), _ints(ctx, end), _ints(ctx, strides),
                                  a["begin_mask"], a["end_mask"], a["ellipsis_mask"],
                                  a["new_axis_mask"], a["shrink_axis_mask"])
    except SliceError as exc:
        raise _fail(ctx, str(exc)) from None
    if math.prod(spec.final_shape) != dy.size:
        raise _fail(ctx, f"StridedSliceGrad: dy has shape {list(dy.shape)}, expected "
                         f"{list(spec.final_shape)}")
    index = spec.index()
    out = ctx.xp.zeros(dims, dtype=ctx.out_np)
    out[index] = dy.reshape(out[index].shape)
    return out


def register(registry: Any, device_type: str) -> None:
    for op, fn in ELEMENTWISE.items():
        registry.add(op, device_type, _elementwise(op, fn))
    registry.add("BroadcastGradientArgs", device_type, broadcast_gradient_args)
    registry.add("BiasAddGrad", device_type, bias_add_grad)
    registry.add("Conv2DBackpropInput", device_type, conv2d_backprop_input, expensive=True)
    registry.add("Conv2DBackpropFilter", device_type, conv2d_backprop_filter, expensive=True)
    registry.add("MaxPoolGrad", device_type, max_pool_grad, expensive=True)
    registry.add("MaxPoolGradV2", device_type, max_pool_grad_v2, expensive=True)
    registry.add("AvgPoolGrad", device_type, avg_pool_grad, expensive=True)
    registry.add("StridedSliceGrad", device_type, strided_slice_grad)
    registry.add("MirrorPadGrad", device_type, mirror_pad_grad)
