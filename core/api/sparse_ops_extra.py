"""The sparse API that `sparse_ops` lacks: ``sparse_concat``, ``sparse_split``, ``sparse_slice``,
``sparse_softmax``, ``sparse_maximum``/``sparse_minimum``, ``sparse_transpose``,
``sparse_mask``, ``sparse_merge``, ``sparse_to_indicator``, ``sparse_reduce_max`` (and the
``_sparse`` reductions), ``sparse_segment_sum``/``mean``/``sqrt_n``, ``sparse_matmul``,
``serialize_sparse``, ``serialize_many_sparse``, ``deserialize_many_sparse`` and
``edit_distance``; ``sparse_expand_dims`` and ``sparse_eye`` are ``tf.sparse.expand_dims`` and
``tf.sparse.eye`` (exported by `tensorweave.sparse` only).

Contract: names, arguments, defaults and errors follow ``tf.compat.v1``. Sparse arguments may be
`SparseTensor`s or `SparseTensorValue`s (`TypeError` otherwise). A returned `SparseTensor` has a
constant dense shape whenever the inputs' static shapes determine it, so its ``shape`` is
static as in TF.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.api import array_ops, math_ops
from tensorweave.api.deprecation import deprecated_argument_lookup
from tensorweave.api.indexed_slices import IndexedSlices
from tensorweave.api.scopes import name_scope
from tensorweave.api.sparse_ops import (
    SPARSE_TYPES,
    _sparse,
    _static_or,
    sparse_reorder,
    sparse_tensor_to_dense,
)
from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor, constant_value
from tensorweave.engine.graph.op_builder import apply, make_op
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "deserialize_many_sparse", "edit_distance", "serialize_many_sparse", "serialize_sparse",
    "sparse_concat", "sparse_mask", "sparse_matmul", "sparse_maximum", "sparse_merge",
    "sparse_minimum", "sparse_reduce_max", "sparse_reduce_max_sparse",
    "sparse_reduce_sum_sparse", "sparse_segment_mean", "sparse_segment_sqrt_n",
    "sparse_segment_sum", "sparse_slice", "sparse_softmax", "sparse_split",
    "sparse_to_indicator", "sparse_transpose",
]


def _with_shape(indices: Tensor, values: Tensor, shape: TensorShape,
                dynamic: Any) -> SparseTensor:
    """A `SparseTensor` whose dense shape is a constant when `shape` is fully known."""
    if shape.is_fully_defined():
        dynamic = np.array(shape.as_list(), np.int64)
    return SparseTensor(indices, values, dynamic)


# -- concat, split, slice --------------------------------------------------------------------

def sparse_concat(axis: Any, sp_inputs: Any, name: str | None = None,
                  expand_nonconcat_dim: bool = False, concat_dim: Any = None,
                  expand_nonconcat_dims: bool | None = None) -> SparseTensor:
    """The `SparseTensor`s of `sp_inputs` joined along `axis`, entries sorted row-major. With
    `expand_nonconcat_dim` the other dimensions may differ and become their maximum."""
    expand = bool(expand_nonconcat_dims or expand_nonconcat_dim)
    axis = deprecated_argument_lookup("axis", axis, "concat_dim", concat_dim)
    if not isinstance(sp_inputs, list):
        raise TypeError("Inputs must be a list")
    if not sp_inputs:
        raise ValueError("Must provide at least one SparseTensor")
    inputs = [_sparse(sp) for sp in sp_inputs]
    if len(inputs) == 1:
        return inputs[0]
    statics = [sp.get_shape() for sp in inputs]
    rank = next((s.ndims for s in statics if s.ndims is not None), None)
    if rank is not None and not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for SparseTensors of rank {rank}")
    shapes = [sp.dense_shape for sp in inputs]
    with name_scope(name, "SparseConcat", [sp.values for sp in inputs]) as scope:
        if expand:
            stacked = array_ops.stack(shapes)
            widest = math_ops.reduce_max(stacked, axis=0)
            # every input takes the widest size on every dimension but the concatenated one
            chosen = math_ops.cast(math_ops.equal(
                array_ops.range(array_ops.size(widest)),
                math_ops.floormod(axis, array_ops.size(widest))), dtypes.int64)
            shapes = [shape * chosen + widest * (1 - chosen) for shape in shapes]
        op = make_op("SparseConcat", [[sp.indices for sp in inputs],
                                      [sp.values for sp in inputs], shapes],
                     {"concat_dim": int(axis)}, name=scope)
        static = _concat_shape(statics, axis, expand)
        return _with_shape(op.outputs[0], op.outputs[1], static, op.outputs[2])


def _concat_shape(statics: list[TensorShape], axis: int, expand: bool) -> TensorShape:
    if any(s.ndims is None for s in statics):
        return TensorShape(None)
    rank = statics[0].ndims
    axis %= rank
    dims: list[int | None] = []
    for d in range(rank):
        sizes = [s[d] for s in statics]
        if None in sizes:
            dims.append(None)
        elif d == axis:
            dims.append(sum(sizes))
        elif expand:
            dims.append(max(sizes))
        else:
            if len(set(sizes)) > 1:
                raise ValueError(f"Dimensions {sizes[0]} and "
                                 f"{next(x for x in sizes if x != sizes[0])} are not compatible")
            dims.append(sizes[0])
    return TensorShape(dims)


class KeywordRequired:
    """The default of `sparse_split`'s first parameter, so the others must be named."""

    def __repr__(self) -> str:
        return ""


