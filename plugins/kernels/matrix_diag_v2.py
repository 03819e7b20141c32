"""Kernels of ``MatrixDiagV2``, ``MatrixDiagPartV2`` and ``MatrixSetDiagV2`` (TF 1.15's
``tf.linalg.diag``/``diag_part``/``set_diag`` with ``k``, ``num_rows``, ``num_cols`` and
``padding_value``).

Contract, as TF 1.15: ``k`` is one diagonal offset or a band ``[lower, upper]`` (0 is the main
diagonal, positive ones are above it). A band is stored as ``[..., upper - lower + 1,
max_diag_len]``, row ``upper - d`` holding diagonal ``d``; every diagonal starts at its
top-left element and shorter ones are padded at the end (TF 1.15 packs them left-aligned; the
``align`` attribute came later). ``MatrixDiagV2`` builds matrices filled with
``padding_value``; unknown ``num_rows``/``num_cols`` (-1) are the smallest that fit, a square
when both are unknown. Element ``i`` of diagonal ``d`` is matrix element ``(i + max(-d, 0),
i + max(d, 0))``. Bad bands and sizes are `InvalidArgumentError` in TF's words.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext


def _fail(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _band(ctx: KernelContext, k: Any) -> tuple[int, int]:
    k = np.asarray(ctx.device.to_host(k))
    if k.ndim > 1 or k.size not in (1, 2):
        raise _fail(ctx, f"diag_index must be a scalar or vector with 1 or 2 elements. "
                         f"Received diag_index.shape = {list(k.shape)}")
    lower, upper = int(k.reshape(-1)[0]), int(k.reshape(-1)[-1])
    if lower > upper:
        raise _fail(ctx, "lower_diag_index must not be larger than upper_diag_index")
    return lower, upper


def diagonal_length(rows: int, cols: int, d: int) -> int:
    return max(0, min(rows + min(d, 0), cols - max(d, 0)))


def _positions(xp: Any, rows: int, cols: int, d: int) -> tuple[Any, Any]:
    index = xp.arange(diagonal_length(rows, cols, d))
    return index + max(-d, 0), index + max(d, 0)


def _check_bounds(ctx: KernelContext, rows: int, cols: int, lower: int, upper: int) -> None:
    if lower != 0 and not -rows < lower < cols:
        raise _fail(ctx, f"lower_diag_index is out of bound: {lower}. It must be between "
                         f"{-rows} and {cols}")
    if upper != 0 and not -rows < upper < cols:
        raise _fail(ctx, f"upper_diag_index is out of bound: {upper}. It must be between "
                         f"{-rows} and {cols}")


def _scalar(ctx: KernelContext, padding_value: Any) -> Any:
    """`padding_value` as a host scalar, which every array module's ``full`` accepts."""
    if padding_value.ndim != 0:
        raise _fail(ctx, f"padding_value must be a scalar, got shape "
                         f"{list(padding_value.shape)}")
    return np.asarray(ctx.device.to_host(padding_value)).item()


def matrix_diag_part_v2(ctx: KernelContext, x: Any, k: Any, padding_value: Any) -> Any:
    lower, upper = _band(ctx, k)
    padding_value = _scalar(ctx, padding_value)
    if x.ndim < 2:
        raise _fail(ctx, f"input must be at least 2-dim, received shape: {list(x.shape)}")
    rows, cols = x.shape[-2:]
    _check_bounds(ctx, rows, cols, lower, upper)
    xp = ctx.xp
    width = max(diagonal_length(rows, cols, d) for d in range(lower, upper + 1))
    out = xp.full((*x.shape[:-2], upper - lower + 1, width), padding_value, dtype=x.dtype)
    for d in range(upper, lower - 1, -1):
        r, c = _positions(xp, rows, cols, d)
        out[..., upper - d, :len(r)] = x[..., r, c]
    return out[..., 0, :] if lower == upper else out


def _stacked(ctx: KernelContext, diagonal: Any, lower: int, upper: int) -> Any:
    """`diagonal` as ``[..., num_diags, max_diag_len]``."""
    if lower == upper:
        return diagonal[..., None, :]
    if diagonal.ndim < 2 or diagonal.shape[-2] != upper - lower + 1:
        raise _fail(ctx, f"The number of diagonals provided in the input does not match the "
                         f"lower_diag_index and upper_diag_index range. Expected "
                         f"{upper - lower + 1} diagonals, got shape {list(diagonal.shape)}")
    return diagonal


def matrix_diag_v2(ctx: KernelContext, diagonal: Any, k: Any, num_rows: Any, num_cols: Any,
                   padding_value: Any) -> Any:
    lower, upper = _band(ctx, k)
    padding_value = _scalar(ctx, padding_value)
    if diagonal.ndim < 1:
        raise _fail(ctx, "diagonal must be at least 1-dim")
    stacked = _stacked(ctx, diagonal, lower, upper)
    width = stacked.shape[-1]
    min_rows, min_cols = width - min(upper, 0), width + max(lower, 0)
    rows, cols = int(ctx.device.to_host(num_rows)), int(ctx.device.to_host(num_cols))
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    elif rows == -1:
        rows = min_rows
    elif cols == -1:
        cols = min_cols
    if rows < min_rows:
        raise _fail(ctx, f"The number of rows is too small. num_rows = {rows}, "
                         f"min_num_rows = {min_rows}")
    if cols < min_cols:
        raise _fail(ctx, f"The number of columns is too small. num_cols = {cols}, "
                         f"min_num_cols = {min_cols}")
    if rows != min_rows and cols != min_cols:
        raise _fail(ctx, f"The number of rows or columns is not consistent with the specified "
                         f"d_lower, d_upper, and diagonal. num_rows = {rows}, num_cols = {cols}")
    xp = ctx.xp
    out = xp.full((*stacked.shape[:-2], rows, cols), padding_value, dtype=diagonal.dtype)
    for d in range(upper, lower - 1, -1):
        r, c = _positions(xp, rows, cols, d)
        out[..., r, c] = stacked[..., upper - d, :len(r)]
    return out


def matrix_set_diag_v2(ctx: KernelContext, x: Any, diagonal: Any, k: Any) -> Any:
    lower, upper = _band(ctx, k)
    if x.ndim < 2:
        raise _fail(ctx, f"input must be at least 2-dim, received shape: {list(x.shape)}")
    rows, cols = x.shape[-2:]
    _check_bounds(ctx, rows, cols, lower, upper)
    stacked = _stacked(ctx, diagonal, lower, upper)
    width = max(diagonal_length(rows, cols, d) for d in range(lower, upper + 1))
    if stacked.shape != (*x.shape[:-2], upper - lower + 1, width):
        expected = [*x.shape[:-2], *([] if lower == upper else [upper - lower + 1]), width]
        raise _fail(ctx, f"diagonal must have shape {expected}, got {list(diagonal.shape)}")
    out = x.copy()
    xp = ctx.xp
    for d in range(upper, lower - 1, -1):
        r, c = _positions(xp, rows, cols, d)
        out[..., r, c] = stacked[..., upper - d, :len(r)]
    return out


def register(registry: Any, device_type: str) -> None:
    registry.add("MatrixDiagV2", device_type, matrix_diag_v2)
    registry.add("MatrixDiagPartV2", device_type, matrix_diag_part_v2)
    registry.add("MatrixSetDiagV2", device_type, matrix_set_diag_v2)
