"""Kernels of the image resize ops and their gradients, written once against ``ctx.xp``.

Contract: both resizes are separable, so each is two small matrix products: an ``(out, in)``
matrix per spatial axis holds the interpolation weights (bilinear) or a one-hot row (nearest
neighbour), and a gradient is the same products transposed. A matrix with few non-zeros per row
(bilinear: 2) is applied as that many gathers, a denser one by a matrix product; either form is
made once per sizes and attrs on the host and cached (a pipeline resizes every image to the same
size). No Python loop runs per pixel and no scatter (atomics) is needed. The pixel mapping is
TF's, in float32 as TF computes it: the scale is ``(in - 1) / (out - 1)`` with ``align_corners``
(and out > 1), else ``in / out``; an output pixel `x` reads source coordinate ``x * scale``
(legacy), or ``(x + 0.5) * scale - 0.5`` for bilinear and ``(x + 0.5) * scale`` for nearest
neighbour with ``half_pixel_centers``. Bilinear reads ``floor`` (clamped at 0) and ``ceil``
(clamped at ``in - 1``) with weight ``source - floor(source)``; nearest neighbour reads ``floor``
(``round`` half away from zero with ``align_corners``), clamped to the image. Bad sizes and
images raise `InvalidArgumentError`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext

# ``(xp, in_size, out_size, align_corners, half_pixel_centers) -> (out_size, in_size)`` matrix
WeightsFn = Callable[[Any, int, int, bool, bool], Any]


def _fail(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _check_attrs(ctx: KernelContext) -> tuple[bool, bool]:
    # ``ResizeArea`` has no ``half_pixel_centers``: it maps pixels the legacy way.
    align = bool(ctx.attrs["align_corners"])
    half = bool(ctx.attrs.get("half_pixel_centers", False))
    if align and half:
        raise _fail(ctx, "If half_pixel_centers is True, align_corners must be False.")
    return align, half


def _check_image(ctx: KernelContext, image: Any) -> None:
    if image.ndim != 4:
        raise _fail(ctx, f"input must be 4-dimensional{list(image.shape)}")
    if image.shape[1] <= 0 or image.shape[2] <= 0:
        raise _fail(ctx, f"input image must be of non-zero size, got {list(image.shape)}")


def _size(ctx: KernelContext, size: Any) -> tuple[int, int]:
    if size.ndim != 1:
        raise _fail(ctx, f"shape_t must be 1-dimensional{list(size.shape)}")
    if size.shape[0] != 2:
        raise _fail(ctx, f"shape_t must have two elements{list(size.shape)}")
    height, width = (int(v) for v in ctx.device.to_host(size).tolist())
    if height <= 0 or width <= 0:
        raise _fail(ctx, "output dimensions must be positive")
    return height, width


def _sources(xp: Any, in_size: int, out_size: int, align: bool, half: bool,
             nearest: bool) -> Any:
    """The float32 source coordinate of each of `out_size` output pixels."""
    f32 = xp.float32
    scale = f32((in_size - 1) / f32(out_size - 1) if align and out_size > 1
                else in_size / f32(out_size))
    x = xp.arange(out_size, dtype=f32)
    if not half:
        return x * scale
    centers = (x + f32(0.5)) * scale
    return centers if nearest else centers - f32(0.5)


def bilinear_weights(xp: Any, in_size: int, out_size: int, align: bool, half: bool) -> Any:
    """The ``(out_size, in_size)`` float32 matrix of bilinear interpolation weights."""
    source = _sources(xp, in_size, out_size, align, half, nearest=False)
    floor = xp.floor(source)
    lower = xp.maximum(floor, 0).astype(xp.int64)
    upper = xp.minimum(xp.ceil(source), in_size - 1).astype(xp.int64)
    lerp = (source - floor)[:, None]
    columns = xp.arange(in_size)[None, :]
    return ((1 - lerp) * (columns == lower[:, None])
            + lerp * (columns == upper[:, None])).astype(xp.float32)


def nearest_index(xp: Any, in_size: int, out_size: int, align: bool, half: bool) -> Any:
    """The source pixel of each of `out_size` nearest-neighbour output pixels."""
    # float64 keeps "+ 0.5" exact, so rounding is roundf's half away from zero (sources >= 0).
    source = _sources(xp, in_size, out_size, align, half, nearest=True).astype(xp.float64)
    index = xp.floor(source + 0.5) if align else xp.floor(source)
    index = xp.minimum(index.astype(xp.int64), in_size - 1)
    return xp.maximum(index, 0) if half else index


def _one_hot(xp: Any, index: Any, in_size: int) -> Any:
    return (xp.arange(in_size)[None, :] == index[:, None]).astype(xp.float32)


# A weight matrix with at most this many non-zeros per row is applied as that many gathers.
_MAX_TAPS = 8


def nearest_weights(xp: Any, in_size: int, out_size: int, align: bool, half: bool) -> Any:
    """The ``(out_size, in_size)`` one-hot float32 matrix of nearest-neighbour resizing."""
    return _one_hot(xp, nearest_index(xp, in_size, out_size, align, half), in_size)


@functools.lru_cache(maxsize=256)
def _taps(weights: WeightsFn, in_size: int, out_size: int, align: bool, half: bool,
          transposed: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """How to apply ``weights(np, in_size, out_size, align, half)`` (its transpose if
    `transposed`) along an axis: ``(index, taken)``, each row's non-zero columns in ascending
    order and their weights, ``(rows, taps)`` (a short row padded with weight 0); or
    ``(matrix, None)`` where a row has more than `_MAX_TAPS` non-zeros. Host arrays, made once
    per size and shared (read-only): a pipeline resizes every image to the same size."""
    matrix = weights(np, in_size, out_size, align, half)
    if transposed:
        matrix = np.ascontiguousarray(matrix.T)
    nonzero = matrix != 0
    taps = int(nonzero.sum(axis=1).max())
    if taps > _MAX_TAPS:  # a gradient of a large downscale: a matrix product
        matrix.flags.writeable = False
        return matrix, None
    size = matrix.shape[1]
    columns = np.sort(np.where(nonzero, np.arange(size)[None, :], size), axis=1)
    columns = columns[:, :max(taps, 1)]
    index = np.minimum(columns, size - 1)
    taken = np.take_along_axis(matrix, index, axis=1) * (columns < size)
    for array in (index, taken):
        array.flags.writeable = False
    return index, taken


def _along(xp: Any, taps: tuple[np.ndarray, np.ndarray | None], image: Any, axis: int) -> Any:
    """The matrix of `taps` ``(out, in)`` applied along `axis` of `image`: ``out[y] = sum_i
    w[y, i] * image[i]``, in `image`'s dtype promoted with float32 (an 8- or 16-bit image is
    gathered as it is and promoted by the first product: the same values as converting it
    first, at a fraction of the memory traffic)."""
    index, taken = taps
    dtype = xp.result_type(image.dtype, xp.float32)
    if taken is None:
        moved = xp.moveaxis(image, axis, -1).astype(dtype, copy=False)  # (BLAS: one dtype)
        return xp.moveaxis(xp.matmul(moved, xp.asarray(index.T, dtype=dtype)), -1, axis)
    # bilinear reads two pixels per output pixel, nearest neighbour one: gathers, not BLAS.
    index = xp.asarray(index)
    taken = xp.asarray(taken, dtype=dtype)
    shape = [1] * image.ndim
    shape[axis] = index.shape[0]
    out = None
    for k in range(index.shape[1]):
        term = xp.take(image, index[:, k], axis=axis)
        weight = taken[:, k].reshape(shape)
        if term.dtype == dtype:
            term *= weight
        else:
            term = term * weight
        if out is None:
            out = term
        else:
            out += term
    return out


def _apply(xp: Any, weights: WeightsFn, image: Any, sizes: tuple[int, int, int, int],
           align: bool, half: bool, transposed: bool = False) -> Any:
    """``rows @ image @ cols.T`` over the spatial axes of an NHWC `image`, where `rows` and
    `cols` are ``weights`` from height `sizes[0]` to `sizes[1]` and width `sizes[2]` to
    `sizes[3]` (transposed if `transposed`)."""
    rows = _taps(weights, sizes[0], sizes[1], align, half, transposed)
    cols = _taps(weights, sizes[2], sizes[3], align, half, transposed)
    return _along(xp, cols, _along(xp, rows, image, 1), 2)


def _compute_dtype(xp: Any, dtype: Any) -> Any:
    """float64 stays; every other dtype is computed in float32 (TF resizes in float)."""
    return xp.float64 if dtype == xp.float64 else xp.float32


def resize_separable(ctx: KernelContext, images: Any, size: Any, weights: WeightsFn) -> Any:
    """`images` resized to `size` by the per-axis ``weights(xp, in, out, align, half)``
    matrices, in float32 (the output dtype of TF's interpolating resizes)."""
    xp = ctx.xp
    align, half = _check_attrs(ctx)
    _check_image(ctx, images)
    height, width = _size(ctx, size)
    sizes = (images.shape[1], height, images.shape[2], width)
    image = images if xp.result_type(images.dtype, xp.float32) == xp.float32 \
        else images.astype(xp.float32)
    return _apply(xp, weights, image, sizes, align, half).astype(xp.float32, copy=False)


def resize_separable_grad(ctx: KernelContext, grads: Any, original: Any,
                          weights: WeightsFn) -> Any:
    """The gradient of `resize_separable` with respect to `original`: the same matrices,
    transposed."""
    xp = ctx.xp
    align, half = _check_attrs(ctx)
    _check_image(ctx, original)
    if grads.ndim != 4 or grads.shape[0] != original.shape[0] \
            or grads.shape[3] != original.shape[3]:
        raise _fail(ctx, f"grads {list(grads.shape)} do not match original image "
                         f"{list(original.shape)} in batch and depth")
    sizes = (original.shape[1], grads.shape[1], original.shape[2], grads.shape[2])
    wide = grads.astype(_compute_dtype(xp, original.dtype))
    return _apply(xp, weights, wide, sizes, align, half, transposed=True).astype(
        ctx.out_np, copy=False)


def resize_bilinear(ctx: KernelContext, images: Any, size: Any) -> Any:
    return resize_separable(ctx, images, size, bilinear_weights)


def resize_bilinear_grad(ctx: KernelContext, grads: Any, original: Any) -> Any:
    return resize_separable_grad(ctx, grads, original, bilinear_weights)


def resize_nearest_neighbor(ctx: KernelContext, images: Any, size: Any) -> Any:
    xp = ctx.xp
    align, half = _check_attrs(ctx)
    _check_image(ctx, images)
    height, width = _size(ctx, size)
    rows = nearest_index(xp, images.shape[1], height, align, half)
    cols = nearest_index(xp, images.shape[2], width, align, half)
    return xp.take(xp.take(images, rows, axis=1), cols, axis=2)


def resize_nearest_neighbor_grad(ctx: KernelContext, grads: Any, size: Any) -> Any:
    xp = ctx.xp
    align, half = _check_attrs(ctx)
    _check_image(ctx, grads)
    height, width = _size(ctx, size)
    # Integer sums are exact in float64; floats keep (at least) float32.
    wide = grads.astype(xp.float64 if grads.dtype.kind in "iu" else
                        _compute_dtype(xp, grads.dtype))
    sizes = (height, grads.shape[1], width, grads.shape[2])
    return _apply(xp, nearest_weights, wide, sizes, align, half, transposed=True).astype(
        ctx.out_np, copy=False)


def register(registry: Any, device_type: str) -> None:
    """Register this module's kernels for `device_type`."""
    for op, fn in {
        "ResizeBilinear": resize_bilinear, "ResizeBilinearGrad": resize_bilinear_grad,
        "ResizeNearestNeighbor": resize_nearest_neighbor,
        "ResizeNearestNeighborGrad": resize_nearest_neighbor_grad,
    }.items():
        registry.add(op, device_type, fn, expensive=True)