def sparse_split(keyword_required: Any = KeywordRequired(), sp_input: Any = None,
                 num_split: int | None = None, axis: Any = None, name: str | None = None,
                 split_dim: Any = None) -> list[SparseTensor]:
    """`sp_input` split along `axis` into `num_split` pieces; the first ``size % num_split``
    pieces are one longer, as TF."""
    if not isinstance(keyword_required, KeywordRequired):
        raise ValueError("Keyword arguments are required for this function.")
    if sp_input is None:
        raise ValueError("sp_input is required")
    if num_split is None:
        raise ValueError("num_split is required")
    if axis is None and split_dim is None:
        raise ValueError("axis is required")
    axis = deprecated_argument_lookup("axis", axis, "split_dim", split_dim)
    sp_input = _sparse(sp_input)
    with name_scope(name, "SparseSplit", [sp_input.values]) as scope:
        dim = axis if isinstance(axis, Tensor) else np.int64(axis)
        op = make_op("SparseSplit", [dim, sp_input.indices, sp_input.values,
                                     sp_input.dense_shape], {"num_split": int(num_split)},
                     name=scope)
        k = int(num_split)
        return [SparseTensor(op.outputs[i], op.outputs[k + i], op.outputs[2 * k + i])
                for i in range(k)]


def sparse_slice(sp_input: Any, start: Any, size: Any,
                 name: str | None = None) -> SparseTensor:
    """The entries of `sp_input` inside the box ``[start, start + size)``, shifted by
    `start`; the dense shape is the box clipped to the input's."""
    sp_input = _sparse(sp_input)
    start = math_ops.cast(convert_to_tensor(start), dtypes.int64)
    size = math_ops.cast(convert_to_tensor(size), dtypes.int64)
    with name_scope(name, "SparseSlice", [sp_input.values]) as scope:
        op = make_op("SparseSlice", [sp_input.indices, sp_input.values, sp_input.dense_shape,
                                     start, size], name=scope)
        begin, extent = constant_value(start), constant_value(size)
        static = sp_input.get_shape()
        if begin is None or extent is None or not static.is_fully_defined():
            return SparseTensor(op.outputs[0], op.outputs[1], op.outputs[2])
        dims = [max(0, min(b + s, d) - b) for b, s, d in
                zip(np.ravel(begin).tolist(), np.ravel(extent).tolist(), static.as_list())]
        return _with_shape(op.outputs[0], op.outputs[1], TensorShape(dims), op.outputs[2])


# -- elementwise -----------------------------------------------------------------------------

def sparse_softmax(sp_input: Any, name: str | None = None) -> SparseTensor:
    """Softmax over the entries present in each innermost row of `sp_input` (rank >= 2); the
    implicit zeros take no part."""
    sp_input = _sparse(sp_input)
    with name_scope(name, "SparseSoftmax", [sp_input.indices, sp_input.values]):
        values = apply("SparseSoftmax", [sp_input.indices, sp_input.values,
                                         sp_input.dense_shape])
        return SparseTensor(sp_input.indices, values, _static_or(sp_input))


