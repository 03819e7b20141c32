"""Kernels for the nn ops, written once against ``ctx.xp``.

Contract: each kernel returns exactly the node's output dtypes. float16 inputs are computed in
float32 and cast back (as TF accumulates halves in float), so softmax, cross-entropies and
convolutions keep their precision. Conv2D copies the padded image's windows into one matrix and
multiplies it by the filter's (`im2col`); pooling reduces one window offset at a time (`pool2d`):
no Python loop runs per pixel. Bad runtime values (a label out of range, k larger than a row)
raise `InvalidArgumentError`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels import im2col, pool2d
from tensorweave.plugins.kernels.windows import Plan
from tensorweave.plugins.standard_ops.nn import window_geometry

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _wide(ctx: KernelContext, x: Any) -> Any:
    """`x` in a dtype wide enough to compute with: float16 becomes float32."""
    return x.astype(ctx.xp.float32) if x.dtype == ctx.xp.float16 else x


def _out(ctx: KernelContext, value: Any, index: int = 0) -> Any:
    return ctx.xp.asarray(value).astype(ctx.output_dtypes[index].np_type, copy=False)


def _invalid(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _unimplemented(ctx: KernelContext, message: str) -> errors.UnimplementedError:
    return errors.UnimplementedError(ctx.node_name, ctx.op, message)


# -- activations -------------------------------------------------------------------------------


def relu(ctx: KernelContext, x: Any) -> Any:
    return ctx.xp.maximum(x, 0).astype(x.dtype, copy=False)


def relu6(ctx: KernelContext, x: Any) -> Any:
    return ctx.xp.clip(x, 0, 6).astype(x.dtype, copy=False)


def elu(ctx: KernelContext, x: Any) -> Any:
    return _out(ctx, ctx.xp.where(x < 0, ctx.xp.expm1(x), x))


def selu(ctx: KernelContext, x: Any) -> Any:
    negative = SELU_ALPHA * ctx.xp.expm1(x)
    return _out(ctx, SELU_SCALE * ctx.xp.where(x < 0, negative, x))


def softplus(ctx: KernelContext, x: Any) -> Any:
    # log(1 + e^x) = logaddexp(x, 0): no overflow for large x, no loss for very negative x.
    return _out(ctx, ctx.xp.logaddexp(x, 0))


def softsign(ctx: KernelContext, x: Any) -> Any:
    return _out(ctx, x / (1 + ctx.xp.abs(x)))


def leaky_relu(ctx: KernelContext, x: Any) -> Any:
    return _out(ctx, ctx.xp.where(x < 0, ctx.attrs["alpha"] * x, x))


# -- softmax and cross-entropies ------------------------------------------------------------------


def _log_softmax(ctx: KernelContext, logits: Any) -> Any:
    xp = ctx.xp
    x = _wide(ctx, logits)
    if x.shape[-1] == 0:
        return x
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=-1, keepdims=True))


def softmax(ctx: KernelContext, logits: Any) -> Any:
    return _out(ctx, ctx.xp.exp(_log_softmax(ctx, logits)))


def log_softmax(ctx: KernelContext, logits: Any) -> Any:
    return _out(ctx, _log_softmax(ctx, logits))


def _broadcast_xent_args(ctx: KernelContext, logits: Any, labels: Any) -> tuple[Any, Any]:
    """`logits` and `labels` broadcast to one matrix shape, as TF's kernel does."""
    try:
        shape = np.broadcast_shapes(logits.shape, labels.shape)
    except ValueError:
        shape = None
    if shape is None or len(shape) != 2:
        raise _invalid(ctx, f"logits and labels must be broadcastable: logits_size="
                            f"{list(logits.shape)} labels_size={list(labels.shape)}")
    return ctx.xp.broadcast_to(logits, shape), ctx.xp.broadcast_to(labels, shape)


def softmax_xent(ctx: KernelContext, logits: Any, labels: Any) -> tuple[Any, Any]:
    logits, labels = _broadcast_xent_args(ctx, logits, labels)
    log_p = _log_softmax(ctx, logits)
    y = _wide(ctx, labels)
    loss = -(y * log_p).sum(axis=-1)
    return _out(ctx, loss, 0), _out(ctx, ctx.xp.exp(log_p) - y, 1)


