"""``tw.image`` bounding-box functions: non-max suppression, drawing boxes and sampling a
distorted crop, with ``tf.compat.v1.image``'s names, signatures and results.

Contract: `non_max_suppression` builds TF's ``NonMaxSuppressionV3``: the int32 indices of at
most `max_output_size` boxes kept greedily by decreasing score, dropping boxes whose IoU with a
kept one exceeds `iou_threshold` and boxes not scoring above `score_threshold`.
`draw_bounding_boxes` builds ``DrawBoundingBoxes`` (``V2`` when `colors` are given).
`sample_distorted_bounding_box` builds ``SampleDistortedBoundingBoxV2`` with TF's defaults and
seeds; it returns ``(begin, size, bboxes)`` for `tw.slice` and `draw_bounding_boxes`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import apply, make_op

__all__ = ["draw_bounding_boxes", "non_max_suppression", "sample_distorted_bounding_box"]


def non_max_suppression(boxes: Any, scores: Any, max_output_size: Any,
                        iou_threshold: Any = 0.5, score_threshold: Any = float("-inf"),
                        name: str | None = None) -> Tensor:
    """The indices of the boxes greedy non-max suppression keeps, best first."""
    with name_scope(name, "non_max_suppression"):
        iou_threshold = convert_to_tensor(iou_threshold, dtype=dtypes.float32,
                                          name="iou_threshold")
        score_threshold = convert_to_tensor(score_threshold, dtype=dtypes.float32,
                                            name="score_threshold")
        return apply("NonMaxSuppressionV3",
                     [boxes, scores, max_output_size, iou_threshold, score_threshold])


def draw_bounding_boxes(images: Any, boxes: Any, name: str | None = None,
                        colors: Any = None) -> Tensor:
    """`images` (float, 4-D) with each of `boxes` (``[batch, n, 4]``, normalized
    ``[y_min, x_min, y_max, x_max]``) outlined in its colour."""
    if colors is None:
        return apply("DrawBoundingBoxes", [images, boxes], name=name)
    colors = convert_to_tensor(colors, dtype=dtypes.float32, name="colors")
    return apply("DrawBoundingBoxesV2", [images, boxes, colors], name=name)


def sample_distorted_bounding_box(image_size: Any, bounding_boxes: Any,
                                  seed: int | None = None, seed2: int | None = None,
                                  min_object_covered: Any = 0.1,
                                  aspect_ratio_range: Any = None, area_range: Any = None,
                                  max_attempts: int | None = None,
                                  use_image_if_no_bounding_boxes: bool | None = None,
                                  name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """``(begin, size, bboxes)`` of a random crop of an image of `image_size` (``[h, w, c]``)
    that covers at least `min_object_covered` of one of `bounding_boxes`."""
    # TF1 passes both seeds to the op as given (no graph-level seed).
    attrs = {
        "seed": seed or 0, "seed2": seed2 or 0,
        "aspect_ratio_range": [float(v) for v in (aspect_ratio_range or [0.75, 1.33])],
        "area_range": [float(v) for v in (area_range or [0.05, 1.0])],
        "max_attempts": 100 if max_attempts is None else int(max_attempts),
        "use_image_if_no_bounding_boxes": bool(use_image_if_no_bounding_boxes),
    }
    for key in ("aspect_ratio_range", "area_range"):
        if len(attrs[key]) != 2:
            raise ValueError(f"{key} must contain 2 elements, got {attrs[key]}")
    if attrs["max_attempts"] <= 0:
        raise ValueError(f"max_attempts must be positive: {attrs['max_attempts']}")
    with name_scope(name, "sample_distorted_bounding_box"):
        covered = convert_to_tensor(min_object_covered, dtype=dtypes.float32,
                                    name="min_object_covered")
        op = make_op("SampleDistortedBoundingBoxV2", [image_size, bounding_boxes, covered],
                     attrs)
        return op.outputs[0], op.outputs[1], op.outputs[2]
