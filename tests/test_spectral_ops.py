"""The FFT ops and tf.signal/tf.spectral's fft functions: numpy.fft references for every rank,
precision, crop and pad; static shapes; bad input; and gradients against finite differences."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import tensorweave as tf
from tests.numeric import fetched_numeric_grad, run

RNG = np.random.default_rng(5)
REAL = RNG.standard_normal((2, 6, 5))
COMPLEX = REAL + 1j * RNG.standard_normal((2, 6, 5))


def inner(rank: int) -> list[int]:
    return list(range(3 - rank, 3))


@pytest.mark.parametrize("np_type", [np.complex64, np.complex128])
@pytest.mark.parametrize("rank", [1, 2, 3])
def test_complex_transforms_match_numpy(rank: int, np_type: type) -> None:
    suffix = "" if rank == 1 else f"{rank}d"
    x = COMPLEX.astype(np_type)
    forward = getattr(tf.signal, "fft" + suffix)(x)
    backward = getattr(tf.spectral, "ifft" + suffix)(x)
    assert forward.dtype == tf.as_dtype(np_type) and forward.shape.as_list() == [2, 6, 5]
    got_f, got_b = run([forward, backward])
    assert got_f.dtype == np_type and got_b.dtype == np_type
    tol = 1e-5 if np_type is np.complex64 else 1e-12
    np.testing.assert_allclose(got_f, np.fft.fftn(x, axes=inner(rank)), rtol=tol, atol=tol)
    np.testing.assert_allclose(got_b, np.fft.ifftn(x, axes=inner(rank)), rtol=tol, atol=tol)


def test_top_level_names_are_the_complex_transforms() -> None:
    assert tf.fft is tf.signal.fft and tf.ifft3d is tf.spectral.ifft3d
    assert tf.raw_ops.FFT2D(input=tf.constant(COMPLEX)).op.type == "FFT2D"


LENGTHS = {1: [[5], [8], [12]], 2: [[6, 5], [4, 9], [3, 3]], 3: [[2, 6, 5], [1, 7, 4]]}


@pytest.mark.parametrize("rank,length", [(r, n) for r, ns in LENGTHS.items() for n in ns])
def test_real_transforms_crop_and_pad_as_numpy(rank: int, length: list[int]) -> None:
    suffix = "" if rank == 1 else f"{rank}d"
    spectrum = getattr(tf.signal, "rfft" + suffix)(REAL.astype(np.float32), length)
    half = [*length[:-1], length[-1] // 2 + 1]
    assert spectrum.dtype == tf.complex64 and spectrum.shape.as_list() == [2, 6][:3 - rank] + half
    signal = getattr(tf.signal, "irfft" + suffix)(COMPLEX, length)
    assert signal.dtype == tf.float64 and signal.shape.as_list()[-rank:] == length
    got_s, got_x = run([spectrum, signal])
    assert got_s.dtype == np.complex64 and got_x.dtype == np.float64
    np.testing.assert_allclose(got_s, np.fft.rfftn(REAL, s=length, axes=inner(rank)),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got_x, np.fft.irfftn(COMPLEX, s=length, axes=inner(rank)),
                               rtol=1e-10, atol=1e-12)


def test_default_fft_length_is_the_input_shape_static_or_not() -> None:
    p = tf.placeholder(tf.float64, [None, None])
    q = tf.placeholder(tf.complex128, [None, None])
    x = REAL[0]
    spectrum = tf.signal.rfft2d(p)
    assert spectrum.dtype == tf.complex128 and spectrum.shape.as_list() == [None, None]
    back = tf.signal.irfft2d(q)
    got_s, got_b, got_static = run([spectrum, back, tf.signal.irfft(np.fft.rfft(x))],
                                   {p: x, q: np.fft.rfft2(x)})
    np.testing.assert_allclose(got_s, np.fft.rfft2(x), atol=1e-12)
    np.testing.assert_allclose(got_b, np.fft.irfft2(np.fft.rfft2(x)), atol=1e-12)
    np.testing.assert_allclose(got_static, np.fft.irfft(np.fft.rfft(x)), atol=1e-12)
    assert tf.signal.rfft([1, 2, 3]).dtype == tf.complex64  # Python values become float32


def test_dynamic_fft_length_and_zero_lengths() -> None:
    n = tf.placeholder(tf.int32, [1])
    spectrum = tf.signal.rfft(tf.constant(REAL), n)
    assert spectrum.shape.as_list() == [2, 6, None] and spectrum.dtype == tf.complex128
    got, empty = run([spectrum, tf.signal.rfft(REAL, [0])], {n: [7]})
    np.testing.assert_allclose(got, np.fft.rfft(REAL, 7), atol=1e-12)
    assert empty.shape == (2, 6, 0)
    assert run(tf.signal.fft(np.zeros((0, 3), np.complex64))).shape == (0, 3)


def test_bad_input_raises() -> None:
    with pytest.raises(ValueError, match="at least rank 2"):
        tf.signal.fft2d(np.zeros([4], np.complex64))
    with pytest.raises(TypeError, match="float32"):
        tf.signal.fft(tf.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match="Dimension must be 2 but is 1"):
        tf.signal.rfft2d(REAL, [4])
    with pytest.raises(TypeError):
        tf.raw_ops.RFFT(input=REAL, fft_length=[4], Tcomplex=tf.complex64)
    n = tf.placeholder(tf.int32, [1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
        run(tf.signal.rfft(REAL, n), {n: [-2]})


# -- gradients ------------------------------------------------------------------------------


WEIGHTS = RNG.standard_normal((6, 5)) + 1j * RNG.standard_normal((6, 5))


def weighted(z: tf.Tensor) -> tf.Tensor:
    """A real loss of every part of `z`, so each output element's gradient is distinct."""
    w = tf.constant(WEIGHTS[:z.shape.dims[-2], :z.shape.dims[-1]])
    return tf.reduce_sum(tf.real(z * tf.conj(z)) * tf.real(w) + tf.imag(z) * tf.imag(w))


