"""``tw.spectral``: TF 1.x's older home of the Fourier transforms and the DCT (the same
functions as `tensorweave.signal`)."""

from tensorweave.api.signal_ops import dct, idct
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
    "dct", "fft", "fft2d", "fft3d", "idct", "ifft", "ifft2d", "ifft3d", "irfft", "irfft2d",
    "irfft3d", "rfft", "rfft2d", "rfft3d",
]
