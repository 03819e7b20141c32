"""``tw.sparse``: the sparse-tensor API under ``tf.sparse``'s names (``tw.sparse.to_dense``,
``tw.sparse.reorder``, ``tw.sparse.sparse_dense_matmul``, ...); the ops themselves live in
`tensorweave.api.sparse_ops`."""

from tensorweave.api import sparse_ops as _ops
from tensorweave.api.sparse_cross_ops import sparse_cross as cross
from tensorweave.api.sparse_cross_ops import sparse_cross_hashed as cross_hashed
from tensorweave.api.sparse_ops import SparseTensor, SparseTensorValue, from_dense

__all__ = [
    "SparseTensor", "SparseTensorValue", "add", "cross", "cross_hashed", "fill_empty_rows",
    "from_dense", "matmul",
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

from tensorweave.api import sparse_ops_extra as _extra  # noqa: E402 - the extra sparse API

__all__ += [
    "concat", "expand_dims", "eye", "mask", "maximum", "merge", "minimum", "reduce_max",
    "reduce_max_sparse", "reduce_sum_sparse", "segment_mean", "segment_sqrt_n", "segment_sum",
    "slice", "softmax", "split", "to_indicator", "transpose",
]
concat = _extra.sparse_concat
expand_dims = _extra.sparse_expand_dims
eye = _extra.sparse_eye
mask = _extra.sparse_mask
maximum = _extra.sparse_maximum
merge = _extra.sparse_merge
minimum = _extra.sparse_minimum
reduce_max = _extra.sparse_reduce_max
reduce_max_sparse = _extra.sparse_reduce_max_sparse
reduce_sum_sparse = _extra.sparse_reduce_sum_sparse
segment_mean = _extra.sparse_segment_mean
segment_sqrt_n = _extra.sparse_segment_sqrt_n
segment_sum = _extra.sparse_segment_sum
slice = _extra.sparse_slice  # noqa: A001 - TF's name
softmax = _extra.sparse_softmax
split = _extra.sparse_split
to_indicator = _extra.sparse_to_indicator
transpose = _extra.sparse_transpose
