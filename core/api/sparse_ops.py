"""Sparse-tensor API: ``sparse_placeholder``, ``sparse_tensor_to_dense``, ``sparse_to_dense``,
``sparse_reorder``, ``sparse_reshape``, ``sparse_tensor_dense_matmul``, ``sparse_reduce_sum``,
``sparse_add`` (sparse + dense), ``sparse_retain``, ``sparse_fill_empty_rows``,
``from_dense`` and ``embedding_lookup_sparse``.

Contract: names, arguments, defaults and errors follow ``tf.compat.v1`` (the ``tf.sparse``
spellings live in ``tensorweave.sparse``). A sparse argument may be a `SparseTensor` or a
`SparseTensorValue`; anything else raises `TypeError`. Ops that return a sparse tensor give a
`SparseTensor` whose dense shape is a constant when it is statically known. Sparse operands run
as their three component tensors, so they place, partition and travel like any other tensors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.api import array_ops, math_ops, segment_ops
from tensorweave.api.control_flow_ops import identity
from tensorweave.api.deprecation import deprecated_argument_lookup
from tensorweave.api.nn_ops import embedding_lookup
from tensorweave.api.scopes import name_scope
from tensorweave.api.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.api.state_ops import placeholder, placeholder_with_default
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor, constant_value
from tensorweave.engine.graph.op_builder import apply, make_op
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "SparseTensor", "SparseTensorValue", "convert_to_tensor_or_sparse_tensor", "sparse_add",
    "sparse_fill_empty_rows", "sparse_placeholder", "sparse_reduce_sum", "sparse_reorder",
    "sparse_reshape", "sparse_retain", "sparse_tensor_dense_matmul", "sparse_tensor_to_dense",
    "sparse_to_dense",
]

SPARSE_TYPES = (SparseTensor, SparseTensorValue)
COMBINERS = ("mean", "sqrtn", "sum")


def _sparse(sp_input: Any) -> SparseTensor:
    if isinstance(sp_input, SparseTensorValue):
        return SparseTensor.from_value(sp_input)
    if not isinstance(sp_input, SparseTensor):
        raise TypeError("Input must be a SparseTensor.")
    return sp_input


def convert_to_tensor_or_sparse_tensor(value: Any, dtype: Any = None,
                                       name: str | None = None) -> Tensor | SparseTensor:
    """A `SparseTensor` for a sparse value (`ValueError` if its dtype is not `dtype`), else
    `convert_to_tensor` of it."""
    if isinstance(value, SPARSE_TYPES):
        value = _sparse(value)
        if dtype is not None and value.dtype != dtypes.as_dtype(dtype):
            raise RuntimeError(f"Sparse dtype: requested = {dtypes.as_dtype(dtype).name}, "
                               f"actual = {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype, name=name)


def sparse_placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> SparseTensor:
    """A `SparseTensor` of three placeholders (``name/indices``, ``name/values``,
    ``name/shape``); a given `shape` (None or -1 for unknown sizes) is the dense shape's
    default and the static shape."""
    shape_name = None if name is None else f"{name}/shape"
    static = None if shape is None or isinstance(shape, Tensor) else TensorShape(shape)
    if shape is None or static is not None and static.ndims is None:
        rank = None
        dense_shape = placeholder(dtypes.int64, [None], name=shape_name)
    else:
        if isinstance(shape, Tensor):
            rank = shape.shape[0]
            value = constant_value(shape)
            static = None if value is None else TensorShape([int(d) for d in value])
            default = shape
        else:
            rank = static.ndims
            default = convert_to_tensor(
                np.array([-1 if d is None else d for d in static.dims], np.int64),
                name=None if name is None else f"{name}/shape_default")
        # a placeholder with a default stays feedable, as a sparse feed sets all three parts
        dense_shape = placeholder_with_default(default, [rank], name=shape_name)
    sp = SparseTensor(
        indices=placeholder(dtypes.int64, [None, rank],
                            name=None if name is None else f"{name}/indices"),
        values=placeholder(dtype, [None], name=None if name is None else f"{name}/values"),
        dense_shape=dense_shape)
    sp._dense_shape_default = static
    return sp


def sparse_tensor_to_dense(sp_input: Any, default_value: Any = 0, validate_indices: bool = True,
                           name: str | None = None) -> Tensor:
    sp_input = _sparse(sp_input)
    return sparse_to_dense(sp_input.indices, sp_input.dense_shape, sp_input.values,
                           default_value, validate_indices, name)


def sparse_to_dense(sparse_indices: Any, output_shape: Any, sparse_values: Any,
                    default_value: Any = 0, validate_indices: bool = True,
                    name: str | None = None) -> Tensor:
    values = convert_to_tensor(sparse_values)
    return apply("SparseToDense", [sparse_indices, output_shape, values, default_value],
                 {"validate_indices": bool(validate_indices)}, name=name or "SparseToDense")


def _static_or(sp_input: SparseTensor) -> Any:
    """The dense shape as a constant when statically known, else a copy of the tensor."""
    shape = sp_input.get_shape()
    if shape.is_fully_defined():
        return np.array(shape.as_list(), np.int64)
    return identity(sp_input.dense_shape)


def sparse_reorder(sp_input: Any, name: str | None = None) -> SparseTensor:
    sp_input = _sparse(sp_input)
    op = make_op("SparseReorder", [sp_input.indices, sp_input.values, sp_input.dense_shape],
                 name=name or "SparseReorder")
    return SparseTensor(op.outputs[0], op.outputs[1], _static_or(sp_input))


def sparse_reshape(sp_input: Any, shape: Any, name: str | None = None) -> SparseTensor:
    """`sp_input` with the dense shape `shape` (one -1 allowed); a mismatch of known sizes
    raises `ValueError` here, as TF."""
    sp_input = _sparse(sp_input)
    shape = math_ops.cast(shape, dtypes.int64)
    with name_scope(name, "SparseReshape", [sp_input.values]) as scope:
        op = make_op("SparseReshape", [sp_input.indices, sp_input.dense_shape, shape],
                     name=scope)
        new_shape: Any = op.outputs[1]
        target = constant_value(shape)
        if target is not None and sp_input.get_shape().is_fully_defined():
            target = [int(d) for d in np.ravel(target)]
            if target.count(-1) > 1:
                raise ValueError(f"At most one dimension can be inferred (-1). Found: {target}")
            size = int(np.prod(sp_input.get_shape().as_list()))
            inferred = list(target)
            if -1 in target:
                known = int(np.prod([d for d in target if d != -1]))
                inferred[target.index(-1)] = size // known if known else 0
            if int(np.prod(inferred)) != size:
                raise ValueError(f"Cannot reshape a tensor with {size} elements to shape "
                                 f"{target} ({int(np.prod(inferred))} elements).")
            new_shape = np.array(inferred, np.int64)
        return SparseTensor(op.outputs[0], identity(sp_input.values), new_shape)


def sparse_tensor_dense_matmul(sp_a: Any, b: Any, adjoint_a: bool = False,
                               adjoint_b: bool = False, name: str | None = None) -> Tensor:
    sp_a = _sparse(sp_a)
    with name_scope(name, "SparseTensorDenseMatMul", [sp_a.indices, sp_a.values, b]):
        b = convert_to_tensor(b, name="b")
        return apply("SparseTensorDenseMatMul", [sp_a.indices, sp_a.values, sp_a.dense_shape, b],
                     {"adjoint_a": bool(adjoint_a), "adjoint_b": bool(adjoint_b)})


def sparse_reduce_sum(sp_input: Any, axis: Any = None, keepdims: bool | None = None,
                      reduction_axes: Any = None, keep_dims: bool | None = None,
                      name: str | None = None) -> Tensor:
    """The sum of `sp_input`'s values over `axis` (all axes if None), as a dense tensor."""
    sp_input = _sparse(sp_input)
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    axis = deprecated_argument_lookup("axis", axis, "reduction_axes", reduction_axes)
    if axis is None:
        rank = sp_input.dense_shape.shape[0]
        axis = np.arange(rank, dtype=np.int32) if rank is not None else apply(
            "Range", [np.int32(0), math_ops.cast(array_ops.size(sp_input.dense_shape),
                                                  dtypes.int32), np.int32(1)])
    elif not isinstance(axis, Tensor):
        axis = np.asarray(axis, np.int32)
    return apply("SparseReduceSum",
                 [sp_input.indices, sp_input.values, sp_input.dense_shape, axis],
                 {"keep_dims": bool(keepdims)}, name=name or "SparseReduceSum")