def sparse_softmax_xent(ctx: KernelContext, logits: Any, labels: Any) -> tuple[Any, Any]:
    xp = ctx.xp
    if logits.ndim != 2 or labels.shape != logits.shape[:1]:
        raise _invalid(ctx, f"logits and labels must have the same first dimension, got "
                            f"logits shape {list(logits.shape)} and labels shape "
                            f"{list(labels.shape)}")
    classes = logits.shape[1]
    bad = (labels < 0) | (labels >= classes)
    if bool(bad.any()):
        first = int(labels[bad][0])
        shown = " ".join(str(int(v)) for v in ctx.device.to_host(labels).ravel()[:100])
        raise _invalid(ctx, f"Received a label value of {first} which is outside the valid "
                            f"range of [0, {classes}).  Label values: {shown}")
    log_p = _log_softmax(ctx, logits)
    index = labels.astype(xp.intp)[:, None]
    loss = -xp.take_along_axis(log_p, index, axis=1)[:, 0]
    backprop = xp.exp(log_p)  # a fresh array, so the one-hot can be subtracted in place
    backprop[xp.arange(logits.shape[0]), index[:, 0]] -= 1
    return _out(ctx, loss, 0), _out(ctx, backprop, 1)


def l2_loss(ctx: KernelContext, t: Any) -> Any:
    x = _wide(ctx, t)
    return _out(ctx, (x * x).sum() / 2)


def bias_add(ctx: KernelContext, value: Any, bias: Any) -> Any:
    if ctx.attrs["data_format"] == "NCHW":
        bias = bias.reshape((-1,) + (1,) * (value.ndim - 2))
        channels = value.shape[1]
    else:
        channels = value.shape[-1]
    if bias.size != channels:
        raise _invalid(ctx, f"Must provide as many biases as the channel dimension of the "
                            f"input tensor: bias has {bias.size} values, input has {channels} "
                            f"channels")
    return _out(ctx, value + bias)


# -- convolution and pooling --------------------------------------------------------------------


def _windows(ctx: KernelContext, image: Any, out_hw: tuple[int, int], window: tuple[int, int],
             strides: tuple[int, int], dilations: tuple[int, int]) -> Any:
    """A read-only view (N, OH, OW, KH, KW, C) of `image`'s sliding windows."""
    sn, sh, sw, sc = image.strides
    shape = (image.shape[0], *out_hw, *window, image.shape[3])
    steps = (sn, sh * strides[0], sw * strides[1], sh * dilations[0], sw * dilations[1], sc)
    return ctx.xp.lib.stride_tricks.as_strided(image, shape, steps)


def _geometry(ctx: KernelContext, image: Any, window: tuple[int, int],
              strides: tuple[int, int], dilations: tuple[int, int]) -> tuple[Any, ...]:
    """Output (OH, OW) and per-dimension (before, after) padding of an NHWC image."""
    padding = ctx.attrs["padding"]
    flat = [int(v) for v in ctx.attrs.get("explicit_paddings", ())] or [0] * 8
    out, pads = [], [(0, 0)]
    for i in (0, 1):
        size, pair = image.shape[1 + i], (flat[2 + 2 * i], flat[3 + 2 * i])
        n, before, after = window_geometry(size, window[i], strides[i], dilations[i], padding,
                                           pair)
        if n < 0 or (n == 0 and padding != "SAME"):
            raise _invalid(ctx, f"Computed output size would be negative: {n} [input_size: "
                                f"{size}, effective_filter_size: "
                                f"{(window[i] - 1) * dilations[i] + 1}, stride: {strides[i]}]")
        out.append(n)
        pads.append((before, after))
    pads.append((0, 0))
    return tuple(out), pads


def _pad(ctx: KernelContext, image: Any, pads: list[tuple[int, int]], fill: Any) -> Any:
    if not any(before or after for before, after in pads):
        return image
    return ctx.xp.pad(image, pads, mode="constant", constant_values=fill)


