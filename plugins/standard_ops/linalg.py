"""OpDefs of TF 1.15's linear algebra (``linalg_ops.cc``, with ``Lu``) and matrix-structure ops
(``array_ops.cc``: ``MatrixBandPart``, ``MatrixDiag``, ``MatrixDiagPart``, ``MatrixSetDiag``,
``Diag``, ``DiagPart``), ``Cross`` and ``Einsum``.

Contract: op names, input names, attrs and defaults follow TF 1.15. Every matrix op works on
the two innermost dims and treats the leading ones as a batch. Square-matrix ops raise TF's
``ValueError`` ("Dimensions must be equal, but are 3 and 2") at construction when both inner
dims are known and differ; solvers merge the batch dims and row counts of matrix and rhs as
TF's ``MatrixSolveShapeFn`` does (no broadcasting in 1.15). ``Einsum`` takes one or two
operands and an explicit ``->`` output (see `einsum_equation`). ``MatrixExponential`` backs
``tw.linalg.expm``, which TF 1.15 builds in Python instead.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api.einsum_equation import parse_equation
from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import (
    broadcast_shape,
    with_rank,
    with_rank_at_least,
)

FLOATS = dtypes.FLOATS
T = {"T": REQUIRED}
Dim = int | None


def _merge(ctx: InferContext, a: Dim, b: Dim) -> Dim:
    if a is not None and b is not None and a != b:
        raise ctx.shape_error(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def _merge_dims(ctx: InferContext, a: list[Dim] | None, b: list[Dim] | None) -> list[Dim] | None:
    if a is None or b is None:
        return a if b is None else b
    if len(a) != len(b):
        raise ctx.shape_error(f"Shapes must be equal rank, but are {len(a)} and {len(b)}")
    return [_merge(ctx, x, y) for x, y in zip(a, b)]


def _dims(shape: TensorShape) -> list[Dim] | None:
    return None if shape.ndims is None else shape.as_list()


def _matrix(ctx: InferContext, i: int) -> tuple[list[Dim] | None, Dim, Dim]:
    """Input `i` as (batch dims or None, rows, cols), checking rank >= 2."""
    with_rank_at_least(ctx, i, 2)
    dims = _dims(ctx.shape(i))
    if dims is None:
        return None, None, None
    return dims[:-2], dims[-2], dims[-1]


def _square(ctx: InferContext, i: int = 0) -> tuple[list[Dim] | None, Dim]:
    batch, rows, cols = _matrix(ctx, i)
    return batch, _merge(ctx, rows, cols)


def _spec(ctx: InferContext, batch: list[Dim] | None, *inner: Dim) -> TensorSpec:
    return TensorSpec(ctx.dtype(0), TensorShape(None if batch is None else [*batch, *inner]))


def _square_unchanged(ctx: InferContext) -> list[TensorSpec]:
    batch, n = _square(ctx)
    return [_spec(ctx, batch, n, n)]


def _determinant(ctx: InferContext) -> list[TensorSpec]:
    batch, _ = _square(ctx)
    return [_spec(ctx, batch)]


def _log_determinant(ctx: InferContext) -> list[TensorSpec]:
    return _determinant(ctx) * 2


def _solve(square: bool) -> Any:
    """TF's MatrixSolveShapeFn: output [..., cols of matrix, cols of rhs]."""

    def infer(ctx: InferContext) -> list[TensorSpec]:
        batch, rows, cols = _matrix(ctx, 0)
        if square:
            rows = cols = _merge(ctx, rows, cols)
        rhs_batch, rhs_rows, rhs_cols = _matrix(ctx, 1)
        batch = _merge_dims(ctx, batch, rhs_batch)
        _merge(ctx, rows, rhs_rows)
        return [_spec(ctx, batch, cols, rhs_cols)]

    return infer


def _solve_ls(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 2, 0)
    return _solve(square=False)(ctx)


def _lu(ctx: InferContext) -> list[TensorSpec]:
    batch, n = _square(ctx)
    return [_spec(ctx, batch, n, n), TensorSpec(ctx.attr("output_idx_type"), TensorShape(
        None if batch is None else [*batch, n]))]


