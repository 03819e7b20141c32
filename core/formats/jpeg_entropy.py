"""Huffman entropy decoding of JPEG scans into DCT coefficients, as libjpeg(-turbo) reads them.

Contract: ``HuffmanTable(counts, symbols, is_dc)`` checks a DHT table as libjpeg does (raising
`JpegError`) and builds a 16-bit lookup. ``Segment(raw)`` holds one restart interval's entropy
coded bytes (stuffed zeros removed). The scan decoders (``sequential``, ``dc_first``,
``dc_refine``, ``ac_first``, ``ac_refine``) decode one segment's MCUs into the components'
coefficient lists: flat Python lists, 64 entries per block in natural (row-major) order, the
block's offset given by each MCU entry. As libjpeg, data that ends early reads as zero bits
(the decoder goes on, as after libjpeg's "premature end of data segment" warning), a bit pattern
that is no code takes 17 bits and gives symbol 0, and an AC run past coefficient 63 writes
coefficient 63.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["NATURAL", "HuffmanTable", "JpegError", "Segment", "ac_first", "ac_refine",
           "dc_first", "dc_refine", "sequential"]


class JpegError(ValueError):
    """Malformed or unsupported JPEG data."""


def _zigzag() -> list[int]:
    cells = sorted(((i, j) for i in range(8) for j in range(8)),
                   key=lambda c: (c[0] + c[1], c[0] if (c[0] + c[1]) % 2 else c[1]))
    return [8 * i + j for i, j in cells]


# natural index of each zigzag position; runs past 63 land on 63, as libjpeg's padded table
NATURAL = _zigzag() + [63] * 16
_BAD_CODE = 17  # libjpeg reads 17 bits for a pattern that is no code, then gives symbol 0
# the most bits one MCU can take (12 blocks of 64 coefficients, 17 + 15 bits each), in bytes
_MCU_BYTES = 12 * 64 * 32 // 8
_ZERO_PAD = [0] * _MCU_BYTES


class HuffmanTable:
    """One DHT table: ``lookup[next 16 bits] = symbol << 5 | code length``."""

    def __init__(self, counts: Sequence[int], symbols: bytes, is_dc: bool) -> None:
        if sum(counts) > 256 or len(symbols) != sum(counts):
            raise JpegError("Bogus Huffman table definition")
        if is_dc and any(s > 15 for s in symbols):
            raise JpegError("Bogus Huffman table definition")
        lookup = np.full(1 << 16, _BAD_CODE, np.int64)
        code = k = 0
        for length, count in enumerate(counts, start=1):
            for _ in range(count):
                if code >= 1 << length:
                    raise JpegError("Bogus Huffman table definition")
                shift = 16 - length
                lookup[code << shift:(code + 1) << shift] = symbols[k] << 5 | length
                code, k = code + 1, k + 1
            code <<= 1
        self.lookup: list[int] = lookup.tolist()


class Segment:
    """The bits of one restart interval: ``window[i]`` holds bytes i..i+3 big-endian, so that
    any 25 bits from bit position p are ``window[p >> 3]`` shifted; zero bytes follow the data
    and more are added as a decoder reads past them."""

    def __init__(self, raw: bytes) -> None:
        data = np.frombuffer(raw.replace(b"\xff\x00", b"\xff") + bytes(_MCU_BYTES + 3),
                             np.uint8).astype(np.int64)
        self.window: list[int] = (data[:-3] << 24 | data[1:-2] << 16 | data[2:-1] << 8
                                  | data[3:]).tolist()

    def limit(self) -> int:
        """The bit position past which the next MCU might run off the window."""
        return (len(self.window) - _MCU_BYTES) * 8

    def grow(self) -> int:
        self.window.extend(_ZERO_PAD)
        return self.limit()


# An MCU is a list of (coefficients, block offset, component slot) for its blocks.
Mcu = list[tuple[list[int], int, int]]


def sequential(seg: Segment, mcus: Sequence[Mcu], dc: Sequence[list[int]],
               ac: Sequence[list[int]]) -> None:
    """A baseline/extended sequential scan: every coefficient of every block."""
    win, limit, p = seg.window, seg.limit(), 0
    pred = [0] * len(dc)
    natural = NATURAL
    for mcu in mcus:
        if p > limit:
            limit = seg.grow()
        for coefs, base, slot in mcu:
            e = dc[slot][(win[p >> 3] >> (16 - (p & 7))) & 0xFFFF]
            p += e & 31
            s = e >> 5
            if s:
                v = (win[p >> 3] >> (32 - (p & 7) - s)) & ((1 << s) - 1)
                p += s
                if v < 1 << (s - 1):
                    v += 1 - (1 << s)
                pred[slot] += v
            coefs[base] = pred[slot]
            table = ac[slot]
            k = 1
            while k < 64:
                e = table[(win[p >> 3] >> (16 - (p & 7))) & 0xFFFF]
                p += e & 31
                rs = e >> 5
                s = rs & 15
                if s:
                    k += rs >> 4
                    v = (win[p >> 3] >> (32 - (p & 7) - s)) & ((1 << s) - 1)
                    p += s
                    if v < 1 << (s - 1):
                        v += 1 - (1 << s)
                    coefs[base + natural[k]] = v
                    k += 1
                elif rs == 0xF0:
                    k += 16
                else:
                    break


def dc_first(seg: Segment, mcus: Sequence[Mcu], dc: Sequence[list[int]], al: int) -> None:
    """A progressive scan's first pass over DC coefficients (point transform `al`)."""
    win, limit, p = seg.window, seg.limit(), 0
    pred = [0] * len(dc)
    for mcu in mcus:
        if p > limit:
            limit = seg.grow()
        for coefs, base, slot in mcu:
            e = dc[slot][(win[p >> 3] >> (16 - (p & 7))) & 0xFFFF]
            p += e & 31
            s = e >> 5
            if s:
                v = (win[p >> 3] >> (32 - (p & 7) - s)) & ((1 << s) - 1)
                p += s
                if v < 1 << (s - 1):
                    v += 1 - (1 << s)
                pred[slot] += v
            coefs[base] = pred[slot] << al


