"""Gradient functions of the linear-algebra ops: the maths of TF 1.15's ``linalg_grad.py`` and
the matrix-structure gradients of ``array_grad.py``, for real dtypes.

Contract: each function is ``fn(op, *grads) -> [gradient or None per input]``, built from ops
that have gradients themselves where TF's do. Decompositions follow TF's formulas and limits:
``Qr`` and ``Svd`` need static inner matrix dims (``NotImplementedError`` otherwise, as TF);
``SelfAdjointEigV2`` and ``Svd`` are singular (Lorentz-broadened) where eigenvalues or
singular values repeat; ``Cholesky`` and ``SelfAdjointEigV2`` return the gradient TF returns
(symmetrized, resp. lower-triangular). ``MatrixSquareRoot`` solves the adjoint Sylvester equation
as one Kronecker-product linear system; ``MatrixExponential`` takes the upper-right block of the
exponential of ``[[A^T, G], [0, A^T]]`` (the adjoint Frechet derivative). ``Einsum`` maps each
operand's gradient to another ``Einsum`` and sums away broadcast batch dims.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, control_flow_ops, linalg_ops, math_ops
from tensorweave.api.einsum_equation import ELLIPSIS, parse_equation
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply, make_op

Grads = list[Tensor | None]

mm = math_ops.matmul
transpose = linalg_ops.matrix_transpose
band_part = linalg_ops.matrix_band_part
diag_part = linalg_ops.matrix_diag_part
set_diag = linalg_ops.matrix_set_diag


def _eye_like(x: Tensor) -> Tensor:
    """Identity matrices of square `x`'s shape."""
    return set_diag(array_ops.zeros_like(x), array_ops.ones_like(diag_part(x)))


def _as_matrix_scale(v: Tensor) -> Tensor:
    """A batch of scalars shaped to multiply a batch of matrices."""
    return array_ops.expand_dims(array_ops.expand_dims(v, -1), -1)


def _safe_reciprocal(x: Tensor, epsilon: float = 1e-20) -> Tensor:
    # keeps the eigen/singular gradients finite (huge, not inf) for repeated values, as TF
    return x * math_ops.reciprocal(x * x + epsilon)


def _pairwise_differences(v: Tensor) -> Tensor:
    """``f[..., i, j] = 1 / (v_j - v_i)`` off the diagonal, 0 on it."""
    f = _safe_reciprocal(array_ops.expand_dims(v, -2) - array_ops.expand_dims(v, -1))
    return set_diag(f, array_ops.zeros_like(v))


def _static_inner(t: Tensor) -> tuple[int | None, int | None]:
    dims = t.shape.as_list() if t.shape.ndims is not None else [None, None]
    return dims[-2], dims[-1]


# -- inverses and determinants ------------------------------------------------------------------


def _inverse_grad(op: Operation, grad: Tensor) -> Grads:
    c = op.outputs[0]
    if op.get_attr("adjoint"):  # C = inv(A^T): dC = -C dA^T C
        return [-mm(c, mm(grad, c, adjoint_a=True))]
    return [-mm(c, mm(grad, c, adjoint_b=True), adjoint_a=True)]


def _determinant_grad(op: Operation, grad: Tensor) -> Grads:
    a, det = op.inputs[0], op.outputs[0]
    return [_as_matrix_scale(grad * det) * linalg_ops.matrix_inverse(a, adjoint=True)]


def _log_determinant_grad(op: Operation, _sign_grad: Tensor, grad: Tensor) -> Grads:
    return [_as_matrix_scale(grad) * linalg_ops.matrix_inverse(op.inputs[0], adjoint=True)]


# -- factorizations ---------------------------------------------------------------------------


def _cholesky_grad(op: Operation, grad: Tensor) -> Grads:
    # l^-T (Phi(l^T g)) l^-1, symmetrized; Phi keeps the lower triangle with half its diagonal
    lower = op.outputs[0]
    l_inv = linalg_ops.matrix_triangular_solve(lower, _eye_like(lower))
    middle = mm(lower, grad, adjoint_a=True)
    middle = band_part(set_diag(middle, 0.5 * diag_part(middle)), -1, 0)
    grad_a = mm(mm(l_inv, middle, adjoint_a=True), l_inv)
    return [0.5 * (grad_a + transpose(grad_a))]