def _sparse_pick(op_type: str, sp_a: Any, sp_b: Any, name: str | None) -> SparseTensor:
    sp_a, sp_b = _sparse(sp_a), _sparse(sp_b)
    with name_scope(name, op_type, [sp_a.values, sp_b.values]) as scope:
        op = make_op(op_type, [sp_a.indices, sp_a.values, sp_a.dense_shape, sp_b.indices,
                               sp_b.values, sp_b.dense_shape], name=scope)
        return SparseTensor(op.outputs[0], op.outputs[1], _static_or(sp_a))


def sparse_maximum(sp_a: Any, sp_b: Any, name: str | None = None) -> SparseTensor:
    """The elementwise maximum over both operands' entries (a missing one counts as 0)."""
    return _sparse_pick("SparseSparseMaximum", sp_a, sp_b, name)


def sparse_minimum(sp_a: Any, sp_b: Any, name: str | None = None) -> SparseTensor:
    """The elementwise minimum over both operands' entries (a missing one counts as 0)."""
    return _sparse_pick("SparseSparseMinimum", sp_a, sp_b, name)


# -- layout ----------------------------------------------------------------------------------

def sparse_transpose(sp_input: Any, perm: Any = None, name: str | None = None) -> SparseTensor:
    """`sp_input` with dimensions permuted by `perm` (reversed by default), reordered."""
    sp_input = _sparse(sp_input)
    with name_scope(name, "SparseTranspose", [sp_input]):
        static = sp_input.get_shape()
        if perm is None:
            if static.ndims is not None:
                perm = np.arange(static.ndims - 1, -1, -1, dtype=np.int32)
            else:
                rank = array_ops.size(sp_input.dense_shape)
                perm = array_ops.range(rank - 1, -1, -1)
        known = constant_value(perm) if isinstance(perm, Tensor) else np.asarray(perm)
        indices = array_ops.gather(sp_input.indices, perm, axis=1)
        if known is not None and static.is_fully_defined():
            old = static.as_list()
            dense_shape: Any = np.array([old[int(p)] for p in known], np.int64)
        else:
            dense_shape = array_ops.gather(sp_input.dense_shape, perm)
        return sparse_reorder(SparseTensor(indices, sp_input.values, dense_shape))


def sparse_expand_dims(sp_input: Any, axis: Any = None, name: str | None = None) -> SparseTensor:
    """`sp_input` with a size-1 dimension inserted at `axis` (default -1, the end)."""
    sp_input = _sparse(sp_input)
    axis = -1 if axis is None else axis
    if not isinstance(axis, (int, np.integer, Tensor)):
        raise TypeError("axis must be an int32 tensor")
    with name_scope(name, "expand_dims", [sp_input]):
        static = sp_input.get_shape()
        if isinstance(axis, Tensor) or static.ndims is None:
            rank = math_ops.cast(array_ops.size(sp_input.dense_shape), dtypes.int32)
            at = array_ops.where(axis >= 0, axis, axis + rank + 1)
            at = array_ops.reshape(at, [1])
            ones = convert_to_tensor(np.array([1], np.int64))
            shape = array_ops.concat([array_ops.slice(sp_input.dense_shape, [0], at), ones,
                                      array_ops.slice(sp_input.dense_shape, at, [-1])], 0)
            rows = array_ops.shape(sp_input.indices)[:1]
            column = array_ops.zeros(array_ops.concat([rows, [1]], 0), dtypes.int64)
            indices = array_ops.concat([
                array_ops.slice(sp_input.indices, array_ops.concat([[0], [0]], 0),
                                array_ops.concat([[-1], at], 0)),
                column,
                array_ops.slice(sp_input.indices, array_ops.concat([[0], at], 0), [-1, -1])], 1)
            return SparseTensor(indices, sp_input.values, shape)
        rank = static.ndims
        if not -rank - 1 <= int(axis) <= rank:
            raise ValueError(f"axis {axis} is out of range for a SparseTensor of rank {rank}")
        at = int(axis) % (rank + 1)
        column = array_ops.zeros_like(sp_input.indices[:, :1])
        indices = array_ops.concat([sp_input.indices[:, :at], column,
                                    sp_input.indices[:, at:]], 1)
        dims = list(static.dims)
        dims.insert(at, 1)
        dynamic = array_ops.concat([sp_input.dense_shape[:at], np.array([1], np.int64),
                                    sp_input.dense_shape[at:]], 0)
        return _with_shape(indices, sp_input.values, TensorShape(dims), dynamic)


