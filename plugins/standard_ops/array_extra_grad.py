"""Gradient functions of the ``array_extra`` ops, with the maths of TF's ``array_grad.py``,
``data_flow_grad.py`` and ``manip_grad.py``.

Contract: each function is ``fn(op, *grads) -> [gradient or None per input]``. Each
rearranging op's gradient is its inverse rearrangement of the incoming gradient
(``SpaceToDepth`` <-> ``DepthToSpace``, ``SpaceToBatchND`` <-> ``BatchToSpaceND``, a roll by the
negated shift, the same sequence reversal). ``DynamicPartition``'s gradient stitches the
partitions' gradients back to the positions they came from; ``DynamicStitch``'s gathers, for
every data input, the rows of the gradient its indices address (so a row written twice gets its
gradient twice, as in TF). Index, shape and sampling ops are not differentiable.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.api import array_ops_extra as extra
from tensorweave.api.gradients import accepts_indexed_slices
from tensorweave.api.indexed_slices import IndexedSlices
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.plugins.standard_ops.grad_util import shape

NOT_DIFFERENTIABLE = (
    "LowerBound", "UpperBound", "UniqueWithCounts", "UniqueV2", "ListDiff", "UnravelIndex",
    "ShapeN", "ConcatOffset", "BroadcastArgs", "HistogramFixedWidth", "Bitcast", "Multinomial",
)

Grads = list[Any]


def _depth_attrs(op: Operation) -> dict[str, Any]:
    return {"block_size": op.get_attr("block_size"), "data_format": op.get_attr("data_format")}


def _space_to_depth_grad(op: Operation, grad: Tensor) -> Grads:
    return [apply("DepthToSpace", [grad], _depth_attrs(op))]


def _depth_to_space_grad(op: Operation, grad: Tensor) -> Grads:
    return [apply("SpaceToDepth", [grad], _depth_attrs(op))]


def _space_to_batch_nd_grad(op: Operation, grad: Tensor) -> Grads:
    return [extra.batch_to_space_nd(grad, op.inputs[1], op.inputs[2]), None, None]


def _batch_to_space_nd_grad(op: Operation, grad: Tensor) -> Grads:
    return [extra.space_to_batch_nd(grad, op.inputs[1], op.inputs[2]), None, None]


def _space_to_batch_grad(op: Operation, grad: Tensor) -> Grads:
    block = {"block_size": op.get_attr("block_size")}
    return [apply("BatchToSpace", [grad, op.inputs[1]], block), None]


def _batch_to_space_grad(op: Operation, grad: Tensor) -> Grads:
    block = {"block_size": op.get_attr("block_size")}
    return [apply("SpaceToBatch", [grad, op.inputs[1]], block), None]


def _dynamic_partition_grad(op: Operation, *grads: Tensor) -> Grads:
    """Partition the positions of `data`'s leading elements as the data was partitioned, then
    stitch the partitions' gradients back to those positions."""
    data, partitions = op.inputs
    prefix = shape(partitions)
    positions = array_ops.reshape(array_ops.range(math_ops.reduce_prod(prefix)), prefix)
    partitioned = extra.dynamic_partition(positions, partitions, op.get_attr("num_partitions"))
    stitched = extra.dynamic_stitch(partitioned, list(grads))
    return [array_ops.reshape(stitched, shape(data)), None]


@accepts_indexed_slices
def _dynamic_stitch_grad(op: Operation, grad: Tensor | IndexedSlices) -> Grads:
    n = len(op.inputs) // 2
    if isinstance(grad, IndexedSlices):
        rows = array_ops.shape(op.outputs[0])[0]
        grad = array_ops.unsorted_segment_sum(grad.values, grad.indices, rows)
    values = [array_ops.gather(grad, math_ops.cast(i, dtypes.int32)) for i in op.inputs[:n]]
    return [None] * n + values


def _reverse_sequence_grad(op: Operation, grad: Tensor) -> Grads:
    return [extra.reverse_sequence(grad, op.inputs[1], seq_axis=op.get_attr("seq_dim"),
                                   batch_axis=op.get_attr("batch_dim")), None]


def _roll_grad(op: Operation, grad: Tensor) -> Grads:
    _, shift, axis = op.inputs
    return [extra.roll(grad, math_ops.negative(shift), axis), None, None]


def register_gradients(registry: Any) -> None:
    for name in NOT_DIFFERENTIABLE:
        registry.add(name, None)
    for name, fn in {
        "SpaceToDepth": _space_to_depth_grad, "DepthToSpace": _depth_to_space_grad,
        "SpaceToBatchND": _space_to_batch_nd_grad, "BatchToSpaceND": _batch_to_space_nd_grad,
        "SpaceToBatch": _space_to_batch_grad, "BatchToSpace": _batch_to_space_grad,
        "DynamicPartition": _dynamic_partition_grad, "DynamicStitch": _dynamic_stitch_grad,
        "ParallelDynamicStitch": _dynamic_stitch_grad,
        "ReverseSequence": _reverse_sequence_grad, "Roll": _roll_grad,
    }.items():
        registry.add(name, fn)
