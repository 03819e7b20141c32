"""OpDefs of ``NonMaxSuppressionV4`` (padded hard NMS) and ``NonMaxSuppressionV5`` (NMS with
scores and TF's Gaussian soft-NMS).

Contract, as TF 1.15: both take float16/float32 `boxes` ``[num_boxes, 4]`` and `scores`
``[num_boxes]`` and an int32 scalar `max_output_size`; V4's `iou_threshold` and
`score_threshold` are float32 scalars, V5's thresholds and `soft_nms_sigma` are scalars of the
boxes' dtype. V4 outputs int32 ``selected_indices`` and the int32 scalar ``valid_outputs``; V5
outputs ``selected_indices``, ``selected_scores`` (the boxes' dtype) and ``valid_outputs``. With
``pad_to_max_output_size`` and a constant `max_output_size` the selections have that static
length; otherwise it is known at run time only.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.image_box import BOX_TYPES, _nms


def _selection_length(ctx: InferContext) -> int | None:
    size = ctx.constant_value(2)
    return int(size) if ctx.attr("pad_to_max_output_size") and size is not None else None


def _nms_v4(ctx: InferContext) -> list[TensorSpec]:
    _nms(ctx)
    return [TensorSpec(dtypes.int32, TensorShape([_selection_length(ctx)])),
            TensorSpec(dtypes.int32, TensorShape([]))]


def _nms_v5(ctx: InferContext) -> list[TensorSpec]:
    _nms(ctx)
    shape = TensorShape([_selection_length(ctx)])
    return [TensorSpec(dtypes.int32, shape), TensorSpec(ctx.dtype(0), shape),
            TensorSpec(dtypes.int32, TensorShape([]))]


def register(registry: Any) -> None:
    base = ["boxes:T", "scores:T", "max_output_size:int32"]
    registry.op("NonMaxSuppressionV4",
                [*base, "iou_threshold:float32", "score_threshold:float32"], _nms_v4,
                attrs={"T": REQUIRED, "pad_to_max_output_size": False},
                type_constraints=BOX_TYPES)
    registry.op("NonMaxSuppressionV5",
                [*base, "iou_threshold:T", "score_threshold:T", "soft_nms_sigma:T"], _nms_v5,
                attrs={"T": REQUIRED, "pad_to_max_output_size": False},
                type_constraints=BOX_TYPES)
