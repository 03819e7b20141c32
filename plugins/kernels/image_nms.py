"""Kernels of ``NonMaxSuppressionV4`` and ``NonMaxSuppressionV5``, run on the host (the
algorithms are sequential).

Contract: V4 is the greedy selection of ``NonMaxSuppressionV3``
(`tensorweave.plugins.kernels.image_box.select`), padded with index 0 to `max_output_size` when
``pad_to_max_output_size`` is set, and counts the real selections in ``valid_outputs``.

V5 is TF's soft-NMS. Candidates scoring above `score_threshold` wait in a queue ordered by
score (ties: lower index first). The best one is compared with the boxes selected since it was
last looked at, newest first: each multiplies its score by ``exp(-0.5 * iou**2 / sigma)`` (1
when ``soft_nms_sigma`` is 0; 0 when the IoU is above `iou_threshold`), and an IoU of at least
`iou_threshold` drops it. A candidate whose score did not change is selected with that score;
one whose score dropped but stays above `score_threshold` goes back into the queue. With
``soft_nms_sigma == 0`` this is hard NMS. Bad shapes, an `iou_threshold` outside ``[0, 1]``
and a negative `soft_nms_sigma` are `InvalidArgumentError`.
"""

from __future__ import annotations

import heapq
import math
from typing import Any

import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels.image_box import _corners, select


def _fail(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _host_inputs(ctx: KernelContext, boxes: Any, scores: Any, max_output_size: Any,
                 iou_threshold: Any, score_threshold: Any) -> tuple[Any, ...]:
    to_host = ctx.device.to_host
    boxes, scores = np.asarray(to_host(boxes)), np.asarray(to_host(scores))
    if boxes.ndim != 2:
        raise _fail(ctx, f"boxes must be 2-D{list(boxes.shape)}")
    if boxes.shape[1] != 4:
        raise _fail(ctx, "boxes must have 4 columns")
    if scores.ndim != 1:
        raise _fail(ctx, f"scores must be 1-D{list(scores.shape)}")
    if scores.shape[0] != boxes.shape[0]:
        raise _fail(ctx, "scores has incompatible shape")
    for label, value in (("max_output_size", max_output_size),
                         ("iou_threshold", iou_threshold),
                         ("score_threshold", score_threshold)):
        if np.ndim(value) != 0:
            raise _fail(ctx, f"{label} must be 0-D, got shape {list(np.shape(value))}")
    iou = float(to_host(iou_threshold))
    if not 0 <= iou <= 1:
        raise _fail(ctx, "iou_threshold must be in [0, 1]")
    return (boxes, scores, int(to_host(max_output_size)), iou,
            float(to_host(score_threshold)))


def _padded(indices: np.ndarray, size: int, pad: bool) -> np.ndarray:
    if not pad or len(indices) >= size:
        return indices
    return np.concatenate([indices, np.zeros(size - len(indices), indices.dtype)])


def _nms_v4(ctx: KernelContext, boxes: Any, scores: Any, max_output_size: Any,
            iou_threshold: Any, score_threshold: Any) -> Any:
    boxes, scores, size, iou, floor = _host_inputs(ctx, boxes, scores, max_output_size,
                                                   iou_threshold, score_threshold)
    kept = select(boxes, scores.astype(np.float32), size, iou, floor)
    padded = _padded(kept, size, ctx.attrs["pad_to_max_output_size"])
    return (ctx.device.from_host(padded),
            ctx.device.from_host(np.asarray(len(kept), np.int32)))


def soft_select(boxes: np.ndarray, scores: np.ndarray, max_output: int, iou_threshold: float,
                score_threshold: float, sigma: float) -> tuple[list[int], list[float]]:
    """TF's soft-NMS: the selected indices and their (possibly decayed) scores, in order."""
    low, high, area = _corners(boxes.astype(np.float32))
    scale = -0.5 / sigma if sigma > 0 else 0.0

    def iou(i: int, j: int) -> float:
        if area[i] <= 0 or area[j] <= 0:
            return 0.0
        overlap = np.clip(np.minimum(high[i], high[j]) - np.maximum(low[i], low[j]), 0, None)
        inter = float(overlap[0] * overlap[1])
        return inter / (float(area[i]) + float(area[j]) - inter)

    # heap entries: (-score, index, first selected box not yet compared with)
    queue = [(-float(s), i, 0) for i, s in enumerate(scores) if s > score_threshold]
    heapq.heapify(queue)
    selected: list[int] = []
    selected_scores: list[float] = []
    while len(selected) < max_output and queue:
        neg_score, i, begin = heapq.heappop(queue)
        score = original = -neg_score
        hard = False
        for j in range(len(selected) - 1, begin - 1, -1):
            similarity = iou(i, selected[j])
            score *= math.exp(scale * similarity * similarity) \
                if similarity <= iou_threshold else 0.0
            if similarity >= iou_threshold:
                hard = True
                break
            if score <= score_threshold:
                break
        if hard:
            continue
        if score == original:
            selected.append(i)
            selected_scores.append(score)
        elif score > score_threshold:
            heapq.heappush(queue, (-score, i, len(selected)))
    return selected, selected_scores


def _nms_v5(ctx: KernelContext, boxes: Any, scores: Any, max_output_size: Any,
            iou_threshold: Any, score_threshold: Any, soft_nms_sigma: Any) -> Any:
    boxes, scores, size, iou, floor = _host_inputs(ctx, boxes, scores, max_output_size,
                                                   iou_threshold, score_threshold)
    if np.ndim(soft_nms_sigma) != 0:
        raise _fail(ctx, f"soft_nms_sigma must be 0-D, got shape "
                         f"{list(np.shape(soft_nms_sigma))}")
    sigma = float(ctx.device.to_host(soft_nms_sigma))
    if sigma < 0:
        raise _fail(ctx, "soft_nms_sigma must be non-negative")
    kept, kept_scores = soft_select(boxes, scores.astype(np.float32), size, iou, floor, sigma)
    pad = ctx.attrs["pad_to_max_output_size"]
    indices = _padded(np.asarray(kept, np.int32), size, pad)
    values = _padded(np.asarray(kept_scores, ctx.output_dtypes[1].np_type), size, pad)
    return (ctx.device.from_host(indices), ctx.device.from_host(values),
            ctx.device.from_host(np.asarray(len(kept), np.int32)))


def register(registry: Any, device_type: str) -> None:
    registry.add("NonMaxSuppressionV4", device_type, _nms_v4)
    registry.add("NonMaxSuppressionV5", device_type, _nms_v5)
