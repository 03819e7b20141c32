"""tensorweave.formats.varint: LevelDB's base-128 varints."""

from __future__ import annotations

import pytest

from tensorweave.formats import varint


def test_known_bytes_and_round_trips() -> None:
    assert varint.encode(0) == b"\x00" and varint.encode(127) == b"\x7f"
    assert varint.encode(300) == b"\xac\x02"
    assert varint.encode(2 ** 64 - 1) == b"\xff" * 9 + b"\x01"
    data = b"".join(varint.encode(n) for n in (0, 1, 300, 2 ** 35, 2 ** 64 - 1))
    pos, out = 0, []
    while pos < len(data):
        value, pos = varint.decode(data, pos, len(data))
        out.append(value)
    assert out == [0, 1, 300, 2 ** 35, 2 ** 64 - 1]


def test_truncated_or_overlong_is_value_error() -> None:
    with pytest.raises(ValueError, match="varint"):
        varint.decode(b"\xac\x02", 0, 1)  # the limit cuts it
    with pytest.raises(ValueError, match="varint"):
        varint.decode(b"\xff" * 11, 0, 11)
