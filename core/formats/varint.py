"""Base-128 varints, as LevelDB tables and TF's string tensors store lengths and offsets.

Contract: `encode` gives the bytes of a non-negative int (7 bits a byte, least significant
first, the high bit set on every byte but the last); `decode(data, pos, limit)` reads one at
`pos`, not past `limit`, and returns it with the position after it, or raises `ValueError` for a
varint that runs past `limit` or over 64 bits.
"""

from __future__ import annotations


def encode(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode(data: bytes | memoryview, pos: int, limit: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= limit or shift > 63:
            raise ValueError("truncated or overlong varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, pos
