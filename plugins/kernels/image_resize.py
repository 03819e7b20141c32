"""Kernels of the bicubic and area resizes and of ``CropAndResize`` with their gradients,
written once against ``ctx.xp``.

Contract: the resizes are separable, so each is an ``(out, in)`` float32 weight matrix per
spatial axis applied as two small matrix products (a gradient is the same products
transposed), as in `tensorweave.plugins.kernels.image`. Bicubic weights are TF's: the source
coordinate (legacy ``x * scale`` or half-pixel ``(x + 0.5) * scale - 0.5``) splits into
``floor`` and a fraction rounded to 1/1024; the four taps ``floor - 1 .. floor + 2`` are
clamped to the image and weighted by the cubic convolution kernel with ``A = -0.75`` (legacy),
or with Keys' ``A = -0.5`` and taps outside the image dropped and the rest renormalized
(half-pixel). Area weights are the overlap of each source pixel with the output pixel's span
``[x * scale, (x + 1) * scale)`` (taps clamped to the image), divided by the span. Crop and
resize samples each box's grid (``y1 * (h - 1) + y * (y2 - y1) * (h - 1) / (crop_h - 1)``, the
box centre for a crop of 1) by bilinear interpolation or rounding to the nearest pixel, and
writes `extrapolation_value` where the grid leaves the image; its image gradient is summed box
by box with the same weights, its box gradient is TF's bilinear derivative. Bad shapes, sizes,
methods and box indices raise `InvalidArgumentError`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels.image import _fail, resize_separable, resize_separable_grad
from tensorweave.plugins.kernels.image import _size as output_size

_TABLE = 1024  # TF tabulates the cubic kernel at 1/1024 steps


def _scale(xp: Any, in_size: int, out_size: int, align: bool) -> Any:
    f32 = xp.float32
    if align and out_size > 1:
        return f32(in_size - 1) / f32(out_size - 1)
    return f32(in_size) / f32(out_size)


def _cubic(xp: Any, steps: Any, a: float) -> tuple[Any, Any]:
    """The kernel at distance ``steps / 1024`` (near tap) and ``1 + steps / 1024`` (far tap)."""
    x = steps.astype(xp.float64) / _TABLE
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x = x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return near.astype(xp.float32), far.astype(xp.float32)


def bicubic_weights(xp: Any, in_size: int, out_size: int, align: bool, half: bool) -> Any:
    """The ``(out_size, in_size)`` float32 matrix of TF's bicubic interpolation weights."""
    f32 = xp.float32
    scale = _scale(xp, in_size, out_size, align)
    x = xp.arange(out_size, dtype=f32)
    source = (x + f32(0.5)) * scale - f32(0.5) if half else x * scale
    base = xp.floor(source)
    offset = xp.rint((source - base) * f32(_TABLE)).astype(xp.int64)
    near, far = _cubic(xp, offset, -0.5 if half else -0.75)
    near_up, far_up = _cubic(xp, _TABLE - offset, -0.5 if half else -0.75)
    base = base.astype(xp.int64)
    taps = [base - 1, base, base + 1, base + 2]
    weights = [far, near, near_up, far_up]
    if half:
        weights = [xp.where((t >= 0) & (t < in_size), w, f32(0)) for t, w in zip(taps, weights)]
        total = weights[0] + weights[1] + weights[2] + weights[3]
        usable = xp.abs(total) >= f32(1000) * xp.finfo(f32).tiny
        inverse = f32(1) / xp.where(usable, total, f32(1))
        weights = [xp.where(usable, w * inverse, w) for w in weights]
    columns = xp.arange(in_size)[None, :]
    matrix = xp.zeros((out_size, in_size), dtype=f32)
    for t, w in zip(taps, weights):
        matrix = matrix + w[:, None] * (columns == xp.clip(t, 0, in_size - 1)[:, None])
    return matrix


