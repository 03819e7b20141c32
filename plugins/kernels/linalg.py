"""Kernels of the linear-algebra ops, written once against ``ctx.xp`` (numpy's or cupy's
``linalg``), batched over the leading dims.

Contract: each kernel returns the node's output dtype; float16 inputs are factorized in float32
(no LAPACK routine takes half), and the iterative ``MatrixSquareRoot`` (scaled Denman-Beavers)
and ``MatrixExponential`` (Pade-13 scaling and squaring) work in float64. Failures are
`InvalidArgumentError` with TF's texts: a singular matrix ("Input is not invertible." for
``MatrixInverse`` and ``Lu``, "Input matrix is not invertible." for the solvers), a Cholesky
of a matrix that is not positive definite, mismatched solver operands. ``Cholesky`` and
``SelfAdjointEigV2`` read only the lower triangle, as TF's Eigen kernels do; a singular
``MatrixSquareRoot`` input gives NaN (TF: undefined).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.api.einsum_equation import ELLIPSIS, parse_equation, tokens
from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext

NOT_INVERTIBLE = "Input is not invertible."
SOLVE_NOT_INVERTIBLE = "Input matrix is not invertible."
CHOLESKY_FAILED = "Cholesky decomposition was not successful. The input might not be valid."
EIG_FAILED = ("Self-adjoint eigen decomposition was not successful. The input might not be "
              "valid.")
LS_FAILED = ("Input matrix was rank deficient or ill-conditioned. Try setting fast=False or "
             "provide a larger l2_regularizer > 0.")


def _invalid(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _working(x: Any) -> Any:
    """`x` in a dtype LAPACK accepts."""
    return x.astype("float32") if x.dtype == np.float16 else x


def _out(ctx: KernelContext, value: Any, index: int = 0) -> Any:
    dtype = ctx.output_dtypes[index].np_type
    return value if value.dtype == dtype else value.astype(dtype)


def _raising(xp: Any) -> contextlib.AbstractContextManager[Any]:
    """A block in which `xp`'s factorizations report a breakdown as LinAlgError: numpy always
    does; cupy only under ``cupyx.errstate(linalg="raise")``, and otherwise returns whatever
    cuSOLVER left (a failed Cholesky is finite garbage)."""
    if xp is np:
        return contextlib.nullcontext()
    import cupyx

    return cupyx.errstate(linalg="raise")


def _checked(ctx: KernelContext, message: str, fn: Callable[[], Any], *inputs: Any) -> Any:
    """``fn()``, failing with `message` where the factorization broke down: LinAlgError (see
    `_raising`), or an inf/NaN result from finite inputs."""
    xp = ctx.xp
    try:
        with _raising(xp):
            result = fn()
    except np.linalg.LinAlgError:
        raise _invalid(ctx, message) from None
    parts = result if isinstance(result, tuple) else (result,)
    if not all(bool(xp.isfinite(p).all()) for p in parts) and all(
            bool(xp.isfinite(x).all()) for x in inputs):
        raise _invalid(ctx, message)
    return result


def _adjoint(xp: Any, x: Any) -> Any:
    return xp.swapaxes(x, -1, -2)


def _eye_like(xp: Any, x: Any) -> Any:
    return xp.broadcast_to(xp.eye(x.shape[-1], dtype=x.dtype), x.shape)


def _check_square(ctx: KernelContext, x: Any) -> None:
    if x.ndim < 2:
        raise _invalid(ctx, f"Input tensor 0 must have rank >= 2, got shape {list(x.shape)}")
    if x.shape[-1] != x.shape[-2]:
        raise _invalid(ctx, "Input matrix must be square.")


def _lower_symmetric(xp: Any, x: Any) -> Any:
    """The symmetric matrix whose lower triangle is `x`'s (what Eigen's LLT reads)."""
    n = x.shape[-1]
    strict = xp.where(band_mask(xp, n, n, -1, 0) & ~band_mask(xp, n, n, 0, 0), x, 0)
    return strict + _adjoint(xp, strict) + xp.where(band_mask(xp, n, n, 0, 0), x, 0)


# -- inverse, determinant, factorizations -------------------------------------------------------


def matrix_inverse(ctx: KernelContext, x: Any) -> Any:
    _check_square(ctx, x)
    xp, a = ctx.xp, _working(x)
    if ctx.attr("adjoint"):
        a = _adjoint(xp, a)
    return _out(ctx, _checked(ctx, NOT_INVERTIBLE, lambda: xp.linalg.inv(a), a))


def matrix_determinant(ctx: KernelContext, x: Any) -> Any:
    _check_square(ctx, x)
    return _out(ctx, ctx.xp.linalg.det(_working(x)))


def log_matrix_determinant(ctx: KernelContext, x: Any) -> tuple[Any, Any]:
    _check_square(ctx, x)
    sign, log_abs = ctx.xp.linalg.slogdet(_working(x))
    return _out(ctx, sign, 0), _out(ctx, log_abs, 1)


def cholesky(ctx: KernelContext, x: Any) -> Any:
    _check_square(ctx, x)
    xp, a = ctx.xp, _lower_symmetric(ctx.xp, _working(x))
    return _out(ctx, _checked(ctx, CHOLESKY_FAILED, lambda: xp.linalg.cholesky(a), a))


def lu(ctx: KernelContext, x: Any) -> tuple[Any, Any]:
    """Partial-pivoting LU (Doolittle), one column at a time across the whole batch: the
    packed factors of ``x[p]`` and the row permutation `p`."""
    _check_square(ctx, x)
    xp, n = ctx.xp, x.shape[-1]
    factors = _working(x).reshape(-1, n, n).copy()
    rows = xp.arange(factors.shape[0])
    perm = xp.broadcast_to(xp.arange(n), (factors.shape[0], n)).copy()
    for k in range(n):
        pivot = k + xp.argmax(xp.abs(factors[:, k:, k]), axis=-1)
        for array in (factors, perm):
            top, chosen = array[rows, k].copy(), array[rows, pivot].copy()
            array[rows, k], array[rows, pivot] = chosen, top
        head = factors[:, k, k]
        if bool((head == 0).any()):
            raise _invalid(ctx, NOT_INVERTIBLE)
        factors[:, k + 1:, k] /= head[:, None]
        factors[:, k + 1:, k + 1:] -= factors[:, k + 1:, k, None] * factors[:, None, k, k + 1:]
    return (_out(ctx, factors.reshape(x.shape), 0),
            _out(ctx, perm.reshape(x.shape[:-1]), 1))


def qr(ctx: KernelContext, x: Any) -> tuple[Any, Any]:
    mode = "complete" if ctx.attr("full_matrices") else "reduced"
    q, r = ctx.xp.linalg.qr(_working(x), mode=mode)
    return _out(ctx, q, 0), _out(ctx, r, 1)


def svd(ctx: KernelContext, x: Any) -> tuple[Any, Any, Any]:
    xp, a = ctx.xp, _working(x)
    if not ctx.attr("compute_uv"):
        s = xp.linalg.svd(a, compute_uv=False)
        empty = xp.zeros((0,), dtype=ctx.out_np)
        return _out(ctx, s), empty, empty
    u, s, vh = xp.linalg.svd(a, full_matrices=ctx.attr("full_matrices"))
    return _out(ctx, s, 0), _out(ctx, u, 1), _out(ctx, _adjoint(xp, vh), 2)


def self_adjoint_eig(ctx: KernelContext, x: Any) -> tuple[Any, Any]:
    _check_square(ctx, x)
    xp, a = ctx.xp, _working(x)
    if not ctx.attr("compute_v"):
        e = _checked(ctx, EIG_FAILED, lambda: xp.linalg.eigvalsh(a, UPLO="L"), a)
        return _out(ctx, e), xp.zeros((0,), dtype=ctx.out_np)
    e, v = _checked(ctx, EIG_FAILED, lambda: xp.linalg.eigh(a, UPLO="L"), a)
    return _out(ctx, e, 0), _out(ctx, v, 1)


# -- solvers ---------------------------------------------------------------------------------


def _check_solve(ctx: KernelContext, matrix: Any, rhs: Any, square: bool = True) -> None:
    for i, x in enumerate((matrix, rhs)):
        if x.ndim < 2:
            raise _invalid(ctx, f"Input tensor {i} must have rank >= 2, got shape "
                                f"{list(x.shape)}")
    if square:
        _check_square(ctx, matrix)
    if rhs.ndim != matrix.ndim or rhs.shape[:-2] != matrix.shape[:-2]:
        raise _invalid(ctx, "All input tensors must have the same outer dimensions.")
    if rhs.shape[-2] != matrix.shape[-2]:
        raise _invalid(ctx, "Input matrix and right-hand side must have the same number of "
                            "rows.")


def _solve(ctx: KernelContext, message: str, a: Any, b: Any) -> Any:
    xp = ctx.xp
    if a.shape[-1] == 0 or b.shape[-1] == 0:
        return xp.zeros((*a.shape[:-2], a.shape[-1], b.shape[-1]), dtype=a.dtype)
    return _checked(ctx, message, lambda: xp.linalg.solve(a, b), a, b)


def matrix_solve(ctx: KernelContext, matrix: Any, rhs: Any) -> Any:
    _check_solve(ctx, matrix, rhs)
    xp, a = ctx.xp, _working(matrix)
    if ctx.attr("adjoint"):
        a = _adjoint(xp, a)
    return _out(ctx, _solve(ctx, SOLVE_NOT_INVERTIBLE, a, _working(rhs)))


def band_mask(xp: Any, rows: int, cols: int, num_lower: int, num_upper: int) -> Any:
    """Boolean [rows, cols] mask of the band; a negative count keeps that whole triangle."""
    offset = xp.arange(cols)[None, :] - xp.arange(rows)[:, None]  # j - i
    keep = xp.ones((rows, cols), dtype=bool)
    if num_lower >= 0:
        keep &= -offset <= num_lower
    if num_upper >= 0:
        keep &= offset <= num_upper
    return keep


def matrix_triangular_solve(ctx: KernelContext, matrix: Any, rhs: Any) -> Any:
    _check_solve(ctx, matrix, rhs)
    xp, n = ctx.xp, matrix.shape[-1]
    lower = ctx.attr("lower")
    a = xp.where(band_mask(xp, n, n, -1, 0) if lower else band_mask(xp, n, n, 0, -1),
                 _working(matrix), 0)
    if n and bool((xp.diagonal(a, axis1=-2, axis2=-1) == 0).any()):
        raise _invalid(ctx, SOLVE_NOT_INVERTIBLE)
    if ctx.attr("adjoint"):
        a = _adjoint(xp, a)
    return _out(ctx, _solve(ctx, SOLVE_NOT_INVERTIBLE, a, _working(rhs)))


def matrix_solve_ls(ctx: KernelContext, matrix: Any, rhs: Any, l2: Any) -> Any:
    """Least squares by the regularized normal equations (``fast``) or the pseudo-inverse
    (TF's complete orthogonal decomposition: the minimum-norm solution; the regularizer is not
    used)."""
    _check_solve(ctx, matrix, rhs, square=False)
    xp, a, b = ctx.xp, _working(matrix), _working(rhs)
    m, n = a.shape[-2:]
    if not ctx.attr("fast"):
        return _out(ctx, xp.matmul(xp.linalg.pinv(a), b))
    at = _adjoint(xp, a)
    reg = float(l2) * xp.eye(min(m, n), dtype=a.dtype)
    if m >= n:
        return _out(ctx, _solve(ctx, LS_FAILED, _positive(ctx, at @ a + reg), at @ b))
    return _out(ctx, at @ _solve(ctx, LS_FAILED, _positive(ctx, a @ at + reg), b))


def _positive(ctx: KernelContext, gram: Any) -> Any:
    """`gram`, after checking that it has a Cholesky factor, as TF's LLT path does."""
    _checked(ctx, LS_FAILED, lambda: ctx.xp.linalg.cholesky(gram), gram)
    return gram


