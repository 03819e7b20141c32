"""Gradient functions of the array ops: identity, shapes, joining and splitting, slicing,
gathering, padding and tiling, as TF's ``array_grad.py``.

Contract: each function is ``fn(op, *grads) -> [gradient or None per input]``; index, shape and
mask inputs get ``None``. The gradient of a gather along axis 0 with respect to its params is an
`IndexedSlices` (the incoming gradient's rows at the gathered indices, dense shape the params'
shape), as TF's ``_GatherV2Grad``; along another axis it is dense (``UnsortedSegmentSum`` of the
incoming gradient over the gathered indices). Repeated indices accumulate either way. Identity's
gradient passes `IndexedSlices` through. Ops whose outputs carry no
gradient to a floating input (``Shape``, ``OneHot``, ``Where``, random and variable ops, ...)
are registered as not differentiable, so they stop the flow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.api import array_ops, array_ops_extra, math_ops
from tensorweave.api.gradients import accepts_indexed_slices
from tensorweave.api.indexed_slices import IndexedSlices, to_dense
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant
from tensorweave.engine.graph.graph import Operation, Tensor, constant_value
from tensorweave.engine.graph.op_builder import apply, make_op
from tensorweave.plugins.standard_ops.grad_util import shape, unbroadcast

NOT_DIFFERENTIABLE = (
    "StopGradient", "Shape", "Size", "Rank", "ZerosLike", "OnesLike", "OneHot", "Where",
    "Unique", "Range", "LinSpace", "InvertPermutation", "Assign", "AssignAdd", "AssignSub",
    "IsVariableInitialized", "RandomStandardNormal", "RandomUniform", "RandomUniformInt",
    "TruncatedNormal", "RandomShuffle", "BroadcastGradientArgs",
)

Grads = list[Tensor | None]


@accepts_indexed_slices
def _identity_grad(op: Operation, grad: Tensor) -> Grads:
    return [grad]


def _reshape_grad(op: Operation, grad: Tensor) -> Grads:
    # TF's: back to the input's shape, a constant with a -1 when one dim is unknown (and none
    # is 0, which would leave the -1 undecided), so no Shape op is needed
    dims = op.inputs[0].shape.as_list() if op.inputs[0].shape.ndims is not None else None
    if dims is not None and dims.count(None) == 1 and 0 not in dims:
        return [array_ops.reshape(grad, [-1 if d is None else d for d in dims]), None]
    return [array_ops.reshape(grad, shape(op.inputs[0])), None]


def _squeeze_grad(op: Operation, grad: Tensor) -> Grads:
    return [array_ops.reshape(grad, shape(op.inputs[0]))]


def _transpose_grad(op: Operation, grad: Tensor) -> Grads:
    # TF's: an InvertPermutation op even of a constant perm (shape inference and constant
    # folding see through it)
    return [array_ops.transpose(grad, array_ops.invert_permutation(op.inputs[1])), None]


@accepts_indexed_slices
def _concat_grad(op: Operation, grad: Tensor | IndexedSlices) -> Grads:
    *values, axis = op.inputs
    if len(values) == 1:
        return [grad, None]
    if isinstance(grad, IndexedSlices):
        return [*_concat_slices_grad(values, axis, grad), None]
    # TF's _ConcatGradHelper, its ops in its order: the axis made non-negative (``mod``), the
    # values' shapes (constants when all are known, else one ShapeN), their ConcatOffset and
    # a Slice of each; more than 16 values take one split instead
    axis = axis % array_ops.rank(values[0])
    sizes = [shape(v) for v in values]
    if not all(s.op.type == "Const" for s in sizes):
        sizes = array_ops_extra.shape_n(values)
    if len(sizes) > 16:
        along = array_ops.squeeze(array_ops.slice(array_ops.stack(sizes, axis=1),
                                                  array_ops.stack([axis, 0]), [1, -1]))
        return [*array_ops.split(grad, along, axis=axis, num=len(values)), None]
    offsets = make_op("ConcatOffset", [axis, sizes]).outputs
    return [*(array_ops.slice(grad, begin, size) for begin, size in zip(offsets, sizes)), None]


def _concat_slices_grad(values: list[Tensor], axis: Tensor,
                        grad: IndexedSlices) -> list[IndexedSlices]:
    """The `IndexedSlices` gradient of each concatenated value, as TF's ``_ConcatGradHelper``:
    along axis 0 each value takes the rows that fall in its range, along another axis each
    takes its columns of every row. The axis must be known when the graph is built."""
    axis_value = constant_value(axis)
    if axis_value is None:
        raise ValueError("Can only compute IndexedSlices gradient with statically-known "
                         "concat_dim")
    dim = int(axis_value)
    if dim < 0:
        rank = values[0].shape.ndims
        if rank is None:
            raise ValueError("Can only compute IndexedSlices gradient with negative "
                             "concat_dim when first value rank is statically-known.")
        dim %= rank
    shapes = [shape(v) for v in values]
    out = []
    if dim == 0:
        start = constant(0, dtypes.int32)
        indices = math_ops.cast(grad.indices, dtypes.int32)
        for value_shape in shapes:
            end = start + value_shape[0]
            chosen = array_ops.reshape(array_ops.where(math_ops.logical_and(
                indices >= start, indices < end)), [-1])
            out.append(IndexedSlices(array_ops.gather(grad.values, chosen),
                                     array_ops.gather(grad.indices, chosen)
                                     - math_ops.cast(start, grad.indices.dtype),
                                     value_shape))
            start = end
        return out
    begin = 0
    for value_shape in shapes:
        size = value_shape[dim]
        part = array_ops.gather(grad.values, array_ops.range(begin, begin + size), axis=dim)
        out.append(IndexedSlices(part, grad.indices, value_shape))
        begin = begin + size
    return out


def _pack_grad(op: Operation, grad: Tensor) -> Grads:
    return array_ops.unstack(grad, num=op.get_attr("N"), axis=op.get_attr("axis"))


def _unpack_grad(op: Operation, *grads: Tensor) -> Grads:
    return [array_ops.stack(list(grads), axis=op.get_attr("axis"))]


def _split_grad(op: Operation, *grads: Tensor) -> Grads:
    return [None, array_ops.concat(list(grads), op.inputs[0])]


def _split_v_grad(op: Operation, *grads: Tensor) -> Grads:
    return [array_ops.concat(list(grads), op.inputs[2]), None, None]


def _slice_grad(op: Operation, grad: Tensor) -> Grads:
    x, begin, _ = op.inputs
    begin = math_ops.cast(begin, dtypes.int32)
    after = shape(x) - shape(op.outputs[0]) - begin
    paddings = array_ops.stack([begin, after], axis=1)
    return [array_ops.pad(grad, paddings), None, None]


def _strided_slice_grad(op: Operation, grad: Tensor) -> Grads:
    x, begin, end, strides = op.inputs
    attrs = {k: op.get_attr(k) for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                         "new_axis_mask", "shrink_axis_mask")}
    index_shape = math_ops.cast(shape(x), begin.dtype)
    return [apply("StridedSliceGrad", [index_shape, begin, end, strides, grad], attrs),
            None, None, None]


def _tile_grad(op: Operation, grad: Tensor) -> Grads:
    """TF's ``_TileGrad``, its ops in its order: reshape to interleaved ``[multiple, dim,
    ...]`` and sum over the multiples (the even axes, a ``range``), shaped as the input."""
    x, multiples = op.inputs
    split = array_ops.reshape(array_ops.transpose(array_ops.stack(
        [multiples, array_ops.shape(x, out_type=multiples.dtype)])), [-1])
    axes = array_ops.range(0, array_ops.size(split), 2)
    summed = math_ops.reduce_sum(array_ops.reshape(grad, split), axes)
    summed.set_shape(x.shape)
    return [summed, None]


def _pad_grad(op: Operation, grad: Tensor) -> Grads:
    x, paddings = op.inputs[:2]
    value = constant_value(paddings)
    if value is not None:
        begin: Any = constant(np.asarray(value)[:, 0].astype(np.int32))
    else:
        first = array_ops.slice(paddings, [0, 0], array_ops.stack([array_ops.rank(x), 1]))
        begin = math_ops.cast(array_ops.reshape(first, [-1]), dtypes.int32)
    out = array_ops.slice(grad, begin, shape(x))
    if op.type == "PadV2":
        return [out, None, math_ops.reduce_sum(grad) - math_ops.reduce_sum(out)]
    return [out, None]


@accepts_indexed_slices
def _gather_grad(op: Operation, grad: Tensor | IndexedSlices) -> list[Any]:
    """Along axis 0, the rows of `grad` at the gathered indices as `IndexedSlices`; along
    another axis, their scatter-add into a dense gradient."""
    params, indices, axis = op.inputs
    grad = to_dense(grad)  # a gather of a gather: its rows are what this gather spread out
    if op.get_attr("batch_dims"):
        return [_batch_gather_grad(op, grad), None, None]
    axis = constant_value(axis)
    if axis is not None and int(axis) == 0:
        # The shape is taken where params live, so a ps holding them never sends them.
        with op.graph.colocate_with(params.op):
            params_shape = shape(params)
        size = array_ops.expand_dims(array_ops.size(indices), 0)
        rows = array_ops.concat([size, params_shape[1:]], 0)
        return [IndexedSlices(array_ops.reshape(grad, rows),
                              array_ops.reshape(indices, size), params_shape), None, None]
    rank = params.shape.ndims
    if axis is None or rank is None or indices.shape.ndims is None:
        raise LookupError(f"Gradient of GatherV2 '{op.name}' needs a constant axis and known "
                          "ranks of params and indices")
    axis = int(axis) % rank
    params_shape = shape(params)
    outer = list(range(axis))
    gathered = list(range(axis, axis + indices.shape.ndims))
    inner = list(range(axis + indices.shape.ndims, grad.shape.ndims))
    # Bring the gathered axes first, flatten them into one, scatter-add, then move back.
    values = array_ops.transpose(grad, gathered + outer + inner) if axis else grad
    kept = outer + list(range(axis + 1, rank))  # the params axes the gather keeps
    rest = array_ops.gather(params_shape, kept) if kept else constant([], dtypes.int32)
    values = array_ops.reshape(values, array_ops.concat([[-1], rest], 0))
    flat_indices = array_ops.reshape(indices, [-1])
    size = array_ops.gather(params_shape, axis)
    dense = array_ops.unsorted_segment_sum(values, flat_indices, size)
    if axis:
        dense = array_ops.transpose(dense, [*range(1, axis + 1), 0,
                                            *range(axis + 1, rank)])
    return [dense, None, None]


def _batch_gather_grad(op: Operation, grad: Tensor) -> Tensor:
    """The dense gradient of a GatherV2 with ``batch_dims`` b > 0: each batch's indices are
    offset into one flat range of (batch, gathered axis) rows, so one segment sum serves every
    batch, as TF's ``_BatchGatherGrad``."""
    params, indices, axis = op.inputs
    rank, index_rank = params.shape.ndims, indices.shape.ndims
    axis = constant_value(axis)
    if axis is None or rank is None or index_rank is None:
        raise LookupError(f"Gradient of GatherV2 '{op.name}' needs a constant axis and known "
                          "ranks of params and indices")
    b = op.get_attr("batch_dims") % index_rank
    a = int(axis) % rank
    params_shape = shape(params)
    inner = params_shape[a + 1:]
    # grad is [B, M, K..., I] (B batch, M the axes between, K the index axes, I the rest):
    # fold K into one axis and bring it next to the batch axes: [B, K, M, I].
    values = array_ops.reshape(grad, array_ops.concat([params_shape[:a], [-1], inner], 0))
    values = array_ops.transpose(values, [*range(b), a, *range(b, a), *range(a + 1, rank)])
    values = array_ops.reshape(values, array_ops.concat([[-1], params_shape[b:a], inner], 0))
    batch = math_ops.reduce_prod(params_shape[:b])
    size = params_shape[a]
    offsets = math_ops.cast(array_ops.range(batch) * size, indices.dtype)
    flat = array_ops.reshape(array_ops.reshape(indices, array_ops.stack([batch, -1]))
                             + array_ops.expand_dims(offsets, 1), [-1])
    summed = array_ops.unsorted_segment_sum(values, flat, batch * size)
    summed = array_ops.reshape(summed, array_ops.concat(
        [params_shape[:b], [size], params_shape[b:a], inner], 0))
    return array_ops.transpose(summed, [*range(b), *range(b + 1, a + 1), b, *range(a + 1, rank)])