def _times_inverse_transpose(x: Tensor, r: Tensor) -> Tensor:
    """``x @ inv(r)^T`` for upper-triangular `r`."""
    return transpose(linalg_ops.matrix_triangular_solve(r, transpose(x), lower=False))


def _qr_grad_deep(q: Tensor, r: Tensor, dq: Tensor, dr: Tensor) -> Tensor:
    """QR gradient for rows >= cols with reduced matrices."""
    qdq = mm(q, dq, adjoint_a=True)
    rdr = mm(r, dr, adjoint_b=True)
    tril = band_part(qdq - transpose(qdq) + rdr - transpose(rdr), -1, 0)
    grad_a = mm(q, dr + _times_inverse_transpose(tril, r))
    return grad_a + _times_inverse_transpose(dq - mm(q, qdq), r)


def _qr_grad(op: Operation, dq: Tensor, dr: Tensor) -> Grads:
    q, r = op.outputs
    rows, cols = _static_inner(r)
    q_rows, q_cols = _static_inner(q)
    if rows is None or cols is None or q_rows is None:
        raise NotImplementedError("QrGrad not implemented with dynamic shapes.")
    if rows > cols and q_rows == q_cols:
        raise NotImplementedError("QrGrad not implemented when nrows > ncols and "
                                  "full_matrices is true.")
    if q_rows >= cols:
        return [_qr_grad_deep(q, r, dq, dr)]
    # wide: a = [x, y] and r = [u, v] with square x; reduce to the square case
    a, m = op.inputs[0], q_rows
    y, u = a[..., :, m:], r[..., :, :m]
    dv, du = dr[..., :, m:], dr[..., :, :m]
    dx = _qr_grad_deep(q, u, dq + mm(y, dv, adjoint_b=True), du)
    return [array_ops.concat([dx, mm(q, dv)], axis=-1)]


def _self_adjoint_eig_grad(op: Operation, grad_e: Tensor, grad_v: Tensor) -> Grads:
    e = op.outputs[0]
    if op.get_attr("compute_v"):
        v = op.outputs[1]
        inner = linalg_ops.matrix_diag(grad_e) + _pairwise_differences(e) * mm(
            v, grad_v, adjoint_a=True)
    else:
        _, v = linalg_ops.self_adjoint_eig(op.inputs[0])
        inner = linalg_ops.matrix_diag(grad_e)
    grad_a = mm(v, mm(inner, v, adjoint_b=True))
    # the kernel reads the lower triangle only: fold the upper part onto it
    grad_a = band_part(grad_a + transpose(grad_a), -1, 0)
    return [set_diag(grad_a, 0.5 * diag_part(grad_a))]


def _svd_grad(op: Operation, grad_s: Tensor, grad_u: Tensor, grad_v: Tensor) -> Grads:
    a = op.inputs[0]
    grad_s_mat = linalg_ops.matrix_diag(grad_s)
    if not op.get_attr("compute_uv"):
        _, u, v = linalg_ops.svd(a, compute_uv=True)
        return [mm(u, mm(grad_s_mat, v, adjoint_b=True))]
    m, n = _static_inner(a)
    if m is None or n is None:
        raise NotImplementedError("SVD gradient has not been implemented for input with "
                                  "unknown inner matrix shape.")
    full = op.get_attr("full_matrices")
    s, u, v = op.outputs
    flip = m > n
    if flip:  # differentiate A^T = V S U^T instead, and transpose at the end
        m, n, u, v, grad_u, grad_v = n, m, v, u, grad_v, grad_u
    if full and abs(m - n) > 1:
        raise NotImplementedError("svd gradient is not implemented for abs(m - n) > 1 when "
                                  "full_matrices is True")
    s_mat = linalg_ops.matrix_diag(s)
    f = _pairwise_differences(math_ops.square(s))
    v1, grad_v1 = v[..., :, :m], grad_v[..., :, :m]
    f_u = f * mm(u, grad_u, adjoint_a=True)
    f_v = f * mm(v1, grad_v1, adjoint_a=True)
    inner = grad_s_mat + mm(f_u + transpose(f_u), s_mat) + mm(s_mat, f_v + transpose(f_v))
    grad_a = mm(u, mm(inner, v1, adjoint_b=True))
    if m != n:
        gv1t = transpose(grad_v1)
        rest = gv1t - mm(mm(gv1t, v1), v1, adjoint_b=True)
        if full:
            v2, grad_v2 = v[..., :, m:n], grad_v[..., :, m:n]
            rest -= mm(mm(v1, grad_v2, adjoint_a=True), v2, adjoint_b=True)
        s_inv = linalg_ops.matrix_diag(_safe_reciprocal(s))
        grad_a += mm(mm(u, s_inv), rest)
    return [transpose(grad_a) if flip else grad_a]