def area_weights(xp: Any, in_size: int, out_size: int, align: bool) -> Any:
    """The ``(out_size, in_size)`` float32 matrix of TF's area weights, divided by the scale."""
    f32 = xp.float32
    scale = _scale(xp, in_size, out_size, align)
    x = xp.arange(out_size, dtype=f32)
    lo, hi = x * scale, (x + f32(1)) * scale
    start = xp.floor(lo).astype(xp.int64)
    end = xp.ceil(hi).astype(xp.int64)
    columns = xp.arange(in_size)[None, :]
    matrix = xp.zeros((out_size, in_size), dtype=f32)
    for k in range(int((end - start).max())):
        tap = start + k
        tap_f, next_f = tap.astype(f32), (tap + 1).astype(f32)
        overlap = xp.where(tap_f < lo, xp.where(next_f > hi, scale, next_f - lo),
                           xp.where(next_f > hi, hi - tap_f, f32(1)))
        overlap = xp.where(tap < end, overlap, f32(0))
        matrix = matrix + overlap[:, None] * (columns == xp.clip(tap, 0, in_size - 1)[:, None])
    return matrix / scale


def _area(xp: Any, in_size: int, out_size: int, align: bool, half: bool) -> Any:
    # ResizeArea has no half_pixel_centers (always False here).
    return area_weights(xp, in_size, out_size, align)


def resize_bicubic(ctx: KernelContext, images: Any, size: Any) -> Any:
    return resize_separable(ctx, images, size, bicubic_weights)


def resize_bicubic_grad(ctx: KernelContext, grads: Any, original: Any) -> Any:
    return resize_separable_grad(ctx, grads, original, bicubic_weights)


def resize_area(ctx: KernelContext, images: Any, size: Any) -> Any:
    return resize_separable(ctx, images, size, _area)


# -- crop and resize ------------------------------------------------------------------------------


def _method(ctx: KernelContext, allowed: tuple[str, ...]) -> str:
    method = ctx.attrs["method"]
    method = method.decode() if isinstance(method, bytes) else str(method)
    if method not in allowed:
        raise _fail(ctx, f"method must be {' or '.join(repr(m) for m in allowed)}")
    return method


def _check_boxes(ctx: KernelContext, boxes: Any, box_ind: Any, batch: int) -> Any:
    """`box_ind` on the host, after TF's shape and range checks."""
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise _fail(ctx, f"boxes must be 2-D[num_boxes, 4] but got {list(boxes.shape)}")
    if box_ind.ndim != 1 or box_ind.shape[0] != boxes.shape[0]:
        raise _fail(ctx, f"box_index has incompatible shape {list(box_ind.shape)}")
    host = ctx.device.to_host(box_ind)
    if host.size and (host.min() < 0 or host.max() >= batch):
        raise _fail(ctx, f"box_index has values outside [0, {batch})")
    return box_ind.astype(ctx.xp.int64)


def _grid(xp: Any, start: Any, stop: Any, crop: int, size: int) -> tuple[Any, Any]:
    """Each box's float32 source coordinates ``[boxes, crop]`` along one axis, and whether
    each lies inside ``[0, size - 1]``."""
    f32 = xp.float32
    extent = f32(size - 1)
    steps = xp.arange(crop, dtype=f32)[None, :]
    if crop > 1:
        scale = (stop - start) * extent / f32(crop - 1)
        coords = start[:, None] * extent + steps * scale[:, None]
    else:
        coords = (f32(0.5) * (start + stop) * extent)[:, None] + steps
    return coords, (coords >= 0) & (coords <= extent)


def _corners(xp: Any, coords: Any, size: int) -> tuple[Any, Any, Any]:
    """Lower and upper sample index (clamped, for gathering) and the interpolation weight."""
    lower = xp.floor(coords)
    upper = xp.ceil(coords)
    limit = size - 1
    return (xp.clip(lower, 0, limit).astype(xp.int64), xp.clip(upper, 0, limit).astype(xp.int64),
            coords - lower)


