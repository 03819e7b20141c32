"""tensorweave.engine.proto.wire: varints, field keys and the field splitter against hand-made
bytes."""

from __future__ import annotations

import pytest

from tensorweave.engine.proto import wire as wire


def test_varints_and_keys() -> None:
    assert wire.varint(0) == b"\x00" and wire.varint(300) == b"\xac\x02"
    assert wire.varint(-1) == b"\xff" * 9 + b"\x01"  # a negative int64: ten bytes
    assert wire.read_varint(b"\xac\x02rest", 0) == (300, 2)
    assert wire.signed64(wire.read_varint(wire.varint(-5), 0)[0]) == -5
    assert wire.key(1, wire.BYTES) == b"\x0a" and wire.key(16, wire.VARINT) == b"\x80\x01"


def test_fields_split_a_message() -> None:
    data = b"\x08\x96\x01" + b"\x12\x02hi" + b"\x1d" + b"\x00\x00\x80\x3f"
    assert list(wire.fields(data)) == [(1, wire.VARINT, 150), (2, wire.BYTES, b"hi"),
                                       (3, wire.FIXED32, b"\x00\x00\x80\x3f")]
    assert wire.bytes_field(2, b"") == b"" and wire.bytes_field(2, b"", always=True) == b"\x12\x00"
    assert wire.int64_field(1, 0) == b"" and wire.double_field(1, 0.0) == b""


@pytest.mark.parametrize("data", [b"\x12\x05ab", b"\x08", b"\x0b", b"\x00\x01",
                                  b"\x08" + b"\xff" * 11])
def test_malformed_bytes_raise_value_error(data: bytes) -> None:
    with pytest.raises(ValueError, match="Malformed protocol buffer"):
        list(wire.fields(data))
