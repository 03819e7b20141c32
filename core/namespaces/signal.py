"""``tw.signal``: ``tf.signal``'s names: the Fourier transforms of
`tensorweave.api.spectral_ops` and the framing, window, STFT, mel and DCT functions of
`tensorweave.api.signal_ops`."""

from tensorweave.api.signal_ops import (
    dct,
    fftshift,
    frame,
    hamming_window,
    hann_window,
    idct,
    ifftshift,
    inverse_stft,
    inverse_stft_window_fn,
    linear_to_mel_weight_matrix,
    mfccs_from_log_mel_spectrograms,
    overlap_and_add,
    stft,
)
from tensorweave.api.spectral_ops import (
    fft,
    fft2d,
    fft3d,
    ifft,
    ifft2d,
    ifft3d,
    irfft,
    irfft2d,
    irfft3d,
    rfft,
    rfft2d,
    rfft3d,
)

__all__ = [
    "dct", "fft", "fft2d", "fft3d", "fftshift", "frame", "hamming_window", "hann_window", "idct",
    "ifft", "ifft2d", "ifft3d", "ifftshift", "inverse_stft", "inverse_stft_window_fn", "irfft",
    "irfft2d", "irfft3d", "linear_to_mel_weight_matrix", "mfccs_from_log_mel_spectrograms",
    "overlap_and_add", "rfft", "rfft2d", "rfft3d", "stft",
]
