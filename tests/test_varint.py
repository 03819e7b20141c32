"""Base-128 varints as LevelDB tables and TF's string tensors store them."""

from __future__ import annotations

import pytest

from tensorweave.formats.varint import read_varint, varint


def test_known_bytes_and_round_trips() -> None:
    assert varint(0) == b"\x00" and varint(127) == b"\x7f"
    assert varint(300) == b"\xac\x02"
    assert varint(2 ** 64 - 1) == b"\xff" * 9 + b"\x01"
    data = b"".join(varint(n) for n in (0, 1, 300, 2 ** 35, 2 ** 64 - 1))
    pos, out = 0, []
    while pos < len(data):
        value, pos = read_varint(data, pos, len(data))
        out.append(value)
    assert out == [0, 1, 300, 2 ** 35, 2 ** 64 - 1]


def test_truncated_or_overlong_is_value_error() -> None:
    with pytest.raises(ValueError, match="varint"):
        read_varint(b"\xac\x02", 0, 1)  # the limit cuts it
    with pytest.raises(ValueError, match="varint"):
        read_varint(b"\xff" * 11, 0, 11)