def _gather_nd_grad(op: Operation, grad: Tensor) -> Grads:
    params, indices = op.inputs
    return [array_ops.scatter_nd(indices, grad, shape(params)), None]


def _scatter_nd_grad(op: Operation, grad: Tensor) -> Grads:
    return [None, array_ops.gather_nd(grad, op.inputs[0]), None]


def _gather_drop_negatives(params: Tensor, ids: Tensor) -> tuple[Tensor, Tensor]:
    """``params[ids]`` with zero rows where an id is negative (dropped), and the mask of kept
    elements, broadcast to the result's shape."""
    gathered = array_ops.gather(params, math_ops.maximum(ids, 0))
    extra = array_ops.reshape(array_ops.rank(gathered) - array_ops.rank(ids), [1])
    mask_shape = array_ops.concat([shape(ids), array_ops.ones(extra, dtypes.int32)], 0)
    kept = array_ops.reshape(math_ops.greater_equal(ids, 0), mask_shape)
    kept = array_ops.broadcast_to(kept, shape(gathered))
    return array_ops.where(kept, gathered, array_ops.zeros_like(gathered)), kept


def _unsorted_segment_sum_grad(op: Operation, grad: Tensor) -> Grads:
    return [_gather_drop_negatives(grad, op.inputs[1])[0], None, None]