def crop_and_resize(ctx: KernelContext, image: Any, boxes: Any, box_ind: Any,
                    crop_size: Any) -> Any:
    xp = ctx.xp
    method = _method(ctx, ("bilinear", "nearest"))
    if image.ndim != 4 or min(image.shape[1:3]) <= 0:
        raise _fail(ctx, f"image dimensions must be positive {list(image.shape)}")
    height, width = output_size(ctx, crop_size)
    index = _check_boxes(ctx, boxes, box_ind, image.shape[0])
    boxes = boxes.astype(xp.float32)
    ys, y_in = _grid(xp, boxes[:, 0], boxes[:, 2], height, image.shape[1])
    xs, x_in = _grid(xp, boxes[:, 1], boxes[:, 3], width, image.shape[2])
    b = index[:, None, None]
    if method == "nearest":
        # C's roundf (half away from zero): coordinates inside the image are non-negative.
        row = xp.clip(xp.floor(ys.astype(xp.float64) + 0.5), 0, image.shape[1] - 1)
        col = xp.clip(xp.floor(xs.astype(xp.float64) + 0.5), 0, image.shape[2] - 1)
        out = image[b, row.astype(xp.int64)[:, :, None],
                    col.astype(xp.int64)[:, None, :]].astype(xp.float32)
    else:
        top, bottom, y_lerp = _corners(xp, ys, image.shape[1])
        left, right, x_lerp = _corners(xp, xs, image.shape[2])
        t, bo = top[:, :, None], bottom[:, :, None]
        lf, rt = left[:, None, :], right[:, None, :]
        x_lerp = x_lerp[:, None, :, None]
        f32 = xp.float32
        upper = image[b, t, lf].astype(f32) + (image[b, t, rt].astype(f32)
                                               - image[b, t, lf].astype(f32)) * x_lerp
        lower = image[b, bo, lf].astype(f32) + (image[b, bo, rt].astype(f32)
                                                - image[b, bo, lf].astype(f32)) * x_lerp
        out = upper + (lower - upper) * y_lerp[:, :, None, None]
    inside = (y_in[:, :, None] & x_in[:, None, :])[..., None]
    fill = xp.float32(ctx.attrs["extrapolation_value"])
    return xp.where(inside, out, fill).astype(xp.float32, copy=False)


def _crop_matrix(xp: Any, coords: Any, inside: Any, size: int, nearest: bool) -> Any:
    """Per-box ``[boxes, crop, size]`` sampling weights (zero rows outside the image)."""
    columns = xp.arange(size)[None, None, :]
    if nearest:
        index = xp.clip(xp.floor(coords.astype(xp.float64) + 0.5), 0, size - 1)
        weights = (columns == index.astype(xp.int64)[..., None]).astype(xp.float32)
    else:
        lower, upper, lerp = _corners(xp, coords, size)
        weights = ((xp.float32(1) - lerp)[..., None] * (columns == lower[..., None])
                   + lerp[..., None] * (columns == upper[..., None]))
    return weights * inside[..., None]


def crop_and_resize_grad_image(ctx: KernelContext, grads: Any, boxes: Any, box_ind: Any,
                               image_size: Any) -> Any:
    xp = ctx.xp
    method = _method(ctx, ("bilinear", "nearest"))
    shape = [int(v) for v in ctx.device.to_host(image_size).reshape(-1).tolist()]
    if len(shape) != 4:
        raise _fail(ctx, f"image_size must be 1-D with 4 elements, got {shape}")
    batch, height, width, depth = shape
    if height <= 0 or width <= 0:
        raise _fail(ctx, "image dimensions must be positive")
    if grads.ndim != 4 or grads.shape[0] != boxes.shape[0] or grads.shape[3] != depth:
        raise _fail(ctx, f"grads {list(grads.shape)} do not match boxes {list(boxes.shape)} "
                         f"and image depth {depth}")
    index = ctx.device.to_host(_check_boxes(ctx, boxes, box_ind, batch))
    boxes = boxes.astype(xp.float32)
    ys, y_in = _grid(xp, boxes[:, 0], boxes[:, 2], grads.shape[1], height)
    xs, x_in = _grid(xp, boxes[:, 1], boxes[:, 3], grads.shape[2], width)
    rows = _crop_matrix(xp, ys, y_in, height, method == "nearest")
    cols = _crop_matrix(xp, xs, x_in, width, method == "nearest")
    out = xp.zeros((batch, height, width, depth), dtype=xp.float32)
    # Box by box: a dense [boxes, height, width, depth] intermediate could be huge.
    for k, n in enumerate(index.tolist()):
        out[n] += xp.einsum("yh,yxc,xw->hwc", rows[k], grads[k].astype(xp.float32), cols[k])
    return out.astype(ctx.out_np, copy=False)