# -- matrix functions -------------------------------------------------------------------------


def _float64(x: Any) -> Any:
    return x.astype("float64")


def matrix_square_root(ctx: KernelContext, x: Any) -> Any:
    """Scaled Denman-Beavers iteration: ``Y -> sqrtm(A)``, ``Z -> inv(sqrtm(A))``."""
    _check_square(ctx, x)
    xp, a = ctx.xp, _float64(x)
    n = a.shape[-1]
    if a.size == 0:
        return _out(ctx, a)
    y, z = a, _eye_like(xp, a)
    for _ in range(64):
        try:
            y_inv, z_inv = xp.linalg.inv(y), xp.linalg.inv(z)
        except np.linalg.LinAlgError:  # singular: no principal root by this iteration (TF: NaN)
            return _out(ctx, xp.full(a.shape, xp.nan))
        # determinant scaling speeds up the first iterations on badly scaled matrices
        _, log_y = xp.linalg.slogdet(y)
        _, log_z = xp.linalg.slogdet(z)
        mu = xp.exp(-(log_y + log_z) / (2 * n))[..., None, None]
        y_next = (mu * y + z_inv / mu) / 2
        z_next = (mu * z + y_inv / mu) / 2
        step = float(xp.abs(y_next - y).max())
        y, z = y_next, z_next
        # convergence is quadratic: the error after a step this small is at rounding level
        if step <= 1e-12 * max(float(xp.abs(y).max()), 1.0):
            break
    return _out(ctx, y)