def sparse_add(a: Any, b: Any, thresh: Any = 0, name: str | None = None) -> Any:
    """Two `SparseTensor`s: their `SparseTensor` sum, without the sums whose magnitude is
    below `thresh`. A `SparseTensor` and a dense tensor (either order): a dense tensor of the
    dense operand's shape."""
    if not isinstance(a, SPARSE_TYPES) and not isinstance(b, SPARSE_TYPES):
        raise TypeError("At least one input should be SparseTensor; do you mean to use "
                        "tf.add()?")
    if isinstance(a, SPARSE_TYPES) and isinstance(b, SPARSE_TYPES):
        a, b = _sparse(a), _sparse(b)
        thresh = convert_to_tensor(thresh, a.dtype, name="thresh")
        op = make_op("SparseAdd", [a.indices, a.values, a.dense_shape, b.indices, b.values,
                                   b.dense_shape, thresh], name=name or "SparseAdd")
        a.get_shape().assert_is_compatible_with(b.get_shape())
        static = a.get_shape().merge_with(b.get_shape())
        shape = np.array(static.as_list(), np.int64) if static.is_fully_defined() \
            else op.outputs[2]
        return SparseTensor(op.outputs[0], op.outputs[1], shape)
    sp, dense = (_sparse(a), b) if isinstance(a, SPARSE_TYPES) else (_sparse(b), a)
    return apply("SparseTensorDenseAdd", [sp.indices, sp.values, sp.dense_shape, dense],
                 name=name or "SparseTensorDenseAdd")


