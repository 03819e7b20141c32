"""Kernels of the image resize ops and their gradients, written once against ``ctx.xp``.

Contract: both resizes are separable, so each is two small matrix products: an ``(out, in)``
matrix per spatial axis holds the interpolation weights (bilinear) or a one-hot row (nearest
neighbour), and a gradient is the same products transposed. A matrix with few non-zeros per row
(bilinear: 2) is applied as that many gathers, a denser one by a matrix product. No Python loop
runs per pixel and no scatter (atomics) is needed. The pixel mapping is TF's, in float32 as TF
computes it: the scale is ``(in - 1) / (out - 1)`` with ``align_corners`` (and out > 1), else
``in / out``; an output pixel `x` reads source coordinate ``x * scale`` (legacy), or
``(x + 0.5) * scale - 0.5`` for bilinear and ``(x + 0.5) * scale`` for nearest neighbour with
``half_pixel_centers``. Bilinear reads ``floor`` (clamped at 0) and ``ceil`` (clamped at
``in - 1``) with weight ``source - floor(source)``; nearest neighbour reads ``floor`` (``round``
half away from zero with ``align_corners``), clamped to the image. Bad sizes and images raise
`InvalidArgumentError`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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


def _along(xp: Any, weights: Any, image: Any, axis: int) -> Any:
    """`weights` ``(out, in)`` applied along `axis` of `image`: ``out[y] = sum_i w[y, i] *
    image[i]``."""
    nonzero = weights != 0
    taps = int(nonzero.sum(axis=1).max())
    if taps > _MAX_TAPS:  # a gradient of a large downscale: a matrix product
        moved = xp.moveaxis(image, axis, -1)
        return xp.moveaxis(xp.matmul(moved, weights.T.astype(image.dtype)), -1, axis)
    # bilinear reads two pixels per output pixel, nearest neighbour one: gathers, not BLAS.
    # Each row's non-zero columns in ascending order (a short row padded with weight 0).
    size = weights.shape[1]
    columns = xp.sort(xp.where(nonzero, xp.arange(size)[None, :], size), axis=1)
    columns = columns[:, :max(taps, 1)]
    index = xp.minimum(columns, size - 1)
    taken = (xp.take_along_axis(weights, index, axis=1) * (columns < size)).astype(image.dtype)
    shape = [1] * image.ndim
    shape[axis] = weights.shape[0]
    out = None
    for k in range(index.shape[1]):
        term = xp.take(image, index[:, k], axis=axis) * taken[:, k].reshape(shape)
        out = term if out is None else out + term
    return out


def _apply(xp: Any, rows: Any, cols: Any, image: Any) -> Any:
    """``rows @ image @ cols.T`` over the spatial axes of an NHWC `image`."""
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
    rows = weights(xp, images.shape[1], height, align, half)
    cols = weights(xp, images.shape[2], width, align, half)
    return _apply(xp, rows, cols, images.astype(xp.float32)).astype(xp.float32, copy=False)


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
    rows = weights(xp, original.shape[1], grads.shape[1], align, half)
    cols = weights(xp, original.shape[2], grads.shape[2], align, half)
    wide = grads.astype(_compute_dtype(xp, original.dtype))
    return _apply(xp, rows.T, cols.T, wide).astype(ctx.out_np, copy=False)


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
    rows = _one_hot(xp, nearest_index(xp, height, grads.shape[1], align, half), height)
    cols = _one_hot(xp, nearest_index(xp, width, grads.shape[2], align, half), width)
    # Integer sums are exact in float64; floats keep (at least) float32.
    wide = grads.astype(xp.float64 if grads.dtype.kind in "iu" else
                        _compute_dtype(xp, grads.dtype))
    return _apply(xp, rows.T, cols.T, wide).astype(ctx.out_np, copy=False)


def register(registry: Any, device_type: str) -> None:
    """Register this module's kernels for `device_type`."""
    for op, fn in {
        "ResizeBilinear": resize_bilinear, "ResizeBilinearGrad": resize_bilinear_grad,
        "ResizeNearestNeighbor": resize_nearest_neighbor,
        "ResizeNearestNeighborGrad": resize_nearest_neighbor_grad,
    }.items():
        registry.add(op, device_type, fn, expensive=True)
