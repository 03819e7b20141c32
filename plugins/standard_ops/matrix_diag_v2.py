"""OpDefs of ``MatrixDiagV2``, ``MatrixDiagPartV2`` and ``MatrixSetDiagV2`` (TF 1.15's banded
``tf.linalg.diag``/``diag_part``/``set_diag``); the layout of a band is described in
`tensorweave.plugins.kernels.matrix_diag_v2`.

Contract: ``k``, ``num_rows`` and ``num_cols`` are int32 (``k`` a scalar or a 2-vector),
``padding_value`` a scalar of ``T``. Shapes are inferred when ``k`` (and for ``MatrixDiagV2``
the sizes) are constants; ``lower > upper`` is a `ValueError` then.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import with_rank_at_least

EVERY = {"T": frozenset(dtypes.ALL)}


def _band(ctx: InferContext, i: int) -> tuple[int, int] | None:
    k = ctx.constant_value(i)
    if k is None:
        return None
    k = np.asarray(k)
    if k.ndim > 1 or k.size not in (1, 2):
        raise ctx.shape_error(f"diag_index must be a scalar or vector with 1 or 2 elements. "
                              f"Received diag_index.shape = {list(k.shape)}")
    lower, upper = int(k.reshape(-1)[0]), int(k.reshape(-1)[-1])
    if lower > upper:
        raise ctx.shape_error("lower_diag_index must not be larger than upper_diag_index")
    return lower, upper


def _length(rows: int, cols: int, d: int) -> int:
    return max(0, min(rows + min(d, 0), cols - max(d, 0)))


def _diag_part(ctx: InferContext) -> list[TensorSpec]:
    shape = with_rank_at_least(ctx, 0, 2)
    band = _band(ctx, 1)
    if band is None or shape.ndims is None:
        return [TensorSpec(ctx.dtype(0), TensorShape(None))]
    lower, upper = band
    dims = list(shape.dims)
    rows, cols = dims[-2:]
    width = None if None in (rows, cols) else \
        max(_length(rows, cols, d) for d in range(lower, upper + 1))
    middle = [] if lower == upper else [upper - lower + 1]
    return [TensorSpec(ctx.dtype(0), TensorShape([*dims[:-2], *middle, width]))]


def _diag(ctx: InferContext) -> list[TensorSpec]:
    shape = with_rank_at_least(ctx, 0, 1)
    band = _band(ctx, 1)
    if band is None or shape.ndims is None:
        return [TensorSpec(ctx.dtype(0), TensorShape(None))]
    lower, upper = band
    dims = list(shape.dims)
    batch = dims[:-1] if lower == upper else dims[:-2]
    if lower != upper and len(dims) < 2:
        raise ctx.shape_error("diagonal must be at least 2-dim when k is a band")
    if lower != upper and dims[-2] is not None and dims[-2] != upper - lower + 1:
        raise ctx.shape_error(f"The number of diagonals provided in the input does not match "
                              f"the lower_diag_index and upper_diag_index range. Expected "
                              f"{upper - lower + 1} diagonals, got {dims[-2]}")
    width = dims[-1]
    sizes = [ctx.constant_value(2), ctx.constant_value(3)]
    if width is None or any(s is None for s in sizes):
        return [TensorSpec(ctx.dtype(0), TensorShape([*batch, None, None]))]
    rows, cols = int(sizes[0]), int(sizes[1])
    min_rows, min_cols = width - min(upper, 0), width + max(lower, 0)
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    rows = min_rows if rows == -1 else rows
    cols = min_cols if cols == -1 else cols
    return [TensorSpec(ctx.dtype(0), TensorShape([*batch, rows, cols]))]


def _set_diag(ctx: InferContext) -> list[TensorSpec]:
    shape = with_rank_at_least(ctx, 0, 2)
    with_rank_at_least(ctx, 1, 1)
    _band(ctx, 2)
    return [TensorSpec(ctx.dtype(0), shape)]


def register(registry: Any) -> None:
    T = {"T": REQUIRED}
    registry.op("MatrixDiagV2", ["diagonal:T", "k:int32", "num_rows:int32", "num_cols:int32",
                                 "padding_value:T"], _diag, attrs=T, type_constraints=EVERY)
    registry.op("MatrixDiagPartV2", ["input:T", "k:int32", "padding_value:T"], _diag_part,
                attrs=T, type_constraints=EVERY)
    registry.op("MatrixSetDiagV2", ["input:T", "diagonal:T", "k:int32"], _set_diag, attrs=T,
                type_constraints=EVERY)
