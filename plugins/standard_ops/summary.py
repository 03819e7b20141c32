"""OpDefs of the TF1 summary ops, as TF's ``logging_ops.cc``.

Contract: each op outputs a scalar `string`, a serialized ``Summary`` protocol buffer.
``ScalarSummary(tags, values)`` makes one simple value per element (tags and values must have
the same shape, checked at run time as in TF); ``HistogramSummary(tag,
values)`` one histogram of all elements; ``ImageSummary(tag, tensor)`` up to ``max_images``
PNG images of a ``[batch, height, width, 1|3|4]`` uint8 / float tensor (its shape checked at
run time, as TF's); ``MergeSummary(inputs)`` the union of its inputs'
values (a duplicate tag is a run-time error). Their kernels run on the host only.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import fixed, with_rank

_REAL = frozenset(dtypes.NUMERIC)


def _histogram_summary(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    return [TensorSpec(dtypes.string, TensorShape([]))]


def register(registry: Any) -> None:
    registry.op("ScalarSummary", ["tags:string", "values:T"], fixed((dtypes.string, [])),
                attrs={"T": REQUIRED}, type_constraints={"T": _REAL})
    registry.op("HistogramSummary", ["tag:string", "values:T"], _histogram_summary,
                attrs={"T": REQUIRED}, type_constraints={"T": _REAL})
    registry.op("ImageSummary", ["tag:string", "tensor:T"], fixed((dtypes.string, [])),
                attrs={"T": REQUIRED, "max_images": 3, "bad_color": [255, 0, 0, 255]},
                type_constraints={"T": frozenset({dtypes.uint8, dtypes.float16, dtypes.float32,
                                                  dtypes.float64})})
    registry.op("MergeSummary", ["inputs:*string"], fixed((dtypes.string, [])),
                attrs={"N": REQUIRED})
