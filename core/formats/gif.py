"""GIF decoding (GIF87a/GIF89a, LZW) into RGB frames, as TensorFlow 1.15's ``DecodeGif`` does.

Contract: ``decode_gif(data)`` returns uint8 ``[frames, height, width, 3]``, height and width
being the logical screen's. Each image's indices go through its local colour table, else the
global one (neither: `GifError`). Interlaced images are put back in row order. As TF 1.15's
giflib-based decoder: the first frame must cover the whole canvas; a later frame that covers
only part of it (clipped to the canvas) starts from a copy of the previous frame; extension
blocks (graphic control: disposal, transparency, delays; comments; application data) are read
past and have no effect. An index outside the colour table, LZW data that ends before the image
is complete, a file without images, an unknown block or truncated data raise `GifError` (a
`ValueError`) saying what is wrong.
"""

from __future__ import annotations

import numpy as np

__all__ = ["GifError", "decode_gif"]

_MAX_CODE_BITS = 12


class GifError(ValueError):
    """Malformed GIF data."""


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, count: int) -> bytes:
        if self.pos + count > len(self.data):
            raise GifError("truncated data")
        out = self.data[self.pos:self.pos + count]
        self.pos += count
        return out

    def byte(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        low, high = self.take(2)
        return low | high << 8

    def sub_blocks(self) -> bytes:
        parts = []
        while size := self.byte():
            parts.append(self.take(size))
        return b"".join(parts)

    def color_table(self, flags: int) -> np.ndarray:
        size = 2 << (flags & 7)
        return np.frombuffer(self.take(3 * size), np.uint8).reshape(size, 3)


def _lzw(data: bytes, min_bits: int, count: int) -> np.ndarray:
    """The first `count` indices of GIF LZW stream `data` (codes packed LSB first)."""
    if not 2 <= min_bits <= 11:
        raise GifError(f"invalid LZW minimum code size {min_bits}")
    clear, end = 1 << min_bits, (1 << min_bits) + 1
    out = bytearray()
    table: list[bytes] = []
    bits, code_bits, acc, prev = 0, min_bits + 1, 0, None
    for byte in data:
        acc |= byte << bits
        bits += 8
        while bits >= code_bits:
            code = acc & ((1 << code_bits) - 1)
            acc >>= code_bits
            bits -= code_bits
            if code == clear:
                table = [bytes([i]) for i in range(clear)] + [b"", b""]
                code_bits, prev = min_bits + 1, None
                continue
            if code == end or len(out) >= count:
                return _finish(out, count)
            if not table:  # a stream that does not begin with a clear code
                table = [bytes([i]) for i in range(clear)] + [b"", b""]
            if code < len(table) and (code < clear or code > end):
                entry = table[code]
            elif code == len(table) and prev is not None:  # the KwKwK case
                entry = prev + prev[:1]
            else:
                raise GifError(f"invalid LZW code {code}")
            out += entry
            # once the table is full (4096 entries) the code size stays 12 until a clear code
            if prev is not None and len(table) < 1 << _MAX_CODE_BITS:
                table.append(prev + entry[:1])
                if len(table) == 1 << code_bits and code_bits < _MAX_CODE_BITS:
                    code_bits += 1
            prev = entry
    return _finish(out, count)


def _finish(out: bytearray, count: int) -> np.ndarray:
    if len(out) < count:
        raise GifError(f"image data ends after {len(out)} of {count} pixels")
    return np.frombuffer(bytes(out[:count]), np.uint8)


def _deinterlace(indices: np.ndarray, height: int) -> np.ndarray:
    order = [*range(0, height, 8), *range(4, height, 8), *range(2, height, 4),
             *range(1, height, 2)]
    out = np.empty_like(indices)
    out[order] = indices
    return out


def decode_gif(data: bytes) -> np.ndarray:
    """The frames of GIF file `data`; see the module docstring."""
    reader = _Reader(data)
    if reader.take(6) not in (b"GIF87a", b"GIF89a"):
        raise GifError("not a GIF signature")
    width, height, flags = reader.u16(), reader.u16(), reader.byte()
    reader.take(2)  # background colour index, pixel aspect ratio
    global_table = reader.color_table(flags) if flags & 0x80 else None
    frames: list[np.ndarray] = []
    while (kind := reader.byte()) != 0x3B:  # trailer
        if kind == 0x21:  # extension: label, then sub-blocks
            reader.byte()
            reader.sub_blocks()
            continue
        if kind != 0x2C:
            raise GifError(f"unknown block type 0x{kind:02x}")
        left, top, w, h, local = (reader.u16(), reader.u16(), reader.u16(), reader.u16(),
                                  reader.byte())
        table = reader.color_table(local) if local & 0x80 else global_table
        min_bits = reader.byte()
        indices = _lzw(reader.sub_blocks(), min_bits, w * h).reshape(h, w)
        if local & 0x40:
            indices = _deinterlace(indices, h)
        if table is None:
            raise GifError(f"missing color map for frame {len(frames)}")
        if indices.size and int(indices.max()) >= len(table):
            raise GifError(f"found color index {int(indices.max())} outside of color map "
                           f"range {len(table)}")
        if (left, top, w, h) != (0, 0, width, height):
            if not frames:
                raise GifError("the first frame does not fill the canvas")
            frame = frames[-1].copy()
            bottom, right = min(top + h, height), min(left + w, width)
            frame[top:bottom, left:right] = table[indices[:bottom - top, :right - left]]
        else:
            frame = table[indices]
        frames.append(frame)
    if not frames:
        raise GifError("gif file does not contain any image")
    return np.stack(frames)
