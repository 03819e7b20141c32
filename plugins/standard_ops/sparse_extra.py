"""OpDefs of the sparse ops that ``sparse_ops.py`` lacks, as TF's ``sparse_ops.cc`` and
``math_ops.cc``: ``SparseConcat``, ``SparseSplit``, ``SparseSlice`` (and ``SparseSliceGrad``),
``SparseSoftmax``, ``SparseSparseMaximum``/``Minimum``, ``SparseReduceMax``,
``SparseReduceMaxSparse``, ``SparseReduceSumSparse``, ``SerializeSparse``,
``SerializeManySparse``, ``DeserializeManySparse``, ``EditDistance``, the ``SparseSegment*``
reductions (with their ``WithNumSegments`` forms and ``SparseSegmentMeanGrad``/``SqrtNGrad``)
and ``SparseMatMul``.

Contract: a sparse operand is three inputs (indices ``[N, rank]``, values ``[N]``, dense shape
``[rank]``); shape functions check their ranks and agreement (``ValueError`` in TF's wording) and
read constant dense shapes, starts, sizes and segment counts (``ctx.constant_value``) as TF's
shape functions do. Outputs whose sizes depend on the data stay unknown.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import (
    with_rank,
    with_rank_at_least,
    with_rank_at_most,
)
from tensorweave.plugins.standard_ops.sparse_ops import (
    _known,
    _same,
    _sparse_operand,
    _sparse_reduce_sum,
)

SEGMENT_OPS = ("SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN")
SERIALIZED_TYPES = frozenset({dtypes.string})


def _sparse_concat(ctx: InferContext) -> list[TensorSpec]:
    n = ctx.attr("N")
    rows: int | None = 0
    cols = None
    shape = TensorShape(None)
    for i in range(n):
        indices = with_rank(ctx, i, 2)
        count = _same(ctx, indices[0], with_rank(ctx, n + i, 1)[0])
        rows = None if rows is None or count is None else rows + count
        cols = _same(ctx, cols, indices[1])
        length = with_rank(ctx, 2 * n + i, 1)
        if not shape.is_compatible_with(length):
            raise ctx.shape_error(f"Dimensions must be equal, but are {shape[0]} and "
                                  f"{length[0]}")
        shape = shape.merge_with(length)
    return [TensorSpec(dtypes.int64, TensorShape([rows, cols])),
            TensorSpec(ctx.dtype(n), TensorShape([rows])),
            TensorSpec(dtypes.int64, shape)]


def _sparse_split(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    _, rank = _sparse_operand(ctx, 1)
    k = ctx.attr("num_split")
    return ([TensorSpec(dtypes.int64, TensorShape([None, rank]))] * k
            + [TensorSpec(ctx.dtype(2), TensorShape([None]))] * k
            + [TensorSpec(dtypes.int64, TensorShape([rank]))] * k)


def _sparse_slice(ctx: InferContext) -> list[TensorSpec]:
    _, rank = _sparse_operand(ctx, 0)
    rank = _same(ctx, rank, with_rank(ctx, 3, 1)[0])
    rank = _same(ctx, rank, with_rank(ctx, 4, 1)[0])
    return [TensorSpec(dtypes.int64, TensorShape([None, rank])),
            TensorSpec(ctx.dtype(1), TensorShape([None])),
            TensorSpec(dtypes.int64, TensorShape([rank]))]


def _sparse_slice_grad(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 1)
    indices = with_rank(ctx, 1, 2)
    with_rank(ctx, 2, 1)
    with_rank(ctx, 3, 2)
    return [TensorSpec(ctx.dtype(0), TensorShape([indices[0]]))]


def _sparse_softmax(ctx: InferContext) -> list[TensorSpec]:
    n, rank = _sparse_operand(ctx, 0)
    if rank is not None and rank < 2:
        raise ctx.shape_error(f"Shape must be at least rank 2 but is rank {rank}")
    return [TensorSpec(ctx.dtype(1), TensorShape([n]))]


def _sparse_binary(ctx: InferContext) -> list[TensorSpec]:
    _, rank = _sparse_operand(ctx, 0)
    rank = _same(ctx, rank, _sparse_operand(ctx, 3)[1])
    return [TensorSpec(dtypes.int64, TensorShape([None, rank])),
            TensorSpec(ctx.dtype(1), TensorShape([None]))]


def _sparse_reduce_sparse(ctx: InferContext) -> list[TensorSpec]:
    _sparse_operand(ctx, 0)
    with_rank_at_most(ctx, 3, 1)
    return [TensorSpec(dtypes.int64, TensorShape([None, None])),
            TensorSpec(ctx.dtype(1), TensorShape([None])),
            TensorSpec(dtypes.int64, TensorShape([None]))]


def _serialize_sparse(ctx: InferContext) -> list[TensorSpec]:
    _sparse_operand(ctx, 0)
    return [TensorSpec(ctx.attr("out_type"), TensorShape([3]))]


def _serialize_many_sparse(ctx: InferContext) -> list[TensorSpec]:
    _sparse_operand(ctx, 0)
    return [TensorSpec(ctx.attr("out_type"), TensorShape([None, 3]))]


def _deserialize_many_sparse(ctx: InferContext) -> list[TensorSpec]:
    serialized = with_rank(ctx, 0, 2)
    if serialized[1] is not None and serialized[1] != 3:
        raise ctx.shape_error(f"Dimension must be 3 but is {serialized[1]}")
    return [TensorSpec(dtypes.int64, TensorShape([None, None])),
            TensorSpec(ctx.attr("dtype"), TensorShape([None])),
            TensorSpec(dtypes.int64, TensorShape([None]))]


def _edit_distance(ctx: InferContext) -> list[TensorSpec]:
    _, rank = _sparse_operand(ctx, 0)
    rank = _same(ctx, rank, _sparse_operand(ctx, 3)[1])
    if ctx.dtype(1) != ctx.dtype(4):
        raise ctx.type_error("hypothesis_values and truth_values must have the same dtype")
    hypothesis, truth = _known(ctx, 2), _known(ctx, 5)
    if hypothesis is None or truth is None:
        return [TensorSpec(dtypes.float32, TensorShape(None if rank is None else
                                                       [None] * (rank - 1)))]
    if len(hypothesis) != len(truth):
        raise ctx.shape_error(f"Num elements of hypothesis_shape does not match truth_shape: "
                              f"{len(hypothesis)} vs. {len(truth)}")
    dims = [max(h, t) for h, t in zip(hypothesis[:-1], truth[:-1])]
    return [TensorSpec(dtypes.float32, TensorShape(dims))]


def _segment_rows(ctx: InferContext, rows: int | None) -> list[TensorSpec]:
    data = with_rank_at_least(ctx, 0, 1)
    indices = with_rank(ctx, 1, 1)
    _same(ctx, indices[0], with_rank(ctx, 2, 1)[0])
    if data.ndims is None:
        return [TensorSpec(ctx.dtype(0), TensorShape(None))]
    return [TensorSpec(ctx.dtype(0), TensorShape([rows] + list(data.dims[1:])))]


def _sparse_segment(ctx: InferContext) -> list[TensorSpec]:
    return _segment_rows(ctx, None)


def _sparse_segment_num(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 3, 0)
    known = _known(ctx, 3)
    return _segment_rows(ctx, None if known is None else known[0])


def _sparse_matmul(ctx: InferContext) -> list[TensorSpec]:
    a = list(with_rank(ctx, 0, 2).dims)
    b = list(with_rank(ctx, 1, 2).dims)
    if ctx.attr("transpose_a"):
        a.reverse()
    if ctx.attr("transpose_b"):
        b.reverse()
    _same(ctx, a[1], b[0])
    return [TensorSpec(dtypes.float32, TensorShape([a[0], b[1]]))]


def register(registry: Any) -> None:
    op = registry.op
    real = {"T": dtypes.NUMERIC}
    op("SparseConcat", ["indices:*int64", "values:*T", "shapes:*int64"], _sparse_concat,
       attrs={"concat_dim": REQUIRED, "N": REQUIRED, "T": REQUIRED})
    op("SparseSplit", ["split_dim:int64", "indices:int64", "values:T", "shape:int64"],
       _sparse_split, attrs={"num_split": REQUIRED, "T": REQUIRED}, list_output=True)
    op("SparseSlice", ["indices:int64", "values:T", "shape:int64", "start:int64", "size:int64"],
       _sparse_slice, attrs={"T": REQUIRED})
    op("SparseSliceGrad", ["backprop_val_grad:T", "input_indices:int64", "input_start:int64",
                           "output_indices:int64"], _sparse_slice_grad,
       attrs={"T": REQUIRED}, type_constraints=real)
    op("SparseSoftmax", ["sp_indices:int64", "sp_values:T", "sp_shape:int64"], _sparse_softmax,
       attrs={"T": REQUIRED}, type_constraints={"T": dtypes.FLOATS})
    for name in ("SparseSparseMaximum", "SparseSparseMinimum"):
        op(name, ["a_indices:int64", "a_values:T", "a_shape:int64", "b_indices:int64",
                  "b_values:T", "b_shape:int64"], _sparse_binary,
           attrs={"T": REQUIRED}, type_constraints=real)
    reduce_inputs = ["input_indices:int64", "input_values:T", "input_shape:int64",
                     "reduction_axes:int32"]
    op("SparseReduceMax", reduce_inputs, _sparse_reduce_sum,
       attrs={"keep_dims": False, "T": REQUIRED}, type_constraints=real)
    for name in ("SparseReduceMaxSparse", "SparseReduceSumSparse"):
        op(name, reduce_inputs, _sparse_reduce_sparse,
           attrs={"keep_dims": False, "T": REQUIRED}, type_constraints=real)
    serialize = {"T": REQUIRED, "out_type": dtypes.string}
    op("SerializeSparse", ["sparse_indices:int64", "sparse_values:T", "sparse_shape:int64"],
       _serialize_sparse, attrs=serialize, type_constraints={"out_type": SERIALIZED_TYPES})
    op("SerializeManySparse", ["sparse_indices:int64", "sparse_values:T", "sparse_shape:int64"],
       _serialize_many_sparse, attrs=serialize,
       type_constraints={"out_type": SERIALIZED_TYPES})
    op("DeserializeManySparse", ["serialized_sparse:string"], _deserialize_many_sparse,
       attrs={"dtype": REQUIRED})
    op("EditDistance", ["hypothesis_indices:int64", "hypothesis_values:T",
                        "hypothesis_shape:int64", "truth_indices:int64", "truth_values:T",
                        "truth_shape:int64"], _edit_distance,
       attrs={"normalize": True, "T": REQUIRED})
    index = {"Tidx": dtypes.INDEX}
    for name in SEGMENT_OPS:
        types = {"T": dtypes.NUMERIC if name == "SparseSegmentSum" else dtypes.FLOATS}
        op(name, ["data:T", "indices:Tidx", "segment_ids:int32"], _sparse_segment,
           attrs={"T": REQUIRED, "Tidx": None}, type_constraints={**types, **index})
        op(f"{name}WithNumSegments",
           ["data:T", "indices:Tidx", "segment_ids:int32", "num_segments:Tnumsegments"],
           _sparse_segment_num, attrs={"T": REQUIRED, "Tidx": None, "Tnumsegments": None},
           type_constraints={**types, **index, "Tnumsegments": dtypes.INDEX})
    for name in ("SparseSegmentMeanGrad", "SparseSegmentSqrtNGrad"):
        op(name, ["grad:T", "indices:Tidx", "segment_ids:int32", "output_dim0:int32"],
           _sparse_segment_num, attrs={"T": REQUIRED, "Tidx": None},
           type_constraints={"T": dtypes.FLOATS, **index})
    op("SparseMatMul", ["a:Ta", "b:Tb"], _sparse_matmul,
       attrs={"transpose_a": False, "transpose_b": False, "a_is_sparse": False,
              "b_is_sparse": False, "Ta": dtypes.float32, "Tb": dtypes.float32},
       type_constraints={"Ta": frozenset({dtypes.float32}), "Tb": frozenset({dtypes.float32})})
