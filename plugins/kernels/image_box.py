"""Kernels of the bounding-box image ops.

Contract: non-max suppression is TF's greedy algorithm, run on the host (it is sequential):
boxes scoring above `score_threshold` are visited by decreasing score (ties by index) and a box
is kept unless its IoU with an already kept box exceeds `iou_threshold`, until
`max_output_size` are kept. IoU uses each box's min/max corners; a box of zero area overlaps
nothing.

Drawing outlines each box one pixel wide on a copy of its image: the box's edges are
``coordinate * (size - 1)`` truncated toward zero; edges outside the image are not drawn (the
others are clipped), inverted or fully outside boxes are skipped; box ``i`` gets colour
``i mod len(colors)`` (TF's ten-colour table by default, white on grey images), its first
`depth` components cast to the image dtype.

Sampling follows TF's ``SampleDistortedBoundingBox``: boxes become integer pixel rectangles;
each of up to ``max_attempts`` tries draws an aspect ratio from ``aspect_ratio_range``, a crop
height between those giving ``area_range``'s bounds (rounded, then nudged by a pixel to meet
them) and a uniform offset, and is accepted when some box of at least one pixel has at least
``min_object_covered`` of its area inside the crop; when no try succeeds the whole image is the
crop. Numbers come from the node's seeded generator (`tensorweave.plugins.kernels.random`), so
the stream is reproducible but not TF's Philox one.

Bad shapes, coordinates outside ``[0, 1]``, missing boxes (without
``use_image_if_no_bounding_boxes``) and an `iou_threshold` outside ``[0, 1]`` raise
`InvalidArgumentError`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels.random import _generator as node_generator

# TF's default box colours (RGBA): yellow, blue, red, lime, purple, olive, maroon, navy, aqua,
# fuchsia
_COLORS = np.array([[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1],
                    [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1],
                    [1, 0, 1, 1]], np.float32)


def _fail(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _corners(boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    low = np.minimum(boxes[:, :2], boxes[:, 2:])
    high = np.maximum(boxes[:, :2], boxes[:, 2:])
    return low, high, np.prod(high - low, axis=1)


def select(boxes: np.ndarray, scores: np.ndarray, max_output: int, iou_threshold: float,
           score_threshold: float) -> np.ndarray:
    """The indices TF's greedy non-max suppression keeps, in order."""
    low, high, area = _corners(boxes.astype(np.float32))
    candidates = np.flatnonzero(scores > score_threshold)
    order = candidates[np.argsort(-scores[candidates], kind="stable")]
    kept: list[int] = []
    for i in order:
        if len(kept) >= max_output:
            break
        if kept:
            k = np.asarray(kept)
            overlap = np.clip(np.minimum(high[k], high[i]) - np.maximum(low[k], low[i]), 0, None)
            inter = overlap[:, 0] * overlap[:, 1]
            union = area[k] + area[i] - inter
            valid = (area[k] > 0) & (area[i] > 0)
            iou = np.where(valid, inter / np.where(valid, union, 1), 0)
            if (iou > iou_threshold).any():
                continue
        kept.append(int(i))
    return np.asarray(kept, dtype=np.int32)


def _non_max_suppression(ctx: KernelContext, boxes: Any, scores: Any, max_output_size: Any,
                         iou_threshold: Any, score_threshold: Any = None) -> Any:
    to_host = ctx.device.to_host
    boxes, scores = np.asarray(to_host(boxes)), np.asarray(to_host(scores))
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise _fail(ctx, f"boxes must be 2-D with 4 columns, got {list(boxes.shape)}")
    if scores.ndim != 1 or scores.shape[0] != boxes.shape[0]:
        raise _fail(ctx, f"scores has incompatible shape {list(scores.shape)}")
    if np.ndim(max_output_size) != 0:
        raise _fail(ctx, f"max_output_size must be 0-D, got shape "
                         f"{list(np.shape(max_output_size))}")
    iou = float(to_host(iou_threshold))
    if not 0 <= iou <= 1:
        raise _fail(ctx, "iou_threshold must be in [0, 1]")
    floor = -np.inf if score_threshold is None else float(to_host(score_threshold))
    kept = select(boxes, scores.astype(np.float32), int(to_host(max_output_size)), iou, floor)
    return ctx.device.from_host(kept)


