"""Huffman coding tables and bit packing for tensorweave's JPEG encoder, as libjpeg writes them.

Contract: `HuffmanCode` is one DHT table (code counts per length, symbols in code order) giving
each symbol's canonical code and its DHT segment body; ``STANDARD_DC``/``STANDARD_AC`` are JPEG
Annex K.3's luminance (index 0) and chrominance (index 1) tables, libjpeg's defaults;
``optimal_table(counts)`` is jchuff.c's ``jpeg_gen_optimal_table`` (`JpegError` where libjpeg
overflows); ``pack_bits(values, lengths)`` makes an entropy-coded segment (MSB first, padded with
one bits, 0xFF followed by a stuffed zero byte).
"""

from __future__ import annotations

import attrs
import numpy as np

from tensorweave.formats.jpeg_entropy import JpegError

__all__ = ["STANDARD_AC", "STANDARD_DC", "HuffmanCode", "bit_length", "optimal_table",
           "pack_bits"]

# JPEG Annex K.3 Huffman tables: code counts per length 1..16, then the symbols
_AC_LUMA_SYMBOLS = bytes.fromhex(
    "01020300041105122131410613516107227114328191a1082342b1c11552d1f02433627282090a161718191a"
    "25262728292a3435363738393a434445464748494a535455565758595a636465666768696a737475767778797a"
    "838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9ca"
    "d2d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9fa")
_AC_CHROMA_SYMBOLS = bytes.fromhex(
    "000102031104052131061241510761711322328108144291a1b1c109233352f0156272d10a162434e125f117"
    "18191a262728292a35363738393a434445464748494a535455565758595a636465666768696a737475767778"
    "797a82838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7"
    "c8c9cad2d3d4d5d6d7d8d9dae2e3e4e5e6e7e8e9eaf2f3f4f5f6f7f8f9fa")


@attrs.frozen
class HuffmanCode:
    """One DHT table: `bits[i]` codes of length i + 1 for `symbols` in order."""

    bits: tuple[int, ...]
    symbols: bytes

    def codes(self) -> tuple[np.ndarray, np.ndarray]:
        """Canonical code and code length of each symbol 0..255 (length 0: no code)."""
        code_of, length_of = np.zeros(256, np.int64), np.zeros(256, np.int64)
        code = k = 0
        for length, count in enumerate(self.bits, start=1):
            for _ in range(count):
                code_of[self.symbols[k]], length_of[self.symbols[k]] = code, length
                code, k = code + 1, k + 1
            code <<= 1
        return code_of, length_of

    def segment(self, kind: int, index: int) -> bytes:
        return bytes([kind << 4 | index, *self.bits]) + self.symbols


STANDARD_DC = (
    HuffmanCode((0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0), bytes(range(12))),
    HuffmanCode((0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0), bytes(range(12))))
STANDARD_AC = (
    HuffmanCode((0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7D), _AC_LUMA_SYMBOLS),
    HuffmanCode((0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77), _AC_CHROMA_SYMBOLS))


def optimal_table(counts: np.ndarray) -> HuffmanCode:
    """jchuff.c's jpeg_gen_optimal_table: Huffman code lengths of the symbol counts (a
    reserved pseudo-symbol 256 keeps any code from being all ones), limited to 16 bits; as
    libjpeg, counts skewed enough to need codes over 32 bits first raise `JpegError`."""
    freq = [int(c) for c in counts] + [1]
    size = [0] * 257
    others = [-1] * 257
    while True:
        # the least frequent symbol (the highest-numbered on ties), then the next least
        c1 = c2 = -1
        best = 1 << 62
        for i, f in enumerate(freq):
            if f and f <= best:
                best, c1 = f, i
        best = 1 << 62
        for i, f in enumerate(freq):
            if f and f <= best and i != c1:
                best, c2 = f, i
        if c2 < 0:
            break
        freq[c1] += freq[c2]
        freq[c2] = 0
        size[c1] += 1
        while others[c1] >= 0:
            c1 = others[c1]
            size[c1] += 1
        others[c1] = c2
        size[c2] += 1
        while others[c2] >= 0:
            c2 = others[c2]
            size[c2] += 1
    if max(size) > 32:
        raise JpegError("Huffman code size table overflow")
    bits = [0] * 33
    for s in size:
        if s:
            bits[s] += 1
    for i in range(32, 16, -1):
        while bits[i] > 0:
            j = i - 2
            while bits[j] == 0:
                j -= 1
            bits[i] -= 2
            bits[i - 1] += 1
            bits[j + 1] += 2
            bits[j] -= 1
    i = 16
    while bits[i] == 0:
        i -= 1
    bits[i] -= 1
    symbols = bytes(s for length in range(1, 33) for s in range(256) if size[s] == length)
    return HuffmanCode(tuple(bits[1:17]), symbols)


def pack_bits(values: np.ndarray, lengths: np.ndarray) -> bytes:
    """The bit string of `values` (each `lengths` bits, MSB first), padded with one bits to a
    byte boundary, with a zero byte stuffed after every 0xFF."""
    width = int(lengths.max()) if len(lengths) else 0
    shifts = lengths[:, None] - 1 - np.arange(width)
    bits = (values[:, None] >> np.maximum(shifts, 0)) & 1
    stream = bits[shifts >= 0].astype(np.uint8)
    stream = np.concatenate([stream, np.ones(-len(stream) % 8, np.uint8)])
    return np.packbits(stream).tobytes().replace(b"\xff", b"\xff\x00")


def bit_length(values: np.ndarray) -> np.ndarray:
    return np.frexp(np.abs(values).astype(np.float64))[1].astype(np.int64)