# Pade-13 coefficients and the 1-norm bound below which it is accurate in double (Higham 2005).
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def matrix_exponential(ctx: KernelContext, x: Any) -> Any:
    _check_square(ctx, x)
    xp, a = ctx.xp, _float64(x)
    if a.size == 0:
        return _out(ctx, a)
    norm = xp.abs(a).sum(axis=-2).max(axis=-1)
    squarings = xp.maximum(xp.ceil(xp.log2(xp.maximum(norm, 1e-300) / _THETA13)), 0)
    a = a / (2.0 ** squarings)[..., None, None]
    b, eye = _PADE13, _eye_like(xp, a)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
             + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * eye
    result = xp.linalg.solve(v - u, v + u)
    for k in range(int(squarings.max())):
        result = xp.where((squarings > k)[..., None, None], result @ result, result)
    return _out(ctx, result)


# -- matrix structure ---------------------------------------------------------------------------


def _scalar(ctx: KernelContext, name: str, value: Any) -> int:
    if value.ndim != 0:
        raise _invalid(ctx, f"{name} must be scalar, got shape {list(value.shape)}")
    return int(value)


def matrix_band_part(ctx: KernelContext, x: Any, num_lower: Any, num_upper: Any) -> Any:
    if x.ndim < 2:
        raise _invalid(ctx, f"input must be at least 2-dim, received shape: {list(x.shape)}")
    rows, cols = x.shape[-2:]
    lower = _scalar(ctx, "num_lower", num_lower)
    upper = _scalar(ctx, "num_upper", num_upper)
    if lower > rows:
        raise _invalid(ctx, f"num_lower must be negative or less or equal to number of rows "
                            f"({rows}) got: {lower}")
    if upper > cols:
        raise _invalid(ctx, f"num_upper must be negative or less or equal to number of columns "
                            f"({cols}) got: {upper}")
    xp = ctx.xp
    return xp.where(band_mask(xp, rows, cols, lower, upper), x, xp.zeros((), dtype=x.dtype))