def conv2d(ctx: KernelContext, image: Any, kernel: Any) -> Any:
    if image.ndim != 4 or kernel.ndim != 4 or image.shape[3] != kernel.shape[2]:
        raise _invalid(ctx, f"input depth must equal filter in_depth: input shape "
                            f"{list(image.shape)}, filter shape {list(kernel.shape)}")
    strides = tuple(int(v) for v in ctx.attrs["strides"][1:3])
    dilations = tuple(int(v) for v in ctx.attrs["dilations"][1:3])
    window = (kernel.shape[0], kernel.shape[1])
    out_hw, pads = _geometry(ctx, image, window, strides, dilations)
    padded = _pad(ctx, _wide(ctx, image), pads, 0)
    return _out(ctx, im2col.correlate(ctx.xp, padded, _wide(ctx, kernel), out_hw, strides,
                                      dilations))


def _pool_args(ctx: KernelContext, image: Any, ksize: Any = None,
               strides: Any = None) -> tuple[Plan, list[tuple[int, int]]]:
    """The `Plan` of a pooling over rows and columns and its NHWC paddings; `ksize`/`strides`
    default to the op's attrs."""
    if image.ndim != 4:
        raise _invalid(ctx, f"input must be 4-dimensional, got shape {list(image.shape)}")
    ksize = ctx.attrs["ksize"] if ksize is None else ksize
    strides = ctx.attrs["strides"] if strides is None else strides
    window = tuple(int(v) for v in ksize[1:3])
    steps = tuple(int(v) for v in strides[1:3])
    out_hw, pads = _geometry(ctx, image, window, steps, (1, 1))
    return Plan(out_hw, tuple(pads[1:3]), window, steps, (1, 1)), pads


def _max_pool(ctx: KernelContext, image: Any, ksize: list[int], strides: list[int]) -> Any:
    xp = ctx.xp
    if ksize[3] != 1 or strides[3] != 1:
        return _max_pool_depth(ctx, image, ksize, strides)
    plan, pads = _pool_args(ctx, image, ksize, strides)
    # Padding never wins a max: fill with the dtype's lowest value.
    fill = -xp.inf if image.dtype.kind == "f" else xp.iinfo(image.dtype).min
    return pool2d.max_values(xp, _pad(ctx, image, pads, fill), plan)


def _max_pool_depth(ctx: KernelContext, image: Any, ksize: list[int],
                    strides: list[int]) -> Any:
    """TF's depthwise max pooling: disjoint windows of channels, each reduced to its max."""
    depth, window = image.shape[3], ksize[3]
    if ksize[1] != 1 or ksize[2] != 1 or strides[1] != 1 or strides[2] != 1:
        raise _unimplemented(ctx, "MaxPooling supports exactly one of pooling across depth "
                                  "or pooling across width/height.")
    if window != strides[3]:
        raise _unimplemented(ctx, "Depthwise max pooling requires the depth window to equal "
                                  "the depth stride.")
    if depth % window:
        raise _unimplemented(ctx, "Depthwise max pooling requires the depth window to evenly "
                                  "divide the input depth.")
    return image.reshape(*image.shape[:3], depth // window, window).max(axis=4)


def max_pool(ctx: KernelContext, image: Any) -> Any:
    return _max_pool(ctx, image, list(ctx.attrs["ksize"]), list(ctx.attrs["strides"]))


def max_pool_v2(ctx: KernelContext, image: Any, ksize: Any, strides: Any) -> Any:
    windows = [[int(v) for v in ctx.device.to_host(t).reshape(-1)] for t in (ksize, strides)]
    for values, field in zip(windows, ("ksize", "stride")):
        if len(values) != 4:
            raise _invalid(ctx, f"Sliding window {field} field must specify 4 dimensions")
    return _max_pool(ctx, image, *windows)


def avg_pool(ctx: KernelContext, image: Any) -> Any:
    xp = ctx.xp
    plan, pads = _pool_args(ctx, image)
    sums = pool2d.sums(xp, _pad(ctx, _wide(ctx, image), pads, 0), plan)
    # TF averages over the window's elements inside the image only, so count them.
    sums /= pool2d.counts(xp, plan, image.shape[1:3], sums.dtype)
    return _out(ctx, sums)


# -- top-k ---------------------------------------------------------------------------------------


def _host_int(ctx: KernelContext, value: Any) -> int:
    return int(ctx.device.to_host(value))


def top_k(ctx: KernelContext, x: Any, k: Any) -> tuple[Any, Any]:
    xp = ctx.xp
    k = _host_int(ctx, k)
    if x.ndim < 1:
        raise _invalid(ctx, "input must be >= 1-D, got shape []")
    n = x.shape[-1]
    if not 0 <= k <= n:
        raise _invalid(ctx, f"input must have at least k columns. Had {n}, needed {k}")
    # A stable ascending sort of the reversed row, read backwards, is descending with ties in
    # ascending index order, as TF orders them; it works for every dtype (no negation).
    order = xp.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1][..., :k]
    indices = (n - 1) - order
    return xp.take_along_axis(x, indices, axis=-1), indices.astype(xp.int32)


