"""OpDefs of the bounding-box image ops: ``NonMaxSuppressionV2``/``V3``,
``DrawBoundingBoxes``/``V2`` and ``SampleDistortedBoundingBoxV2``.

Contract: names, inputs, attrs and dtypes follow TF. Non-max suppression takes `boxes`
``[num_boxes, 4]`` (any two opposite corners) and `scores` ``[num_boxes]``, both
float16/float32, an int32 scalar `max_output_size` and float32 scalar thresholds, and outputs an
int32 vector of selected indices whose length is known only at run time. Drawing takes
float16/float32 ``images [batch, h, w, depth]``, `boxes` ``[batch, n, 4]`` of the same dtype and
(V2) float32 RGBA `colors` ``[k, 4]``, and outputs the images' shape. Sampling takes an integer
``image_size`` ``[3]``, float32 ``bounding_boxes [batch, n, 4]`` and a float32 scalar
``min_object_covered``, is stateful (seeded by ``seed``/``seed2``), and outputs ``begin`` and
``size`` (``image_size``'s dtype, 3 elements) and float32 ``bboxes [1, 1, 4]``.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import with_rank

BOX_TYPES = {"T": frozenset({dtypes.float16, dtypes.float32})}


def _nms(ctx: InferContext) -> list[TensorSpec]:
    boxes = with_rank(ctx, 0, 2)
    scores = with_rank(ctx, 1, 1)
    if boxes.dims[1] is not None and boxes.dims[1] != 4:
        raise ctx.shape_error(f"Dimension must be 4 but is {boxes.dims[1]}")
    if None not in (boxes.dims[0], scores.dims[0]) and boxes.dims[0] != scores.dims[0]:
        raise ctx.shape_error(f"Dimensions must be equal, but are {boxes.dims[0]} and "
                              f"{scores.dims[0]}")
    for i in range(2, len(ctx.inputs)):
        with_rank(ctx, i, 0)
    return [TensorSpec(dtypes.int32, TensorShape([None]))]


def _draw(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 4)
    boxes = with_rank(ctx, 1, 3)
    if boxes.dims[2] is not None and boxes.dims[2] != 4:
        raise ctx.shape_error(f"Dimension must be 4 but is {boxes.dims[2]}")
    return [ctx.inputs[0]]


def _sample(ctx: InferContext) -> list[TensorSpec]:
    size = with_rank(ctx, 0, 1)
    if size.dims[0] is not None and size.dims[0] != 3:
        raise ctx.shape_error(f"Dimension must be 3 but is {size.dims[0]}")
    boxes = with_rank(ctx, 1, 3)
    if boxes.dims[2] is not None and boxes.dims[2] != 4:
        raise ctx.shape_error(f"Dimension must be 4 but is {boxes.dims[2]}")
    with_rank(ctx, 2, 0)
    vector = TensorSpec(ctx.dtype(0), TensorShape([3]))
    return [vector, vector, TensorSpec(dtypes.float32, TensorShape([1, 1, 4]))]


def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
    base = ["boxes:T", "scores:T", "max_output_size:int32", "iou_threshold:float32"]
    registry.op("NonMaxSuppressionV2", base, _nms, attrs={"T": REQUIRED},
                type_constraints=BOX_TYPES)
    registry.op("NonMaxSuppressionV3", [*base, "score_threshold:float32"], _nms,
                attrs={"T": REQUIRED}, type_constraints=BOX_TYPES)
    registry.op("DrawBoundingBoxes", ["images:T", "boxes:T"], _draw, attrs={"T": REQUIRED},
                type_constraints=BOX_TYPES)
    registry.op("DrawBoundingBoxesV2", ["images:T", "boxes:T", "colors:float32"], _draw,
                attrs={"T": REQUIRED}, type_constraints=BOX_TYPES)
    registry.op("SampleDistortedBoundingBoxV2",
                ["image_size:T", "bounding_boxes:float32", "min_object_covered:float32"],
                _sample, stateful=True,
                attrs={"T": REQUIRED, "seed": 0, "seed2": 0,
                       "aspect_ratio_range": [0.75, 1.33], "area_range": [0.05, 1.0],
                       "max_attempts": 100, "use_image_if_no_bounding_boxes": False},
                type_constraints={"T": frozenset({dtypes.uint8, dtypes.int8, dtypes.int16,
                                                  dtypes.int32, dtypes.int64})})