LOSSES: dict[str, Callable] = {
    "fft": lambda x: weighted(tf.signal.fft(tf.complex(x, x * x))),
    "ifft2d": lambda x: weighted(tf.signal.ifft2d(tf.complex(tf.sin(x), x))),
    "fft3d": lambda x: weighted(tf.signal.fft3d(tf.complex(x, -x))[0]),
    "ifft3d": lambda x: weighted(tf.signal.ifft3d(tf.complex(x, 2 * x))[1]),
    "rfft_pad": lambda x: weighted(tf.signal.rfft(x, [7])),
    "rfft_crop_odd": lambda x: weighted(tf.signal.rfft(x, [3])),
    "rfft2d": lambda x: weighted(tf.signal.rfft2d(x, [4, 6])),
    "rfft3d": lambda x: weighted(tf.signal.rfft3d(x, [2, 3, 5])[0]),
    "irfft": lambda x: tf.reduce_sum(tf.signal.irfft(tf.complex(x, x * x), [8]) ** 2
                                     * np.arange(8)),
    "irfft_odd": lambda x: tf.reduce_sum(tf.sin(tf.signal.irfft(tf.complex(x, -x), [5]))),
    "irfft2d": lambda x: tf.reduce_sum(tf.signal.irfft2d(tf.complex(x, x), [8, 4]) ** 3),
    "irfft3d": lambda x: tf.reduce_sum(tf.sin(tf.signal.irfft3d(tf.complex(x, tf.cos(x)),
                                                                [3, 4, 7]))),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradients_match_finite_differences(name: str) -> None:
    x0 = RNG.standard_normal((2, 6, 5))
    x = tf.placeholder(tf.float64, [2, 6, 5])
    loss = LOSSES[name](x)
    (grad,) = tf.gradients(loss, [x])
    np.testing.assert_allclose(run(grad, {x: x0}), fetched_numeric_grad(loss, x, x0),
                               rtol=1e-5, atol=1e-6)


def test_rfft_gradient_with_a_dynamic_shape() -> None:
    x = tf.placeholder(tf.float64, [None, None])
    loss = weighted(tf.reshape(tf.signal.rfft(x, [9]), [3, 5]))
    (grad,) = tf.gradients(loss, [x])
    x0 = RNG.standard_normal((3, 6))
    np.testing.assert_allclose(run(grad, {x: x0}), fetched_numeric_grad(loss, x, x0),
                               rtol=1e-5, atol=1e-6)


def test_compute_gradient_error_through_a_complex_path_is_small() -> None:
    x = tf.placeholder(tf.float64, [6])
    y = tf.abs(tf.signal.rfft(x)) + tf.signal.irfft(tf.signal.rfft(x) * (1 + 2j))[:4]
    error = tf.test.compute_gradient_error(x, [6], y, [4], x_init_value=RNG.standard_normal(6),
                                           delta=1e-6)
    assert error < 1e-7