# -- solvers ---------------------------------------------------------------------------------


def _solve_grad(op: Operation, grad: Tensor) -> Grads:
    a, c = op.inputs[0], op.outputs[0]
    adjoint = op.get_attr("adjoint")
    grad_b = linalg_ops.matrix_solve(a, grad, adjoint=not adjoint)
    grad_a = -mm(c, grad_b, adjoint_b=True) if adjoint else -mm(grad_b, c, adjoint_b=True)
    return [grad_a, grad_b]


def _triangular_solve_grad(op: Operation, grad: Tensor) -> Grads:
    a, c = op.inputs[0], op.outputs[0]
    adjoint, lower = op.get_attr("adjoint"), op.get_attr("lower")
    grad_b = linalg_ops.matrix_triangular_solve(a, grad, lower=lower, adjoint=not adjoint)
    grad_a = -mm(c, grad_b, adjoint_b=True) if adjoint else -mm(grad_b, c, adjoint_b=True)
    return [band_part(grad_a, -1, 0) if lower else band_part(grad_a, 0, -1), grad_b]


def _gramian_cholesky(a: Tensor, l2: Tensor, first_kind: bool) -> Tensor:
    """Cholesky factor of ``A^T A + l2 I`` (first kind) or ``A A^T + l2 I``."""
    gramian = mm(a, a, adjoint_a=True) if first_kind else mm(a, a, adjoint_b=True)
    return linalg_ops.cholesky(set_diag(gramian, diag_part(gramian) + l2))


def _solve_ls_overdetermined(op: Operation, grad: Tensor, l2: Tensor) -> Grads:
    # x = (A^T A + l2 I)^-1 A^T B
    a, b, x = op.inputs[0], op.inputs[1], op.outputs[0]
    z = linalg_ops.cholesky_solve(_gramian_cholesky(a, l2, True), grad)
    xzt = mm(x, z, adjoint_b=True)
    grad_a = -mm(a, xzt + transpose(xzt)) + mm(b, z, adjoint_b=True)
    return [grad_a, mm(a, z), None]


def _solve_ls_underdetermined(op: Operation, grad: Tensor, l2: Tensor) -> Grads:
    # x = A^T (A A^T + l2 I)^-1 B
    a, b = op.inputs[0], op.inputs[1]
    chol = _gramian_cholesky(a, l2, False)
    grad_b = linalg_ops.cholesky_solve(chol, mm(a, grad))
    tmp = linalg_ops.cholesky_solve(chol, b)
    grad_a = -mm(grad_b, mm(tmp, a, adjoint_a=True)) + mm(
        tmp, grad - mm(a, grad_b, adjoint_a=True), adjoint_b=True)
    return [grad_a, grad_b, None]


def _solve_ls_grad(op: Operation, grad: Tensor) -> Grads:
    if not op.get_attr("fast"):
        raise ValueError("Gradient not defined for fast=False")
    a = op.inputs[0]
    l2 = math_ops.cast(op.inputs[2], a.dtype)
    rows, cols = _static_inner(a)
    if rows is not None and cols is not None:
        solve = _solve_ls_overdetermined if rows >= cols else _solve_ls_underdetermined
        return solve(op, grad, l2)
    inner = array_ops.shape(a)[-2:]
    grads = control_flow_ops.cond(inner[0] >= inner[1],
                                  lambda: _solve_ls_overdetermined(op, grad, l2)[:2],
                                  lambda: _solve_ls_underdetermined(op, grad, l2)[:2])
    return [*grads, None]


