"""The linear-algebra ops (``tw.linalg``, ``tw.matrix_inverse``, ``tw.einsum``, ...): values
against numpy for batched float32/float64 inputs, static and unknown shapes, and TF's errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import errors

RNG = np.random.default_rng(3)
A = RNG.normal(size=(2, 3, 3)) + 3 * np.eye(3)
SPD = A @ np.swapaxes(A, -1, -2) + np.eye(3)
B = RNG.normal(size=(2, 3, 2))
TOL = {np.float32: 1e-4, np.float64: 1e-10}


def run(fetches, feeds=None):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


def fed(value, dtype, dynamic=False):
    """A placeholder fed with `value`: static shape, or all dims unknown."""
    shape = [None] * value.ndim if dynamic else value.shape
    return tf.placeholder(tf.as_dtype(dtype), shape), value.astype(dtype)


def check(fn, reference, inputs, dtype, dynamic=False):
    pairs = [fed(x, dtype, dynamic) for x in inputs]
    out = fn(*(p for p, _ in pairs))
    got = run(out, {p: v for p, v in pairs})
    want = reference(*(v.astype(np.float64) for _, v in pairs))
    for g, w in zip(*(x if isinstance(x, tuple) else (x,) for x in (got, want))):
        assert g.dtype == dtype
        np.testing.assert_allclose(g, w, rtol=TOL[dtype], atol=TOL[dtype])
    return out


def tril(x):
    return np.tril(x)


def sym_lower(x):
    return tril(x) + np.swapaxes(np.tril(x, -1), -1, -2)


CASES = {
    "inverse": (tf.matrix_inverse, np.linalg.inv, [A]),
    "inverse_adjoint": (lambda x: tf.linalg.inv(x, adjoint=True),
                        lambda x: np.linalg.inv(np.swapaxes(x, -1, -2)), [A]),
    "det": (tf.matrix_determinant, np.linalg.det, [A]),
    "slogdet": (lambda x: tuple(tf.linalg.slogdet(x)), lambda x: tuple(np.linalg.slogdet(x)),
                [A]),
    "logdet": (tf.linalg.logdet, lambda x: np.linalg.slogdet(x)[1], [SPD]),
    "cholesky": (tf.cholesky, np.linalg.cholesky, [SPD]),
    "cholesky_reads_lower": (tf.linalg.cholesky, lambda x: np.linalg.cholesky(sym_lower(x)),
                             [tril(SPD) + np.triu(A, 1)]),
    "solve": (tf.matrix_solve, np.linalg.solve, [A, B]),
    "solve_adjoint": (lambda a, b: tf.linalg.solve(a, b, adjoint=True),
                      lambda a, b: np.linalg.solve(np.swapaxes(a, -1, -2), b), [A, B]),
    "triangular": (tf.matrix_triangular_solve, lambda a, b: np.linalg.solve(tril(a), b), [A, B]),
    "triangular_upper_adjoint": (
        lambda a, b: tf.linalg.triangular_solve(a, b, lower=False, adjoint=True),
        lambda a, b: np.linalg.solve(np.swapaxes(np.triu(a), -1, -2), b), [A, B]),
    "cholesky_solve": (lambda a, b: tf.cholesky_solve(tf.cholesky(a), b), np.linalg.solve,
                       [SPD, B]),
    "lstsq": (tf.linalg.lstsq, lambda a, b: np.linalg.pinv(a) @ b,
              [RNG.normal(size=(2, 4, 3)), RNG.normal(size=(2, 4, 2))]),
    "lstsq_underdetermined": (tf.matrix_solve_ls, lambda a, b: np.linalg.pinv(a) @ b,
                              [RNG.normal(size=(2, 2, 3)), RNG.normal(size=(2, 2, 2))]),
    "lstsq_slow": (lambda a, b: tf.matrix_solve_ls(a, b, fast=False),
                   lambda a, b: np.linalg.pinv(a) @ b,
                   [RNG.normal(size=(4, 3)), RNG.normal(size=(4, 2))]),
    "eigvalsh": (tf.linalg.eigvalsh, np.linalg.eigvalsh, [SPD]),
    "svd_values": (lambda x: tf.svd(x, compute_uv=False),
                   lambda x: np.linalg.svd(x, compute_uv=False), [RNG.normal(size=(2, 4, 3))]),
    "sqrtm_squares_back": (lambda x: (lambda r: tf.matmul(r, r))(tf.linalg.sqrtm(x)),
                           lambda x: x, [SPD]),
    "sqrtm_nonsymmetric": (lambda x: (lambda r: tf.matmul(r, r))(tf.matrix_square_root(x)),
                           lambda x: x, [A]),
    "expm_symmetric": (tf.linalg.expm,
                       lambda x: (lambda e, v: v @ (np.exp(e)[..., None] * np.swapaxes(v, -1, -2)))(
                           *np.linalg.eigh(x)), [0.5 * SPD]),
    "expm_nilpotent": (tf.linalg.expm, lambda x: np.eye(3) + x + x @ x / 2,
                       [np.triu(RNG.normal(size=(2, 3, 3)), 1)]),
    "band_part": (lambda x: tf.matrix_band_part(x, 1, 0),
                  lambda x: np.tril(np.triu(x, -1)), [RNG.normal(size=(2, 3, 4))]),
    "band_part_upper": (lambda x: tf.linalg.band_part(x, 0, -1), np.triu,
                        [RNG.normal(size=(2, 4, 3))]),
    "matrix_diag": (tf.linalg.diag, lambda d: d[..., None] * np.eye(3), [B[..., 0]]),
    "matrix_diag_part": (tf.matrix_diag_part, lambda x: np.diagonal(x, axis1=-2, axis2=-1),
                         [B]),
    "set_diag": (tf.matrix_set_diag,
                 lambda x, d: x * (1 - np.eye(3, 2)) + d[..., None, :] * np.eye(3, 2),
                 [B, RNG.normal(size=(2, 2))]),
    "tensor_diag": (tf.diag, lambda d: np.diag(d.ravel()).reshape(2, 2, 2, 2),
                    [RNG.normal(size=(2, 2))]),
    "tensor_diag_part": (tf.linalg.tensor_diag_part,
                         lambda x: np.diag(x.reshape(4, 4)).reshape(2, 2),
                         [RNG.normal(size=(2, 2, 2, 2))]),
    "trace": (tf.trace, lambda x: np.trace(x, axis1=-2, axis2=-1), [B]),
    "transpose": (tf.linalg.transpose, lambda x: np.swapaxes(x, -1, -2), [B]),
    "adjoint": (tf.linalg.adjoint, lambda x: np.swapaxes(x, -1, -2), [B]),
    "matvec": (tf.linalg.matvec, lambda a, v: (a @ v[..., None])[..., 0], [A, B[..., 0]]),
    "cross": (tf.cross, np.cross, [RNG.normal(size=(2, 4, 3)), RNG.normal(size=(2, 4, 3))]),
    "einsum_matmul": (lambda x, y: tf.einsum("bij,bjk->bik", x, y),
                      lambda x, y: np.einsum("bij,bjk->bik", x, y), [A, B]),
    "einsum_implicit": (lambda x, y: tf.einsum("ij,jk", x, y),
                        lambda x, y: x @ y, [A[0], B[0]]),
    "einsum_trace": (lambda x: tf.linalg.einsum("ii->", x), np.trace, [A[0]]),
    "einsum_broadcast": (lambda x, y: tf.einsum("...ij,...jk->...ik", x, y),
                         lambda x, y: x @ y, [RNG.normal(size=(2, 1, 3, 3)), B]),
    "einsum_three": (lambda x, y, z: tf.einsum("ij,jk,kl->il", x, y, z),
                     lambda x, y, z: x @ y @ z, [A[0], A[1], B[0]]),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_numpy(name, dtype):
    fn, reference, inputs = CASES[name]
    check(fn, reference, inputs, dtype)


@pytest.mark.parametrize("name", ["inverse", "solve", "cholesky", "svd_values", "einsum_matmul",
                                  "set_diag", "lstsq", "expm_nilpotent", "trace"])
def test_unknown_shapes_run(name):
    fn, reference, inputs = CASES[name]
    out = check(fn, reference, inputs, np.float64, dynamic=True)
    static = check(fn, reference, inputs, np.float64)
    assert out.shape.ndims == static.shape.ndims  # ranks are known though no dim is
    assert static.shape.is_fully_defined() and not out.shape.is_fully_defined()


def test_static_shapes():
    x = tf.placeholder(tf.float32, [5, 4, 3])
    square = tf.placeholder(tf.float32, [None, 3, 3])
    assert tf.matrix_inverse(square).shape.as_list() == [None, 3, 3]
    assert tf.matrix_determinant(square).shape.as_list() == [None]
    assert [t.shape.as_list() for t in tf.linalg.slogdet(square)] == [[None], [None]]
    s, u, v = tf.svd(x)
    assert [s.shape.as_list(), u.shape.as_list(), v.shape.as_list()] == [[5, 3], [5, 4, 3],
                                                                          [5, 3, 3]]
    _, u, v = tf.svd(x, full_matrices=True)
    assert [u.shape.as_list(), v.shape.as_list()] == [[5, 4, 4], [5, 3, 3]]
    q, r = tf.qr(x)
    assert [q.shape.as_list(), r.shape.as_list()] == [[5, 4, 3], [5, 3, 3]]
    q, r = tf.linalg.qr(x, full_matrices=True)
    assert [q.shape.as_list(), r.shape.as_list()] == [[5, 4, 4], [5, 4, 3]]
    e, v = tf.self_adjoint_eig(square)
    assert [e.shape.as_list(), v.shape.as_list()] == [[None, 3], [None, 3, 3]]
    rhs = tf.placeholder(tf.float32, [None, 4, 2])
    assert tf.matrix_solve_ls(x, rhs).shape.as_list() == [5, 3, 2]
    assert tf.matrix_solve(square, tf.ones([7, 3, 2])).shape.as_list() == [7, 3, 2]
    assert tf.matrix_diag_part(x).shape.as_list() == [5, 3]
    assert tf.matrix_diag(x).shape.as_list() == [5, 4, 3, 3]
    assert tf.diag(tf.ones([2, 3])).shape.as_list() == [2, 3, 2, 3]
    assert tf.trace(x).shape.as_list() == [5]
    assert tf.einsum("bij,bjk->bki", x, tf.ones([5, 3, 2])).shape.as_list() == [5, 2, 4]
    assert tf.einsum("...ij->...ji", tf.placeholder(tf.float32)).shape.ndims is None
    assert tf.norm(x, axis=[-2, -1], keepdims=True).shape.as_list() == [5, 1, 1]


def test_result_dtypes_follow_input():
    h = tf.placeholder(tf.float16, [2, 2])
    value = np.array([[2.0, 1.0], [1.0, 2.0]], np.float16)
    outs = run([tf.matrix_inverse(h), tf.cholesky(h), tf.svd(h)[0], tf.linalg.sqrtm(h),
                tf.self_adjoint_eigvals(h), tf.linalg.expm(h)], {h: value})
    assert all(o.dtype == np.float16 for o in outs)
    np.testing.assert_allclose(outs[0], np.linalg.inv(value.astype(np.float64)), rtol=1e-2)
    ints = run(tf.cross(tf.constant([[1, 0, 0]]), tf.constant([[0, 1, 0]])))
    assert ints.dtype == np.int32 and ints.tolist() == [[0, 0, 1]]
    assert run(tf.matrix_band_part(tf.constant([[1, 2], [3, 4]]), 0, 0)).tolist() == [[1, 0],
                                                                                      [0, 4]]


@pytest.mark.parametrize("full", [False, True])
def test_svd_and_qr_reconstruct(full):
    x = RNG.normal(size=(2, 4, 3))
    s, u, v = tf.svd(x, full_matrices=full)
    q, r = tf.qr(x, full_matrices=full)
    s, u, v, q, r = run([s, u, v, q, r])
    p = 3
    np.testing.assert_allclose(u[..., :p] * s[..., None, :] @ np.swapaxes(v[..., :p], -1, -2),
                               x, atol=1e-12)
    np.testing.assert_allclose(q @ r, x, atol=1e-12)
    np.testing.assert_allclose(np.triu(r), r)
    assert u.shape[-1] == (4 if full else 3) and q.shape[-1] == (4 if full else 3)


@pytest.mark.parametrize("index_type", [tf.int32, tf.int64])
def test_lu_reconstructs_permuted_input(index_type):
    x = RNG.normal(size=(2, 4, 4))
    lu, p = tf.linalg.lu(tf.placeholder_with_default(x, [None, 4, 4]),
                         output_idx_type=index_type)
    assert p.dtype == index_type and p.shape.as_list() == [None, 4]
    lu, p = run([lu, p])
    lower, upper = np.tril(lu, -1) + np.eye(4), np.triu(lu)
    np.testing.assert_allclose(np.take_along_axis(x, p[..., None], -2), lower @ upper,
                               atol=1e-12)
    assert np.all(np.abs(lower) <= 1 + 1e-12)  # partial pivoting bounds the multipliers
    with pytest.raises(errors.InvalidArgumentError, match="Input is not invertible."):
        run(tf.linalg.lu(tf.zeros([2, 2])))


def test_eigh_vectors_diagonalize():
    e, v = run(tf.linalg.eigh(SPD))
    np.testing.assert_allclose(e, np.linalg.eigvalsh(SPD), rtol=1e-12)
    np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ SPD @ v, e[..., None] * np.eye(3),
                               atol=1e-10)


def test_eye():
    np.testing.assert_array_equal(run(tf.eye(3)), np.eye(3, dtype=np.float32))
    got = run(tf.linalg.eye(2, 3, batch_shape=[4], dtype=tf.float64))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, np.broadcast_to(np.eye(2, 3), (4, 2, 3)))
    n = tf.placeholder(tf.int32, [])
    np.testing.assert_array_equal(run(tf.eye(n, batch_shape=[2]), {n: 2}),
                                  np.broadcast_to(np.eye(2), (2, 2, 2)))
    batch = tf.placeholder(tf.int32, [1])
    np.testing.assert_array_equal(run(tf.eye(2, 3, batch_shape=batch), {batch: [4]}),
                                  np.broadcast_to(np.eye(2, 3), (4, 2, 3)))


def test_matrix_transpose_of_unknown_rank():
    x = tf.placeholder(tf.float32)
    value = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    np.testing.assert_array_equal(run(tf.matrix_transpose(x), {x: value}),
                                  np.swapaxes(value, -1, -2))


@pytest.mark.parametrize("ord_, axis", [("euclidean", None), (1, -1), (np.inf, 0), (3, 1),
                                        ("fro", (0, 1)), (1, (0, 1)), (np.inf, (1, 0)),
                                        (2, (0, 1))])
def test_norm_matches_numpy(ord_, axis):
    x = RNG.normal(size=(3, 4))
    got = run(tf.norm(x, ord=ord_, axis=axis))
    want = np.linalg.norm(x.ravel() if axis is None else x,
                          ord=None if ord_ in ("euclidean", "fro") else ord_, axis=axis)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_norm_rejects_bad_arguments():
    with pytest.raises(ValueError, match="'ord' must be a supported matrix norm"):
        tf.norm(tf.ones([2, 2]), ord=3, axis=[0, 1])
    with pytest.raises(ValueError, match="'ord' must be a supported vector norm"):
        tf.norm(tf.ones([2]), ord=-1)
    with pytest.raises(ValueError, match="'axis' must be None, an integer"):
        tf.norm(tf.ones([2, 2]), axis=[1, 1])


def test_construction_errors():
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        tf.matrix_inverse(tf.ones([3, 2]))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        tf.cholesky(tf.ones([4, 3, 2]))
    with pytest.raises(ValueError, match="must be at least rank 2"):
        tf.matrix_determinant(tf.ones([3]))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        tf.matrix_solve(tf.ones([3, 3]), tf.ones([2, 1]))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 4"):
        tf.matrix_solve(tf.ones([2, 3, 3]), tf.ones([4, 3, 1]))
    with pytest.raises(ValueError, match="even and non-zero rank"):
        tf.diag_part(tf.ones([2, 3, 4]))
    with pytest.raises(ValueError, match="Dimension must be 3 but is 2"):
        tf.cross(tf.ones([2]), tf.ones([2]))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        tf.einsum("ij,jk->ik", tf.ones([2, 3]), tf.ones([2, 3]))
    with pytest.raises(ValueError, match="Expecting 2 inputs"):
        tf.einsum("ij,jk->ik", tf.ones([2, 3]))
    with pytest.raises(ValueError, match="not in any input"):
        tf.einsum("ij->ik", tf.ones([2, 3]))
    with pytest.raises(TypeError):
        tf.matrix_inverse(tf.ones([2, 2], tf.int32))
    with pytest.raises(ValueError, match="rank >= 2"):
        tf.matrix_transpose(tf.ones([3]))


@pytest.mark.parametrize("fn, value, message", [
    (tf.matrix_inverse, [[1.0, 0, -1], [-1, 1, 0], [0, -1, 1]], "Input is not invertible."),
    (tf.cholesky, [[1.0, 2.0], [2.0, 1.0]], "Cholesky decomposition was not successful"),
    (lambda x: tf.matrix_solve(x, tf.ones([2, 1], tf.float64)), [[1.0, 2.0], [2.0, 4.0]],
     "Input matrix is not invertible."),
    (lambda x: tf.matrix_triangular_solve(x, tf.ones([2, 1], tf.float64)), [[1.0, 0.0], [5.0, 0.0]],
     "Input matrix is not invertible."),
    (lambda x: tf.matrix_solve_ls(x, tf.ones([2, 1], tf.float64)), [[1.0, 1.0], [1.0, 1.0]],
     "rank deficient or ill-conditioned"),
    (tf.matrix_inverse, [[1.0, 2.0, 3.0]], "Input matrix must be square."),
])
def test_runtime_errors(fn, value, message):
    x = tf.placeholder(tf.float64, [None, None])
    with pytest.raises(errors.InvalidArgumentError, match=message):
        run(fn(x), {x: np.asarray(value)})


def test_band_part_runtime_bounds():
    lower = tf.placeholder(tf.int64, [])
    with pytest.raises(errors.InvalidArgumentError, match="num_lower must be negative or less"):
        run(tf.matrix_band_part(tf.ones([2, 2]), lower, 0), {lower: 3})


def test_top_level_and_linalg_names():
    for name in ("matrix_inverse", "matrix_determinant", "cholesky", "cholesky_solve",
                 "matrix_solve", "matrix_solve_ls", "matrix_triangular_solve", "qr", "svd",
                 "self_adjoint_eig", "self_adjoint_eigvals", "matrix_square_root",
                 "matrix_band_part", "matrix_diag", "matrix_diag_part", "matrix_set_diag",
                 "matrix_transpose", "diag", "diag_part", "eye", "trace", "norm", "einsum",
                 "cross"):
        assert callable(getattr(tf, name)), name
    for name in tf.linalg.__all__:
        assert callable(getattr(tf.linalg, name)), name
    assert tf.linalg.inv is tf.matrix_inverse and tf.linalg.lstsq is tf.matrix_solve_ls
    assert tf.linalg.tensordot is tf.tensordot and callable(tf.linalg.l2_normalize)
    assert tf.raw_ops.MatrixExponential is not None