def _unsorted_segment_max_grad(op: Operation, grad: Tensor) -> Grads:
    """Shared equally by the elements equal to their segment's maximum, as TF."""
    data, ids, num = op.inputs
    maxima, kept = _gather_drop_negatives(op.outputs[0], ids)
    selected = math_ops.logical_and(math_ops.equal(data, maxima), kept)
    counts = array_ops.unsorted_segment_sum(math_ops.cast(selected, grad.dtype), ids, num)
    shares, _ = _gather_drop_negatives(math_ops.div_no_nan(grad, counts), ids)
    return [array_ops.where(selected, shares, array_ops.zeros_like(shares)), None, None]


def _mirror_pad_grad(op: Operation, grad: Tensor) -> Grads:
    return [apply("MirrorPadGrad", [grad, op.inputs[1]], {"mode": op.get_attr("mode")}), None]


def _select_grad(op: Operation, grad: Tensor) -> Grads:
    cond, t, e = op.inputs
    zeros = array_ops.zeros_like(grad)
    gt, ge = apply(op.type, [cond, grad, zeros]), apply(op.type, [cond, zeros, grad])
    if op.type == "SelectV2":
        gt, _ = unbroadcast(t, op.outputs[0], gt, None)
        ge, _ = unbroadcast(e, op.outputs[0], ge, None)
    return [None, gt, ge]


