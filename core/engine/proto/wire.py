"""Protocol-buffer wire primitives, for the messages tensorweave encodes by hand (summaries and
events, ``tf.train.Example``) without a protobuf dependency.

Contract: the ``*_field`` writers give one field's bytes (its key, then its value) and, as
proto3 does, write nothing for a default scalar; `fields` splits a serialized message into
``(field number, wire type, value)`` triples and raises `ValueError` for malformed bytes.
Varints are unsigned 64-bit on the wire: `varint` writes a negative int64 as its 10-byte two's
complement and `signed64` reads one back.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5
F64, F32 = struct.Struct("<d"), struct.Struct("<f")


def varint(value: int) -> bytes:
    """Base-128 varint of a non-negative int, or of a negative int64 as its 10-byte two's
    complement (as protobuf encodes negative int64 fields)."""
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        bits = value & 0x7F
        value >>= 7
        if value:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


def key(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


def double_field(number: int, value: float) -> bytes:
    return key(number, FIXED64) + F64.pack(value) if value else b""


def float_field(number: int, value: float) -> bytes:
    return key(number, FIXED32) + F32.pack(value) if value else b""


def int64_field(number: int, value: int) -> bytes:
    return key(number, VARINT) + varint(value) if value else b""


def bytes_field(number: int, value: bytes, always: bool = False) -> bytes:
    """A length-delimited field (string, bytes or an embedded message); empty values are
    written only if `always` (an embedded message that is set, even if empty)."""
    return key(number, BYTES) + varint(len(value)) + value if value or always else b""


def packed_doubles(number: int, values: tuple[float, ...]) -> bytes:
    return bytes_field(number, struct.pack(f"<{len(values)}d", *values))


def read_varint(data: bytes | memoryview, pos: int,
                limit: int | None = None) -> tuple[int, int]:
    """The unsigned varint at `pos` (read no further than `limit`, default the end) and the
    position after it; `ValueError` if it runs past the limit or over 64 bits."""
    end = len(data) if limit is None else limit
    result = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise ValueError("Malformed protocol buffer: truncated or overlong varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result & ((1 << 64) - 1), pos


def fields(data: bytes) -> Iterator[tuple[int, int, Any]]:
    """``(field number, wire type, value)`` of each field of a serialized message: an int for
    varints, raw `bytes` for the fixed and length-delimited types."""
    pos = 0
    while pos < len(data):
        tag, pos = read_varint(data, pos)
        number, wire_type = tag >> 3, tag & 7
        if wire_type == VARINT:
            value, pos = read_varint(data, pos)
        elif wire_type in (FIXED64, FIXED32):
            size = 8 if wire_type == FIXED64 else 4
            value, pos = data[pos:pos + size], pos + size
        elif wire_type == BYTES:
            size, pos = read_varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        else:
            raise ValueError(f"Malformed protocol buffer: wire type {wire_type}")
        if pos > len(data) or number == 0:
            raise ValueError("Malformed protocol buffer: truncated field")
        yield number, wire_type, value


def signed64(raw: int) -> int:
    """An int64 field's value from its unsigned varint."""
    return raw - (1 << 64) if raw >= 1 << 63 else raw
