"""Linear algebra with ``tf.compat.v1``'s names and signatures: the top-level ``tw.matrix_inverse``,
``tw.cholesky``, ``tw.matrix_solve``, ``tw.svd``, ``tw.einsum``, ``tw.norm``, ... (`__all__`)
and the helpers behind ``tw.linalg`` (``slogdet``, ``logdet``, ``expm``, ``adjoint``,
``matvec``, ...).

Contract: each function builds the TF 1.15 op of the same job (``MatrixInverse``, ``Svd``,
``Einsum``, ...) or TF's composite of such ops (``cholesky_solve``, ``logdet``, ``eye``,
``trace``, ``norm``), so shapes and dtypes are inferred at construction and gradients come from
the ops' registered gradients. Matrix arguments are batches over their leading dims. Functions
with several outputs return tuples in TF's order (``svd``: ``s, u, v``; ``qr``: ``q, r``;
``self_adjoint_eig``: ``e, v``). ``einsum`` takes any number of operands (more than two are
contracted left to right) and numpy's implicit form without ``->``.
"""

from __future__ import annotations

import collections
import numbers
from typing import Any

import numpy as np

from tensorweave.api import array_ops, math_ops
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor, is_tensor_like
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import apply, make_op

__all__ = [
    "cholesky", "cholesky_solve", "cross", "diag", "diag_part", "einsum", "eye",
    "matrix_band_part", "matrix_determinant", "matrix_diag", "matrix_diag_part",
    "matrix_inverse", "matrix_set_diag", "matrix_solve", "matrix_solve_ls",
    "matrix_square_root", "matrix_transpose", "matrix_triangular_solve", "norm", "qr",
    "self_adjoint_eig", "self_adjoint_eigvals", "svd", "trace",
]

Lu = collections.namedtuple("Lu", ["lu", "p"])
Qr = collections.namedtuple("Qr", ["q", "r"])
LogMatrixDeterminant = collections.namedtuple("LogMatrixDeterminant",
                                              ["sign", "log_abs_determinant"])


# -- decompositions, inverses, determinants -----------------------------------------------------


def matrix_inverse(input: Any, adjoint: bool = False,  # noqa: A002 - TF's name
                   name: str | None = None) -> Tensor:
    return apply("MatrixInverse", [input], {"adjoint": adjoint}, name=name or "MatrixInverse")


