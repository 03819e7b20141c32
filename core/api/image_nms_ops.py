"""``tw.image`` non-max suppression variants and glimpses, with ``tf.compat.v1.image``'s names
and signatures.

Contract: `non_max_suppression_padded` builds ``NonMaxSuppressionV4`` and returns
``(selected_indices, valid_outputs)``: the indices of greedy NMS, padded with zeros to
`max_output_size` when `pad_to_max_output_size`, and how many are real.
`non_max_suppression_with_scores` builds ``NonMaxSuppressionV5`` and returns
``(selected_indices, selected_scores)``; a positive `soft_nms_sigma` turns on TF's Gaussian
soft-NMS, which decays the scores of overlapping boxes instead of dropping them (a box is still
dropped when its IoU reaches `iou_threshold`). `extract_glimpse` builds ``ExtractGlimpse``:
windows of ``size = [height, width]`` at ``offsets [batch, (y, x)]``, filled with noise where
they leave the image.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import make_op

__all__ = ["extract_glimpse", "non_max_suppression_padded", "non_max_suppression_with_scores"]


def non_max_suppression_padded(boxes: Any, scores: Any, max_output_size: Any,
                               iou_threshold: Any = 0.5, score_threshold: Any = float("-inf"),
                               pad_to_max_output_size: bool = False,
                               name: str | None = None) -> tuple[Tensor, Tensor]:
    """``(selected_indices, valid_outputs)`` of greedy non-max suppression."""
    with name_scope(name, "non_max_suppression_padded"):
        iou_threshold = convert_to_tensor(iou_threshold, dtype=dtypes.float32,
                                          name="iou_threshold")
        score_threshold = convert_to_tensor(score_threshold, dtype=dtypes.float32,
                                            name="score_threshold")
        op = make_op("NonMaxSuppressionV4",
                     [boxes, scores, max_output_size, iou_threshold, score_threshold],
                     {"pad_to_max_output_size": bool(pad_to_max_output_size)})
        return op.outputs[0], op.outputs[1]


def non_max_suppression_with_scores(boxes: Any, scores: Any, max_output_size: Any,
                                    iou_threshold: Any = 0.5,
                                    score_threshold: Any = float("-inf"),
                                    soft_nms_sigma: Any = 0.0,
                                    name: str | None = None) -> tuple[Tensor, Tensor]:
    """``(selected_indices, selected_scores)`` of (soft) non-max suppression."""
    with name_scope(name, "non_max_suppression_with_scores"):
        boxes = convert_to_tensor(boxes, name="boxes")
        iou_threshold = convert_to_tensor(iou_threshold, dtype=boxes.dtype,
                                          name="iou_threshold")
        score_threshold = convert_to_tensor(score_threshold, dtype=boxes.dtype,
                                            name="score_threshold")
        soft_nms_sigma = convert_to_tensor(soft_nms_sigma, dtype=boxes.dtype,
                                           name="soft_nms_sigma")
        op = make_op("NonMaxSuppressionV5",
                     [boxes, scores, max_output_size, iou_threshold, score_threshold,
                      soft_nms_sigma], {"pad_to_max_output_size": False})
        return op.outputs[0], op.outputs[1]


def extract_glimpse(input: Any, size: Any, offsets: Any, centered: bool = True,  # noqa: A002
                    normalized: bool = True, uniform_noise: bool = True,
                    name: str | None = None) -> Tensor:
    """Glimpses ``[batch, height, width, channels]`` of the float32 images `input`."""
    return make_op("ExtractGlimpse", [input, size, offsets],
                   {"centered": bool(centered), "normalized": bool(normalized),
                    "uniform_noise": bool(uniform_noise)},
                   name=name or "ExtractGlimpse").outputs[0]
