"""tf.signal: frame, overlap_and_add, windows, stft/inverse_stft, mel weights, MFCCs and the
DCT against straightforward numpy implementations, with static and dynamic shapes, bad
arguments, and a gradient through stft."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(11)
SIGNAL = RNG.standard_normal((2, 50)).astype(np.float32)


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def np_frame(x: np.ndarray, length: int, step: int, pad_end: bool = False,
             pad_value: float = 0.0) -> np.ndarray:
    n = x.shape[-1]
    if pad_end:
        frames = -(-n // step)
        total = max((frames - 1) * step + length, n)
        x = np.concatenate([x, np.full((*x.shape[:-1], total - n), pad_value, x.dtype)], -1)
    else:
        frames = max(0, 1 + (n - length) // step)
    out = np.zeros((*x.shape[:-1], frames, length), x.dtype)
    for f in range(frames):
        out[..., f, :] = x[..., f * step:f * step + length]
    return out


def np_hann(n: int, periodic: bool = True) -> np.ndarray:
    denominator = n - 1 + (1 if periodic and n % 2 == 0 else 0)
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / denominator)


def np_overlap_and_add(frames: np.ndarray, step: int) -> np.ndarray:
    count, length = frames.shape[-2:]
    out = np.zeros((*frames.shape[:-2], (count - 1) * step + length), frames.dtype)
    for f in range(count):
        out[..., f * step:f * step + length] += frames[..., f, :]
    return out


# -- framing --------------------------------------------------------------------------------


@pytest.mark.parametrize("length,step,pad_end", [(16, 5, False), (16, 7, True), (8, 8, False),
                                                 (60, 4, False), (60, 4, True)])
def test_frame_matches_numpy_static_and_dynamic(length: int, step: int, pad_end: bool) -> None:
    p = tf.placeholder(tf.float32, [None, None])
    static = tf.signal.frame(SIGNAL, length, step, pad_end=pad_end, pad_value=2.5)
    dynamic = tf.signal.frame(p, length, step, pad_end=pad_end, pad_value=2.5)
    want = np_frame(SIGNAL, length, step, pad_end, 2.5)
    assert static.shape.as_list() == list(want.shape)
    got_static, got_dynamic = run([static, dynamic], {p: SIGNAL})
    assert got_static.dtype == np.float32
    np.testing.assert_array_equal(got_static, want)
    np.testing.assert_array_equal(got_dynamic, want)


def test_frame_along_another_axis_and_bad_arguments() -> None:
    got = run(tf.signal.frame(SIGNAL.T, 10, 20, axis=0))
    np.testing.assert_array_equal(got, np.moveaxis(np_frame(SIGNAL, 10, 20), 0, -1))
    with pytest.raises(ValueError, match="frame_step must be a positive"):
        tf.signal.frame(SIGNAL, 4, 0)
    with pytest.raises(ValueError, match="rank at least 1"):
        tf.signal.frame(3.0, 4, 1)


def test_overlap_and_add_matches_numpy() -> None:
    frames = RNG.standard_normal((3, 7, 10))
    p = tf.placeholder(tf.float64, [None, None, 10])
    got, got_dynamic, single = run([tf.signal.overlap_and_add(frames, 4),
                                    tf.signal.overlap_and_add(p, 3),
                                    tf.signal.overlap_and_add(frames[0], 10)], {p: frames})
    np.testing.assert_allclose(got, np_overlap_and_add(frames, 4), atol=1e-12)
    np.testing.assert_allclose(got_dynamic, np_overlap_and_add(frames, 3), atol=1e-12)
    np.testing.assert_array_equal(single, frames[0].reshape(-1))
    with pytest.raises(ValueError, match="rank at least 2"):
        tf.signal.overlap_and_add(np.zeros(5), 2)


# -- windows --------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 9, 10])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_are_tf_raised_cosines(n: int, periodic: bool) -> None:
    hann, hamming = run([tf.signal.hann_window(n, periodic),
                         tf.signal.hamming_window(n, periodic, dtype=tf.float64)])
    assert hann.dtype == np.float32 and hamming.dtype == np.float64
    if n == 1:
        np.testing.assert_array_equal(hann, [1.0])
        return
    np.testing.assert_allclose(hann, np_hann(n, periodic), atol=1e-6)
    cosine = (0.5 - np_hann(n, periodic)) / 0.5
    np.testing.assert_allclose(hamming, 0.54 - 0.46 * cosine, atol=1e-12)
    with pytest.raises(ValueError, match="floating point"):
        tf.signal.hann_window(4, dtype=tf.int32)


# -- short-time Fourier transforms ----------------------------------------------------------


def test_stft_matches_numpy() -> None:
    got, got_padded = run([tf.signal.stft(SIGNAL, 16, 5),
                           tf.signal.stft(SIGNAL, 12, 4, fft_length=20, pad_end=True,
                                          window_fn=tf.signal.hamming_window)])
    assert got.dtype == np.complex64 and got.shape == (2, 7, 9)
    np.testing.assert_allclose(got, np.fft.rfft(np_frame(SIGNAL, 16, 5) * np_hann(16), 16),
                               atol=1e-5)
    hamming = 0.54 - 0.46 * (0.5 - np_hann(12)) / 0.5
    want = np.fft.rfft(np_frame(SIGNAL, 12, 4, pad_end=True) * hamming, 20)
    np.testing.assert_allclose(got_padded, want, atol=1e-5)


def test_inverse_stft_reconstructs_the_signal() -> None:
    x = RNG.standard_normal((2, 64))
    spectrogram = tf.signal.stft(x, 16, 4)
    window = tf.signal.inverse_stft_window_fn(4)
    back, raw = run([tf.signal.inverse_stft(spectrogram, 16, 4, window_fn=window),
                     tf.signal.inverse_stft(spectrogram, 16, 4, window_fn=None)])
    assert back.dtype == np.float64 and back.shape == (2, 64)
    # every sample covered by a full set of overlapping frames comes back exactly
    np.testing.assert_allclose(back[:, 12:-12], x[:, 12:-12], atol=1e-12)
    np.testing.assert_allclose(raw, np_overlap_and_add(np_frame(x, 16, 4) * np_hann(16), 4),
                               atol=1e-12)


def test_inverse_stft_window_fn_normalizes_the_overlapping_squares() -> None:
    got = run(tf.signal.inverse_stft_window_fn(3)(8, dtype=tf.float64))
    forward = np_hann(8)
    squares = np.pad(forward ** 2, (0, 1)).reshape(3, 3).sum(0)
    np.testing.assert_allclose(got, forward / np.tile(squares, 3)[:8], atol=1e-12)


def test_gradient_through_stft_matches_finite_differences() -> None:
    x0 = RNG.standard_normal(20)
    x = tf.placeholder(tf.float64, [20])
    loss = tf.reduce_sum(tf.abs(tf.signal.stft(x, 8, 3, pad_end=True)) ** 2 * 0.5)
    (grad,) = tf.gradients(loss, [x])
    numeric = np.zeros(20)
    with tf.Session() as sess:
        got = sess.run(grad, {x: x0})
        for i in range(20):
            step = np.eye(20)[i] * 1e-6
            numeric[i] = (sess.run(loss, {x: x0 + step}) - sess.run(loss, {x: x0 - step})) / 2e-6
    np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-7)


# -- mel, MFCC, DCT -------------------------------------------------------------------------


def np_mel_matrix(mels: int, bins: int, rate: float, low: float, high: float) -> np.ndarray:
    def to_mel(hz):
        return 1127.0 * np.log(1.0 + np.asarray(hz) / 700.0)

    edges = np.linspace(to_mel(low), to_mel(high), mels + 2)
    out = np.zeros((bins, mels))
    for i, hz in enumerate(np.linspace(0, rate / 2, bins)):
        if i == 0:
            continue
        for m in range(mels):
            lo, center, hi = edges[m:m + 3]
            mel = to_mel(hz)
            out[i, m] = max(0.0, min((mel - lo) / (center - lo), (hi - mel) / (hi - center)))
    return out


def test_linear_to_mel_weight_matrix_is_htk_triangles() -> None:
    got = run(tf.signal.linear_to_mel_weight_matrix(10, 33, 8000, 100.0, 3900.0))
    assert got.dtype == np.float32 and got.shape == (33, 10)
    np.testing.assert_allclose(got, np_mel_matrix(10, 33, 8000, 100.0, 3900.0), atol=1e-6)
    default = run(tf.signal.linear_to_mel_weight_matrix(dtype=tf.float64))
    np.testing.assert_allclose(default, np_mel_matrix(20, 129, 8000, 125.0, 3800.0),
                               atol=1e-12)
    for kwargs, message in [({"num_mel_bins": 0}, "num_mel_bins must be positive"),
                            ({"lower_edge_hertz": -1.0}, "non-negative"),
                            ({"lower_edge_hertz": 4000.0}, ">= upper_edge_hertz"),
                            ({"upper_edge_hertz": 4100.0}, "Nyquist")]:
        with pytest.raises(ValueError, match=message):
            tf.signal.linear_to_mel_weight_matrix(**kwargs)


N = 8
X = RNG.standard_normal((3, N))
K, M = np.arange(N)[:, None], np.arange(N)[None, :]
DCT2 = 2 * np.cos(np.pi * K * (2 * M + 1) / (2 * N))  # scipy's unnormalized type II
DCT3 = np.where(M == 0, 1.0, 2 * np.cos(np.pi * M * (2 * K + 1) / (2 * N)))
DCT1 = np.where((M == 0) | (M == N - 1), np.cos(np.pi * K * M / (N - 1)),
                2 * np.cos(np.pi * K * M / (N - 1)))
ORTHO2 = np.where(K == 0, np.sqrt(1 / (4 * N)), np.sqrt(1 / (2 * N)))


def test_dct_types_match_their_definitions() -> None:
    got = run([tf.signal.dct(X), tf.signal.dct(X, type=3), tf.signal.dct(X, type=1),
               tf.signal.dct(X, norm="ortho"), tf.spectral.dct(X.astype(np.float32))])
    want = [X @ DCT2.T, X @ DCT3.T, X @ DCT1.T, X @ (DCT2 * ORTHO2).T, X @ DCT2.T]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    assert got[0].dtype == np.float64 and got[-1].dtype == np.float32


def test_idct_inverts_dct() -> None:
    ortho, plain, cut, padded = run([
        tf.signal.idct(tf.signal.dct(X, norm="ortho"), norm="ortho"),
        tf.signal.idct(tf.signal.dct(X)),
        tf.signal.dct(X, n=5), tf.signal.dct(X, n=10)])
    np.testing.assert_allclose(ortho, X, atol=1e-12)
    np.testing.assert_allclose(plain, X * 2 * N, atol=1e-10)  # unnormalized, as TF
    np.testing.assert_allclose(cut, run(tf.signal.dct(X[:, :5])), atol=1e-12)
    np.testing.assert_allclose(padded, run(tf.signal.dct(np.pad(X, [(0, 0), (0, 2)]))),
                               atol=1e-12)


def test_dct_bad_arguments() -> None:
    for kwargs, error, message in [({"type": 4}, ValueError, "Types I, II and III"),
                                   ({"norm": "forward"}, ValueError, "Unknown normalization"),
                                   ({"type": 1, "norm": "ortho"}, ValueError, "Type-I"),
                                   ({"axis": 0}, NotImplementedError, "axis must be -1")]:
        with pytest.raises(error, match=message):
            tf.signal.dct(X, **kwargs)
    with pytest.raises(ValueError, match="statically known"):
        tf.signal.dct(tf.placeholder(tf.float32, [2, None]))


def test_mfccs_are_the_scaled_dct2() -> None:
    log_mel = RNG.standard_normal((4, 2, 13)).astype(np.float32)
    got = run(tf.signal.mfccs_from_log_mel_spectrograms(log_mel))
    k, m = np.arange(13)[:, None], np.arange(13)[None, :]
    want = log_mel @ (2 * np.cos(np.pi * k * (2 * m + 1) / 26)).T / np.sqrt(26)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_fftshift_and_ifftshift_roll_like_numpy() -> None:
    x = np.arange(15.0).reshape(3, 5)
    got = run([tf.signal.fftshift(x), tf.signal.ifftshift(x), tf.signal.fftshift(x, axes=1)])
    for g, w in zip(got, [np.fft.fftshift(x), np.fft.ifftshift(x), np.fft.fftshift(x, axes=1)]):
        np.testing.assert_array_equal(g, w)