def _self_adjoint_eig(ctx: InferContext) -> list[TensorSpec]:
    batch, n = _square(ctx)
    vectors = _spec(ctx, batch, n, n) if ctx.attr("compute_v") else TensorSpec(ctx.dtype(0), [0])
    return [_spec(ctx, batch, n), vectors]


def _smaller(m: Dim, n: Dim) -> Dim:
    return None if m is None or n is None else min(m, n)


def _qr(ctx: InferContext) -> list[TensorSpec]:
    batch, m, n = _matrix(ctx, 0)
    if ctx.attr("full_matrices"):
        return [_spec(ctx, batch, m, m), _spec(ctx, batch, m, n)]
    p = _smaller(m, n)
    return [_spec(ctx, batch, m, p), _spec(ctx, batch, p, n)]


def _svd(ctx: InferContext) -> list[TensorSpec]:
    batch, m, n = _matrix(ctx, 0)
    p = _smaller(m, n)
    values = _spec(ctx, batch, p)
    if not ctx.attr("compute_uv"):
        empty = TensorSpec(ctx.dtype(0), [0])
        return [values, empty, empty]
    if ctx.attr("full_matrices"):
        return [values, _spec(ctx, batch, m, m), _spec(ctx, batch, n, n)]
    return [values, _spec(ctx, batch, m, p), _spec(ctx, batch, n, p)]


def _band_part(ctx: InferContext) -> list[TensorSpec]:
    with_rank_at_least(ctx, 0, 2)
    with_rank(ctx, 1, 0)
    with_rank(ctx, 2, 0)
    return [ctx.inputs[0]]


def _matrix_diag(ctx: InferContext) -> list[TensorSpec]:
    with_rank_at_least(ctx, 0, 1)
    dims = _dims(ctx.shape(0))
    if dims is None:
        return [TensorSpec(ctx.dtype(0), TensorShape(None))]
    return [_spec(ctx, dims[:-1], dims[-1], dims[-1])]


def _matrix_diag_part(ctx: InferContext) -> list[TensorSpec]:
    batch, m, n = _matrix(ctx, 0)
    return [_spec(ctx, batch, _smaller(m, n))]


def _matrix_set_diag(ctx: InferContext) -> list[TensorSpec]:
    batch, m, n = _matrix(ctx, 0)
    with_rank_at_least(ctx, 1, 1)
    if batch is not None:
        with_rank(ctx, 1, len(batch) + 1)
    diag = _dims(ctx.shape(1))
    if diag is not None:
        batch = _merge_dims(ctx, batch, diag[:-1])
        _merge(ctx, _smaller(m, n), diag[-1])
    return [_spec(ctx, batch, m, n)]


def _diag(ctx: InferContext) -> list[TensorSpec]:
    with_rank_at_least(ctx, 0, 1)
    dims = _dims(ctx.shape(0))
    return [TensorSpec(ctx.dtype(0), TensorShape(None if dims is None else dims * 2))]


def _diag_part(ctx: InferContext) -> list[TensorSpec]:
    dims = _dims(ctx.shape(0))
    if dims is None:
        return [TensorSpec(ctx.dtype(0), TensorShape(None))]
    rank = len(dims)
    if rank == 0 or rank % 2:
        raise ctx.shape_error(f"Input must have even and non-zero rank, input rank is {rank}")
    half = rank // 2
    return [TensorSpec(ctx.dtype(0), [_merge(ctx, dims[i], dims[i + half])
                                      for i in range(half)])]


def _cross(ctx: InferContext) -> list[TensorSpec]:
    with_rank_at_least(ctx, 0, 1)
    with_rank_at_least(ctx, 1, 1)
    a, b = _dims(ctx.shape(0)), _dims(ctx.shape(1))
    dims = _merge_dims(ctx, a, b)
    if dims is not None and dims[-1] is not None and dims[-1] != 3:
        raise ctx.shape_error(f"Dimension must be 3 but is {dims[-1]}")
    return [TensorSpec(ctx.dtype(0), TensorShape(dims))]