def _draw_bounding_boxes(ctx: KernelContext, images: Any, boxes: Any,
                         colors: Any = None) -> Any:
    if images.ndim != 4:
        raise _fail(ctx, "The rank of the images should be 4")
    if boxes.ndim != 3:
        raise _fail(ctx, "The rank of the boxes tensor should be 3")
    if images.shape[0] != boxes.shape[0]:
        raise _fail(ctx, "The batch sizes should be the same")
    batch, height, width, depth = images.shape
    if depth not in (1, 3, 4):
        raise _fail(ctx, "Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)")
    table = _COLORS.copy()
    if depth == 1:
        table[:, 0] = 1
    if colors is not None:
        colors = np.asarray(ctx.device.to_host(colors), np.float32)
        if colors.ndim != 2 or colors.shape[1] != 4:
            raise _fail(ctx, f"colors must be n x 4 (RGBA), got {list(colors.shape)}")
        if colors.size:
            table = colors
    canvas = images.copy()
    host = np.asarray(ctx.device.to_host(boxes), np.float32)
    for b in range(batch):
        for i, (y0, x0, y1, x1) in enumerate(host[b]):
            top, bottom = int(y0 * np.float32(height - 1)), int(y1 * np.float32(height - 1))
            left, right = int(x0 * np.float32(width - 1)), int(x1 * np.float32(width - 1))
            if top > bottom or left > right or top >= height or bottom < 0 \
                    or left >= width or right < 0:
                continue
            color = ctx.xp.asarray(table[i % len(table), :depth].astype(ctx.out_np))
            rows = slice(max(top, 0), min(bottom, height - 1) + 1)
            cols = slice(max(left, 0), min(right, width - 1) + 1)
            for row in (top, bottom):
                if 0 <= row < height:
                    canvas[b, row, cols] = color
            for col in (left, right):
                if 0 <= col < width:
                    canvas[b, rows, col] = color
    return canvas


def _crop(gen: np.random.Generator, width: int, height: int, min_area: float,
          max_area: float, aspect: float) -> tuple[int, int, int, int] | None:
    """TF's ``GenerateRandomCrop``: ``(x0, y0, x1, y1)`` or None when the areas cannot be
    met at this aspect ratio."""
    if max_area <= 0 or aspect <= 0 or min_area > max_area:
        return None
    f32 = np.float32
    min_area, max_area = f32(min_area * width * height), f32(max_area * width * height)
    crop_h = int(np.rint(np.sqrt(min_area / f32(aspect))))
    max_h = int(np.rint(np.sqrt(max_area / f32(aspect))))
    if np.rint(max_h * f32(aspect)) > width:
        max_h = int((width + 0.5 - 1e-7) / aspect)
        if np.rint(max_h * f32(aspect)) > width:
            max_h -= 1
    max_h = min(max_h, height)
    crop_h = min(crop_h, max_h)
    if crop_h < max_h:
        crop_h += int(gen.integers(0, max_h - crop_h + 1))
    crop_w = int(np.rint(crop_h * f32(aspect)))
    area = crop_w * crop_h
    if area < min_area:
        crop_h += 1
        crop_w = int(np.rint(crop_h * f32(aspect)))
        area = crop_w * crop_h
    if area > max_area:
        crop_h -= 1
        crop_w = int(np.rint(crop_h * f32(aspect)))
        area = crop_w * crop_h
    if not (min_area <= area <= max_area and 0 < crop_w <= width and 0 < crop_h <= height):
        return None
    y = int(gen.integers(0, height - crop_h)) if crop_h < height else 0
    x = int(gen.integers(0, width - crop_w)) if crop_w < width else 0
    return x, y, x + crop_w, y + crop_h