def sparse_eye(num_rows: Any, num_columns: Any = None, dtype: Any = dtypes.float32,
               name: str | None = None) -> SparseTensor:
    """The sparse ``[num_rows, num_columns]`` identity matrix (square by default)."""
    with name_scope(name, "eye", [num_rows, num_columns]):
        rows = math_ops.cast(convert_to_tensor(num_rows, name="num_rows"), dtypes.int64)
        cols = rows if num_columns is None else math_ops.cast(
            convert_to_tensor(num_columns, name="num_columns"), dtypes.int64)
        diagonal = array_ops.range(math_ops.minimum(rows, cols), dtype=dtypes.int64)
        shape = array_ops.stack([rows, cols])
        known = (constant_value(rows), constant_value(cols))
        if known[0] is not None and known[1] is not None:
            shape = np.array([int(known[0]), int(known[1])], np.int64)
        return SparseTensor(array_ops.stack([diagonal, diagonal], axis=1),
                            array_ops.ones(array_ops.size(diagonal, out_type=dtypes.int32),
                                           dtype=dtype), shape)


# -- masks and indicators --------------------------------------------------------------------

def sparse_mask(a: IndexedSlices, mask_indices: Any, name: str | None = None) -> IndexedSlices:
    """The slices of `a` whose index is not in `mask_indices`, in their order."""
    with name_scope(name, "sparse_mask", [a.values, a.indices, mask_indices]) as scope:
        indices = a.indices
        mask = convert_to_tensor(mask_indices, indices.dtype)
        masked = math_ops.reduce_any(math_ops.equal(array_ops.expand_dims(indices, 1),
                                                    array_ops.expand_dims(mask, 0)), axis=1)
        kept = array_ops.reshape(array_ops.where(math_ops.logical_not(masked)), [-1])
        return IndexedSlices(array_ops.gather(a.values, kept, name=scope),
                             array_ops.gather(indices, kept), a.dense_shape)


def sparse_merge(sp_ids: Any, sp_values: Any, vocab_size: Any, name: str | None = None,
                 already_sorted: bool = False) -> SparseTensor:
    """`sp_values` re-indexed on its last dimension by the ids of `sp_ids` (a list of
    `SparseTensor`s with a list of sizes for several id dimensions), of size `vocab_size`."""
    if isinstance(sp_ids, SPARSE_TYPES):
        sp_ids = [sp_ids]
        if not isinstance(vocab_size, (Tensor, int, np.integer)):
            raise TypeError(f"vocab_size has to be a Tensor or Python int. Found "
                            f"{type(vocab_size)}")
        vocab_size = [vocab_size]
    else:
        if not isinstance(sp_ids, (list, tuple)):
            raise TypeError(f"sp_ids has to be a SparseTensor or list thereof. Found "
                            f"{type(sp_ids)}")
        if not isinstance(vocab_size, (list, tuple)):
            raise TypeError(f"vocab_size has to be a list of Tensors or Python ints. Found "
                            f"{type(vocab_size)}")
        if len(sp_ids) != len(vocab_size):
            raise ValueError("sp_ids and vocab_size have to have equal lengths.")
    with name_scope(name, "SparseMerge", [sp_values]):
        id_columns = []
        for ids in sp_ids:
            values = _sparse(ids).values
            if values.dtype != dtypes.int64:
                values = math_ops.cast(values, dtypes.int64)
            id_columns.append(array_ops.expand_dims(values, 1))
        sp_values = _sparse(sp_values)
        sizes = [math_ops.cast(array_ops.reshape(convert_to_tensor(v), [1]), dtypes.int64)
                 for v in vocab_size]
        indices = array_ops.concat([sp_values.indices[:, :-1], *id_columns], 1)
        shape = array_ops.concat([sp_values.dense_shape[:-1], *sizes], 0)
        merged = SparseTensor(indices, sp_values.values, shape)
        if already_sorted:
            return merged
        ordered = sparse_reorder(merged)
        return SparseTensor(ordered.indices, ordered.values, shape)


