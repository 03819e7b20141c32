"""BMP decoding of 24- and 32-bit bitmaps, as TensorFlow 1.15's ``DecodeBmp``.

Contract: ``decode_bmp(data, channels=0)`` reads the pixel-data offset (byte 10), width (18),
height (22, negative for top-down rows) and bits per pixel (28) of a Windows bitmap and returns
uint8 ``[abs(height), width, bpp // 8]`` in RGB(A) order (the file holds BGR(A) rows padded to 4
bytes, bottom row first unless the height is negative). `channels` 0 takes the file's; 3 or 4
must match it. As TF, the ``BM`` magic is not checked here (``decode_image`` checks it), nor is
the compression field: the bytes are read as BGR(A) rows whatever it says (right for
BI_BITFIELDS files in BGRA order; RLE data decodes as TF decodes it, to noise, or is too short).
Anything else (fewer than 32 bytes, another depth, a bad size, data too short) raises
`BmpError` (a `ValueError`) with TF's wording where TF has one.

Why not a library: TF decodes BMP with its own few lines (``decode_bmp_op.cc``: the rows'
bytes, reordered), which numpy reproduces at memory speed; ``imagecodecs.bmp_decode`` treats a
32-bit BI_RGB bitmap as BGRX and drops its alpha, which TF keeps (``tests/data/bmp``'s
``rgba_6x3`` comes back with 3 channels).
"""

from __future__ import annotations

import struct

import numpy as np

__all__ = ["BmpError", "decode_bmp"]


class BmpError(ValueError):
    """Malformed or unsupported BMP data."""


def decode_bmp(data: bytes, channels: int = 0) -> np.ndarray:
    """The pixels of BMP file `data`; see the module docstring."""
    if len(data) < 32:
        raise BmpError(f"Incomplete bmp content, requires at least 32 bytes to find the header "
                       f"size, width, height, and bpp, got {len(data)} bytes")
    (offset,) = struct.unpack_from("<i", data, 10)
    width, height = struct.unpack_from("<ii", data, 18)
    (bpp,) = struct.unpack_from("<H", data, 28)
    if channels and channels != bpp // 8:
        raise BmpError(f"channels attribute {channels} does not match bits per pixel from "
                       f"file {bpp // 8}")
    depth = bpp // 8
    if depth not in (3, 4):
        raise BmpError(f"Number of channels must be 3 or 4, was {depth}")
    if width <= 0:
        raise BmpError("Width must be positive")
    if height == 0:
        raise BmpError("Height must be nonzero")
    if offset < 0:
        raise BmpError("header size must be nonnegative")
    rows = abs(height)
    row_size = (depth * width + 3) // 4 * 4
    needed = offset + (rows - 1) * row_size + width * depth
    if needed > len(data):
        raise BmpError(f"Incomplete bmp content, requires at least {needed} bytes, got "
                       f"{len(data)} bytes")
    padded = np.zeros(rows * row_size, np.uint8)
    body = np.frombuffer(data, np.uint8, count=min(len(data) - offset, rows * row_size),
                         offset=offset)
    padded[:body.size] = body
    pixels = padded.reshape(rows, row_size)[:, :width * depth].reshape(rows, width, depth)
    if height > 0:
        pixels = pixels[::-1]
    order = [2, 1, 0, 3][:depth]  # BGR(A) -> RGB(A)
    return np.ascontiguousarray(pixels[..., order])