# -- matrix functions -------------------------------------------------------------------------


def _kronecker(p: Tensor, q: Tensor, flat: Tensor) -> Tensor:
    """Batched Kronecker products of square `p` and `q`, reshaped to `flat`."""
    p_wide = array_ops.expand_dims(array_ops.expand_dims(p, -1), -3)  # [..., n, 1, n, 1]
    q_wide = array_ops.expand_dims(array_ops.expand_dims(q, -2), -4)  # [..., 1, n, 1, n]
    return array_ops.reshape(p_wide * q_wide, flat)


def _square_root_grad(op: Operation, grad: Tensor) -> Grads:
    # A = R R, so dA = R dR + dR R; the gradient solves R^T G_A + G_A R^T = G_R, i.e.
    # (R^T kron I + I kron R) vec(G_A) = vec(G_R) with row-major vec
    root = op.outputs[0]
    shape = array_ops.shape(root)
    batch, n = shape[:-2], shape[-1]
    flat = array_ops.concat([batch, array_ops.stack([n * n, n * n])], 0)
    eye = _eye_like(root)
    system = _kronecker(transpose(root), eye, flat) + _kronecker(eye, root, flat)
    column = array_ops.reshape(grad, array_ops.concat([batch, array_ops.stack([n * n, 1])], 0))
    return [array_ops.reshape(linalg_ops.matrix_solve(system, column), shape)]


def _exponential_grad(op: Operation, grad: Tensor) -> Grads:
    a_t = transpose(op.inputs[0])
    block = array_ops.concat([array_ops.concat([a_t, grad], -1),
                              array_ops.concat([array_ops.zeros_like(a_t), a_t], -1)], -2)
    n = _static_inner(a_t)[1]
    n = array_ops.shape(a_t)[-1] if n is None else n
    return [linalg_ops.matrix_exponential(block)[..., :n, n:]]


# -- matrix structure -------------------------------------------------------------------------


def _band_part_grad(op: Operation, grad: Tensor) -> Grads:
    return [band_part(grad, op.inputs[1], op.inputs[2]), None, None]


def _matrix_diag_grad(op: Operation, grad: Tensor) -> Grads:
    return [diag_part(grad)]


def _matrix_diag_part_grad(op: Operation, grad: Tensor) -> Grads:
    rows, cols = _static_inner(op.inputs[0])
    if rows is not None and rows == cols:
        return [linalg_ops.matrix_diag(grad)]
    return [set_diag(array_ops.zeros_like(op.inputs[0]), grad)]


def _matrix_set_diag_grad(op: Operation, grad: Tensor) -> Grads:
    return [set_diag(grad, array_ops.zeros_like(op.inputs[1])), diag_part(grad)]


def _diag_grad(op: Operation, grad: Tensor) -> Grads:
    return [linalg_ops.diag_part(grad)]


def _diag_part_grad(op: Operation, grad: Tensor) -> Grads:
    return [linalg_ops.diag(grad)]


def _cross_grad(op: Operation, grad: Tensor) -> Grads:
    a, b = op.inputs
    return [linalg_ops.cross(b, grad), linalg_ops.cross(grad, a)]


# -- einsum -----------------------------------------------------------------------------------


def _einsum(equation: str, tensors: list[Tensor]) -> Tensor:
    return apply("Einsum", [tensors], {"equation": equation})


def _axis_of(subscripts: str, label: str) -> int:
    """The axis of `label`'s first occurrence: from the front before ``...``, else from the
    back."""
    before, ellipsis, after = subscripts.partition(ELLIPSIS)
    if label in before or not ellipsis:
        return before.index(label)
    return after.index(label) - len(after)


def _unreduce(grad: Tensor, output_subs: str, input_subs: str, input_shape: Tensor,
              reduced: list[str]) -> Tensor:
    """Gradient of the unary einsum ``input_subs -> output_subs`` that sums away `reduced`
    labels: broadcast `grad` along them, then map back with the reversed einsum."""
    reduced_dims = array_ops.stack([input_shape[_axis_of(input_subs, c)] for c in reduced])
    grad_shape = array_ops.shape(grad)
    ones = array_ops.ones([len(reduced)], dtype=dtypes.int32)
    widened = array_ops.broadcast_to(
        array_ops.reshape(grad, array_ops.concat([ones, grad_shape], 0)),
        array_ops.concat([reduced_dims, grad_shape], 0))
    return _einsum(f"{''.join(reduced)}{output_subs}->{input_subs}", [widened])


