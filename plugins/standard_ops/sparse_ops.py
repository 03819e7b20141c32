"""OpDefs of the sparse-tensor ops, as TF's ``sparse_ops.cc`` (and ``SparseTensorDenseMatMul``
of ``math_ops.cc``): ``SparseToDense``, ``SparseReorder``, ``SparseReshape``,
``SparseTensorDenseMatMul``, ``SparseReduceSum``, ``SparseTensorDenseAdd``, ``SparseAdd`` (and
its ``SparseAddGrad``), ``SparseFillEmptyRows`` and the ``SparseDenseCwise{Add,Mul,Div}`` ops (a
dense operand broadcast to the sparse one's shape, one value per sparse value).

Contract: a sparse operand is passed as its three component inputs (indices ``[N, rank]``,
values ``[N]``, dense shape ``[rank]``). Shape functions check the components' ranks
(``ValueError`` in TF's wording) and read dense shapes, new shapes and axes from inputs known at
graph-construction time (``ctx.constant_value``); what is not known stays unknown. Whether the
components agree with each other at run time is the kernels' business.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import with_rank, with_rank_at_most

Dims = list[int | None]
MATMUL_TYPES = dtypes.FLOATS | {dtypes.int32, dtypes.int64}


def _known(ctx: InferContext, i: int) -> list[int] | None:
    value = ctx.constant_value(i)
    return None if value is None else [int(v) for v in np.ravel(value)]


def _dense_shape(ctx: InferContext, i: int) -> TensorShape:
    """The shape a shape vector (input `i`) stands for: its value, else its length's rank."""
    value = _known(ctx, i)
    if value is not None:
        return TensorShape([None if d < 0 else d for d in value])
    rank = with_rank(ctx, i, 1)[0]
    return TensorShape(None if rank is None else [None] * rank)


def _sparse_operand(ctx: InferContext, first: int) -> tuple[int | None, int | None]:
    """Checks the (indices, values, shape) inputs from `first` on; returns (N, rank)."""
    indices = with_rank(ctx, first, 2)
    values = with_rank(ctx, first + 1, 1)
    shape = with_rank(ctx, first + 2, 1)
    n = _same(ctx, indices[0], values[0])
    return n, _same(ctx, indices[1], shape[0])


