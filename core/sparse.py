"""``tw.sparse``: the sparse-tensor API under ``tf.sparse``'s names (``tw.sparse.to_dense``,
``tw.sparse.reorder``, ``tw.sparse.sparse_dense_matmul``, ...); the ops themselves live in
`tensorweave.api.sparse_ops`."""

from tensorweave.api import sparse_ops as _ops
from tensorweave.api.sparse_ops import SparseTensor, SparseTensorValue, from_dense

__all__ = [
    "SparseTensor", "SparseTensorValue", "add", "fill_empty_rows", "from_dense", "matmul",
    "placeholder", "reduce_sum", "reorder", "reshape", "retain", "sparse_dense_matmul",
    "to_dense",
]

add = _ops.sparse_add
fill_empty_rows = _ops.sparse_fill_empty_rows
placeholder = _ops.sparse_placeholder
reduce_sum = _ops.sparse_reduce_sum
reorder = _ops.sparse_reorder
reshape = _ops.sparse_reshape
retain = _ops.sparse_retain
sparse_dense_matmul = matmul = _ops.sparse_tensor_dense_matmul
to_dense = _ops.sparse_tensor_to_dense