def _grad_wrt(grad: Tensor, other: Tensor, input_shape: Tensor, input_subs: str,
              other_subs: str, output_subs: str) -> Tensor:
    """One operand's gradient of a binary einsum, before summing broadcast dims away."""
    kept = set(output_subs + other_subs + ".")
    reduced = sorted(set(input_subs) - kept)
    left = "".join(c for c in input_subs if c not in reduced)
    partial = _einsum(f"{output_subs},{other_subs}->{left}", [grad, other])
    if not reduced:
        return partial
    return _unreduce(partial, left, input_subs, input_shape, reduced)


def _batch_range(subscripts: str, shape: Tensor) -> tuple[Tensor, int]:
    """The slice of `shape` that ``...`` covers, and where it starts."""
    start = subscripts.find(ELLIPSIS)
    after = len(subscripts) - start - len(ELLIPSIS)
    return (shape[start:-after] if after else shape[start:]), start


def _unbroadcast_einsum(grad: Tensor, shape: Tensor, axes: Tensor, start: int) -> Tensor:
    return array_ops.reshape(math_ops.reduce_sum(grad, axes + start), shape)


def _einsum_grad(op: Operation, grad: Tensor) -> Grads:
    equation = parse_equation(op.get_attr("equation"), len(op.inputs), ValueError)
    output_subs = equation.output
    if len(op.inputs) == 1:
        (input_subs,) = equation.inputs
        reduced = sorted(set(input_subs) - set(output_subs + "."))
        if not reduced:
            return [_einsum(f"{output_subs}->{input_subs}", [grad])]
        x = op.inputs[0]
        return [_unreduce(grad, output_subs, input_subs, array_ops.shape(x), reduced)]
    x, y = op.inputs
    x_subs, y_subs = equation.inputs
    if ELLIPSIS in output_subs:  # an operand without batch dims takes an empty "..."
        x_subs += "" if ELLIPSIS in x_subs else ELLIPSIS
        y_subs += "" if ELLIPSIS in y_subs else ELLIPSIS
    x_shape, y_shape = array_ops.shape(x), array_ops.shape(y)
    grad_x = _grad_wrt(grad, y, x_shape, x_subs, y_subs, output_subs)
    grad_y = _grad_wrt(grad, x, y_shape, y_subs, x_subs, output_subs)
    if ELLIPSIS not in output_subs:
        return [grad_x, grad_y]
    x_batch, x_start = _batch_range(x_subs, x_shape)
    y_batch, y_start = _batch_range(y_subs, y_shape)
    rx, ry = make_op("BroadcastGradientArgs", [x_batch, y_batch]).outputs
    return [_unbroadcast_einsum(grad_x, x_shape, rx, x_start),
            _unbroadcast_einsum(grad_y, y_shape, ry, y_start)]


def register_gradients(registry: Any) -> None:
    for name, fn in {
        "MatrixInverse": _inverse_grad, "MatrixDeterminant": _determinant_grad,
        "LogMatrixDeterminant": _log_determinant_grad, "Cholesky": _cholesky_grad,
        "Qr": _qr_grad, "SelfAdjointEigV2": _self_adjoint_eig_grad, "Svd": _svd_grad,
        "MatrixSolve": _solve_grad, "MatrixTriangularSolve": _triangular_solve_grad,
        "MatrixSolveLs": _solve_ls_grad, "MatrixSquareRoot": _square_root_grad,
        "MatrixExponential": _exponential_grad, "MatrixBandPart": _band_part_grad,
        "MatrixDiag": _matrix_diag_grad, "MatrixDiagPart": _matrix_diag_part_grad,
        "MatrixSetDiag": _matrix_set_diag_grad, "Diag": _diag_grad,
        "DiagPart": _diag_part_grad, "Cross": _cross_grad, "Einsum": _einsum_grad,
    }.items():
        registry.add(name, fn)
