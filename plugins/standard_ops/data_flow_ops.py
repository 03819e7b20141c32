"""OpDefs of TF1 queues (TF's V2 queue ops) and ``CountUpTo``, the epoch counter of the input
producers.

Contract: a queue op (``FIFOQueueV2``, ``PaddingFIFOQueueV2``, ``RandomShuffleQueueV2``,
``PriorityQueueV2``) gives a string scalar handle naming the queue in its device's resource
store (tensorweave has no resource dtype). Every op that uses the queue takes that handle as
input 0, declared a ref input, so the placer keeps it on the queue's device whatever its own
device scope says. The element ops take their components as a list input whose dtypes the
``Tcomponents`` attr repeats (checked here); dequeue ops give one output per ``component_types``
entry, with unknown shapes (the Python `QueueBase` sets the static shapes it knows). A priority
queue's ``component_types`` and ``shapes`` leave out the int64 scalar priority that leads every
element (so they may be empty, and ``shapes`` is required, as TF's), while the element and
dequeue ops' types include it. ``n`` of ``QueueDequeueManyV2`` and
``QueueDequeueUpToV2`` is an int32 scalar. ``CountUpTo(ref)`` increments an int32/int64 variable
and gives its old value. All are stateful: never merged, folded or pruned into one.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import (
    no_outputs,
    unchanged,
    with_rank,
    with_rank_at_least,
)

QUEUE_OPS = ("FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2", "PriorityQueueV2")


def _handle(ctx: InferContext) -> list[TensorSpec]:
    types = ctx.attr("component_types")
    if not isinstance(types, (list, tuple)) or (not types and ctx.op != "PriorityQueueV2"):
        raise ctx.type_error("attr 'component_types' must be a non-empty list of dtypes")
    shapes = ctx.attr("shapes")
    if shapes and len(shapes) != len(types):
        raise ctx.type_error(f"{len(shapes)} shapes for {len(types)} component types: give "
                             "one shape per component, or none")
    return [TensorSpec(dtypes.string, TensorShape([]))]


def _check_handle(ctx: InferContext) -> None:
    with_rank(ctx, 0, 0)


def _enqueue(ctx: InferContext) -> list[TensorSpec]:
    _check_handle(ctx)
    given = [s.dtype for s in ctx.inputs[1:]]
    if list(ctx.attr("Tcomponents")) != given:
        raise ctx.type_error(f"attr Tcomponents is {[t.name for t in ctx.attr('Tcomponents')]}"
                             f" but the components are {[t.name for t in given]}")
    if not given:
        raise ctx.type_error("an element needs at least one component")
    return []


def _enqueue_many(ctx: InferContext) -> list[TensorSpec]:
    specs = _enqueue(ctx)
    for i in range(1, len(ctx.inputs)):
        with_rank_at_least(ctx, i, 1)
    return specs


def _dequeue(ctx: InferContext) -> list[TensorSpec]:
    _check_handle(ctx)
    types = ctx.attr("component_types")
    if not isinstance(types, (list, tuple)) or not types:
        raise ctx.type_error("attr 'component_types' must be a non-empty list of dtypes")
    return [TensorSpec(t, TensorShape(None)) for t in types]


def _dequeue_n(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 1, 0)
    return _dequeue(ctx)


def _scalar(dtype: dtypes.DType) -> Any:
    def infer(ctx: InferContext) -> list[TensorSpec]:
        _check_handle(ctx)
        return [TensorSpec(dtype, TensorShape([]))]

    return infer


def _handle_only(ctx: InferContext) -> list[TensorSpec]:
    _check_handle(ctx)
    return no_outputs(ctx)


def register(registry: Any) -> None:
    queue = {"component_types": REQUIRED, "shapes": [], "capacity": -1, "container": "",
             "shared_name": ""}
    registry.op("FIFOQueueV2", [], _handle, stateful=True, attrs=queue)
    registry.op("PaddingFIFOQueueV2", [], _handle, stateful=True, attrs=queue)
    registry.op("RandomShuffleQueueV2", [], _handle, stateful=True,
                attrs={**queue, "min_after_dequeue": 0, "seed": 0, "seed2": 0})
    registry.op("PriorityQueueV2", [], _handle, stateful=True,
                attrs={**queue, "component_types": [], "shapes": REQUIRED})
    element = {"Tcomponents": REQUIRED, "timeout_ms": -1}
    registry.op("QueueEnqueueV2", ["handle:string", "components:*"], _enqueue, stateful=True,
                ref_inputs=(0,), attrs=element)
    registry.op("QueueEnqueueManyV2", ["handle:string", "components:*"], _enqueue_many,
                stateful=True, ref_inputs=(0,), attrs=element)
    dequeue = {"component_types": REQUIRED, "timeout_ms": -1}
    registry.op("QueueDequeueV2", ["handle:string"], _dequeue, stateful=True, ref_inputs=(0,),
                list_output=True, attrs=dequeue)
    for name in ("QueueDequeueManyV2", "QueueDequeueUpToV2"):
        registry.op(name, ["handle:string", "n:int32"], _dequeue_n, stateful=True,
                    ref_inputs=(0,), list_output=True, attrs=dequeue)
    registry.op("QueueCloseV2", ["handle:string"], _handle_only, stateful=True,
                ref_inputs=(0,), attrs={"cancel_pending_enqueues": False})
    registry.op("QueueSizeV2", ["handle:string"], _scalar(dtypes.int32), stateful=True,
                ref_inputs=(0,))
    registry.op("QueueIsClosedV2", ["handle:string"], _scalar(dtypes.bool_), stateful=True,
                ref_inputs=(0,))
    registry.op("CountUpTo", ["ref:T"], unchanged, stateful=True, ref_inputs=(0,),
                attrs={"T": REQUIRED, "limit": REQUIRED},
                type_constraints={"T": frozenset({dtypes.int32, dtypes.int64})})
