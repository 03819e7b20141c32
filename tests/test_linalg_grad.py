"""Gradients of the linear-algebra ops, checked against numerical Jacobians (``tw.test``) on
well-conditioned batched inputs."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(11)
A = RNG.normal(size=(2, 3, 3)) + 3 * np.eye(3)
B = RNG.normal(size=(2, 3, 2))


def error(fn, inits, dynamic=False, dtype=tf.float64, delta=1e-6):
    """Max gradient error of ``fn(*placeholders)``; `dynamic` hides every dim."""
    xs = [tf.placeholder(dtype, [None] * x.ndim if dynamic else x.shape) for x in inits]
    y = fn(*xs)
    with tf.Session() as sess:
        out_shape = list(np.shape(sess.run(y, dict(zip(xs, inits)))))
    return tf.test.compute_gradient_error(xs, [list(x.shape) for x in inits], y, out_shape,
                                          x_init_value=inits, delta=delta)


def spd(x):
    """A symmetric positive-definite matrix differentiable in every entry of `x`."""
    return tf.matmul(x, x, transpose_b=True) + 3 * tf.eye(3, dtype=x.dtype)


CASES = {
    "inverse": (tf.matrix_inverse, [A]),
    "inverse_adjoint": (lambda x: tf.matrix_inverse(x, adjoint=True), [A]),
    "determinant": (tf.matrix_determinant, [A]),
    "log_abs_determinant": (lambda x: tf.linalg.slogdet(x)[1], [A]),
    "logdet": (lambda x: tf.linalg.logdet(spd(x)), [A]),
    "cholesky": (lambda x: tf.cholesky(spd(x)), [A]),
    "cholesky_solve": (lambda x, b: tf.cholesky_solve(tf.cholesky(spd(x)), b), [A, B]),
    "solve": (tf.matrix_solve, [A, B]),
    "solve_adjoint": (lambda a, b: tf.matrix_solve(a, b, adjoint=True), [A, B]),
    "triangular_solve": (tf.matrix_triangular_solve, [A, B]),
    "triangular_solve_upper_adjoint": (
        lambda a, b: tf.matrix_triangular_solve(a, b, lower=False, adjoint=True), [A, B]),
    "lstsq_overdetermined": (tf.matrix_solve_ls,
                             [RNG.normal(size=(2, 4, 3)), RNG.normal(size=(2, 4, 2))]),
    "lstsq_underdetermined_regularized": (lambda a, b: tf.matrix_solve_ls(a, b, 0.1),
                                          [RNG.normal(size=(2, 2, 3)),
                                           RNG.normal(size=(2, 2, 2))]),
    "qr_deep": (lambda x: tf.concat(tf.qr(x), axis=-2), [RNG.normal(size=(2, 4, 3))]),
    "qr_wide": (lambda x: tf.concat(tf.qr(x), axis=-1), [RNG.normal(size=(2, 3))]),
    "eigvalsh": (lambda x: tf.self_adjoint_eigvals(spd(x)), [A]),
    # eigenvectors are defined up to sign: differentiate sign-free functions of them
    "eigh": (lambda x: (lambda e, v: e[..., None] * tf.abs(v))(*tf.self_adjoint_eig(spd(x))),
             [A]),
    "svd_values": (lambda x: tf.svd(x, compute_uv=False), [RNG.normal(size=(2, 4, 3))]),
    "svd_square": (lambda x: (lambda s, u, v: tf.abs(u) + tf.abs(v) * s[..., None])(*tf.svd(x)),
                   [RNG.normal(size=(2, 3, 3))]),
    "svd_tall": (lambda x: (lambda s, u, v: tf.abs(u) * s[..., None, :])(*tf.svd(x)),
                 [RNG.normal(size=(4, 3))]),
    "svd_wide": (lambda x: tf.abs(tf.svd(x)[2]), [RNG.normal(size=(3, 4))]),
    "svd_full": (lambda x: tf.abs(tf.svd(x, full_matrices=True)[2][..., :3]),
                 [RNG.normal(size=(3, 4))]),
    "sqrtm": (lambda x: tf.linalg.sqrtm(spd(x)), [A]),
    "expm": (tf.linalg.expm, [0.3 * A]),
    "band_part": (lambda x: tf.matrix_band_part(x, 1, 0), [A]),
    "matrix_diag": (tf.matrix_diag, [B]),
    "matrix_diag_part": (tf.matrix_diag_part, [B]),
    "matrix_diag_part_square": (tf.matrix_diag_part, [A]),
    "set_diag": (tf.matrix_set_diag, [B, RNG.normal(size=(2, 2))]),
    "diag": (tf.diag, [RNG.normal(size=(2, 3))]),
    "diag_part": (tf.diag_part, [RNG.normal(size=(2, 3, 2, 3))]),
    "trace": (tf.trace, [A]),
    "cross": (tf.cross, [RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))]),
    "norm_spectral": (lambda x: tf.norm(x, ord=2, axis=[-2, -1]), [A]),
    "einsum_matmul": (lambda x, y: tf.einsum("bij,bjk->bik", x, y), [A, B]),
    "einsum_trace": (lambda x: tf.einsum("ii", x), [A[0]]),
    "einsum_diagonal": (lambda x: tf.einsum("ii->i", x), [A[0]]),
    "einsum_reduced_label": (lambda x, y: tf.einsum("ijk,jl->il", x, y),
                             [RNG.normal(size=(2, 3, 4)), RNG.normal(size=(3, 2))]),
    "einsum_broadcast": (lambda x, y: tf.einsum("...ij,...jk->...ik", x, y),
                         [RNG.normal(size=(2, 1, 3, 3)), RNG.normal(size=(3, 3, 2))]),
    "einsum_one_side_batch": (lambda x, y: tf.einsum("...ij,jk->...ik", x, y),
                              [RNG.normal(size=(2, 3, 3)), RNG.normal(size=(3, 2))]),
    "einsum_three_operands": (lambda x, y, z: tf.einsum("ij,jk,kl->il", x, y, z),
                              [RNG.normal(size=(2, 3)), RNG.normal(size=(3, 3)),
                               RNG.normal(size=(3, 2))]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_numerical(name):
    fn, inits = CASES[name]
    assert error(fn, inits) < 1e-6


@pytest.mark.parametrize("name", ["inverse", "cholesky", "solve", "lstsq_overdetermined",
                                  "lstsq_underdetermined_regularized", "sqrtm", "expm",
                                  "einsum_broadcast", "matrix_diag_part", "svd_values"])
def test_gradient_with_unknown_dims(name):
    fn, inits = CASES[name]
    assert error(fn, inits, dynamic=True) < 1e-6


def test_float32_gradient():
    assert error(tf.matrix_inverse, [A.astype(np.float32)], dtype=tf.float32, delta=1e-3) < 1e-2
    x = tf.placeholder(tf.float32, [3, 3])
    assert tf.gradients(tf.matrix_determinant(x), x)[0].dtype == tf.float32


def test_gradient_value_of_determinant():
    x = tf.constant(A)
    grad = tf.gradients(tf.reduce_sum(tf.matrix_determinant(x)), x)[0]
    with tf.Session() as sess:
        want = np.linalg.det(A)[:, None, None] * np.swapaxes(np.linalg.inv(A), -1, -2)
        np.testing.assert_allclose(sess.run(grad), want, rtol=1e-10)


def test_unsupported_gradients_raise_like_tf():
    x = tf.placeholder(tf.float64, [None, None])
    with pytest.raises(NotImplementedError, match="dynamic shapes"):
        tf.gradients(tf.qr(x)[1], x)
    with pytest.raises(NotImplementedError, match="unknown inner matrix shape"):
        tf.gradients(tf.svd(x)[1], x)
    a = tf.ones([3, 2], tf.float64)
    with pytest.raises(NotImplementedError, match="full_matrices is true"):
        tf.gradients(tf.qr(a, full_matrices=True)[0], a)
    with pytest.raises(ValueError, match="fast=False"):
        tf.gradients(tf.matrix_solve_ls(a, tf.ones([3, 1], tf.float64), fast=False), a)


def test_structure_ops_have_no_gradient_for_indices():
    x = tf.ones([3, 3])
    lower = tf.constant(1, tf.int64)
    assert tf.gradients(tf.matrix_band_part(x, lower, 0), lower) == [None]
