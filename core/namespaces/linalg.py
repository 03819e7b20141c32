"""``tw.linalg``: the linear-algebra API under ``tf.linalg``'s names (``tw.linalg.inv``,
``tw.linalg.cholesky``, ``tw.linalg.svd``, ``tw.linalg.einsum``, ...); the ops themselves live
in `tensorweave.api.linalg_ops`. ``l2_normalize`` is looked up in `tensorweave.api.nn_ops` on
first access."""

from typing import Any

from tensorweave.api import linalg_ops as _ops
from tensorweave.api.linalg_ops import (
    adjoint,
    cholesky,
    cholesky_solve,
    cross,
    einsum,
    eye,
    logdet,
    lu,
    matrix_transpose,
    matvec,
    norm,
    qr,
    svd,
    trace,
)
from tensorweave.api.math_ops import matmul, tensordot

__all__ = [
    "adjoint", "band_part", "cholesky", "cholesky_solve", "cross", "det", "diag", "diag_part",
    "eigh", "eigvalsh", "einsum", "expm", "eye", "inv", "logdet", "lstsq", "lu", "matmul",
    "matrix_transpose", "matvec", "norm", "qr", "set_diag", "slogdet", "solve", "sqrtm", "svd",
    "tensor_diag", "tensor_diag_part", "tensordot", "trace", "transpose", "triangular_solve",
]

band_part = _ops.matrix_band_part
det = _ops.matrix_determinant
diag = _ops.matrix_diag
diag_part = _ops.matrix_diag_part
eigh = _ops.self_adjoint_eig
eigvalsh = _ops.self_adjoint_eigvals
expm = _ops.matrix_exponential
inv = _ops.matrix_inverse
lstsq = _ops.matrix_solve_ls
set_diag = _ops.matrix_set_diag
slogdet = _ops.log_matrix_determinant
solve = _ops.matrix_solve
sqrtm = _ops.matrix_square_root
tensor_diag = _ops.diag
tensor_diag_part = _ops.diag_part
transpose = matrix_transpose
triangular_solve = _ops.matrix_triangular_solve


def __getattr__(name: str) -> Any:
    if name == "l2_normalize":
        from tensorweave.api.nn_ops import l2_normalize

        return l2_normalize
    raise AttributeError(f"module 'tensorweave.linalg' has no attribute '{name}'")