def _same(ctx: InferContext, a: int | None, b: int | None) -> int | None:
    if a is not None and b is not None and a != b:
        raise ctx.shape_error(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def _sparse_to_dense(ctx: InferContext) -> list[TensorSpec]:
    with_rank_at_most(ctx, 0, 2)
    with_rank_at_most(ctx, 1, 1)
    with_rank_at_most(ctx, 2, 1)
    with_rank(ctx, 3, 0)
    if ctx.shape(1).ndims == 0:  # a scalar output_shape: a vector of that length
        value = _known(ctx, 1)
        return [TensorSpec(ctx.dtype(2), TensorShape([None if value is None else value[0]]))]
    return [TensorSpec(ctx.dtype(2), _dense_shape(ctx, 1))]


def _sparse_reorder(ctx: InferContext) -> list[TensorSpec]:
    n, rank = _sparse_operand(ctx, 0)
    return [TensorSpec(dtypes.int64, TensorShape([n, rank])),
            TensorSpec(ctx.dtype(1), TensorShape([n]))]


def _sparse_reshape(ctx: InferContext) -> list[TensorSpec]:
    indices = with_rank(ctx, 0, 2)
    _same(ctx, indices[1], with_rank(ctx, 1, 1)[0])
    new_rank = with_rank(ctx, 2, 1)[0]
    return [TensorSpec(dtypes.int64, TensorShape([indices[0], new_rank])),
            TensorSpec(dtypes.int64, TensorShape([new_rank]))]


def _sparse_dense_matmul(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 2)
    with_rank(ctx, 1, 1)
    a_rank = with_rank(ctx, 2, 1)[0]
    if a_rank is not None and a_rank != 2:
        raise ctx.shape_error(f"Shape must be rank 2 but is rank {a_rank}")
    a = _dense_shape(ctx, 2)
    a_dims: Dims = list(a.dims) if a.ndims == 2 else [None, None]
    b: Dims = list(with_rank(ctx, 3, 2).dims)
    if ctx.attr("adjoint_a"):
        a_dims.reverse()
    if ctx.attr("adjoint_b"):
        b.reverse()
    _same(ctx, a_dims[1], b[0])
    return [TensorSpec(ctx.dtype(1), TensorShape([a_dims[0], b[1]]))]


def _sparse_reduce_sum(ctx: InferContext) -> list[TensorSpec]:
    _sparse_operand(ctx, 0)
    with_rank_at_most(ctx, 3, 1)
    shape = _dense_shape(ctx, 2)
    axes = _known(ctx, 3)
    if shape.ndims is None or axes is None:
        return [TensorSpec(ctx.dtype(1), TensorShape(None))]
    rank = shape.ndims
    for axis in axes:
        if not -rank <= axis < rank:
            raise ctx.shape_error(f"Invalid reduction dimension {axis}, for input with {rank} "
                                  "dimensions.")
    reduced = {a % rank for a in axes}
    if ctx.attr("keep_dims"):
        dims = [1 if i in reduced else d for i, d in enumerate(shape.dims)]
    else:
        dims = [d for i, d in enumerate(shape.dims) if i not in reduced]
    return [TensorSpec(ctx.dtype(1), TensorShape(dims))]


def _sparse_dense_add(ctx: InferContext) -> list[TensorSpec]:
    _sparse_operand(ctx, 0)
    return [TensorSpec(ctx.dtype(1), ctx.shape(3))]


def _sparse_dense_cwise(ctx: InferContext) -> list[TensorSpec]:
    n, _ = _sparse_operand(ctx, 0)
    return [TensorSpec(ctx.dtype(1), TensorShape([n]))]


def _sparse_add(ctx: InferContext) -> list[TensorSpec]:
    _, rank = _sparse_operand(ctx, 0)
    rank = _same(ctx, rank, _sparse_operand(ctx, 3)[1])
    with_rank(ctx, 6, 0)
    return [TensorSpec(dtypes.int64, TensorShape([None, rank])),
            TensorSpec(ctx.dtype(1), TensorShape([None])),
            TensorSpec(dtypes.int64, TensorShape([rank]))]


def _sparse_add_grad(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 1)
    return [TensorSpec(ctx.dtype(0), TensorShape([with_rank(ctx, 1, 2)[0]])),
            TensorSpec(ctx.dtype(0), TensorShape([with_rank(ctx, 2, 2)[0]]))]


def _fill_empty_rows(ctx: InferContext) -> list[TensorSpec]:
    n, rank = _sparse_operand(ctx, 0)
    with_rank(ctx, 3, 0)
    shape = _dense_shape(ctx, 2)
    rows = shape[0] if shape.ndims else None
    return [TensorSpec(dtypes.int64, TensorShape([None, rank])),
            TensorSpec(ctx.dtype(1), TensorShape([None])),
            TensorSpec(dtypes.bool_, TensorShape([rows])),
            TensorSpec(dtypes.int64, TensorShape([n]))]


def register(registry: Any) -> None:
    op = registry.op
    index = {"Tindices": dtypes.INDEX}
    op("SparseToDense",
       ["sparse_indices:Tindices", "output_shape:Tindices", "sparse_values:T",
        "default_value:T"], _sparse_to_dense,
       attrs={"validate_indices": True, "T": REQUIRED, "Tindices": None},
       type_constraints=index)
    op("SparseReorder", ["input_indices:int64", "input_values:T", "input_shape:int64"],
       _sparse_reorder, attrs={"T": REQUIRED})
    op("SparseReshape", ["input_indices:int64", "input_shape:int64", "new_shape:int64"],
       _sparse_reshape)
    op("SparseTensorDenseMatMul", ["a_indices:Tindices", "a_values:T", "a_shape:int64", "b:T"],
       _sparse_dense_matmul,
       attrs={"T": REQUIRED, "Tindices": None, "adjoint_a": False, "adjoint_b": False},
       type_constraints={"T": MATMUL_TYPES, **index})
    op("SparseReduceSum",
       ["input_indices:int64", "input_values:T", "input_shape:int64", "reduction_axes:int32"],
       _sparse_reduce_sum, attrs={"keep_dims": False, "T": REQUIRED},
       type_constraints={"T": dtypes.NUMERIC})
    op("SparseTensorDenseAdd", ["a_indices:Tindices", "a_values:T", "a_shape:Tindices", "b:T"],
       _sparse_dense_add, attrs={"T": REQUIRED, "Tindices": None},
       type_constraints={"T": dtypes.NUMERIC, **index})
    for name in ("SparseDenseCwiseAdd", "SparseDenseCwiseMul", "SparseDenseCwiseDiv"):
        op(name, ["sp_indices:int64", "sp_values:T", "sp_shape:int64", "dense:T"],
           _sparse_dense_cwise, attrs={"T": REQUIRED},
           type_constraints={"T": dtypes.NUMERIC | dtypes.COMPLEX})
    op("SparseAdd",
       ["a_indices:int64", "a_values:T", "a_shape:int64", "b_indices:int64", "b_values:T",
        "b_shape:int64", "thresh:Treal"], _sparse_add,
       attrs={"T": REQUIRED, "Treal": None},
       type_constraints={"T": dtypes.NUMERIC, "Treal": dtypes.NUMERIC})
    op("SparseAddGrad",
       ["backprop_val_grad:T", "a_indices:int64", "b_indices:int64", "sum_indices:int64"],
       _sparse_add_grad, attrs={"T": REQUIRED}, type_constraints={"T": dtypes.NUMERIC})
    op("SparseFillEmptyRows",
       ["indices:int64", "values:T", "dense_shape:int64", "default_value:T"],
       _fill_empty_rows, attrs={"T": REQUIRED})