def sparse_to_indicator(sp_input: Any, vocab_size: Any, name: str | None = None) -> Tensor:
    """A bool tensor of `sp_input`'s shape with its last dimension replaced by `vocab_size`:
    true at each ``[..., id]`` for the ids `sp_input` holds in that row."""
    sp_input = _sparse(sp_input)
    with name_scope(name, "SparseToIndicator", [sp_input]) as scope:
        flags = array_ops.fill(array_ops.shape(sp_input.values), True)
        merged = sparse_merge(sp_input, SparseTensor(sp_input.indices, flags,
                                                     sp_input.dense_shape), vocab_size)
        # repeated ids are allowed: several entries may set one indicator
        return sparse_tensor_to_dense(merged, default_value=False, validate_indices=False,
                                      name=scope)


# -- reductions ------------------------------------------------------------------------------

def _reduction_args(sp_input: SparseTensor, axis: Any, keepdims: Any, reduction_axes: Any,
                    keep_dims: Any) -> tuple[Any, bool]:
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    axis = deprecated_argument_lookup("axis", axis, "reduction_axes", reduction_axes)
    if axis is None:
        rank = sp_input.dense_shape.shape[0]
        axis = np.arange(rank, dtype=np.int32) if rank is not None else array_ops.range(
            math_ops.cast(array_ops.size(sp_input.dense_shape), dtypes.int32))
    elif not isinstance(axis, Tensor):
        axis = np.asarray(axis, np.int32)
    return axis, bool(keepdims)


def sparse_reduce_max(sp_input: Any, axis: Any = None, keepdims: bool | None = None,
                      reduction_axes: Any = None, keep_dims: bool | None = None) -> Tensor:
    """The max of the values present over `axis` (all axes if None), as a dense tensor; a
    position with no values is 0, as TF."""
    sp_input = _sparse(sp_input)
    axis, keepdims = _reduction_args(sp_input, axis, keepdims, reduction_axes, keep_dims)
    return apply("SparseReduceMax", [sp_input.indices, sp_input.values, sp_input.dense_shape,
                                     axis], {"keep_dims": keepdims})


def _reduce_sparse(op_type: str, sp_input: Any, axis: Any, keepdims: Any, reduction_axes: Any,
                   keep_dims: Any) -> SparseTensor:
    sp_input = _sparse(sp_input)
    axis, keepdims = _reduction_args(sp_input, axis, keepdims, reduction_axes, keep_dims)
    op = make_op(op_type, [sp_input.indices, sp_input.values, sp_input.dense_shape, axis],
                 {"keep_dims": keepdims})
    return SparseTensor(op.outputs[0], op.outputs[1], op.outputs[2])


def sparse_reduce_max_sparse(sp_input: Any, axis: Any = None, keepdims: bool | None = None,
                             reduction_axes: Any = None,
                             keep_dims: bool | None = None) -> SparseTensor:
    """`sparse_reduce_max` as a `SparseTensor` of the positions that held values."""
    return _reduce_sparse("SparseReduceMaxSparse", sp_input, axis, keepdims, reduction_axes,
                          keep_dims)


def sparse_reduce_sum_sparse(sp_input: Any, axis: Any = None, keepdims: bool | None = None,
                             reduction_axes: Any = None,
                             keep_dims: bool | None = None) -> SparseTensor:
    """``sparse_reduce_sum`` as a `SparseTensor` of the positions that held values."""
    return _reduce_sparse("SparseReduceSumSparse", sp_input, axis, keepdims, reduction_axes,
                          keep_dims)


# -- segment reductions ----------------------------------------------------------------------

def _sparse_segment(op_type: str, data: Any, indices: Any, segment_ids: Any, name: str | None,
                    num_segments: Any) -> Tensor:
    data = convert_to_tensor(data, name="data")
    indices = convert_to_tensor(indices, name="indices")
    segment_ids = convert_to_tensor(segment_ids, name="segment_ids")
    if num_segments is None:
        return apply(op_type, [data, indices, segment_ids], name=name or op_type)
    if isinstance(num_segments, (int, np.integer)) and num_segments < 0:
        raise ValueError("Cannot specify a negative value for num_segments")
    return apply(f"{op_type}WithNumSegments", [data, indices, segment_ids, num_segments],
                 name=name or f"{op_type}WithNumSegments")