def _covers(crop: tuple[int, int, int, int], boxes: list[tuple[int, int, int, int]],
            minimum: float) -> bool:
    """TF's ``SatisfiesOverlapConstraints``: some box of area >= 1 is covered enough."""
    x0, y0, x1, y1 = crop
    if (x1 - x0) * (y1 - y0) < 1:
        return False
    for bx0, by0, bx1, by1 in boxes:
        area = (bx1 - bx0) * (by1 - by0)
        if area < 1:
            continue
        ix0, iy0, ix1, iy1 = max(x0, bx0), max(y0, by0), min(x1, bx1), min(y1, by1)
        inter = (ix1 - ix0) * (iy1 - iy0) if ix0 <= ix1 and iy0 <= iy1 else 0
        if np.float32(inter) / np.float32(area) >= minimum:
            return True
    return False


def _sample_distorted_bounding_box(ctx: KernelContext, image_size: Any, bounding_boxes: Any,
                                   min_object_covered: Any) -> tuple[Any, Any, Any]:
    size = np.asarray(ctx.device.to_host(image_size))
    if size.ndim != 1 or size.shape[0] != 3:
        raise _fail(ctx, f"image_size must be 1-dimensional with 3 elements, got shape "
                         f"{list(size.shape)}")
    height, width = int(size[0]), int(size[1])
    boxes_in = np.asarray(ctx.device.to_host(bounding_boxes), np.float32)
    if boxes_in.ndim != 3 or boxes_in.shape[2] != 4:
        raise _fail(ctx, f"input boxes must be 3-dimensional [batch, num_boxes, coords], "
                         f"got {list(boxes_in.shape)}")
    flat = boxes_in.reshape(-1, 4)
    if flat.size and (flat.min() < 0 or flat.max() > 1):
        raise _fail(ctx, "All bounding box coordinates must be in [0.0, 1.0]")
    boxes = [(int(x0 * width), int(y0 * height), int(x1 * width), int(y1 * height))
             for y0, x0, y1, x1 in flat]
    if not boxes:
        if not ctx.attrs["use_image_if_no_bounding_boxes"]:
            raise _fail(ctx, "No bounding boxes provided as input. One must enable "
                             "use_image_if_no_bounding_boxes if you wish to not provide any "
                             "bounding boxes.")
        boxes = [(0, 0, width, height)]
    aspect_lo, aspect_hi = (float(v) for v in ctx.attrs["aspect_ratio_range"])
    area_lo, area_hi = (float(v) for v in ctx.attrs["area_range"])
    minimum = float(ctx.device.to_host(min_object_covered))
    gen, lock = node_generator(ctx)
    crop = None
    with lock:
        for _ in range(int(ctx.attrs["max_attempts"])):
            aspect = float(np.float32(gen.random() * (aspect_hi - aspect_lo) + aspect_lo))
            candidate = _crop(gen, width, height, area_lo, area_hi, aspect)
            if candidate is not None and _covers(candidate, boxes, minimum):
                crop = candidate
                break
    x0, y0, x1, y1 = crop or (0, 0, width, height)
    begin = np.array([y0, x0, 0], ctx.out_np)
    extent = np.array([y1 - y0, x1 - x0, -1], ctx.out_np)
    bbox = np.array([[[y0 / height, x0 / width, y1 / height, x1 / width]]], np.float32)
    return tuple(ctx.device.from_host(v) for v in (begin, extent, bbox))


def register(registry: Any, device_type: str) -> None:
    """Register this module's kernels for `device_type`."""
    for op in ("NonMaxSuppressionV2", "NonMaxSuppressionV3"):
        registry.add(op, device_type, _non_max_suppression)
    for op in ("DrawBoundingBoxes", "DrawBoundingBoxesV2"):
        registry.add(op, device_type, _draw_bounding_boxes)
    registry.add("SampleDistortedBoundingBoxV2", device_type, _sample_distorted_bounding_box)
