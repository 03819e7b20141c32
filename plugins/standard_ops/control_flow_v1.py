"""OpDefs of TF1's conditional primitives (``Switch``, ``Merge``), so that a graph TF1's
``tf.cond`` built (with the ``cond_context`` collection of its meta graph) imports.

Contract: their signatures and shape functions are TF's: ``Switch(data, pred)`` (a bool scalar
`pred`) gives ``output_false`` and ``output_true``, shaped as `data`; ``Merge(inputs)`` gives
``output``, its shape the inputs' where they agree, and the int32 scalar ``value_index``. No
kernel runs them: their dead-branch semantics are not the executor's (tensorweave's own `cond`
is the functional ``If``), so running one fails as a missing kernel does, naming the node; the
rest of an imported graph runs. TF1's loop primitives (``Enter``, ``NextIteration``, ...) are
not declared: a TF1 loop is a cycle, which `import_graph_def` refuses.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape


def _switch(ctx: InferContext) -> list[TensorSpec]:
    if ctx.shape(1).ndims not in (None, 0):
        raise ctx.shape_error(f"Shape must be rank 0 but is rank {ctx.shape(1).ndims}")
    return [TensorSpec(ctx.dtype(0), ctx.shape(0))] * 2


def _merge(ctx: InferContext) -> list[TensorSpec]:
    shape = ctx.shape(0)
    for spec in ctx.inputs[1:]:
        other = spec.shape
        if shape.ndims is None or other.ndims is None or shape.ndims != other.ndims:
            shape = TensorShape(None)
            break
        shape = TensorShape([a if a == b else None for a, b in zip(shape.dims, other.dims)])
    return [TensorSpec(ctx.dtype(0), shape), TensorSpec(dtypes.int32, TensorShape([]))]


def register(registry: Any) -> None:
    registry.op("Switch", ["data:T", "pred:bool"], _switch, attrs={"T": REQUIRED})
    registry.op("Merge", ["inputs:*T"], _merge, attrs={"T": REQUIRED, "N": REQUIRED})
