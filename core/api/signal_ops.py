"""Signal processing built from the FFT ops, as ``tf.signal`` composes it: framing, windows,
short-time Fourier transforms, mel filterbanks, MFCCs and the DCT.

Contract: ``tf.compat.v1.signal``'s names, signatures and defaults. `frame` cuts
``frame_length``-sample windows every ``frame_step`` samples along `axis` (padding the end with
``pad_value`` when ``pad_end``); `overlap_and_add` is its adjoint-like inverse, summing frames of
the last two dims back into one signal. `hann_window`/`hamming_window` are TF's raised cosines
(``periodic`` only changes even lengths, as in TF). `stft` = frame, window, `rfft` with
``fft_length`` (default: the smallest power of two >= ``frame_length``); `inverse_stft` undoes it
with `inverse_stft_window_fn`'s window. `linear_to_mel_weight_matrix` is TF's HTK-mel triangular
filterbank (its first row, the DC bin, is zero). `dct`/`idct` support types I-III over the last
axis, with ``norm`` None or ``"ortho"``; `mfccs_from_log_mel_spectrograms` is TF's scaled DCT-II.
Frame lengths and steps are Python ints, and the transformed axis of `dct` must have a static
size; bad arguments raise `ValueError` as TF.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.api import array_ops, array_ops_extra, complex_ops, math_ops, spectral_ops
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor
from tensorweave.engine.graph.graph import Tensor

__all__ = [
    "dct", "fftshift", "frame", "hamming_window", "hann_window", "idct", "ifftshift",
    "inverse_stft", "inverse_stft_window_fn", "linear_to_mel_weight_matrix",
    "mfccs_from_log_mel_spectrograms", "overlap_and_add", "stft",
]

WindowFn = Callable[..., Tensor]


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, Tensor) or int(value) != value or int(value) <= 0:
        raise ValueError(f"{what} must be a positive Python int, got {value!r}")
    return int(value)


# -- framing --------------------------------------------------------------------------------


def frame(signal: Any, frame_length: Any, frame_step: Any, pad_end: bool = False,
          pad_value: Any = 0, axis: int = -1, name: str | None = None) -> Tensor:
    """Frames of `signal` along `axis`: that axis becomes ``[frames, frame_length]``."""
    with name_scope(name, "frame", [signal]):
        signal = convert_to_tensor(signal, name="signal")
        length = _positive_int(frame_length, "frame_length")
        step = _positive_int(frame_step, "frame_step")
        rank = signal.shape.ndims
        if rank is None or rank < 1:
            raise ValueError(f"Shape {signal.shape} must have rank at least 1")
        axis = axis % rank
        size = signal.shape.dims[axis]
        samples = array_ops.shape(signal)[axis] if size is None else size
        if pad_end:
            frames = -(-samples // step)  # ceil
            total = math_ops.maximum((frames - 1) * step + length, samples) if size is None \
                else max((frames - 1) * step + length, samples)
            after = total - samples
            paddings = array_ops.stack(
                [[0, 0]] * axis + [array_ops.stack([0, after])] + [[0, 0]] * (rank - axis - 1)) \
                if size is None else [[0, 0]] * axis + [[0, after]] + [[0, 0]] * (rank - axis - 1)
            signal = array_ops.pad(signal, paddings, constant_values=pad_value)
        elif size is None:
            frames = math_ops.maximum(0, 1 + (samples - length) // step)
        else:
            frames = max(0, 1 + (samples - length) // step)
        starts = array_ops.expand_dims(array_ops.range(frames) * step, 1)
        indices = starts + array_ops.expand_dims(array_ops.range(length), 0)
        return array_ops.gather(signal, indices, axis=axis)


def overlap_and_add(signal: Any, frame_step: Any, name: str | None = None) -> Tensor:
    """Sum the frames in `signal`'s last two dims ``[frames, frame_length]``, each placed
    ``frame_step`` samples after the previous one."""
    with name_scope(name, "overlap_and_add", [signal]):
        signal = convert_to_tensor(signal, name="signal")
        step = _positive_int(frame_step, "frame_step")
        rank = signal.shape.ndims
        if rank is None or rank < 2:
            raise ValueError(f"Shape {signal.shape} must have rank at least 2")
        length = signal.shape.dims[-1]
        if length is None:
            raise ValueError("overlap_and_add needs a static frame_length (the last dim)")
        frames = array_ops.shape(signal)[-2]
        out_length = (frames - 1) * step + length
        # frames to the front, one row per sample, summed by destination sample
        perm = [rank - 2, rank - 1, *range(rank - 2)]
        rows = array_ops.reshape(array_ops.transpose(signal, perm),
                                 array_ops.concat([[-1], array_ops.shape(signal)[:-2]], 0))
        targets = (array_ops.expand_dims(array_ops.range(frames) * step, 1)
                   + array_ops.expand_dims(array_ops.range(length), 0))
        summed = array_ops.unsorted_segment_sum(rows, array_ops.reshape(targets, [-1]),
                                                math_ops.maximum(out_length, 0))
        return array_ops.transpose(summed, [*range(1, rank - 1), 0])


# -- windows --------------------------------------------------------------------------------


def _raised_cosine(window_length: Any, periodic: bool, dtype: Any, a: float,
                   b: float) -> Tensor:
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype!r}")
    n = _positive_int(window_length, "window_length")
    if n == 1:
        return array_ops.ones([1], dtype)
    # periodic windows are one sample longer, but TF only applies that to even lengths
    denominator = n - 1 + (1 if periodic and n % 2 == 0 else 0)
    count = math_ops.cast(array_ops.range(n), dtype)
    return a - b * math_ops.cos(count * (2.0 * math.pi / denominator))


def hann_window(window_length: Any, periodic: bool = True, dtype: Any = dtypes.float32,
                name: str | None = None) -> Tensor:
    """``0.5 - 0.5 cos(2 pi n / N)``."""
    with name_scope(name, "hann_window", []):
        return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length: Any, periodic: bool = True, dtype: Any = dtypes.float32,
                   name: str | None = None) -> Tensor:
    """``0.54 - 0.46 cos(2 pi n / N)``."""
    with name_scope(name, "hamming_window", []):
        return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46)


# -- short-time Fourier transforms ----------------------------------------------------------


def _fft_length(frame_length: int, fft_length: Any) -> int:
    """`fft_length` checked, or by default the smallest power of two holding a frame."""
    if fft_length is None:
        return 1 << max(0, (frame_length - 1).bit_length())
    return _positive_int(fft_length, "fft_length")


def stft(signals: Any, frame_length: Any, frame_step: Any, fft_length: Any = None,
         window_fn: WindowFn | None = hann_window, pad_end: bool = False,
         name: str | None = None) -> Tensor:
    """The short-time Fourier transform of real `signals` ``[..., samples]``: complex
    ``[..., frames, fft_length // 2 + 1]``."""
    with name_scope(name, "stft", [signals]):
        signals = convert_to_tensor(signals, name="signals")
        if signals.shape.ndims is not None and signals.shape.ndims < 1:
            raise ValueError(f"Shape {signals.shape} must have rank at least 1")
        length = _positive_int(frame_length, "frame_length")
        n = _fft_length(length, fft_length)
        framed = frame(signals, length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            framed = framed * window_fn(length, dtype=framed.dtype)
        return spectral_ops.rfft(framed, [n])


def inverse_stft_window_fn(frame_step: Any,
                           forward_window_fn: WindowFn = hann_window,
                           name: str | None = None) -> WindowFn:
    """A window function that makes `inverse_stft` invert `stft` windowed by
    `forward_window_fn`: the forward window over the sum of its squares' overlaps."""
    step = _positive_int(frame_step, "frame_step")

    def window(frame_length: Any, dtype: Any) -> Tensor:
        with name_scope(name, "inverse_stft_window_fn", []):
            length = _positive_int(frame_length, "frame_length")
            forward = forward_window_fn(length, dtype=dtype)
            overlaps = -(-length // step)
            squares = array_ops.pad(math_ops.square(forward),
                                    [[0, overlaps * step - length]])
            per_phase = math_ops.reduce_sum(array_ops.reshape(squares, [overlaps, step]), 0,
                                            keepdims=True)
            denominator = array_ops.reshape(array_ops.tile(per_phase, [overlaps, 1]), [-1])
            return forward / denominator[:length]

    return window


def inverse_stft(stfts: Any, frame_length: Any, frame_step: Any, fft_length: Any = None,
                 window_fn: WindowFn | None = hann_window,
                 name: str | None = None) -> Tensor:
    """Real signals ``[..., samples]`` from complex `stfts` ``[..., frames, bins]``."""
    with name_scope(name, "inverse_stft", [stfts]):
        stfts = convert_to_tensor(stfts, name="stfts")
        if stfts.shape.ndims is not None and stfts.shape.ndims < 2:
            raise ValueError(f"Shape {stfts.shape} must have rank at least 2")
        length = _positive_int(frame_length, "frame_length")
        n = _fft_length(length, fft_length)
        frames = spectral_ops.irfft(stfts, [n])
        if length > n:
            rank = frames.shape.ndims
            frames = array_ops.pad(frames, [[0, 0]] * (rank - 1) + [[0, length - n]])
        else:
            frames = frames[..., :length]
        if window_fn is not None:
            frames = frames * window_fn(length, dtype=frames.dtype)
        return overlap_and_add(frames, frame_step)


# -- mel and cepstral features --------------------------------------------------------------

_MEL_BREAK_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _hertz_to_mel(hertz: np.ndarray) -> np.ndarray:
    return _MEL_HIGH_FREQUENCY_Q * np.log1p(hertz / _MEL_BREAK_HERTZ)


def linear_to_mel_weight_matrix(num_mel_bins: int = 20, num_spectrogram_bins: int = 129,
                                sample_rate: float = 8000, lower_edge_hertz: float = 125.0,
                                upper_edge_hertz: float = 3800.0, dtype: Any = dtypes.float32,
                                name: str | None = None) -> Tensor:
    """``[num_spectrogram_bins, num_mel_bins]`` triangular filters, equally spaced in HTK mel
    between the edges, that map a linear-frequency spectrogram to a mel one."""
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if num_spectrogram_bins <= 0:
        raise ValueError(f"num_spectrogram_bins must be positive. Got: {num_spectrogram_bins}")
    if sample_rate <= 0.0:
        raise ValueError(f"sample_rate must be positive. Got: {sample_rate}")
    if lower_edge_hertz < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError(f"lower_edge_hertz {lower_edge_hertz:.1f} >= upper_edge_hertz "
                         f"{upper_edge_hertz:.1f}")
    if upper_edge_hertz > sample_rate / 2:
        raise ValueError(f"upper_edge_hertz must not be larger than the Nyquist frequency "
                         f"(sample_rate / 2). Got {upper_edge_hertz} for sample_rate: "
                         f"{sample_rate}")
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Got: {dtype!r}")
    # the DC bin (row 0) gets no weight, as in TF
    hertz = np.linspace(0.0, sample_rate / 2.0, num_spectrogram_bins)[1:]
    bins_mel = _hertz_to_mel(hertz)[:, None]
    edges = np.linspace(_hertz_to_mel(np.float64(lower_edge_hertz)),
                        _hertz_to_mel(np.float64(upper_edge_hertz)), num_mel_bins + 2)
    lower, center, upper = edges[:-2], edges[1:-1], edges[2:]
    rising = (bins_mel - lower) / (center - lower)
    falling = (upper - bins_mel) / (upper - center)
    weights = np.maximum(0.0, np.minimum(rising, falling))
    weights = np.concatenate([np.zeros((1, num_mel_bins)), weights], 0)
    return constant(weights.astype(dtype.np_type), name=name or "linear_to_mel_weight_matrix")


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms: Any,
                                    name: str | None = None) -> Tensor:
    """MFCCs of ``[..., num_mel_bins]`` log-magnitude mel spectrograms: the DCT-II scaled by
    ``1 / sqrt(2 num_mel_bins)`` (orthonormal but for the first coefficient), as TF."""
    with name_scope(name, "mfccs_from_log_mel_spectrograms", [log_mel_spectrograms]):
        x = convert_to_tensor(log_mel_spectrograms, name="log_mel_spectrograms")
        bins = _static_last(x)
        return dct(x, type=2) * (1.0 / math.sqrt(2.0 * bins))


# -- discrete cosine transforms -------------------------------------------------------------


def _static_last(x: Tensor) -> int:
    if x.shape.ndims is None or x.shape.ndims < 1 or x.shape.dims[-1] is None:
        raise ValueError(f"the last dimension of {x.name} must be statically known, "
                         f"got shape {x.shape}")
    return int(x.shape.dims[-1])


def _check_dct(type: int, axis: int, norm: str | None) -> None:  # noqa: A002 - TF's name
    if axis != -1:
        raise NotImplementedError(f"axis must be -1. Got: {axis}")
    if type not in (1, 2, 3):
        raise ValueError("Only Types I, II and III (I)DCT are supported.")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")
    if type == 1 and norm == "ortho":
        raise ValueError("Normalization is not supported for the Type-I DCT.")


def _fit_last(x: Tensor, n: int | None) -> Tensor:
    """`x` with its last dim cut or zero-padded to `n`."""
    size = _static_last(x)
    if n is None or n == size:
        return x
    if n < 1:
        raise ValueError(f"n should be a positive integer or None, got {n}")
    if n < size:
        return x[..., :n]
    return array_ops.pad(x, [[0, 0]] * (x.shape.ndims - 1) + [[0, n - size]])


def _edge_weights(size: int, first: float, rest: float, dtype: dtypes.DType) -> Tensor:
    return constant(np.array([first] + [rest] * (size - 1), dtype.np_type))


def dct(input: Any, type: int = 2, n: int | None = None, axis: int = -1,  # noqa: A002
        norm: str | None = None, name: str | None = None) -> Tensor:
    """The DCT of the given `type` over the last axis of a real `input`, through a `rfft` of
    twice its length."""
    _check_dct(type, axis, norm)
    with name_scope(name, "dct", [input]):
        x = _fit_last(convert_to_tensor(input, name="input"), n)
        size = _static_last(x)
        real = x.dtype
        if type == 1:
            mirrored = array_ops.concat([x, array_ops.reverse(x[..., 1:-1], [-1])], -1)
            return complex_ops.real(spectral_ops.rfft(mirrored))
        k = math_ops.cast(array_ops.range(size), real) * (math.pi * 0.5 / size)
        if type == 2:
            twiddle = 2.0 * math_ops.exp(complex_ops.complex(array_ops.zeros_like(k), -k))
            spectrum = spectral_ops.rfft(x, [2 * size])[..., :size]
            out = complex_ops.real(spectrum * twiddle)
            if norm == "ortho":
                first = 0.5 / math.sqrt(size)
                out = out * _edge_weights(size, first, first * math.sqrt(2.0), real)
            return out
        if norm == "ortho":
            x = x * _edge_weights(size, math.sqrt(size), math.sqrt(size) * math.sqrt(0.5), real)
        else:
            x = x * float(size)
        twiddle = 2.0 * math_ops.exp(complex_ops.complex(array_ops.zeros_like(k), k))
        full = spectral_ops.irfft(twiddle * complex_ops.complex(x, array_ops.zeros_like(x)),
                                  [2 * size])
        return full[..., :size]


def idct(input: Any, type: int = 2, n: int | None = None, axis: int = -1,  # noqa: A002
         norm: str | None = None, name: str | None = None) -> Tensor:
    """The inverse of `dct` of `type` (types I and III scaled by ``2 * N`` when unnormalized,
    as TF): the DCT of the inverse type."""
    _check_dct(type, axis, norm)
    return dct(input, type={1: 1, 2: 3, 3: 2}[type], n=n, axis=axis, norm=norm,
               name=name or "idct")


# -- shifts ---------------------------------------------------------------------------------


def _shift(x: Any, axes: Any, sign: int, name: str) -> Tensor:
    with name_scope(None, name, [x]):
        x = convert_to_tensor(x, name="x")
        if x.shape.ndims is None or not x.shape.is_fully_defined():
            raise ValueError(f"{name} needs a static shape, got {x.shape}")
        dims = x.shape.as_list()
        axes = list(range(len(dims))) if axes is None else list(np.atleast_1d(axes))
        shifts = [sign * (dims[a] // 2) for a in axes]
        return array_ops_extra.roll(x, shifts, axes)


def fftshift(x: Any, axes: Any = None, name: str | None = None) -> Tensor:
    """`x` rolled so that the zero frequency is at the centre of each of `axes` (all)."""
    return _shift(x, axes, 1, name or "fftshift")


def ifftshift(x: Any, axes: Any = None, name: str | None = None) -> Tensor:
    """The inverse of `fftshift`."""
    return _shift(x, axes, -1, name or "ifftshift")