def _broadcast_to_grad(op: Operation, grad: Tensor) -> Grads:
    gx, _ = unbroadcast(op.inputs[0], op.outputs[0], grad, None)
    return [gx, None]


def _reverse_grad(op: Operation, grad: Tensor) -> Grads:
    return [array_ops.reverse(grad, op.inputs[1]), None]


def _fill_grad(op: Operation, grad: Tensor) -> Grads:
    return [None, math_ops.reduce_sum(grad)]


def _top_k_grad(op: Operation, grad: Tensor, _indices_grad: Tensor | None) -> Grads:
    """The values' gradient scattered back to the positions top-k took them from."""
    x = op.inputs[0]
    indices = op.outputs[1]
    x_shape = shape(x)
    last = array_ops.gather(x_shape, array_ops.rank(x) - 1)
    k = array_ops.gather(shape(indices), array_ops.rank(indices) - 1)
    rows = array_ops.reshape(indices, array_ops.stack([-1, k]))
    offsets = array_ops.expand_dims(array_ops.range(0, array_ops.shape(rows)[0]) * last, -1)
    flat = array_ops.reshape(rows + offsets, [-1, 1])
    total = math_ops.reduce_prod(x_shape)
    dense = array_ops.scatter_nd(flat, array_ops.reshape(grad, [-1]),
                                 array_ops.reshape(total, [1]))
    return [array_ops.reshape(dense, x_shape), None]


def register_gradients(registry: Any) -> None:
    for name in NOT_DIFFERENTIABLE:
        registry.add(name, None)
    for name, fn in {
        "Identity": _identity_grad, "PlaceholderWithDefault": _identity_grad,
        "Reshape": _reshape_grad, "ExpandDims": _reshape_grad, "Squeeze": _squeeze_grad,
        "Transpose": _transpose_grad, "ConcatV2": _concat_grad, "Pack": _pack_grad,
        "Unpack": _unpack_grad, "Split": _split_grad, "SplitV": _split_v_grad,
        "Slice": _slice_grad, "StridedSlice": _strided_slice_grad, "Tile": _tile_grad,
        "Pad": _pad_grad, "PadV2": _pad_grad, "GatherV2": _gather_grad,
        "GatherNd": _gather_nd_grad, "ScatterNd": _scatter_nd_grad,
        "UnsortedSegmentSum": _unsorted_segment_sum_grad,
        "UnsortedSegmentMax": _unsorted_segment_max_grad, "MirrorPad": _mirror_pad_grad,
        "Select": _select_grad,
        "SelectV2": _select_grad, "BroadcastTo": _broadcast_to_grad,
        "ReverseV2": _reverse_grad, "Fill": _fill_grad, "TopKV2": _top_k_grad,
    }.items():
        registry.add(name, fn)
