"""tensorweave.formats.crc32c: CRC32C against published vectors and a bitwise reference, extend,
and TF's mask."""

from __future__ import annotations

import numpy as np

from tensorweave.formats import crc32c


def bitwise_crc32c(data: bytes) -> int:
    """CRC32C bit by bit, straight from the reflected polynomial (no table)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 * (crc & 1))
    return crc ^ 0xFFFFFFFF


def masked(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def test_crc32c_published_vectors() -> None:
    assert crc32c.value(b"123456789") == 0xE3069283  # the CRC-32C check value
    assert crc32c.value(b"") == 0
    assert crc32c.value(bytes(32)) == 0x8A9136AA  # RFC 3720, B.4
    assert crc32c.value(b"\xff" * 32) == 0x62A8AB43
    assert crc32c.value(bytes(range(32))) == 0x46DD794E
    assert crc32c.value(bytes(range(31, -1, -1))) == 0x113FDB5C
    for data in (b"a", b"tensorweave", bytes(range(256)) * 3):
        assert crc32c.value(data) == bitwise_crc32c(data)


def test_extend_continues_and_buffers_are_read_in_place() -> None:
    data = bytes(range(256)) * 5
    assert crc32c.extend(crc32c.value(data[:100]), data[100:]) == crc32c.value(data)
    array = np.frombuffer(data, np.uint8).view(np.float32)
    assert crc32c.value(array) == crc32c.value(memoryview(data)) == bitwise_crc32c(data)


def test_masked_crc_is_tfs_rotation_plus_delta() -> None:
    # 0xE3069283 rotated right by 15 bits is 0x2507C60D; plus 0xA282EAD8 is 0xC78AB0E5
    assert crc32c.masked_value(b"123456789") == masked(0xE3069283) == 0xC78AB0E5
    assert crc32c.mask(0) == crc32c.masked_value(b"") == 0xA282EAD8
