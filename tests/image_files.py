"""Image files built byte by byte for the codec tests, with struct and zlib only: PNG (every
colour type, bit depth, filter type, Adam7), GIF (LZW, frames, interlacing) and BMP writers that
share no code with tensorweave's decoders."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

import numpy as np

ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
         (0, 1, 1, 2))


def chunk(kind: bytes, body: bytes, crc: int | None = None) -> bytes:
    crc = zlib.crc32(kind + body) if crc is None else crc
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def _filter_row(kind: int, row: bytes, prior: bytes, bpp: int) -> bytes:
    out = bytearray()
    for i, x in enumerate(row):
        a = row[i - bpp] if i >= bpp else 0
        b = prior[i]
        c = prior[i - bpp] if i >= bpp else 0
        predictor = (0, a, b, (a + b) // 2, _paeth(a, b, c))[kind]
        out.append((x - predictor) % 256)
    return bytes([kind]) + bytes(out)


def _pack(samples: np.ndarray, depth: int) -> bytes:
    """One row of samples (flat) as bytes at `depth` bits each, big-endian, MSB first."""
    if depth == 16:
        return samples.astype(">u2").tobytes()
    if depth == 8:
        return samples.astype(np.uint8).tobytes()
    bits = "".join(format(int(v), f"0{depth}b") for v in samples)
    bits += "0" * (-len(bits) % 8)
    return bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))


def _scanlines(samples: np.ndarray, depth: int, filters: Sequence[int]) -> bytes:
    height, width, channels = samples.shape
    bpp = max(1, channels * depth // 8)
    out, prior = bytearray(), None
    for y in range(height):
        row = _pack(samples[y].reshape(-1), depth)
        prior = prior or bytes(len(row))
        out += _filter_row(filters[y % len(filters)], row, prior, bpp)
        prior = row
    return bytes(out)


def png(samples: np.ndarray, color_type: int, depth: int, filters: Sequence[int] = (0,),
        interlace: bool = False, palette: np.ndarray | None = None, trns: bytes | None = None,
        extra: Sequence[bytes] = (), idat_parts: int = 1) -> bytes:
    """A PNG of raw `samples` ``[h, w, c]`` (palette indices for colour type 3), each
    scanline filtered with `filters` in turn; `extra` chunks go before IDAT."""
    height, width, _ = samples.shape
    if interlace:
        raw = b"".join(_scanlines(samples[y0::dy, x0::dx], depth, filters)
                       for x0, y0, dx, dy in ADAM7 if samples[y0::dy, x0::dx].size)
    else:
        raw = _scanlines(samples, depth, filters)
    stream = zlib.compress(raw)
    step = -(-len(stream) // idat_parts)
    parts = b"".join(chunk(b"IDAT", stream[i:i + step]) for i in range(0, len(stream), step))
    head = chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0,
                                      int(interlace)))
    if palette is not None:
        head += chunk(b"PLTE", palette.astype(np.uint8).tobytes())
    if trns is not None:
        head += chunk(b"tRNS", trns)
    return b"\x89PNG\r\n\x1a\n" + head + b"".join(extra) + parts + chunk(b"IEND", b"")


# -- GIF --------------------------------------------------------------------------------------


def lzw(indices: Sequence[int], min_bits: int) -> bytes:
    """GIF LZW (variable code width, LSB-first packing, a clear code when the table fills)."""
    clear, end = 1 << min_bits, (1 << min_bits) + 1
    acc, nbits, out = 0, 0, bytearray()

    def emit(code: int, width: int) -> None:
        nonlocal acc, nbits
        acc |= code << nbits
        nbits += width
        while nbits >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            nbits -= 8

    def reset() -> tuple[dict[bytes, int], int, int]:
        return {bytes([i]): i for i in range(clear)}, end + 1, min_bits + 1

    table, next_code, width = reset()
    emit(clear, width)
    current = b""
    for k in indices:
        candidate = current + bytes([k])
        if candidate in table:
            current = candidate
            continue
        emit(table[current], width)
        table[candidate] = next_code
        next_code += 1
        if next_code > 1 << width and width < 12:
            width += 1
        if next_code == 4096:
            emit(clear, width)
            table, next_code, width = reset()
        current = bytes([k])
    emit(table[current], width)
    emit(end, width)
    if nbits:
        out.append(acc & 0xFF)
    return bytes(out)


def _blocks(data: bytes) -> bytes:
    return b"".join(bytes([len(data[i:i + 255])]) + data[i:i + 255]
                    for i in range(0, len(data), 255)) + b"\x00"


def gif_frame(indices: np.ndarray, left: int = 0, top: int = 0,
              table: np.ndarray | None = None, interlace: bool = False,
              min_bits: int = 2, transparent: int | None = None, disposal: int = 1) -> bytes:
    """One image block: a graphic control extension (`disposal`, a delay, `transparent` as the
    transparent index if given), the descriptor, `table` as the local colour table, LZW data."""
    h, w = indices.shape
    flags = (0x40 if interlace else 0)
    local = b""
    if table is not None:
        flags |= 0x80 | (len(table).bit_length() - 2)
        local = table.astype(np.uint8).tobytes()
    rows = indices
    if interlace:
        order = [*range(0, h, 8), *range(4, h, 8), *range(2, h, 4), *range(1, h, 2)]
        rows = indices[order]
    packed = disposal << 2 | (transparent is not None)
    control = b"\x21\xf9\x04" + struct.pack("<BHB", packed, 10, transparent or 0) + b"\x00"
    return (control + b"\x2c" + struct.pack("<HHHHB", left, top, w, h, flags) + local
            + bytes([min_bits]) + _blocks(lzw(rows.reshape(-1).tolist(), min_bits)))


def gif(width: int, height: int, frames: Sequence[bytes],
        table: np.ndarray | None = None) -> bytes:
    """A GIF89a of the given frame blocks; `table` (2**n colours) is the global one."""
    flags, head = 0, b""
    if table is not None:
        flags = 0x80 | (len(table).bit_length() - 2)
        head = table.astype(np.uint8).tobytes()
    comment = b"\x21\xfe" + _blocks(b"made for a test")
    return (b"GIF89a" + struct.pack("<HHBBB", width, height, flags, 0, 0) + head + comment
            + b"".join(frames) + b"\x3b")


# -- BMP --------------------------------------------------------------------------------------


def bmp(rgb: np.ndarray, top_down: bool = False) -> bytes:
    """A BITMAPINFOHEADER bitmap of uint8 ``[h, w, 3 or 4]`` `rgb`, rows padded to 4 bytes."""
    height, width, depth = rgb.shape
    bgr = rgb[..., [2, 1, 0, 3][:depth]]
    rows = bgr if top_down else bgr[::-1]
    row_size = (width * depth + 3) // 4 * 4
    pixels = b"".join(r.tobytes() + bytes(row_size - width * depth) for r in rows)
    info = struct.pack("<IiiHHIIiiII", 40, width, -height if top_down else height, 1, 8 * depth,
                       0, len(pixels), 2835, 2835, 0, 0)
    head = struct.pack("<2sIHHI", b"BM", 14 + len(info) + len(pixels), 0, 0, 14 + len(info))
    return head + info + pixels