def crop_and_resize_grad_boxes(ctx: KernelContext, grads: Any, image: Any, boxes: Any,
                               box_ind: Any) -> Any:
    xp = ctx.xp
    _method(ctx, ("bilinear",))
    if image.ndim != 4 or min(image.shape[1:3]) <= 0:
        raise _fail(ctx, f"image dimensions must be positive {list(image.shape)}")
    if grads.ndim != 4 or grads.shape[0] != boxes.shape[0] or grads.shape[3] != image.shape[3]:
        raise _fail(ctx, f"grads {list(grads.shape)} do not match boxes {list(boxes.shape)} "
                         f"and image {list(image.shape)}")
    index = _check_boxes(ctx, boxes, box_ind, image.shape[0])
    f32 = xp.float32
    boxes = boxes.astype(f32)
    crop_h, crop_w = grads.shape[1], grads.shape[2]
    ys, y_in = _grid(xp, boxes[:, 0], boxes[:, 2], crop_h, image.shape[1])
    xs, x_in = _grid(xp, boxes[:, 1], boxes[:, 3], crop_w, image.shape[2])
    top, bottom, y_lerp = _corners(xp, ys, image.shape[1])
    left, right, x_lerp = _corners(xp, xs, image.shape[2])
    b = index[:, None, None]
    t, bo, lf, rt = top[:, :, None], bottom[:, :, None], left[:, None, :], right[:, None, :]
    tl, tr = image[b, t, lf].astype(f32), image[b, t, rt].astype(f32)
    bl, br = image[b, bo, lf].astype(f32), image[b, bo, rt].astype(f32)
    xl, yl = x_lerp[:, None, :, None], y_lerp[:, :, None, None]
    inside = (y_in[:, :, None] & x_in[:, None, :])[..., None]
    g = xp.where(inside, grads.astype(f32), f32(0))
    d_y = ((f32(1) - xl) * (bl - tl) + xl * (br - tr)) * g
    d_x = ((f32(1) - yl) * (tr - tl) + yl * (br - bl)) * g
    d_y, d_x = d_y.sum(axis=(2, 3)), d_x.sum(axis=(1, 3))  # [boxes, crop_h], [boxes, crop_w]
    grid_h = _ratio_steps(xp, crop_h, image.shape[1])
    grid_w = _ratio_steps(xp, crop_w, image.shape[2])
    return xp.stack([(d_y * grid_h[0]).sum(axis=1), (d_x * grid_w[0]).sum(axis=1),
                     (d_y * grid_h[1]).sum(axis=1), (d_x * grid_w[1]).sum(axis=1)],
                    axis=1).astype(f32, copy=False)


def _ratio_steps(xp: Any, crop: int, size: int) -> tuple[Any, Any]:
    """How a sample at each crop step moves with the box's start and stop coordinate."""
    f32 = xp.float32
    if crop > 1:
        ratio = f32(size - 1) / f32(crop - 1)
        moved = xp.arange(crop, dtype=f32) * ratio
        return f32(size - 1) - moved, moved
    half = xp.full((1,), f32(0.5) * f32(size - 1), dtype=f32)
    return half, half


def register(registry: Any, device_type: str) -> None:
    """Register this module's kernels for `device_type`."""
    for op, fn in {
        "ResizeBicubic": resize_bicubic, "ResizeBicubicGrad": resize_bicubic_grad,
        "ResizeArea": resize_area, "CropAndResize": crop_and_resize,
        "CropAndResizeGradImage": crop_and_resize_grad_image,
        "CropAndResizeGradBoxes": crop_and_resize_grad_boxes,
    }.items():
        registry.add(op, device_type, fn, expensive=True)