def sparse_retain(sp_input: Any, to_retain: Any) -> SparseTensor:
    """The entries of `sp_input` where the bool vector `to_retain` is true."""
    sp_input = _sparse(sp_input)
    to_retain = convert_to_tensor(to_retain)
    retain_shape = to_retain.shape.with_rank(1)
    values_shape = sp_input.values.shape
    if not TensorShape(values_shape[:1]).is_compatible_with(retain_shape):
        raise ValueError(f"Dimensions {values_shape[0]} and {retain_shape[0]} are not "
                         "compatible")
    where_true = array_ops.reshape(array_ops.where(to_retain), [-1])
    return SparseTensor(array_ops.gather(sp_input.indices, where_true),
                        array_ops.gather(sp_input.values, where_true),
                        identity(sp_input.dense_shape))


def sparse_fill_empty_rows(sp_input: Any, default_value: Any,
                           name: str | None = None) -> tuple[SparseTensor, Tensor]:
    """`sp_input` with `default_value` at ``[row, 0, ...]`` of every empty row, and the bool
    vector of which rows were empty."""
    sp_input = _sparse(sp_input)
    with name_scope(name, "SparseFillEmptyRows", [sp_input.values]):
        default_value = convert_to_tensor(default_value, sp_input.dtype)
        op = make_op("SparseFillEmptyRows", [sp_input.indices, sp_input.values,
                                             sp_input.dense_shape, default_value])
        return SparseTensor(op.outputs[0], op.outputs[1], sp_input.dense_shape), op.outputs[2]


def from_dense(tensor: Any, name: str | None = None) -> SparseTensor:
    """The `SparseTensor` of `tensor`'s non-zero elements."""
    with name_scope(name, "dense_to_sparse", [tensor]):
        tensor = convert_to_tensor(tensor)
        zero = convert_to_tensor(np.zeros((), tensor.dtype.np_type))
        indices = array_ops.where(math_ops.not_equal(tensor, zero))
        return SparseTensor(indices, array_ops.gather_nd(tensor, indices),
                            array_ops.shape(tensor, out_type=dtypes.int64))


