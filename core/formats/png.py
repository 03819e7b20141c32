"""PNG on libpng and zlib through `imagecodecs`, converting as TF's ``png_io`` asks libpng to.

Why imagecodecs: it wraps libpng itself (as TF does) and decodes every colour type and depth
including 16-bit RGB(A), which Pillow reduces to 8 bits. Its encoder filters rows as TF's
libpng does, but deflates with zlib's default memory level and strategy, where TF's libpng uses
``memLevel`` 9 and ``Z_FILTERED`` (files some 10 % larger). So `encode` takes libpng's filtered
rows from a stored (level 0) imagecodecs file and deflates them with zlib as TF's libpng does:
TF's window size for the data, its memory level and strategy, IDAT chunks of libpng's 8192
bytes. The files are TF's, byte for byte, at every compression level.

Contract: `decode` turns a PNG file into what TF's ``DecodePng`` gives for ``channels`` (0: the
file's; a palette is 3, or 4 with tRNS) and ``bits`` (8 or 16). libpng expands palettes, low
grey depths (to 0-255) and tRNS to alpha; then, in libpng's order, alpha is dropped when
``channels`` is odd, RGB becomes grey with libpng's fixed-point 0.299/0.587/0.114 weights
(rounded only at 16 bits), 16 bits become 8 by dropping the low byte, grey becomes RGB, an alpha
of ``(1 << bit_depth) - 1`` truncated to the output's low byte is added (TF's filler: 255 for
8- and 16-bit files, the small maximum for 1/2/4-bit ones), and 8 bits widen to 16 as
``v * 257``. Bad data raises `InvalidArgumentError` whose message starts with "Invalid PNG
header" (before the image data) or "Invalid PNG data" as TF's. `encode` writes uint8 or
uint16 ``[h, w, 1-4]`` images.
"""

from __future__ import annotations

import struct
import zlib

import imagecodecs
import numpy as np

from tensorweave.engine import errors

__all__ = ["SIGNATURE", "decode", "encode"]

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PALETTE = 3
_IDAT_SIZE = 8192  # libpng's PNG_ZBUF_SIZE: one IDAT chunk per full output buffer
_SAMPLES = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
# libpng's fixed-point weights for png_set_rgb_to_gray(0.299, 0.587): (v * 32768) // 100000
_RED, _GREEN = 29900 * 32768 // 100000, 58700 * 32768 // 100000
_BLUE = 32768 - _RED - _GREEN


def _header(data: bytes) -> tuple[int, int]:
    """(bit depth, colour type) from the IHDR chunk, which must come first."""
    if not data.startswith(SIGNATURE) or data[12:16] != b"IHDR" or len(data) < 33:
        raise errors.InvalidArgumentError(
            None, None, f"Invalid PNG header, data size {len(data)}")
    return data[24], data[25]


def decode(data: bytes, channels: int = 0, bits: int = 8) -> np.ndarray:
    """PNG file `data` as TF's ``DecodePng`` gives it: uint8 (`bits` 8) or uint16 (16)
    ``[height, width, channels]``; see the module docstring."""
    depth, color = _header(data)
    try:
        raw = imagecodecs.png_decode(data)
    except (imagecodecs.PngError, ValueError) as exc:
        raise errors.InvalidArgumentError(
            None, None, f"Invalid PNG data, size {len(data)}: {exc}") from None
    raw = raw[..., None] if raw.ndim == 2 else raw
    if channels == 0:
        channels = raw.shape[-1] if color == _PALETTE else _SAMPLES.get(color, raw.shape[-1])
    wide = raw.dtype == np.uint16
    if channels == raw.shape[-1] and wide == (bits == 16):
        return raw  # libpng's own output is the answer: nothing to convert
    pixels = raw.astype(np.int64)
    colour_count = 1 if raw.shape[-1] < 3 else 3
    colour, alpha = pixels[..., :colour_count], pixels[..., colour_count:]
    want_alpha, want_grey = channels % 2 == 0, channels < 3
    if not want_alpha:
        alpha = alpha[..., :0]
    if want_grey and colour_count == 3:
        rounding = 16384 if wide else 0
        colour = (colour @ np.array([_RED, _GREEN, _BLUE]) + rounding)[..., None] >> 15
    if wide and bits == 8:
        colour, alpha, wide = colour >> 8, alpha >> 8, False
    if not want_grey and colour.shape[-1] == 1:
        colour = np.repeat(colour, 3, axis=-1)
    if want_alpha and alpha.shape[-1] == 0:
        filler = ((1 << depth) - 1) & (0xFFFF if wide else 0xFF)
        alpha = np.full(colour.shape[:-1] + (1,), filler, np.int64)
    out = np.concatenate([colour, alpha], axis=-1)
    if bits == 16 and not wide:
        out = out * 257
    return out.astype(np.uint16 if bits == 16 else np.uint8)


def _chunk(kind: bytes, body: bytes) -> bytes:
    return (struct.pack(">I", len(body)) + kind + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))


def _window_bits(size: int) -> int:
    """libpng's ``png_deflate_claim``: the smallest zlib window (from 2**15 down) that still
    holds `size` bytes of image data plus zlib's 262-byte lookahead."""
    bits = 15
    if size <= 16384:
        while size + 262 <= 1 << (bits - 1):
            bits -= 1
    return bits


def encode(image: np.ndarray, compression: int = -1) -> bytes:
    """`image` (uint8 or uint16, ``[h, w, c]``, c in 1-4) as TF's PNG file; `compression` is
    zlib's level (-1 its default, 6). Raises `InternalError` where libpng refuses."""
    try:
        stored = bytes(imagecodecs.png_encode(np.ascontiguousarray(image), level=0))
    except (imagecodecs.PngError, ValueError) as exc:
        raise errors.InternalError(None, None, f"PNG encoding failed: {exc}") from None
    if compression == 0:
        return stored
    # signature and IHDR (33 bytes), the IDAT chunks of stored deflate blocks, then IEND
    pos, idat = 33, []
    while stored[pos + 4:pos + 8] == b"IDAT":
        (length,) = struct.unpack(">I", stored[pos:pos + 4])
        idat.append(stored[pos + 8:pos + 8 + length])
        pos += 12 + length
    rows = zlib.decompress(b"".join(idat))
    deflate = zlib.compressobj(compression, zlib.DEFLATED, _window_bits(len(rows)), 9,
                               zlib.Z_FILTERED)
    stream = deflate.compress(rows) + deflate.flush()
    chunks = [_chunk(b"IDAT", stream[i:i + _IDAT_SIZE])
              for i in range(0, len(stream), _IDAT_SIZE)]
    return stored[:33] + b"".join(chunks) + stored[pos:]