def _einsum(ctx: InferContext) -> list[TensorSpec]:
    equation = parse_equation(ctx.attr("equation"), len(ctx.inputs), ctx.shape_error)
    sizes: dict[str, Dim] = {}
    batch = TensorShape([])
    for subscripts, spec in zip(equation.inputs, ctx.inputs):
        dims = _dims(spec.shape)
        if dims is None:
            batch = TensorShape(None) if "..." in subscripts else batch
            continue
        before, ellipsis, after = subscripts.partition("...")
        n_batch = len(dims) - len(before) - len(after)
        if n_batch < 0 or (not ellipsis and n_batch):
            raise ctx.shape_error(f"Input subscripts '{subscripts}' do not match an input of "
                                  f"rank {len(dims)}")
        batch = broadcast_shape(ctx, batch, TensorShape(dims[len(before):len(before) + n_batch]))
        labelled = dims[:len(before)] + dims[len(dims) - len(after):]
        for label, size in zip(before + after, labelled):
            sizes[label] = _merge(ctx, sizes.get(label), size)
    before, ellipsis, after = equation.output.partition("...")
    if ellipsis and batch.ndims is None:
        return [TensorSpec(ctx.dtype(0), TensorShape(None))]
    middle = _dims(batch) if ellipsis else []
    return [TensorSpec(ctx.dtype(0), [*(sizes.get(c) for c in before), *middle,
                                      *(sizes.get(c) for c in after)])]


def register(registry: Any) -> None:
    op = registry.op
    floats = {"T": FLOATS}
    for name in ("Cholesky", "MatrixSquareRoot", "MatrixExponential"):
        op(name, ["input:T"], _square_unchanged, attrs=T, type_constraints=floats)
    op("MatrixInverse", ["input:T"], _square_unchanged, attrs={**T, "adjoint": False},
       type_constraints=floats)
    op("MatrixDeterminant", ["input:T"], _determinant, attrs=T, type_constraints=floats)
    op("LogMatrixDeterminant", ["input:T"], _log_determinant, attrs=T, type_constraints=floats)
    op("MatrixSolve", ["matrix:T", "rhs:T"], _solve(square=True),
       attrs={**T, "adjoint": False}, type_constraints=floats)
    op("MatrixTriangularSolve", ["matrix:T", "rhs:T"], _solve(square=True),
       attrs={**T, "lower": True, "adjoint": False}, type_constraints=floats)
    op("MatrixSolveLs", ["matrix:T", "rhs:T", "l2_regularizer:float64"], _solve_ls,
       attrs={**T, "fast": True}, type_constraints=floats)
    op("SelfAdjointEigV2", ["input:T"], _self_adjoint_eig, attrs={**T, "compute_v": True},
       type_constraints=floats)
    op("Lu", ["input:T"], _lu, attrs={**T, "output_idx_type": dtypes.int32},
       type_constraints={**floats, "output_idx_type": dtypes.INDEX})
    op("Qr", ["input:T"], _qr, attrs={**T, "full_matrices": False}, type_constraints=floats)
    op("Svd", ["input:T"], _svd, attrs={**T, "compute_uv": True, "full_matrices": False},
       type_constraints=floats)

    every = {"T": frozenset(dtypes.ALL)}
    op("MatrixBandPart", ["input:T", "num_lower:Tindex", "num_upper:Tindex"], _band_part,
       attrs={**T, "Tindex": dtypes.int64}, type_constraints={**every, "Tindex": dtypes.INDEX})
    op("MatrixDiag", ["diagonal:T"], _matrix_diag, attrs=T, type_constraints=every)
    op("MatrixDiagPart", ["input:T"], _matrix_diag_part, attrs=T, type_constraints=every)
    op("MatrixSetDiag", ["input:T", "diagonal:T"], _matrix_set_diag, attrs=T,
       type_constraints=every)
    diag_types = {"T": FLOATS | {dtypes.int32, dtypes.int64}}
    op("Diag", ["diagonal:T"], _diag, attrs=T, type_constraints=diag_types)
    op("DiagPart", ["input:T"], _diag_part, attrs=T, type_constraints=diag_types)
    op("Cross", ["a:T", "b:T"], _cross, attrs=T, type_constraints={"T": dtypes.NUMERIC})
    op("Einsum", ["inputs:*T"], _einsum, attrs={**T, "equation": REQUIRED, "N": REQUIRED},
       type_constraints=diag_types)

