"""``tensorweave.formats.png_encode``: PNG encoding of uint8 and uint16 images."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

from tensorweave.formats.png_encode import encode_png


def chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body)
        out.append((kind, body))
        pos += 12 + length
    return out


@pytest.mark.parametrize(("channels", "color_type"), [(1, 0), (2, 4), (3, 2), (4, 6)])
def test_chunks_header_and_scanlines(channels: int, color_type: int) -> None:
    image = np.random.RandomState(channels).randint(0, 256, (3, 5, channels)).astype(np.uint8)
    parts = chunks(encode_png(image))
    assert [kind for kind, _ in parts] == [b"IHDR", b"IDAT", b"IEND"]
    assert struct.unpack(">IIBBBBB", parts[0][1]) == (5, 3, 8, color_type, 0, 0, 0)
    raw = np.frombuffer(zlib.decompress(parts[1][1]), np.uint8).reshape(3, 1 + 5 * channels)
    assert (raw[:, 0] == 0).all()  # filter type None on every row
    np.testing.assert_array_equal(raw[:, 1:].reshape(3, 5, channels), image)


def test_non_contiguous_input_is_encoded_by_value() -> None:
    image = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)[:, ::-1]
    raw = zlib.decompress(chunks(encode_png(image))[1][1])
    np.testing.assert_array_equal(
        np.frombuffer(raw, np.uint8).reshape(2, 13)[:, 1:].reshape(2, 4, 3), image)


@pytest.mark.parametrize("bad", [np.zeros((2, 2, 3), np.float32), np.zeros((2, 2), np.uint8),
                                 np.zeros((2, 2, 5), np.uint8)])
def test_other_dtypes_and_shapes_are_refused(bad: np.ndarray) -> None:
    with pytest.raises(ValueError, match="uint8"):
        encode_png(bad)


@pytest.mark.parametrize(("channels", "color_type"), [(1, 0), (2, 4), (3, 2), (4, 6)])
def test_uint16_images_are_sixteen_bit_big_endian(channels: int, color_type: int) -> None:
    image = np.random.RandomState(channels).randint(0, 65536, (3, 5, channels)).astype(np.uint16)
    image[0, 0] = [65535, 0, 256, 1][:channels]
    parts = chunks(encode_png(image))
    assert struct.unpack(">IIBBBBB", parts[0][1]) == (5, 3, 16, color_type, 0, 0, 0)
    raw = np.frombuffer(zlib.decompress(parts[1][1]), np.uint8).reshape(3, 1 + 10 * channels)
    assert (raw[:, 0] == 0).all()
    samples = raw[:, 1:].copy().view(">u2").reshape(3, 5, channels)
    np.testing.assert_array_equal(samples, image)


def test_wider_unsigned_images_are_refused() -> None:
    with pytest.raises(ValueError, match="uint8 or uint16"):
        encode_png(np.zeros((2, 2, 3), np.uint32))