def dc_refine(seg: Segment, mcus: Sequence[Mcu], al: int) -> None:
    """A progressive DC refinement scan: one raw bit per block."""
    win, limit, p = seg.window, seg.limit(), 0
    bit = 1 << al
    for mcu in mcus:
        if p > limit:
            limit = seg.grow()
        for coefs, base, _ in mcu:
            if (win[p >> 3] >> (31 - (p & 7))) & 1:
                coefs[base] |= bit
            p += 1


def ac_first(seg: Segment, mcus: Sequence[Mcu], table: list[int], ss: int, se: int,
             al: int) -> None:
    """A progressive first pass over AC band `ss`..`se` of one component, with end-of-band
    runs."""
    win, limit, p = seg.window, seg.limit(), 0
    natural = NATURAL
    eobrun = 0
    for mcu in mcus:
        if p > limit:
            limit = seg.grow()
        coefs, base, _ = mcu[0]
        if eobrun:
            eobrun -= 1
            continue
        k = ss
        while k <= se:
            e = table[(win[p >> 3] >> (16 - (p & 7))) & 0xFFFF]
            p += e & 31
            rs = e >> 5
            r, s = rs >> 4, rs & 15
            if s:
                k += r
                v = (win[p >> 3] >> (32 - (p & 7) - s)) & ((1 << s) - 1)
                p += s
                if v < 1 << (s - 1):
                    v += 1 - (1 << s)
                coefs[base + natural[k]] = v * (1 << al)
            elif r == 15:
                k += 15
            else:
                eobrun = 1 << r
                if r:
                    eobrun += (win[p >> 3] >> (32 - (p & 7) - r)) & ((1 << r) - 1)
                    p += r
                eobrun -= 1
                break
            k += 1


def ac_refine(seg: Segment, mcus: Sequence[Mcu], table: list[int], ss: int, se: int,
              al: int) -> None:
    """A progressive AC refinement scan (successive approximation, libjpeg's
    decode_mcu_AC_refine)."""
    win, limit, p = seg.window, seg.limit(), 0
    natural = NATURAL
    p1, m1 = 1 << al, -1 << al
    eobrun = 0
    for mcu in mcus:
        if p > limit:
            limit = seg.grow()
        coefs, base, _ = mcu[0]
        k = ss
        if not eobrun:
            while k <= se:
                e = table[(win[p >> 3] >> (16 - (p & 7))) & 0xFFFF]
                p += e & 31
                rs = e >> 5
                r, s = rs >> 4, rs & 15
                if s:
                    s = p1 if (win[p >> 3] >> (31 - (p & 7))) & 1 else m1
                    p += 1
                elif r != 15:
                    eobrun = 1 << r
                    if r:
                        eobrun += (win[p >> 3] >> (32 - (p & 7) - r)) & ((1 << r) - 1)
                        p += r
                    break
                while k <= se:
                    at = base + natural[k]
                    coef = coefs[at]
                    if coef:
                        if (win[p >> 3] >> (31 - (p & 7))) & 1 and not coef & p1:
                            coefs[at] = coef + (p1 if coef >= 0 else m1)
                        p += 1
                    else:
                        r -= 1
                        if r < 0:
                            break
                    k += 1
                if s:
                    coefs[base + natural[k]] = s
                k += 1
        if eobrun:
            while k <= se:
                at = base + natural[k]
                coef = coefs[at]
                if coef:
                    if (win[p >> 3] >> (31 - (p & 7))) & 1 and not coef & p1:
                        coefs[at] = coef + (p1 if coef >= 0 else m1)
                    p += 1
                k += 1
            eobrun -= 1
