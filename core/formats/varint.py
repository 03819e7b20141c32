"""Base-128 varints as LevelDB's coding writes them: the block entries and handles of TF's
table files, and the element lengths of string tensors in TensorBundle data files.

Contract: `varint(n)` is the little-endian base-128 coding of a non-negative int below 2**64;
`read_varint(data, pos, limit)` reads one back and gives the position after it, raising
`ValueError` if it runs past `limit` or over 64 bits (so callers report corruption).
"""

from __future__ import annotations

__all__ = ["read_varint", "varint"]


def varint(value: int) -> bytes:
    """The varint of non-negative `value`."""
    out = bytearray()
    while True:
        bits = value & 0x7F
        value >>= 7
        if value:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


def read_varint(data: bytes | memoryview, pos: int,
                limit: int | None = None) -> tuple[int, int]:
    """The varint at `pos` (read no further than `limit`, default the end) and the position
    after it; `ValueError` if it runs past the limit or over 64 bits."""
    end = len(data) if limit is None else limit
    result = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise ValueError("truncated or overlong varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result & ((1 << 64) - 1), pos
