"""Gradients of the ops of ``sparse_extra.py``, with the maths of TF's ``sparse_grad.py`` and
``math_grad.py``.

Contract: ``fn(op, *grads) -> [gradient or None per input]``; indices, shapes, ids and counts
get None. ``SparseSlice`` routes each sliced value's gradient back to its input entry
(``SparseSliceGrad``); ``SparseSoftmax`` is softmax's gradient over each row's present entries;
the sparse segment reductions scatter their gradient back to the rows ``indices`` names (a sum
by ``UnsortedSegmentSum``, a mean and a sqrt-n by ``SparseSegmentMeanGrad``/``SqrtNGrad``);
``SparseMatMul`` differentiates as ``MatMul``, passing the sparsity hints on (a ``ReluGrad``
gradient counts as sparse, as TF guesses). ``SparseConcat`` and ``EditDistance`` are not
differentiable, and ``SparseSparseMaximum``/``Minimum`` raise `NotImplementedError`, as TF.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply

Grads = list[Tensor | None]


def _sparse_slice_grad(op: Operation, *grads: Tensor) -> Grads:
    values_grad = apply("SparseSliceGrad",
                        [grads[1], op.inputs[0], op.inputs[3], op.outputs[0]])
    return [None, values_grad, None, None, None]


def _sparse_softmax_grad(op: Operation, grad: Tensor) -> Grads:
    """``(g - sum(g * softmax)) * softmax`` over the entries of each row."""
    indices, _, shape = op.inputs
    softmax = op.outputs[0]
    row_sums = apply("SparseReduceSum", [indices, softmax * grad, shape, [-1]],
                     {"keep_dims": True})
    # each entry reads its row's sum at the kept last dimension's index 0
    cells = array_ops.concat([indices[:, :-1], array_ops.zeros_like(indices[:, -1:])], 1)
    return [None, (grad - array_ops.gather_nd(row_sums, cells)) * softmax, None]


def _sparse_binary_grad(op: Operation, *grads: Tensor) -> Grads:
    raise NotImplementedError(f"Gradient for {op.type} is currently not implemented yet.")


def _segment_sum_grad(op: Operation, grad: Tensor) -> Grads:
    data, indices, ids = op.inputs[:3]
    rows = array_ops.shape(data)[0]
    data_grad = array_ops.unsorted_segment_sum(array_ops.gather(grad, ids), indices, rows)
    return [data_grad] + [None] * (len(op.inputs) - 1)


def _scaled_segment_grad(grad_op: str) -> Any:
    def gradient(op: Operation, grad: Tensor) -> Grads:
        data, indices, ids = op.inputs[:3]
        rows = array_ops.shape(data)[0]
        data_grad = apply(grad_op, [grad, indices, ids, rows])
        return [data_grad] + [None] * (len(op.inputs) - 1)

    return gradient


def _sparse_matmul_grad(op: Operation, grad: Tensor) -> Grads:
    a, b = op.inputs
    t_a, t_b = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    sparse = {a: op.get_attr("a_is_sparse"), b: op.get_attr("b_is_sparse"),
              grad: grad.op.type == "ReluGrad"}

    def product(x: Tensor, y: Tensor, transpose_x: bool = False,
                transpose_y: bool = False) -> Tensor:
        return apply("SparseMatMul", [x, y], {
            "transpose_a": transpose_x, "transpose_b": transpose_y,
            "a_is_sparse": sparse[x], "b_is_sparse": sparse[y]})

    if not t_a and not t_b:
        return [product(grad, b, transpose_y=True), product(a, grad, transpose_x=True)]
    if not t_a:
        return [product(grad, b), product(grad, a, transpose_x=True)]
    if not t_b:
        return [product(b, grad, transpose_y=True), product(a, grad)]
    return [product(b, grad, True, True), product(grad, a, True, True)]


def register_gradients(registry: Any) -> None:
    for name in ("SparseConcat", "EditDistance"):
        registry.add(name, None)
    registry.add("SparseSlice", _sparse_slice_grad)
    registry.add("SparseSoftmax", _sparse_softmax_grad)
    registry.add("SparseSparseMaximum", _sparse_binary_grad)
    registry.add("SparseSparseMinimum", _sparse_binary_grad)
    registry.add("SparseMatMul", _sparse_matmul_grad)
    for suffix in ("", "WithNumSegments"):
        registry.add(f"SparseSegmentSum{suffix}", _segment_sum_grad)
        registry.add(f"SparseSegmentMean{suffix}", _scaled_segment_grad("SparseSegmentMeanGrad"))
        registry.add(f"SparseSegmentSqrtN{suffix}",
                     _scaled_segment_grad("SparseSegmentSqrtNGrad"))
