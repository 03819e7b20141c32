"""Gradients of the sparse-tensor ops of ``sparse_ops.py``, as TF's ``sparse_grad.py``.

Contract: ``fn(op, *grads) -> [gradient or None per input]``; indices and shapes get None, and
so do the integer outputs' gradients. The values of a sparse operand receive the output gradient
at their positions (``GatherNd``), ``SparseTensorDenseMatMul`` also differentiates its dense
operand, ``SparseToDense``'s default value gets the gradient of every position no value covers,
``SparseReorder``/``SparseFillEmptyRows`` route each value's gradient back through their
permutation, and ``SparseAdd`` gives each operand entry the gradient at its sum's position
(``SparseAddGrad``). ``SparseReshape`` has integer inputs only and is not differentiable.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply, make_op

Grads = list[Tensor | None]


def _sparse_to_dense_grad(op: Operation, grad: Tensor) -> Grads:
    indices, output_shape, values, _ = op.inputs
    # scalar and vector indices are one index and N one-dimensional indices: make them [N, rank]
    rank = array_ops.size(output_shape)
    matrix = array_ops.reshape(indices, array_ops.stack([-1, math_ops.cast(rank, indices.dtype)]))
    values_grad = array_ops.gather_nd(grad, matrix)
    default_grad = math_ops.reduce_sum(grad) - math_ops.reduce_sum(values_grad)
    if values.shape.ndims == 0:
        values_grad = math_ops.reduce_sum(values_grad)
    return [None, None, values_grad, default_grad]


def _sparse_reorder_grad(op: Operation, _indices_grad: Tensor, values_grad: Tensor) -> Grads:
    indices, _, shape = op.inputs
    entries = math_ops.cast(array_ops.range(array_ops.shape(indices)[0]), dtypes.int64)
    reordered = make_op("SparseReorder", [indices, entries, shape]).outputs[1]
    inverse = array_ops.invert_permutation(reordered)
    return [None, array_ops.gather(values_grad, inverse), None]


def _sparse_dense_matmul_grad(op: Operation, grad: Tensor) -> Grads:
    indices, values, shape, b = op.inputs
    adjoint_a, adjoint_b = op.get_attr("adjoint_a"), op.get_attr("adjoint_b")
    b_grad = apply("SparseTensorDenseMatMul", [indices, values, shape, grad],
                   {"adjoint_a": not adjoint_a})
    if adjoint_b:
        b_grad = array_ops.transpose(b_grad)
    rows, cols = indices[:, 0], indices[:, 1]
    parts_a = array_ops.gather(grad, cols if adjoint_a else rows)
    parts_b = array_ops.gather(array_ops.transpose(b) if adjoint_b else b,
                               rows if adjoint_a else cols)
    values_grad = math_ops.reduce_sum(parts_a * parts_b, axis=1)
    return [None, values_grad, None, b_grad]


def _sparse_reduce_sum_grad(op: Operation, grad: Tensor) -> Grads:
    indices, _, shape, axes = op.inputs
    rank = array_ops.size(shape)
    axes = math_ops.floormod(array_ops.reshape(axes, [-1]), rank)
    reduced = math_ops.reduce_any(
        math_ops.equal(array_ops.expand_dims(array_ops.range(rank), 1),
                       array_ops.expand_dims(axes, 0)), axis=1)
    kept = math_ops.cast(math_ops.logical_not(reduced), dtypes.int64)
    # the gradient laid out with the reduced axes kept as size 1; each value reads its cell
    kept_shape = shape * kept + (1 - kept)
    cells = indices * array_ops.expand_dims(kept, 0)
    return [None, array_ops.gather_nd(array_ops.reshape(grad, kept_shape), cells), None, None]


def _sparse_dense_add_grad(op: Operation, grad: Tensor) -> Grads:
    return [None, array_ops.gather_nd(grad, op.inputs[0]), None, grad]


def _sparse_dense_cwise_grad(is_mul: bool) -> Any:
    """TF's ``_SparseDenseCwiseMulOrDivGrad``: the sparse values' gradient, and the dense
    operand's, summed back over the positions each dense element was broadcast to."""

    def grad_fn(op: Operation, grad: Tensor) -> Grads:
        indices, values, sp_shape, dense = op.inputs
        dense_shape = math_ops.cast(array_ops.shape(dense), dtypes.int64)
        added = array_ops.expand_dims(array_ops.size(sp_shape) - array_ops.size(dense_shape), 0)
        full = array_ops.concat([array_ops.ones(added, dtypes.int64), dense_shape], 0)
        scaled = array_ops.slice(indices // (sp_shape // full),
                                 array_ops.concat([[0], added], 0), [-1, -1])
        picked = array_ops.gather_nd(dense, scaled)
        if is_mul:
            values_grad, dense_values = grad * picked, grad * values
        else:
            values_grad = grad / picked
            dense_values = grad * (-values / math_ops.square(picked))
        # indices can repeat after scaling: a scatter-add, as TF's sparse_add onto zeros
        dense_grad = array_ops.scatter_nd(scaled, dense_values, dense_shape)
        return [None, values_grad, None, dense_grad]

    return grad_fn


def _sparse_add_grad(op: Operation, _indices_grad: Tensor, values_grad: Tensor,
                     _shape_grad: Tensor) -> Grads:
    a_indices, b_indices, sum_indices = op.inputs[0], op.inputs[3], op.outputs[0]
    grads = make_op("SparseAddGrad", [values_grad, a_indices, b_indices, sum_indices]).outputs
    return [None, grads[0], None, None, grads[1], None, None]


def _fill_empty_rows_grad(op: Operation, *grads: Tensor) -> Grads:
    values_grad = grads[1]
    reverse_map = op.outputs[3]
    d_values = array_ops.gather(values_grad, reverse_map)
    d_default = math_ops.reduce_sum(values_grad) - math_ops.reduce_sum(d_values)
    return [None, d_values, None, d_default]


def register_gradients(registry: Any) -> None:
    registry.add("SparseReshape", None)
    for name, fn in {
        "SparseToDense": _sparse_to_dense_grad, "SparseReorder": _sparse_reorder_grad,
        "SparseTensorDenseMatMul": _sparse_dense_matmul_grad,
        "SparseReduceSum": _sparse_reduce_sum_grad,
        "SparseTensorDenseAdd": _sparse_dense_add_grad,
        "SparseFillEmptyRows": _fill_empty_rows_grad, "SparseAdd": _sparse_add_grad,
        "SparseDenseCwiseMul": _sparse_dense_cwise_grad(True),
        "SparseDenseCwiseDiv": _sparse_dense_cwise_grad(False),
    }.items():
        registry.add(name, fn)