def lrn(ctx: KernelContext, x: Any) -> Any:
    """``x / (bias + alpha * sqr_sum) ** beta``, `sqr_sum` summing squares over the channels
    within `depth_radius` of each one."""
    wide = _wide(ctx, x)
    return _out(ctx, wide / lrn_norm(ctx, wide) ** ctx.attrs["beta"])


def channel_window_sum(ctx: KernelContext, v: Any) -> Any:
    """For each channel (last axis), the sum of `v` over the channels within `depth_radius`."""
    radius = int(ctx.attrs["depth_radius"])
    channels = v.shape[-1]
    padded = ctx.xp.pad(v, [(0, 0)] * (v.ndim - 1) + [(radius, radius)])
    return sum(padded[..., k:k + channels] for k in range(2 * radius + 1))


def lrn_norm(ctx: KernelContext, wide: Any) -> Any:
    """LRN's ``bias + alpha * sqr_sum`` of a float32/float64 input."""
    return ctx.attrs["bias"] + ctx.attrs["alpha"] * channel_window_sum(ctx, wide * wide)


def lrn_grad(ctx: KernelContext, grads: Any, image: Any, output: Any) -> Any:
    """d/dx of ``x / N**beta``: ``g N^-beta - 2 alpha beta x window_sum(g y / N)``."""
    g, x, y = (_wide(ctx, v) for v in (grads, image, output))
    norm = lrn_norm(ctx, x)
    alpha, beta = ctx.attrs["alpha"], ctx.attrs["beta"]
    return _out(ctx, g * norm ** -beta
                - 2 * alpha * beta * x * channel_window_sum(ctx, g * y / norm))


def in_top_k(ctx: KernelContext, predictions: Any, targets: Any, k: Any) -> Any:
    xp = ctx.xp
    k = _host_int(ctx, k)
    if predictions.ndim != 2 or targets.shape != predictions.shape[:1]:
        raise _invalid(ctx, f"First dimension of predictions {list(predictions.shape)} must "
                            f"match length of targets {list(targets.shape)}")
    classes = predictions.shape[1]
    valid = (targets >= 0) & (targets < classes)
    safe = xp.where(valid, targets, 0).astype(xp.intp)[:, None]
    target_value = xp.take_along_axis(predictions, safe, axis=1)
    better = (predictions > target_value).sum(axis=1)
    # As TF: an out-of-range target or a non-finite prediction in the row is never "in top k".
    finite = xp.isfinite(predictions).all(axis=1)
    return valid & finite & (better < k)


def register(registry: Any, device_type: str) -> None:
    """Register this module's kernels for `device_type`."""
    cheap = {
        "Relu": relu, "Relu6": relu6, "Elu": elu, "Selu": selu, "Softplus": softplus,
        "Softsign": softsign, "LeakyRelu": leaky_relu, "Softmax": softmax,
        "LogSoftmax": log_softmax, "SoftmaxCrossEntropyWithLogits": softmax_xent,
        "SparseSoftmaxCrossEntropyWithLogits": sparse_softmax_xent, "L2Loss": l2_loss,
        "BiasAdd": bias_add, "TopKV2": top_k, "InTopKV2": in_top_k, "LRN": lrn, "LRNGrad": lrn_grad,
    }
    for op, fn in cheap.items():
        registry.add(op, device_type, fn)
    for op, fn in {"Conv2D": conv2d, "MaxPool": max_pool, "MaxPoolV2": max_pool_v2,
                   "AvgPool": avg_pool}.items():
        registry.add(op, device_type, fn, expensive=True)