def embedding_lookup_sparse(params: Any, sp_ids: Any, sp_weights: Any,
                            partition_strategy: str = "mod", name: str | None = None,
                            combiner: str | None = None, max_norm: Any = None) -> Tensor:
    """Per row of `sp_ids`, the `combiner` ("mean", "sqrtn" or "sum") of the embeddings of its
    ids, weighted by `sp_weights` (None: all 1). Row ``i`` of the result is that of
    ``sp_ids``'s row ``i``, for rows up to the last one holding an id; an empty row before it is
    0, or NaN for a weighted "mean"/"sqrtn" (0 / 0), as in TF."""
    combiner = "mean" if combiner is None else combiner
    if combiner not in COMBINERS:
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError("sp_ids must be SparseTensor")
    if sp_weights is not None:
        if not isinstance(sp_weights, SparseTensor):
            raise TypeError("sp_weights must be either None or SparseTensor")
        sp_ids.values.shape.assert_is_compatible_with(sp_weights.values.shape)
        sp_ids.indices.shape.assert_is_compatible_with(sp_weights.indices.shape)
        sp_ids.dense_shape.shape.assert_is_compatible_with(sp_weights.dense_shape.shape)
    shards = list(params) if isinstance(params, (list, tuple)) else [params]
    with name_scope(name, "embedding_lookup_sparse", [*shards, sp_ids.values]) as scope:
        segment_ids = math_ops.cast(sp_ids.indices[:, 0], dtypes.int32)
        ids, idx = array_ops.unique(sp_ids.values)
        embeddings = embedding_lookup(shards, ids, partition_strategy=partition_strategy,
                                      max_norm=max_norm)
        original = embeddings.dtype
        if original == dtypes.float16:
            embeddings = math_ops.cast(embeddings, dtypes.float32)
        embeddings = array_ops.gather(embeddings, idx)
        if sp_weights is None:
            weights = array_ops.ones_like(segment_ids, dtype=embeddings.dtype)
        else:
            weights = math_ops.cast(sp_weights.values, embeddings.dtype)
            embeddings = embeddings * _broadcastable(weights, embeddings)
        total = segment_ops.segment_sum(embeddings, segment_ids)
        if combiner == "sum":
            out = total
        else:
            per_row = weights if combiner == "mean" else math_ops.square(weights)
            norm = segment_ops.segment_sum(per_row, segment_ids)
            if sp_weights is None:  # TF's sparse_segment_mean/_sqrt_n: an empty row gives 0
                norm = math_ops.maximum(norm, 1.0)
            if combiner == "sqrtn":
                norm = math_ops.sqrt(norm)
            out = math_ops.divide(total, _broadcastable(norm, total))
        if out.dtype != original:
            out = math_ops.cast(out, original)
        return identity(out, name=scope)


def _broadcastable(weights: Tensor, like: Tensor) -> Tensor:
    """A vector reshaped to ``[N, 1, ...]`` so it multiplies `like`'s rows."""
    rank = like.shape.ndims
    if rank is not None:
        return array_ops.reshape(weights, [-1] + [1] * (rank - 1))
    ones = array_ops.ones(array_ops.expand_dims(array_ops.rank(like) - 1, 0), dtypes.int32)
    return array_ops.reshape(weights, array_ops.concat([[-1], ones], 0))


# -- operators ----------------------------------------------------------------------------------
# TF overloads ``*``, ``/`` and Python 2's ``div`` on SparseTensor (a dense right operand,
# broadcast to the sparse shape; no reflected forms): the result keeps the sparse indices.


def _sparse_dense_operator(op_name: str, op_type: str, true_division: bool = False) -> Any:
    def operator(sp: SparseTensor, y: Any) -> SparseTensor:
        with name_scope(None, op_name, [sp, y]) as scope:
            values = sp.values
            if true_division:
                other = convert_to_tensor(y, name="y")
                if other.dtype != values.dtype:
                    raise TypeError(f"x and y must have the same dtype, got "
                                    f"{values.dtype!r} != {other.dtype!r}")
                target = math_ops._TRUEDIV_FLOAT.get(values.dtype)
                if target is not None:
                    values, other = math_ops.cast(values, target), math_ops.cast(other, target)
            else:
                other = convert_to_tensor(y, dtype=values.dtype, name="y")
            out = apply(op_type, [sp.indices, values, sp.dense_shape, other], name=scope)
            return SparseTensor(sp.indices, out, sp.dense_shape)

    operator.__name__ = f"__{op_name}__"
    return operator


SparseTensor.__mul__ = _sparse_dense_operator("mul", "SparseDenseCwiseMul")
SparseTensor.__div__ = _sparse_dense_operator("div", "SparseDenseCwiseDiv")
SparseTensor.__truediv__ = _sparse_dense_operator("truediv", "SparseDenseCwiseDiv", True)
