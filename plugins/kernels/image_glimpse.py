"""Kernel of ``ExtractGlimpse``, as TF's ``Eigen::ExtractGlimpses``.

Contract: for image ``b`` the offset ``(y, x)`` becomes the glimpse's top-left pixel: with
``normalized`` it is scaled by the image size, and with ``centered`` as well it is taken from
``[-1, 1]`` (0 is the image's centre), i.e. ``x * w / 2 + w / 2 - width / 2``; without
``normalized`` a ``centered`` offset is in pixels from the centre (``x + w / 2``), and an
uncentered one is in pixels from the corner (a normalized uncentered offset is the corner
``x * w``, TF 1.x's quirk). The corner is truncated toward zero. The glimpse copies the part of
the window inside the image; when the window sticks out, the rest is noise: uniform between the
image's minimum and maximum (``uniform_noise``), Gaussian with each channel's mean and standard
deviation clipped to its range (``noise="gaussian"``, or ``uniform_noise=False`` with the
default ``noise``), or zeros (``noise="zero"``). The noise is unseeded, as in TF. Bad shapes
are `InvalidArgumentError` in TF's words.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext


def _fail(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _corner(offset: float, extent: int, window: int, normalized: bool, centered: bool) -> int:
    if normalized:
        offset *= extent
        if centered:
            offset = offset / 2.0 + extent / 2.0 - window / 2.0
    elif centered:
        offset += extent / 2.0
    return int(np.float32(offset))


def _noise(ctx: KernelContext, image: np.ndarray, shape: tuple[int, int, int],
           gen: np.random.Generator) -> np.ndarray:
    if ctx.attrs["uniform_noise"]:
        low = image.min()
        return low + gen.random(shape, np.float32) * (image.max() - low)
    if ctx.attrs["noise"] == "zero":
        return np.zeros(shape, np.float32)
    mean, sigma = image.mean(axis=(0, 1)), image.std(axis=(0, 1))
    noise = mean + gen.standard_normal(shape, np.float32) * sigma
    return np.clip(noise, image.min(axis=(0, 1)), image.max(axis=(0, 1))).astype(np.float32)


def extract_glimpse(ctx: KernelContext, images: Any, size: Any, offsets: Any) -> Any:
    host = ctx.device.to_host
    images = np.asarray(host(images), np.float32)
    size, offsets = np.asarray(host(size)), np.asarray(host(offsets), np.float32)
    if images.ndim != 4:
        raise _fail(ctx, f"input must be 4-dimensional (batch_size, height, width, depth)"
                         f"{list(images.shape)}")
    if size.shape != (2,):
        raise _fail(ctx, f"input must be a vector of size 2 (height, width){list(size.shape)}")
    if offsets.ndim != 2:
        raise _fail(ctx, f"input must be a matrix{list(offsets.shape)}")
    if offsets.shape[0] != images.shape[0]:
        raise _fail(ctx, f"first dimension should be batch{list(offsets.shape)}")
    if offsets.shape[1] != 2:
        raise _fail(ctx, f"second dimension should be of size 2 (y,x){list(offsets.shape)}")
    batch, in_h, in_w, depth = images.shape
    height, width = int(size[0]), int(size[1])
    normalized, centered = ctx.attrs["normalized"], ctx.attrs["centered"]
    gen = ctx.state.setdefault("generator", np.random.default_rng())
    out = np.empty((batch, height, width, depth), np.float32)
    with ctx.state.setdefault("lock", threading.Lock()):
        for b in range(batch):
            top = _corner(float(offsets[b, 0]), in_h, height, normalized, centered)
            left = _corner(float(offsets[b, 1]), in_w, width, normalized, centered)
            rows = slice(max(top, 0), min(top + height, in_h))
            cols = slice(max(left, 0), min(left + width, in_w))
            inside = rows.start < rows.stop and cols.start < cols.stop
            if not (top >= 0 and left >= 0 and top + height < in_h and left + width < in_w):
                out[b] = _noise(ctx, images[b], (height, width, depth), gen)
            if inside:
                out[b, rows.start - top:rows.stop - top, cols.start - left:cols.stop - left] = \
                    images[b, rows, cols]
    return ctx.device.from_host(out)


def register(registry: Any, device_type: str) -> None:
    registry.add("ExtractGlimpse", device_type, extract_glimpse)