def sparse_segment_sum(data: Any, indices: Any, segment_ids: Any, name: str | None = None,
                       num_segments: Any = None) -> Tensor:
    """Row ``s`` is the sum of the rows ``data[indices[i]]`` with ``segment_ids[i] == s``
    (sorted ids); `num_segments` fixes the number of rows."""
    return _sparse_segment("SparseSegmentSum", data, indices, segment_ids, name, num_segments)


def sparse_segment_mean(data: Any, indices: Any, segment_ids: Any, name: str | None = None,
                        num_segments: Any = None) -> Tensor:
    """`sparse_segment_sum` divided by each segment's row count."""
    return _sparse_segment("SparseSegmentMean", data, indices, segment_ids, name, num_segments)


def sparse_segment_sqrt_n(data: Any, indices: Any, segment_ids: Any, name: str | None = None,
                          num_segments: Any = None) -> Tensor:
    """`sparse_segment_sum` divided by the square root of each segment's row count."""
    return _sparse_segment("SparseSegmentSqrtN", data, indices, segment_ids, name, num_segments)


def sparse_matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False,
                  a_is_sparse: bool = False, b_is_sparse: bool = False,
                  name: str | None = None) -> Tensor:
    """The float32 matrix product ``a @ b``; the sparsity hints are attrs of the op."""
    return apply("SparseMatMul", [a, b], {
        "transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b),
        "a_is_sparse": bool(a_is_sparse), "b_is_sparse": bool(b_is_sparse)},
        name=name or "SparseMatMul")


# -- serialization ---------------------------------------------------------------------------

def serialize_sparse(sp_input: Any, name: str | None = None,
                     out_type: Any = dtypes.string) -> Tensor:
    """`sp_input` as a string ``[3]`` vector of serialized ``TensorProto``s (TF's format)."""
    sp_input = _sparse(sp_input)
    return apply("SerializeSparse", [sp_input.indices, sp_input.values, sp_input.dense_shape],
                 {"out_type": dtypes.as_dtype(out_type)}, name=name or "SerializeSparse")


def serialize_many_sparse(sp_input: Any, name: str | None = None,
                          out_type: Any = dtypes.string) -> Tensor:
    """One `serialize_sparse` row ``[3]`` per entry of `sp_input`'s first dimension."""
    sp_input = _sparse(sp_input)
    return apply("SerializeManySparse",
                 [sp_input.indices, sp_input.values, sp_input.dense_shape],
                 {"out_type": dtypes.as_dtype(out_type)}, name=name or "SerializeManySparse")


def deserialize_many_sparse(serialized_sparse: Any, dtype: Any, rank: int | None = None,
                            name: str | None = None) -> SparseTensor:
    """The `SparseTensor` of rank ``rank`` stacking the rows of `serialized_sparse`, each
    row's number as the first index."""
    op = make_op("DeserializeManySparse", [serialized_sparse],
                 {"dtype": dtypes.as_dtype(dtype)}, name=name or "DeserializeManySparse")
    indices, values, shape = op.outputs
    if rank is not None:
        indices.set_shape([None, rank])
        shape.set_shape([rank])
    return SparseTensor(indices, values, shape)


def edit_distance(hypothesis: Any, truth: Any, normalize: bool = True,
                  name: str = "edit_distance") -> Tensor:
    """The Levenshtein distance between the sequences of `hypothesis` and `truth` (over their
    last dimension), divided by the truth's length when `normalize`."""
    if not isinstance(hypothesis, SPARSE_TYPES):
        raise TypeError("Hypothesis must be a SparseTensor.")
    if not isinstance(truth, SPARSE_TYPES):
        raise TypeError("Truth must be a SparseTensor.")
    hypothesis, truth = _sparse(hypothesis), _sparse(truth)
    return apply("EditDistance", [hypothesis.indices, hypothesis.values, hypothesis.dense_shape,
                                  truth.indices, truth.values, truth.dense_shape],
                 {"normalize": bool(normalize)}, name=name)