def matrix_diag(ctx: KernelContext, diagonal: Any) -> Any:
    xp, n = ctx.xp, diagonal.shape[-1]
    out = xp.zeros((*diagonal.shape, n), dtype=diagonal.dtype)
    index = xp.arange(n)
    out[..., index, index] = diagonal
    return out


def matrix_diag_part(ctx: KernelContext, x: Any) -> Any:
    return ctx.xp.diagonal(x, axis1=-2, axis2=-1).copy()


def matrix_set_diag(ctx: KernelContext, x: Any, diagonal: Any) -> Any:
    p = min(x.shape[-2:])
    if diagonal.shape != (*x.shape[:-2], p):
        raise _invalid(ctx, f"must have diagonal.shape == input.shape[:-2] + "
                            f"[min(input.shape[-2:])], but received input shape: "
                            f"{list(x.shape)} and diagonal shape: {list(diagonal.shape)}")
    xp = ctx.xp
    out = x.copy()
    index = xp.arange(p)
    out[..., index, index] = diagonal
    return out


def diag(ctx: KernelContext, diagonal: Any) -> Any:
    xp, size = ctx.xp, diagonal.size
    out = xp.zeros((size, size), dtype=diagonal.dtype)
    index = xp.arange(size)
    out[index, index] = diagonal.reshape(-1)
    return out.reshape(diagonal.shape * 2)


