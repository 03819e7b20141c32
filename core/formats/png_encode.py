"""PNG encoding of 8- and 16-bit images, with zlib and no image library.

Contract: ``encode_png(image)`` takes a uint8 or uint16 array ``[height, width, channels]`` with
1 (grey), 2 (grey + alpha), 3 (RGB) or 4 (RGBA) channels and returns a complete PNG file:
signature, IHDR (bit depth 8 or 16 from the dtype, no interlace), one IDAT of zlib-compressed
scanlines with filter type 0 (16-bit samples big-endian, as PNG stores them), and IEND, each
chunk with its CRC-32. Other shapes or dtypes: `ValueError`.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

__all__ = ["SIGNATURE", "chunk_crc", "encode_png"]

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> PNG colour type


def chunk_crc(kind: bytes, data: bytes) -> int:
    """The CRC-32 a chunk of type `kind` carrying `data` ends with (`tensorweave.formats.png_decode`
    checks it)."""
    return zlib.crc32(kind + data) & 0xFFFFFFFF


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", chunk_crc(kind, data))


def encode_png(image: np.ndarray, compression: int = -1) -> bytes:
    """`image` (uint8 or uint16, ``[h, w, c]``, c in 1..4) as PNG bytes; `compression` is
    zlib's level."""
    if (image.dtype not in (np.uint8, np.uint16) or image.ndim != 3
            or image.shape[2] not in _COLOR_TYPES):
        raise ValueError(f"encode_png needs a uint8 or uint16 [height, width, 1-4] image, got "
                         f"{image.dtype} {list(image.shape)}")
    height, width, channels = image.shape
    depth = image.dtype.itemsize * 8
    header = struct.pack(">IIBBBBB", width, height, depth, _COLOR_TYPES[channels], 0, 0, 0)
    samples = np.ascontiguousarray(image, image.dtype.newbyteorder(">"))
    rows = samples.reshape(height, width * channels).view(np.uint8)
    scanlines = np.concatenate([np.zeros((height, 1), np.uint8), rows], axis=1)
    return b"".join((SIGNATURE, _chunk(b"IHDR", header),
                     _chunk(b"IDAT", zlib.compress(scanlines.tobytes(), compression)),
                     _chunk(b"IEND", b"")))
