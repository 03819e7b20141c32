"""Kernels of ``FractionalMaxPool``, ``FractionalAvgPool`` and their gradients, as TF's
``fractional_*_pool_op.cc`` (host computation, like TF's CPU-only kernels).

Contract: the output size of a dimension is ``floor(size / ratio)``. Its pooling sequence, a
cumulative list of ``out + 1`` boundaries from 0 to the input size, is regular when the size
divides evenly; otherwise ``pseudo_random`` uses TF's ``ceil(alpha * (i + u))`` boundaries
(``alpha = in / out``, one uniform ``u`` below TF's bound) and the random mode shuffles
``in % out`` steps of ``in // out + 1`` among steps of ``in // out``. Output cell ``(i, j)``
pools rows ``[row[i], row[i + 1])`` and columns likewise, each window also taking its end
boundary when ``overlapping`` (clipped to the input). Numbers come from the node's seeded
generator (`tensorweave.plugins.kernels.random`), so a seeded node repeats its stream but not
TF's Philox one; ``deterministic`` draws the sequences once and reuses them on every run. The
max gradient goes to the first maximum of each window (row-major); the average gradient is
spread evenly over the window. Bad ratios and sequences are `InvalidArgumentError`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels.random import _generator as node_generator


def _fail(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def pooling_sequence(size: int, out: int, pseudo_random: bool,
                     gen: np.random.Generator) -> np.ndarray:
    """The ``out + 1`` cumulative window boundaries over a dimension of `size`."""
    if size % out == 0:
        steps = np.full(out, size // out, np.int64)
    elif pseudo_random:
        alpha = size / out
        k = size // out
        bound = min((k + 2) / alpha - 1, (size + 1 - k) / alpha - (out - 1))
        u = gen.random() * bound
        cum = [1] + [math.ceil(alpha * (i + u)) for i in range(1, out)] + [size + 1]
        steps = np.diff(np.asarray(cum, np.int64))
    else:
        steps = np.full(out, size // out, np.int64)
        steps[:size % out] += 1
        gen.shuffle(steps)
    return np.concatenate([[0], np.cumsum(steps)]).astype(np.int64)


def _windows(sequence: np.ndarray, size: int, overlapping: bool) -> list[slice]:
    ends = sequence[1:] + (1 if overlapping else 0)
    return [slice(int(s), int(min(e, size))) for s, e in zip(sequence[:-1], ends)]


def _sequences(ctx: KernelContext, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    ratio = [float(r) for r in ctx.attrs["pooling_ratio"]]
    if len(ratio) != 4:
        raise _fail(ctx, "pooling_ratio field must specify 4 dimensions")
    if ratio[0] != 1 or ratio[3] != 1:
        raise _fail(ctx, "Only pooling on height and width is supported.")
    outs = []
    for i in (1, 2):
        if ratio[i] < 1:
            raise _fail(ctx, "pooling_ratio cannot be smaller than 1, got: "
                             f"{ratio[i]}")
        outs.append(int(math.floor(shape[i] / ratio[i])))
        if outs[-1] <= 0:
            raise _fail(ctx, f"output_size must be larger than 0, but got {outs[-1]}")
    cached = ctx.state.get("sequences")
    if ctx.attrs["deterministic"] and cached is not None and cached[0] == shape:
        return cached[1]
    gen, lock = node_generator(ctx)
    with lock:
        pseudo = ctx.attrs["pseudo_random"]
        sequences = (pooling_sequence(shape[1], outs[0], pseudo, gen),
                     pooling_sequence(shape[2], outs[1], pseudo, gen))
    ctx.state["sequences"] = (shape, sequences)
    return sequences


def _pool(ctx: KernelContext, value: Any, reduce: Any) -> Any:
    host = np.asarray(ctx.device.to_host(value))
    if host.ndim != 4:
        raise _fail(ctx, "input must be 4-dimensional")
    rows, cols = _sequences(ctx, host.shape)
    overlapping = ctx.attrs["overlapping"]
    out = np.empty((host.shape[0], len(rows) - 1, len(cols) - 1, host.shape[3]), host.dtype)
    for i, r in enumerate(_windows(rows, host.shape[1], overlapping)):
        for j, c in enumerate(_windows(cols, host.shape[2], overlapping)):
            out[:, i, j] = reduce(host[:, r, c], axis=(1, 2))
    return (ctx.device.from_host(out.astype(host.dtype, copy=False)),
            ctx.device.from_host(rows), ctx.device.from_host(cols))


def fractional_max_pool(ctx: KernelContext, value: Any) -> Any:
    return _pool(ctx, value, np.max)


def fractional_avg_pool(ctx: KernelContext, value: Any) -> Any:
    return _pool(ctx, value, np.mean)


def _checked_windows(ctx: KernelContext, shape: tuple[int, ...], grad_shape: tuple[int, ...],
                     rows: Any, cols: Any) -> tuple[list[slice], list[slice]]:
    host = ctx.device.to_host
    rows, cols = np.asarray(host(rows)), np.asarray(host(cols))
    if len(rows) != grad_shape[1] + 1 or len(cols) != grad_shape[2] + 1:
        raise _fail(ctx, f"row_pooling_sequence and col_pooling_sequence must have one more "
                         f"element than out_backprop's height {grad_shape[1]} and width "
                         f"{grad_shape[2]}, got {len(rows)} and {len(cols)}")
    overlapping = ctx.attrs["overlapping"]
    return (_windows(rows, shape[1], overlapping), _windows(cols, shape[2], overlapping))


def fractional_max_pool_grad(ctx: KernelContext, orig_input: Any, orig_output: Any,
                             out_backprop: Any, rows: Any, cols: Any) -> Any:
    x = np.asarray(ctx.device.to_host(orig_input))
    grad = np.asarray(ctx.device.to_host(out_backprop))
    row_windows, col_windows = _checked_windows(ctx, x.shape, grad.shape, rows, cols)
    out = np.zeros(x.shape, x.dtype)
    batch, channels = np.arange(x.shape[0])[:, None], np.arange(x.shape[3])[None, :]
    for i, r in enumerate(row_windows):
        for j, c in enumerate(col_windows):
            window = x[:, r, c].reshape(x.shape[0], -1, x.shape[3])
            first = window.argmax(axis=1)  # first maximum in row-major order
            width = c.stop - c.start
            np.add.at(out, (batch, r.start + first // width, c.start + first % width, channels),
                      grad[:, i, j])
    return ctx.device.from_host(out)


def fractional_avg_pool_grad(ctx: KernelContext, orig_input_tensor_shape: Any,
                             out_backprop: Any, rows: Any, cols: Any) -> Any:
    shape = tuple(int(d) for d in np.asarray(ctx.device.to_host(orig_input_tensor_shape)))
    if len(shape) != 4:
        raise _fail(ctx, "original input tensor shape must be1-dimensional and 4 elements")
    grad = np.asarray(ctx.device.to_host(out_backprop))
    row_windows, col_windows = _checked_windows(ctx, shape, grad.shape, rows, cols)
    out = np.zeros(shape, grad.dtype)
    for i, r in enumerate(row_windows):
        for j, c in enumerate(col_windows):
            count = (r.stop - r.start) * (c.stop - c.start)
            out[:, r, c] += (grad[:, i, j] / count)[:, None, None, :].astype(grad.dtype)
    return ctx.device.from_host(out)


def register(registry: Any, device_type: str) -> None:
    registry.add("FractionalMaxPool", device_type, fractional_max_pool)
    registry.add("FractionalAvgPool", device_type, fractional_avg_pool)
    registry.add("FractionalMaxPoolGrad", device_type, fractional_max_pool_grad)
    registry.add("FractionalAvgPoolGrad", device_type, fractional_avg_pool_grad)
