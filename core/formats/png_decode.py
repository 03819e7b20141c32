"""PNG decoding with zlib and numpy, converting as TensorFlow's libpng-based decoder does.

Contract: ``read_png(data)`` parses a complete PNG file (every colour type and bit depth the
standard allows, all five filter types, Adam7 interlacing) into its `PngHeader` and the raw
samples, ``[height, width, channels]`` at the file's channels (a palette image gives its
indices) and depth (uint8 up to 8 bits, uint16 for 16; 1/2/4-bit samples keep their small
values). Critical chunks must carry a correct CRC-32; an ancillary chunk with a bad one is
skipped, as libpng does. ``decode_png(data, channels, bits)`` turns that into what TF's
``DecodePng`` gives for `channels` (0: the file's, palette 3 or 4 with tRNS) and `bits` (8 or
16), in libpng's transformation order: palette/low-depth expansion, tRNS to alpha when alpha is
wanted, alpha stripped when not, RGB to grey with libpng's fixed-point 0.299/0.587/0.114 weights
(rounded only at 16 bits), 16 to 8 bits by dropping the low byte, grey to RGB, an added alpha of
``(1 << bit_depth) - 1`` truncated to the output's low byte (TF's filler: 255 for 8- and 16-bit
files, the small maximum for 1/2/4-bit ones, as libpng's filler gives), and 8 to 16 bits as
``v * 257``.
Malformed data raises `PngError` (a `ValueError`) saying what is wrong; `in_header` tells
whether it was found before the first IDAT chunk (TF's "Invalid PNG header" case).
"""

from __future__ import annotations

import struct
import zlib

import attrs
import numpy as np

from tensorweave.formats.png_encode import SIGNATURE, chunk_crc

__all__ = ["PngError", "PngHeader", "decode_png", "read_png"]

GREY, RGB, PALETTE, GREY_ALPHA, RGBA = 0, 2, 3, 4, 6
_DEPTHS = {GREY: (1, 2, 4, 8, 16), RGB: (8, 16), PALETTE: (1, 2, 4, 8), GREY_ALPHA: (8, 16),
           RGBA: (8, 16)}
_SAMPLES = {GREY: 1, RGB: 3, PALETTE: 1, GREY_ALPHA: 2, RGBA: 4}
_KNOWN_CRITICAL = frozenset({b"IHDR", b"PLTE", b"IDAT", b"IEND"})
# (x0, y0, dx, dy) of the seven Adam7 passes
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
          (0, 1, 1, 2))
# libpng's fixed-point weights for png_set_rgb_to_gray(0.299, 0.587): (v * 32768) // 100000
_RED, _GREEN = 29900 * 32768 // 100000, 58700 * 32768 // 100000
_BLUE = 32768 - _RED - _GREEN


class PngError(ValueError):
    """Malformed PNG data."""

    def __init__(self, message: str, in_header: bool = False) -> None:
        super().__init__(message)
        self.in_header = in_header


@attrs.frozen
class PngHeader:
    """What IHDR, PLTE and tRNS say. `palette` is ``[n, 3]`` uint8; `transparency` is tRNS's
    payload: per-index alphas (palette), one grey sample or one RGB triple (ints)."""

    width: int
    height: int
    bit_depth: int
    color_type: int
    interlaced: bool
    palette: np.ndarray | None
    transparency: tuple[int, ...] | None

    @property
    def samples(self) -> int:
        return _SAMPLES[self.color_type]


def _chunks(data: bytes):
    """(type, payload) of each chunk after the signature, CRCs checked."""
    pos, seen_idat = len(SIGNATURE), False
    while True:
        if pos + 8 > len(data):
            raise PngError("truncated before IEND", not seen_idat)
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        end = pos + 8 + length
        if length > 0x7FFFFFFF or end + 4 > len(data):
            raise PngError(f"chunk {kind!r} runs past the end of the data",
                           not seen_idat and kind != b"IDAT")
        body = data[pos + 8:end]
        critical = not kind[0] & 0x20
        (crc,) = struct.unpack(">I", data[end:end + 4])
        pos = end + 4
        if crc != chunk_crc(kind, body):
            if critical:
                raise PngError(f"{kind.decode('latin-1')} chunk CRC mismatch",
                               not seen_idat and kind != b"IDAT")
            continue
        if critical and kind not in _KNOWN_CRITICAL:
            raise PngError(f"unknown critical chunk {kind!r}", not seen_idat)
        seen_idat = seen_idat or kind == b"IDAT"
        yield kind, body
        if kind == b"IEND":
            return