def diag_part(ctx: KernelContext, x: Any) -> Any:
    half = x.ndim // 2
    if x.ndim % 2 or x.shape[:half] != x.shape[half:]:
        raise _invalid(ctx, f"Invalid shape {list(x.shape)}: dimensions [0, {half}) must match "
                            f"dimensions [{half}, {x.ndim})")
    size = int(np.prod(x.shape[:half], dtype=np.int64))
    index = ctx.xp.arange(size)
    return x.reshape(size, size)[index, index].reshape(x.shape[:half])


def cross(ctx: KernelContext, a: Any, b: Any) -> Any:
    if a.shape != b.shape:
        raise _invalid(ctx, f"Both inputs must be of same shape: {list(a.shape)} vs. "
                            f"{list(b.shape)}")
    if a.ndim == 0 or a.shape[-1] != 3:
        raise _invalid(ctx, f"Trailing dimension must be of size 3, got {list(a.shape)}")
    return _out(ctx, ctx.xp.cross(a, b))


def einsum(ctx: KernelContext, *inputs: Any) -> Any:
    xp = ctx.xp
    equation = parse_equation(ctx.attr("equation"), len(inputs), lambda m: _invalid(ctx, m))
    output = tokens(equation.output)
    unique = list(dict.fromkeys(output))
    try:
        value = xp.einsum(f"{','.join(equation.inputs)}->{''.join(unique)}", *inputs)
    except ValueError as exc:
        raise _invalid(ctx, f"Einsum '{equation}' with input shapes "
                            f"{[list(x.shape) for x in inputs]}: {exc}") from None
    value = xp.asarray(value)
    if len(unique) != len(output):
        value = _embed_diagonals(xp, value, unique, output)
    return _out(ctx, value)


def _embed_diagonals(xp: Any, value: Any, unique: list[str], output: list[str]) -> Any:
    """`value` (axes labelled by `unique`) written on the diagonals of an array labelled by
    `output`, where some labels repeat; zeros elsewhere."""
    axes: dict[str, list[int]] = {}
    position = 0
    for token in unique:
        width = value.ndim - len(unique) + 1 if token == ELLIPSIS else 1
        axes[token] = list(range(position, position + width))
        position += width
    index, shape = [], []
    for token in output:
        for axis in axes[token]:
            size = value.shape[axis]
            layout = [1] * value.ndim
            layout[axis] = size
            index.append(xp.arange(size).reshape(layout))
            shape.append(size)
    out = xp.zeros(shape, dtype=value.dtype)
    out[tuple(index)] = value
    return out


KERNELS: dict[str, Callable[..., Any]] = {
    "MatrixInverse": matrix_inverse, "MatrixDeterminant": matrix_determinant,
    "LogMatrixDeterminant": log_matrix_determinant, "Cholesky": cholesky, "Lu": lu, "Qr": qr,
    "Svd": svd,    "SelfAdjointEigV2": self_adjoint_eig, "MatrixSolve": matrix_solve,
    "MatrixTriangularSolve": matrix_triangular_solve, "MatrixSolveLs": matrix_solve_ls,
    "MatrixSquareRoot": matrix_square_root, "MatrixExponential": matrix_exponential,
}
CHEAP_KERNELS: dict[str, Callable[..., Any]] = {
    "MatrixBandPart": matrix_band_part, "MatrixDiag": matrix_diag,
    "MatrixDiagPart": matrix_diag_part, "MatrixSetDiag": matrix_set_diag, "Diag": diag,
    "DiagPart": diag_part, "Cross": cross,
}


def register(registry: Any, device_type: str) -> None:
    for op, fn in KERNELS.items():
        registry.add(op, device_type, fn, expensive=True)
    for op, fn in CHEAP_KERNELS.items():
        registry.add(op, device_type, fn)
    registry.add("Einsum", device_type, einsum, expensive=True)
