"""OpDefs and gradients of ``FractionalMaxPool``, ``FractionalAvgPool``,
``FractionalMaxPoolGrad`` and ``FractionalAvgPoolGrad`` (TF's ``nn_ops.cc``).

Contract: the pools take 4-D ``value`` (float32/float64/int32/int64) and attrs
``pooling_ratio`` (4 floats, the first and last 1), ``pseudo_random``, ``overlapping``,
``deterministic``, ``seed`` and ``seed2``; they output the pooled ``[batch, floor(h / rh),
floor(w / rw), channels]`` and the int64 ``row_pooling_sequence`` and
``col_pooling_sequence`` (one more element than the pooled height and width). They are
stateful: their windows are random, so two nodes are never merged or folded. The gradient of a
pool is its ``*Grad`` op over the node's own sequences; the sequences get no gradient.
"""

from __future__ import annotations

import math
from typing import Any

from tensorweave.api import array_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import with_rank

TYPES = {"T": frozenset({dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64})}
POOL_ATTRS = {"T": REQUIRED, "pooling_ratio": REQUIRED, "pseudo_random": False,
              "overlapping": False, "deterministic": False, "seed": 0, "seed2": 0}


def _pool(ctx: InferContext) -> list[TensorSpec]:
    shape = with_rank(ctx, 0, 4)
    ratio = [float(r) for r in ctx.attr("pooling_ratio")]
    if len(ratio) != 4:
        raise ctx.shape_error("pooling_ratio field must specify 4 dimensions")
    if ratio[0] != 1 or ratio[3] != 1:
        raise ctx.shape_error("Only pooling on height and width is supported.")
    if min(ratio) < 1:
        raise ctx.shape_error(f"pooling_ratio cannot be smaller than 1, got: {min(ratio)}")
    dims = list(shape.dims)
    out = [None if d is None else int(math.floor(d / r)) for d, r in zip(dims, ratio)]
    sequences = [None if d is None else d + 1 for d in out[1:3]]
    return [TensorSpec(ctx.dtype(0), TensorShape([dims[0], out[1], out[2], dims[3]])),
            TensorSpec(dtypes.int64, TensorShape([sequences[0]])),
            TensorSpec(dtypes.int64, TensorShape([sequences[1]]))]


def _max_grad_shape(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(ctx.dtype(0), with_rank(ctx, 0, 4))]


def _avg_grad_shape(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 1)
    value = ctx.constant_value(0)
    shape = TensorShape(None if value is None else [int(d) for d in value])
    return [TensorSpec(ctx.dtype(1), shape.merge_with(TensorShape([None] * 4)))]


def _max_pool_grad(op: Operation, grad: Tensor, *_: Any) -> list[Tensor | None]:
    return [apply("FractionalMaxPoolGrad",
                  [op.inputs[0], op.outputs[0], grad, op.outputs[1], op.outputs[2]],
                  {"overlapping": op.get_attr("overlapping")})]


def _avg_pool_grad(op: Operation, grad: Tensor, *_: Any) -> list[Tensor | None]:
    shape = array_ops.shape(op.inputs[0], out_type=dtypes.int64)
    return [apply("FractionalAvgPoolGrad", [shape, grad, op.outputs[1], op.outputs[2]],
                  {"overlapping": op.get_attr("overlapping")})]


def register(registry: Any) -> None:
    registry.op("FractionalMaxPool", ["value:T"], _pool, attrs=POOL_ATTRS,
                type_constraints=TYPES, stateful=True, grad=_max_pool_grad)
    registry.op("FractionalAvgPool", ["value:T"], _pool, attrs=POOL_ATTRS,
                type_constraints=TYPES, stateful=True, grad=_avg_pool_grad)
    grad_attrs = {"T": REQUIRED, "overlapping": False}
    registry.op("FractionalMaxPoolGrad",
                ["orig_input:T", "orig_output:T", "out_backprop:T",
                 "row_pooling_sequence:int64", "col_pooling_sequence:int64"],
                _max_grad_shape, attrs=grad_attrs, type_constraints=TYPES)
    registry.op("FractionalAvgPoolGrad",
                ["orig_input_tensor_shape:int64", "out_backprop:T",
                 "row_pooling_sequence:int64", "col_pooling_sequence:int64"],
                _avg_grad_shape, attrs=grad_attrs, type_constraints=TYPES)
