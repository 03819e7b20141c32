"""Max and average pooling over rows and columns, and their gradients, one window offset at a
time.

Contract: images are NHWC; a `windows.Plan` gives the geometry of two spatial dimensions, and
images reach the functions padded by it (`windows.padded`). Each function loops over the
``KH * KW`` offsets of the window, each step one whole-array operation on the strided slice
``(N, OH, OW, C)`` that the offset picks from every window, never over pixels: a window
reduced through a strided view reads its elements with numpy's generic loop, while a slice per
offset keeps the channels contiguous and needs no window-sized temporary.

`max_routes` follows TF 1.15's CPU MaxPoolGrad (``SpatialMaxPoolWithArgMaxHelper``): a window's
first element inside the image starts as its maximum, and a later element replaces it only when
strictly greater, so ties go to the first in window order (rows, then columns), a NaN is picked
only where it comes first, and padding is never picked. All of it runs on ``xp`` (numpy or
cupy).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np

from tensorweave.plugins.kernels.windows import Plan


def offsets(p: Plan) -> Iterator[tuple[slice, ...]]:
    """For each window offset in window order, the index of its slice of a padded image."""
    for offset in itertools.product(*(range(k) for k in p.window)):
        # An empty output takes an empty slice (a stop of ``o - s + 1`` could count from the end).
        yield (slice(None), *(slice(o, o + (n - 1) * s + 1 if n else o, s)
                              for o, n, s in zip(offset, p.out, p.strides)))


def _windows_reduced(ufunc: Any, image: Any, p: Plan) -> Any:
    """``ufunc`` folded over the window offsets of a padded `image`, in window order."""
    slices = offsets(p)
    out = image[next(slices)].copy()
    for index in slices:
        ufunc(out, image[index], out=out)
    return out


def max_values(xp: Any, image: Any, p: Plan) -> Any:
    """The maximum of each window of a padded `image` (NaN wins, as ``xp.maximum`` has it)."""
    return _windows_reduced(xp.maximum, image, p)


def sums(xp: Any, image: Any, p: Plan) -> Any:
    """The sum of each window of a padded `image`."""
    slices = offsets(p)
    out = image[next(slices)].copy()
    for index in slices:
        out += image[index]
    return out


def _inside(p: Plan, sizes: tuple[int, ...], dim: int) -> Any:
    """(K, O) booleans: whether window offset k of output position o lies inside the image
    along spatial dimension `dim` (host numpy: it depends on the geometry only)."""
    k = np.arange(p.window[dim])[:, None]
    at = np.arange(p.out[dim])[None, :] * p.strides[dim] + k - p.pads[dim][0]
    return (at >= 0) & (at < sizes[dim])


def counts(xp: Any, p: Plan, sizes: tuple[int, ...], dtype: Any) -> Any:
    """``(1, OH, OW, 1)``: how many elements of each window lie inside an image of spatial
    `sizes` (AvgPool divides by it)."""
    per_dim = [_inside(p, sizes, d).sum(axis=0) for d in (0, 1)]
    return xp.asarray(np.multiply.outer(*per_dim).astype(dtype)[None, :, :, None])


def max_routes(xp: Any, image: Any, p: Plan,
               sizes: tuple[int, ...]) -> Iterator[tuple[tuple[slice, ...], Any]]:
    """For each window offset in window order: its slice of a padded `image` (unpadded spatial
    `sizes`) and the booleans ``(N, OH, OW, C)`` of the windows whose MaxPoolGrad routes their
    gradient to it; every window is routed to exactly one offset."""
    # TF's scan keeps the first strictly greatest element that is not NaN, i.e. the first one
    # equal to the NaN-skipping maximum, unless the window's first element is a NaN. Finding it
    # by comparison to the maximum vectorizes; a running argmax needs a masked copy per offset.
    top = fmaxes(xp, image, p)
    nan = image.dtype.kind == "f" and bool(xp.isnan(image).any())
    rows, cols = _inside(p, sizes, 0), _inside(p, sizes, 1)
    inside = (rows[:, None, :, None] & cols[None, :, None, :]).reshape(-1, *p.out)
    first = np.argmax(inside, axis=0)  # per output position, its window's first offset inside
    found = xp.zeros(top.shape, dtype=bool)
    for k, index in enumerate(offsets(p)):
        candidate = image[index]
        hit = candidate == top
        if nan:
            hit |= xp.isnan(candidate) & xp.asarray(first == k)[None, :, :, None]
        if (first > k).any():  # padding before a window's first element is never routed to
            hit &= xp.asarray(first <= k)[None, :, :, None]
        hit = xp.greater(hit, found)  # only a window's first hit
        found |= hit
        yield index, hit


def fmaxes(xp: Any, image: Any, p: Plan) -> Any:
    """The maximum of each window of a padded `image`, NaNs skipped (``xp.fmax``)."""
    return _windows_reduced(xp.fmax, image, p)


def _select(xp: Any, hit: Any, values: Any, finite: bool) -> Any:
    """`values` where `hit`, else 0. Multiplying by the booleans vectorizes where ``xp.where``
    branches per element; it is exact unless a value is inf or NaN (``0 * inf`` is NaN)."""
    return values * hit if finite else xp.where(hit, values, 0)


def route(xp: Any, image: Any, dy: Any, p: Plan, shape: tuple[int, ...]) -> Any:
    """MaxPoolGrad: an image of `shape` (NHWC) that holds each window's `dy` at the element
    `max_routes` picks in the padded `image`, summed where windows overlap."""
    size = [max(shape[1 + i] + sum(p.pads[i]), p.reach(i)) for i in (0, 1)]
    out = xp.zeros((shape[0], *size, shape[3]), dtype=dy.dtype)
    finite = bool(xp.isfinite(dy).all())
    for index, hit in max_routes(xp, image, p, tuple(shape[1:3])):
        out[index] += _select(xp, hit, dy, finite)
    return _crop(out, p, shape)


def spread(xp: Any, share: Any, p: Plan, shape: tuple[int, ...]) -> Any:
    """An image of `shape` (NHWC) in which every element inside a window gets the window's
    `share`, summed over the windows that hold it."""
    size = [max(shape[1 + i] + sum(p.pads[i]), p.reach(i)) for i in (0, 1)]
    out = xp.zeros((shape[0], *size, shape[3]), dtype=share.dtype)
    for index in offsets(p):
        out[index] += share
    return _crop(out, p, shape)


def pick(xp: Any, image: Any, grads: Any, p: Plan, sizes: tuple[int, ...]) -> Any:
    """MaxPoolGradGrad: ``(N, OH, OW, C)``, each window's element of the padded `grads` at the
    element `max_routes` picks in the padded `image` (unpadded spatial `sizes`)."""
    out = None
    finite = bool(xp.isfinite(grads).all())
    for index, hit in max_routes(xp, image, p, sizes):
        chosen = _select(xp, hit, grads[index], finite)
        out = chosen if out is None else out + chosen
    return out


def _crop(image: Any, p: Plan, shape: tuple[int, ...]) -> Any:
    keep = tuple(slice(before, before + shape[1 + i]) for i, (before, _) in enumerate(p.pads))
    return image[(slice(None), *keep)]