def matrix_determinant(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    return apply("MatrixDeterminant", [input], name=name or "MatrixDeterminant")


def log_matrix_determinant(input: Any,  # noqa: A002
                           name: str | None = None) -> LogMatrixDeterminant:
    """``(sign, log|det|)`` of each matrix: ``tw.linalg.slogdet``."""
    op = make_op("LogMatrixDeterminant", [input], name=name or "LogMatrixDeterminant")
    return LogMatrixDeterminant(*op.outputs)


def logdet(matrix: Any, name: str | None = None) -> Tensor:
    """``log(det(matrix))`` of Hermitian positive-definite matrices, through their Cholesky
    factor (twice the sum of the logs of its diagonal)."""
    with name_scope(name, "logdet", [matrix]):
        chol = cholesky(matrix)
        return 2.0 * math_ops.reduce_sum(math_ops.log(matrix_diag_part(chol)), axis=[-1])


def cholesky(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    return apply("Cholesky", [input], name=name or "Cholesky")


def lu(input: Any, output_idx_type: Any = dtypes.int32,  # noqa: A002
       name: str | None = None) -> Lu:
    """Partial-pivoting LU factors of invertible matrices: ``lu`` packs unit-lower ``L``
    (strictly below the diagonal) and ``U``; ``input[..., p, :] == L @ U``."""
    op = make_op("Lu", [input], {"output_idx_type": dtypes.as_dtype(output_idx_type)},
                 name=name or "Lu")
    return Lu(*op.outputs)


def qr(input: Any, full_matrices: bool = False,  # noqa: A002
       name: str | None = None) -> Qr:
    op = make_op("Qr", [input], {"full_matrices": full_matrices}, name=name or "Qr")
    return Qr(*op.outputs)


def svd(tensor: Any, full_matrices: bool = False, compute_uv: bool = True,
        name: str | None = None) -> Any:
    """Singular values `s` (descending) and, with `compute_uv`, ``u`` and ``v`` such that
    ``tensor == u @ diag(s) @ transpose(v)``: ``(s, u, v)``, else `s` alone."""
    op = make_op("Svd", [tensor], {"full_matrices": full_matrices, "compute_uv": compute_uv},
                 name=name or "svd")
    s, u, v = op.outputs
    return (s, u, v) if compute_uv else s


def self_adjoint_eig(tensor: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Eigenvalues (ascending) and eigenvectors (columns) of self-adjoint matrices, read from
    their lower triangles."""
    op = make_op("SelfAdjointEigV2", [tensor], {"compute_v": True},
                 name=name or "self_adjoint_eig")
    return op.outputs[0], op.outputs[1]


def self_adjoint_eigvals(tensor: Any, name: str | None = None) -> Tensor:
    op = make_op("SelfAdjointEigV2", [tensor], {"compute_v": False},
                 name=name or "self_adjoint_eigvals")
    return op.outputs[0]


def matrix_square_root(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    return apply("MatrixSquareRoot", [input], name=name or "MatrixSquareRoot")


def matrix_exponential(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """``tw.linalg.expm``: the matrix exponential of each matrix."""
    return apply("MatrixExponential", [input], name=name or "MatrixExponential")


# -- solvers -----------------------------------------------------------------------------------


def matrix_solve(matrix: Any, rhs: Any, adjoint: bool = False,
                 name: str | None = None) -> Tensor:
    return apply("MatrixSolve", [matrix, rhs], {"adjoint": adjoint}, name=name or "MatrixSolve")


def matrix_triangular_solve(matrix: Any, rhs: Any, lower: bool = True, adjoint: bool = False,
                            name: str | None = None) -> Tensor:
    return apply("MatrixTriangularSolve", [matrix, rhs], {"lower": lower, "adjoint": adjoint},
                 name=name or "MatrixTriangularSolve")


def matrix_solve_ls(matrix: Any, rhs: Any, l2_regularizer: Any = 0.0, fast: bool = True,
                    name: str | None = None) -> Tensor:
    """Least-squares solutions of ``matrix @ x = rhs`` (regularized by `l2_regularizer`; the
    minimum-norm solution for underdetermined systems): ``tw.linalg.lstsq``."""
    with name_scope(name, "matrix_solve_ls", [matrix, rhs, l2_regularizer]) as scope:
        l2 = math_ops.cast(l2_regularizer, dtypes.float64)
        return apply("MatrixSolveLs", [matrix, rhs, l2], {"fast": fast}, name=scope)


def cholesky_solve(chol: Any, rhs: Any, name: str | None = None) -> Tensor:
    """Solve ``A x = rhs`` given ``chol``, the lower Cholesky factor of ``A``."""
    with name_scope(name, "cholesky_solve", [chol, rhs]):
        y = matrix_triangular_solve(chol, rhs, lower=True, adjoint=False)
        return matrix_triangular_solve(chol, y, lower=True, adjoint=True)


# -- matrix structure ------------------------------------------------------------------------


def matrix_band_part(input: Any, num_lower: Any, num_upper: Any,  # noqa: A002
                     name: str | None = None) -> Tensor:
    """Keep `num_lower` subdiagonals and `num_upper` superdiagonals (negative: all) of each
    matrix; zero the rest."""
    x = convert_to_tensor(input)
    index_type = num_lower.dtype if isinstance(num_lower, Tensor) else (
        num_upper.dtype if isinstance(num_upper, Tensor) else dtypes.int64)
    bounds = [b if isinstance(b, Tensor) else convert_to_tensor(b, index_type)
              for b in (num_lower, num_upper)]
    return apply("MatrixBandPart", [x, *bounds], name=name or "MatrixBandPart")


def _is_default(value: Any, default: int) -> bool:
    """True for a Python/numpy `default`, so the pre-band ops (V1) are built as before."""
    return not is_tensor_like(value) and np.array_equal(np.asarray(value), default)


def _diag_index(k: Any) -> Any:
    return k if is_tensor_like(k) else np.asarray(k, np.int32)


def matrix_diag(diagonal: Any, name: str | None = None, k: Any = 0, num_rows: Any = -1,
                num_cols: Any = -1, padding_value: Any = 0) -> Tensor:
    """TF 1.15's ``tf.linalg.diag``: a band ``k`` of diagonals (``MatrixDiagV2``)."""
    if all(_is_default(v, d) for v, d in ((k, 0), (num_rows, -1), (num_cols, -1),
                                          (padding_value, 0))):
        return apply("MatrixDiag", [diagonal], name=name or "MatrixDiag")
    return apply("MatrixDiagV2", [diagonal, _diag_index(k), num_rows, num_cols, padding_value],
                 name=name or "MatrixDiagV2")


def matrix_diag_part(input: Any, name: str | None = None, k: Any = 0,  # noqa: A002
                     padding_value: Any = 0) -> Tensor:
    """TF 1.15's ``tf.linalg.diag_part``: a band ``k`` of diagonals (``MatrixDiagPartV2``)."""
    if _is_default(k, 0) and _is_default(padding_value, 0):
        return apply("MatrixDiagPart", [input], name=name or "MatrixDiagPart")
    return apply("MatrixDiagPartV2", [input, _diag_index(k), padding_value],
                 name=name or "MatrixDiagPartV2")


def matrix_set_diag(input: Any, diagonal: Any, name: str | None = None,  # noqa: A002
                    k: Any = 0) -> Tensor:
    """TF 1.15's ``tf.linalg.set_diag``: a band ``k`` of diagonals (``MatrixSetDiagV2``)."""
    if _is_default(k, 0):
        return apply("MatrixSetDiag", [input, diagonal], name=name or "MatrixSetDiag")
    return apply("MatrixSetDiagV2", [input, diagonal, _diag_index(k)],
                 name=name or "MatrixSetDiagV2")


def diag(diagonal: Any, name: str | None = None) -> Tensor:
    """The tensor of rank ``2k`` with `diagonal` (rank ``k``) on its diagonal."""
    return apply("Diag", [diagonal], name=name or "Diag")


def diag_part(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    return apply("DiagPart", [input], name=name or "DiagPart")


def matrix_transpose(a: Any, name: str = "matrix_transpose",
                     conjugate: bool = False) -> Tensor:
    """Swap the two innermost dims, conjugating a complex `a` when `conjugate` is set."""
    with name_scope(name, "matrix_transpose", [a]) as scope:
        a = convert_to_tensor(a, name="a")
        ndims = a.shape.ndims
        if ndims is not None:
            if ndims < 2:
                raise ValueError(f"Argument 'a' should be a (batch) matrix, with rank >= 2.  "
                                 f"Found: {a.shape}")
            perm: Any = np.asarray([*range(ndims - 2), ndims - 1, ndims - 2], np.int32)
        else:
            r = array_ops.rank(a)
            perm = array_ops.concat([array_ops.range(0, r - 2), array_ops.stack([r - 1, r - 2])],
                                    0)
        op = "ConjugateTranspose" if conjugate and a.dtype.is_complex else "Transpose"
        return apply(op, [a, perm], name=scope)


def adjoint(matrix: Any, name: str | None = None) -> Tensor:
    """The conjugate transpose of each matrix."""
    return matrix_transpose(matrix, name=name or "adjoint", conjugate=True)


def _int_list(value: Any) -> list[int] | None:
    """`value` as Python ints when it is static (ints, lists of ints), else None."""
    if isinstance(value, Tensor):
        return None
    if isinstance(value, numbers.Integral):
        return [int(value)]
    items = list(value)
    return [int(v) for v in items] if all(isinstance(v, numbers.Integral) for v in items) else None


def eye(num_rows: Any, num_columns: Any = None, batch_shape: Any = None,
        dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """Identity matrices ``[*batch_shape, num_rows, num_columns]`` (square by default)."""
    with name_scope(name, "eye", [num_rows, num_columns, batch_shape]):
        square = num_columns is None
        num_columns = num_rows if square else num_columns
        batch = [] if batch_shape is None else batch_shape
        static = [_int_list(v) for v in (num_rows, num_columns, batch)]
        if all(s is not None for s in static):
            rows, cols, batch_dims = static[0][0], static[1][0], static[2]
            ones = array_ops.ones([*batch_dims, min(rows, cols)], dtype=dtype)
            if square:
                return matrix_diag(ones)
            return matrix_set_diag(array_ops.zeros([*batch_dims, rows, cols], dtype=dtype), ones)
        rows, cols = (math_ops.cast(v, dtypes.int32) for v in (num_rows, num_columns))
        batch_t = math_ops.cast(convert_to_tensor(batch, dtypes.int32) if batch != []
                                else np.zeros([0], np.int32), dtypes.int32)
        size = math_ops.minimum(rows, cols)
        ones = array_ops.ones(array_ops.concat([batch_t, array_ops.stack([size])], 0), dtype)
        if square:
            return matrix_diag(ones)
        zeros = array_ops.zeros(array_ops.concat([batch_t, array_ops.stack([rows, cols])], 0),
                                dtype)
        return matrix_set_diag(zeros, ones)


def trace(x: Any, name: str | None = None) -> Tensor:
    """The sum of each matrix's diagonal."""
    with name_scope(name, "Trace", [x]) as scope:
        return math_ops.reduce_sum(matrix_diag_part(x), [-1], name=scope)


# -- products ----------------------------------------------------------------------------------


def matvec(a: Any, b: Any, transpose_a: bool = False, adjoint_a: bool = False,
           a_is_sparse: bool = False, b_is_sparse: bool = False,
           name: str | None = None) -> Tensor:
    """Matrix-vector products ``a @ b`` over batches of matrices `a` and vectors `b`."""
    with name_scope(name, "MatVec", [a, b]):
        column = math_ops.matmul(a, array_ops.expand_dims(b, -1), transpose_a=transpose_a,
                                 adjoint_a=adjoint_a, a_is_sparse=a_is_sparse,
                                 b_is_sparse=b_is_sparse)
        return array_ops.squeeze(column, axis=-1)


def cross(a: Any, b: Any, name: str | None = None) -> Tensor:
    """Pairwise cross products of the 3-vectors along the last dim."""
    x, y = math_ops.binary_inputs(a, b)
    return apply("Cross", [x, y], name=name or "Cross")


def einsum(equation: str, *inputs: Any, **kwargs: Any) -> Tensor:
    """numpy's einsum: ``"ij,jk->ik"``; without ``->`` the output is the labels used once,
    sorted. Two operands or one map to one ``Einsum`` op; more are contracted pairwise."""
    # imported here: the plugin package imports every standard op module, a cost that
    # ``import tensorweave`` should not pay
    from tensorweave.api.einsum_equation import (
        ELLIPSIS,
        implicit_output,
        parse_equation,
    )

    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"invalid keyword arguments for this function: {sorted(kwargs)}")
    if not inputs:
        raise ValueError("einsum needs at least one input")
    text = equation.replace(" ", "")
    if "->" not in text:
        text = f"{text}->{implicit_output(text.split(','))}"
    parsed = parse_equation(text, len(inputs), ValueError)
    with name_scope(name, "einsum", list(inputs)) as scope:
        tensors = [convert_to_tensor(t) for t in inputs]
        if len(tensors) <= 2:
            return _einsum_op(str(parsed), tensors, scope)
        left, result = parsed.inputs[0], tensors[0]
        for k in range(1, len(tensors)):
            right = parsed.inputs[k]
            if k == len(tensors) - 1:
                out = parsed.output
            else:
                needed = set("".join(parsed.inputs[k + 1:]) + parsed.output)
                labels = dict.fromkeys((left + right).replace(ELLIPSIS, ""))
                batch = ELLIPSIS if ELLIPSIS in left + right else ""
                out = batch + "".join(c for c in labels if c in needed)
            last = k == len(tensors) - 1
            result = _einsum_op(f"{left},{right}->{out}", [result, tensors[k]],
                                scope if last else None)
            left = out
        return result


def _einsum_op(equation: str, tensors: list[Tensor], name: str | None) -> Tensor:
    return apply("Einsum", [tensors], {"equation": equation}, name=name or "Einsum")


# -- norms -------------------------------------------------------------------------------------

_VECTOR_NORMS = ("euclidean", 1, 2, np.inf)
_MATRIX_NORMS = ("euclidean", "fro", 1, 2, np.inf)


def _norm_axis(axis: Any, ord: Any) -> tuple[tuple[int, ...] | None, bool]:  # noqa: A002
    """`axis` normalized to a tuple (or None), and whether it asks for a matrix norm."""
    if isinstance(axis, (tuple, list)) and len(axis) == 2:
        axis = tuple(axis)
        if not all(isinstance(a, numbers.Integral) for a in axis) or axis[0] == axis[1]:
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique "
                             f"integers, got {axis}")
        if ord not in _MATRIX_NORMS:
            raise ValueError(f"'ord' must be a supported matrix norm in "
                             f"{list(_MATRIX_NORMS)}, got {ord}")
        return axis, True
    if not (axis is None or isinstance(axis, numbers.Integral)):
        raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, "
                         f"got {axis}")
    if ord not in _VECTOR_NORMS and (isinstance(ord, str) or not np.isreal(ord) or ord <= 0):
        raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
    return (None if axis is None else (int(axis),)), False


def norm(tensor: Any, ord: Any = "euclidean", axis: Any = None,  # noqa: A002 - TF's name
         keepdims: bool | None = None, name: str | None = None,
         keep_dims: bool | None = None) -> Tensor:
    """Vector norms (``ord`` euclidean, 1, 2, inf or any p > 0) over one axis or all of
    `tensor`; matrix norms (fro/euclidean, 1, 2, inf) over a pair of axes."""
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
    keep = bool(keepdims if keepdims is not None else keep_dims)
    axes, is_matrix = _norm_axis(axis, ord)
    with name_scope(name, "norm", [tensor]):
        x = convert_to_tensor(tensor)
        sum_axes = None if axes is None else list(axes)
        if ord in ("fro", "euclidean") or (ord == 2 and not is_matrix):
            result = math_ops.sqrt(math_ops.reduce_sum(x * x, sum_axes, keepdims=True))
        elif ord == 2:
            result = _spectral_norm(x, axes)
        else:
            result = math_ops.abs(x)
            if ord == 1:
                result = math_ops.reduce_sum(result, None if axes is None else axes[0],
                                             keepdims=True)
                if is_matrix:
                    result = math_ops.reduce_max(result, axes[1], keepdims=True)
            elif ord == np.inf:
                if is_matrix:
                    result = math_ops.reduce_sum(result, axes[1], keepdims=True)
                result = math_ops.reduce_max(result, None if axes is None else axes[0],
                                             keepdims=True)
            else:
                powered = math_ops.reduce_sum(math_ops.pow(result, float(ord)), sum_axes,
                                              keepdims=True)
                result = math_ops.pow(powered, 1.0 / ord)
        if not keep:
            result = array_ops.squeeze(result, sum_axes)
        return result


def _spectral_norm(x: Tensor, axes: tuple[int, ...]) -> Tensor:
    """The largest singular value over the matrix `axes`, with those axes kept as size 1."""
    rank = x.shape.ndims
    if rank is None:
        raise ValueError("norm with ord=2 over a pair of axes needs an input of known rank")
    matrix_axes = [a % rank for a in axes]
    perm_before = [i for i in range(rank) if i not in matrix_axes] + matrix_axes
    perm_after = [perm_before.index(i) for i in range(rank)]
    permuted = array_ops.transpose(x, perm_before)
    largest = math_ops.reduce_max(svd(permuted, compute_uv=False), -1, keepdims=True)
    return array_ops.transpose(array_ops.expand_dims(largest, -1), perm_after)
