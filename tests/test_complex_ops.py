"""tf.complex, tf.real, tf.imag, tf.angle, tf.conj, tf.abs on complex tensors and
tf.linalg.adjoint: values and dtypes against numpy, TF's behaviour on real inputs, bad input,
and the gradients of the Complex/Real/Imag/Angle/ComplexAbs/Conj ops in TF's convention."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import tensorweave as tf
from tests.numeric import fetched_numeric_grad, run

Z = np.array([[1 + 2j, -3.5j, 0j], [0.25, -1 - 1j, -2 + 1e-3j]], np.complex64)


def test_complex_builds_from_broadcast_parts_with_tf_dtypes() -> None:
    re = np.array([1.0, -2.0, np.inf], np.float32)
    im = np.array([[3.0], [np.inf]], np.float32)
    z = tf.complex(re, im)
    assert z.dtype == tf.complex64 and z.shape.as_list() == [2, 3] and z.op.type == "Complex"
    got = run(z)
    assert got.dtype == np.complex64
    np.testing.assert_array_equal(got.real, np.broadcast_to(re, (2, 3)))
    np.testing.assert_array_equal(got.imag, np.broadcast_to(im, (2, 3)))
    assert tf.complex(np.float64(1.0), np.array([2.0])).dtype == tf.complex128


def test_complex_rejects_mismatched_or_integer_parts() -> None:
    with pytest.raises(TypeError, match="incorrect types: float64 float32"):
        tf.complex(tf.constant(1.0, tf.float64), 2.0)  # each part converts on its own, as TF
    with pytest.raises(TypeError, match="incorrect types: int32 int32"):
        tf.complex(1, 2)
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.complex(tf.zeros([2]), tf.zeros([3]))
    with pytest.raises(TypeError):
        tf.raw_ops.Complex(real=tf.zeros([2]), imag=tf.zeros([2]), Tout=tf.complex128)


@pytest.mark.parametrize("np_type", [np.complex64, np.complex128])
def test_parts_match_numpy_with_the_real_dtype(np_type: type) -> None:
    z = tf.constant(Z.astype(np_type))
    fetches = [tf.real(z), tf.imag(z), tf.angle(z), tf.abs(z), tf.conj(z),
               tf.math.real(z), tf.math.imag(z), tf.math.angle(z), tf.math.conj(z)]
    want = [Z.real, Z.imag, np.angle(Z), np.abs(Z), Z.conj(), Z.real, Z.imag, np.angle(Z),
            Z.conj()]
    part = np.float32 if np_type is np.complex64 else np.float64
    for t, got, expected in zip(fetches, run(fetches), want):
        assert got.dtype == (np_type if t.dtype.is_complex else part)
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert tf.abs(z).op.type == "ComplexAbs" and tf.real(z, name="re").name == "re:0"


def test_real_inputs_follow_tf() -> None:
    x = tf.constant([-1.5, 0.0, 2.0])
    assert tf.real(x) is x and tf.conj(x) is x
    imag, angle = run([tf.imag(x), tf.angle(x)])
    np.testing.assert_array_equal(imag, [0, 0, 0])
    np.testing.assert_allclose(angle, [np.pi, 0, 0])
    with pytest.raises(TypeError, match="Expected numeric tensor"):
        tf.conj(tf.constant(["a"]))
    with pytest.raises(TypeError, match="float32"):
        tf.raw_ops.Real(input=x)


def test_adjoint_conjugates_and_matrix_transpose_conjugates_on_request() -> None:
    batch = np.stack([Z, Z * 2j])
    adj, plain, conj = run([tf.linalg.adjoint(batch), tf.linalg.matrix_transpose(batch),
                            tf.linalg.matrix_transpose(batch, conjugate=True)])
    want = np.swapaxes(batch, -1, -2)
    np.testing.assert_array_equal(adj, want.conj())
    np.testing.assert_array_equal(plain, want)
    np.testing.assert_array_equal(conj, want.conj())
    real = np.arange(6.0).reshape(2, 3)
    assert tf.linalg.adjoint(real).op.type == "Transpose"


def test_conjugate_transpose_validates_its_permutation() -> None:
    p = tf.placeholder(tf.int32, [None])
    t = tf.raw_ops.ConjugateTranspose(x=tf.constant(Z), perm=p)
    np.testing.assert_array_equal(run(t, {p: [1, 0]}), Z.conj().T)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a permutation"):
        run(t, {p: [0, 0]})


# -- gradients ------------------------------------------------------------------------------


LOSSES: dict[str, Callable] = {
    "real_imag": lambda z: tf.real(z) * 3.0 - tf.imag(z) ** 2,
    "abs": lambda z: tf.abs(z) * tf.real(z),
    "angle": lambda z: tf.angle(z) * tf.imag(z),
    "conj": lambda z: tf.imag(tf.conj(z) * (1 + 2j)),
    "adjoint": lambda z: tf.real(tf.linalg.adjoint(z) * np.array([[1j, 2], [3, -1j]])),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradients_match_finite_differences(name: str) -> None:
    rng = np.random.default_rng(3)
    x0 = rng.uniform(0.2, 1.5, (2, 2, 2)) * np.array([1, -1])
    x = tf.placeholder(tf.float64, [2, 2, 2])
    loss = tf.reduce_sum(LOSSES[name](tf.complex(x[0], x[1])))
    (grad,) = tf.gradients(loss, [x])
    np.testing.assert_allclose(run(grad, {x: x0}), fetched_numeric_grad(loss, x, x0),
                               rtol=1e-6, atol=1e-7)


def test_gradient_into_a_complex_tensor_is_dre_plus_i_dim() -> None:
    z = tf.constant(np.array([1 + 2j, -3 + 0.5j]))
    loss = tf.reduce_sum(tf.real(z) * 2.0 + tf.imag(z) * 5.0)
    (grad,) = tf.gradients(loss, [z])
    got = run(grad)
    assert got.dtype == np.complex128
    np.testing.assert_array_equal(got, [2 + 5j, 2 + 5j])


def test_complex_gradient_sums_broadcast_parts() -> None:
    re = tf.constant([1.0, 2.0])
    im = tf.constant([[1.0], [2.0], [3.0]])
    loss = tf.reduce_sum(tf.real(tf.complex(re, im)) + 2 * tf.imag(tf.complex(re, im)))
    g_re, g_im = run(tf.gradients(loss, [re, im]))
    np.testing.assert_array_equal(g_re, [3, 3])
    np.testing.assert_array_equal(g_im, [[4], [4], [4]])


def test_squared_difference_of_complex_numbers_is_the_squared_modulus() -> None:
    # cwise_ops_test (SquaredDifference, complex): TF's (x - y) * conj(x - y)
    x = np.array([1 + 2j, 3 - 1j], np.complex64)
    y = np.array([0.5j, 1 + 1j], np.complex64)
    got = run(tf.squared_difference(x, y))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, np.abs(x - y) ** 2)
