"""OpDefs of the TensorList ops that a loop's gradient records its iterations with, as TF's
``while_v2`` accumulators: ``EmptyTensorList``, ``TensorListPushBack`` and
``TensorListPopBack``.

Contract: a list is a `variant` scalar. ``EmptyTensorList(element_shape: shape_type,
max_num_elements: int32)`` (attrs ``element_dtype``, ``shape_type`` int32 or int64) gives an
empty list of ``element_dtype`` elements of `element_shape` (``-1``, a scalar: any shape; a
``-1`` dim: any size). ``TensorListPushBack(input_handle, tensor: element_dtype)`` gives the list
with `tensor` appended; ``TensorListPopBack(input_handle, element_shape: int32)`` gives the list
without its last element, and that element (of `element_shape` statically). A list is a value:
pushing onto or popping from one leaves it as it was, so the ops are pure (merged and folded as
any); each costs O(1), whatever the list's length. A handle must be a scalar and
`element_shape` a scalar or a vector (`ValueError`). None is differentiable here (TF's
gradients of these ops are not built).
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import with_rank, with_rank_at_most

LIST = TensorSpec(dtypes.variant, TensorShape([]))


def element_shape(value: Any) -> TensorShape:
    """The shape an ``element_shape`` value names (``-1``: unknown rank; ``-1`` dims: unknown)."""
    if value is None or value.ndim == 0:
        return TensorShape(None)
    return TensorShape([None if d < 0 else int(d) for d in value.tolist()])


def _empty(ctx: InferContext) -> list[TensorSpec]:
    with_rank_at_most(ctx, 0, 1)
    with_rank(ctx, 1, 0)
    return [LIST]


def _push_back(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    return [LIST]


def _pop_back(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    with_rank_at_most(ctx, 1, 1)
    return [LIST, TensorSpec(ctx.attr("element_dtype"), element_shape(ctx.constant_value(1)))]


def register(registry: Any) -> None:
    registry.op("EmptyTensorList", ["element_shape:shape_type", "max_num_elements:int32"],
                _empty, attrs={"element_dtype": REQUIRED, "shape_type": dtypes.int32})
    registry.op("TensorListPushBack", ["input_handle:variant", "tensor:element_dtype"],
                _push_back, attrs={"element_dtype": REQUIRED})
    registry.op("TensorListPopBack", ["input_handle:variant", "element_shape:int32"],
                _pop_back, attrs={"element_dtype": REQUIRED})


def register_gradients(registry: Any) -> None:
    for name in ("EmptyTensorList", "TensorListPushBack", "TensorListPopBack"):
        registry.add(name, None)