def _header(body: bytes) -> tuple[int, int, int, int, bool]:
    if len(body) != 13:
        raise PngError("IHDR chunk has the wrong length", True)
    width, height, depth, color, compression, filter_method, interlace = struct.unpack(
        ">IIBBBBB", body)
    if not 0 < width < 2 ** 31 or not 0 < height < 2 ** 31:
        raise PngError(f"invalid image size {width}x{height}", True)
    if depth not in _DEPTHS.get(color, ()):
        raise PngError(f"invalid colour type {color} with bit depth {depth}", True)
    if compression or filter_method or interlace > 1:
        raise PngError("unknown compression, filter or interlace method", True)
    return width, height, depth, color, bool(interlace)


def _transparency(body: bytes, color: int, palette: np.ndarray | None
                  ) -> tuple[int, ...] | None:
    # as libpng, a tRNS that does not fit the colour type is ignored
    if color == PALETTE and palette is not None and 0 < len(body) <= len(palette):
        return tuple(body)
    if color == GREY and len(body) == 2:
        return struct.unpack(">H", body)
    if color == RGB and len(body) == 6:
        return struct.unpack(">HHH", body)
    return None


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _unfilter(raw: memoryview, height: int, row_bytes: int, bpp: int) -> np.ndarray:
    """The ``[height, row_bytes]`` bytes of one (sub-)image whose scanlines are filtered."""
    out = np.zeros((height, row_bytes), np.uint8)
    prior = np.zeros(row_bytes, np.uint8)
    stride = row_bytes + 1
    for y in range(height):
        kind = raw[y * stride]
        line = np.frombuffer(raw[y * stride + 1:(y + 1) * stride], np.uint8)
        if kind == 0:
            row = line
        elif kind == 1:  # Sub: a running sum per byte position within a pixel, modulo 256
            padded = np.zeros(-(-row_bytes // bpp) * bpp, np.uint8)
            padded[:row_bytes] = line
            row = np.cumsum(padded.reshape(-1, bpp), axis=0, dtype=np.uint8).reshape(-1)
            row = row[:row_bytes]
        elif kind == 2:  # Up
            row = line + prior
        elif kind in (3, 4):  # Average, Paeth: each byte depends on the one just decoded
            values, up = bytearray(line), prior.tobytes()
            for i in range(row_bytes):
                left = values[i - bpp] if i >= bpp else 0
                if kind == 3:
                    values[i] = (values[i] + ((left + up[i]) >> 1)) & 0xFF
                else:
                    upper_left = up[i - bpp] if i >= bpp else 0
                    values[i] = (values[i] + _paeth(left, up[i], upper_left)) & 0xFF
            row = np.frombuffer(bytes(values), np.uint8)
        else:
            raise PngError(f"unknown filter type {kind} in scanline {y}")
        out[y] = row
        prior = out[y]
    return out


def _samples(rows: np.ndarray, width: int, samples: int, depth: int) -> np.ndarray:
    """Unfiltered scanlines as ``[height, width, samples]`` values of the file's depth."""
    height = rows.shape[0]
    if depth == 16:
        values = rows.view(">u2").astype(np.uint16)
    elif depth == 8:
        values = rows
    else:  # several samples per byte, most significant first; a row's last byte may be padded
        shifts = np.arange(8 - depth, -1, -depth, dtype=np.uint8)
        values = ((rows[:, :, None] >> shifts) & ((1 << depth) - 1)).reshape(height, -1)
    return values[:, :width * samples].reshape(height, width, samples)


def _pixels(stream: bytes, header: PngHeader) -> np.ndarray:
    width, height, depth = header.width, header.height, header.bit_depth
    bits = header.samples * depth
    bpp = max(1, bits // 8)
    passes = _ADAM7 if header.interlaced else ((0, 0, 1, 1),)
    dtype = np.uint16 if depth == 16 else np.uint8
    image = np.zeros((height, width, header.samples), dtype)
    view, pos = memoryview(stream), 0
    for x0, y0, dx, dy in passes:
        sub_width, sub_height = -(-(width - x0) // dx), -(-(height - y0) // dy)
        if sub_width <= 0 or sub_height <= 0:
            continue  # an empty pass has no scanlines, not even filter bytes
        row_bytes = -(-(sub_width * bits) // 8)
        size = sub_height * (row_bytes + 1)
        if pos + size > len(stream):
            raise PngError(f"not enough image data: {len(stream)} bytes after inflating")
        rows = _unfilter(view[pos:pos + size], sub_height, row_bytes, bpp)
        image[y0::dy, x0::dx] = _samples(rows, sub_width, header.samples, depth)
        pos += size
    return image


def read_png(data: bytes) -> tuple[PngHeader, np.ndarray]:
    """The header and raw samples of PNG file `data`; see the module docstring."""
    if not data.startswith(SIGNATURE):
        raise PngError("not a PNG signature", True)
    chunks = _chunks(data)
    first = next(chunks)
    if first[0] != b"IHDR":
        raise PngError("the first chunk is not IHDR", True)
    width, height, depth, color, interlaced = _header(first[1])
    palette: np.ndarray | None = None
    trns: bytes | None = None
    idat: list[bytes] = []
    for kind, body in chunks:
        if kind == b"PLTE" and not idat:
            if len(body) % 3 or not 0 < len(body) <= 768:
                raise PngError("invalid PLTE chunk length", True)
            palette = np.frombuffer(body, np.uint8).reshape(-1, 3)
        elif kind == b"tRNS" and not idat:
            trns = body
        elif kind == b"IDAT":
            if color == PALETTE and palette is None:
                raise PngError("palette image without a PLTE chunk", True)
            idat.append(body)
    if not idat:
        raise PngError("no IDAT chunk")
    header = PngHeader(width, height, depth, color, interlaced, palette,
                       None if trns is None else _transparency(trns, color, palette))
    try:
        stream = zlib.decompress(b"".join(idat))
    except zlib.error as exc:
        raise PngError(f"damaged image data: {exc}") from None
    return header, _pixels(stream, header)


def _palette_colors(header: PngHeader, indices: np.ndarray, want_alpha: bool) -> np.ndarray:
    # libpng's tables hold 256 entries: indices past the palette read black, opaque
    table = np.zeros((256, 4), np.uint8)
    table[:, 3] = 255
    table[:len(header.palette), :3] = header.palette
    if header.transparency is not None:
        table[:len(header.transparency), 3] = header.transparency
    return table[indices, :4 if want_alpha else 3]


def decode_png(data: bytes, channels: int = 0, bits: int = 8) -> np.ndarray:
    """PNG file `data` as TF's ``DecodePng`` gives it: uint8 (`bits` 8) or uint16 (16)
    ``[height, width, channels]``; see the module docstring."""
    header, raw = read_png(data)
    color, depth = header.color_type, header.bit_depth
    has_trns = header.transparency is not None
    if channels == 0:
        channels = (4 if has_trns else 3) if color == PALETTE else header.samples
    want_alpha, want_grey = channels % 2 == 0, channels < 3
    has_alpha = color in (GREY_ALPHA, RGBA)
    add_alpha = want_alpha and not has_alpha and not has_trns
    # expansion: palette to RGB(A) and grey to 8 bits, both at 8 bits
    if color == PALETTE:
        pixels = _palette_colors(header, raw[..., 0], want_alpha and has_trns).astype(np.int64)
        work_depth = 8
    else:
        pixels = raw.astype(np.int64)
        work_depth = max(depth, 8)
        if depth < 8:
            pixels = pixels * (255 // ((1 << depth) - 1))
        if want_alpha and has_trns:  # grey or RGB with a transparent colour
            # libpng masks the tRNS value to the file's depth before comparing
            key = np.asarray(header.transparency) & ((1 << depth) - 1)
            match = (raw.astype(np.int64) == key).all(axis=-1)
            pixels = np.concatenate([pixels, np.where(match, 0, (1 << work_depth) - 1)[..., None]],
                                    axis=-1)
    colour_count = 1 if color in (GREY, GREY_ALPHA) else 3
    color_part, alpha = pixels[..., :colour_count], pixels[..., colour_count:]
    if not want_alpha:
        alpha = alpha[..., :0]
    if want_grey and colour_count == 3:
        rounding = 16384 if work_depth == 16 else 0
        color_part = (color_part @ np.array([_RED, _GREEN, _BLUE]) + rounding)[..., None] >> 15
    if work_depth == 16 and bits == 8:
        color_part, alpha = color_part >> 8, alpha >> 8
        work_depth = 8
    if not want_grey and color_part.shape[-1] == 1:
        color_part = np.repeat(color_part, 3, axis=-1)
    if add_alpha:
        filler = ((1 << depth) - 1) & (0xFFFF if work_depth == 16 else 0xFF)
        alpha = np.full(color_part.shape[:-1] + (1,), filler, np.int64)
    out = np.concatenate([color_part, alpha], axis=-1)
    if bits == 16 and work_depth == 8:
        out = out * 257
    return out.astype(np.uint16 if bits == 16 else np.uint8)
