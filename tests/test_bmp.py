"""``tensorweave.formats.bmp``: 24/32-bit bitmaps, against BMPs built independently and
TF's decodes of BMPs Pillow wrote."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from tensorweave.formats.bmp import BmpError, decode_bmp
from tests.image_files import bmp

DATA = Path(__file__).parent / "data" / "bmp"
TF = np.load(DATA / "tf.npz")
RNG = np.random.RandomState(5)


@pytest.mark.parametrize("depth", [3, 4])
@pytest.mark.parametrize("top_down", [False, True])
@pytest.mark.parametrize("width", [1, 3, 4])  # rows padded by 1, 3 and 0 (24-bit) bytes
def test_pixels_come_back_rgb_in_row_order(depth: int, top_down: bool, width: int) -> None:
    image = RNG.randint(0, 256, (5, width, depth)).astype(np.uint8)
    out = decode_bmp(bmp(image, top_down))
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, image)
    np.testing.assert_array_equal(decode_bmp(bmp(image), depth), image)


def _with(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    return data[:offset] + struct.pack(fmt, value) + data[offset + struct.calcsize(fmt):]


GOOD = bmp(np.zeros((2, 3, 3), np.uint8))


@pytest.mark.parametrize(("data", "channels", "text"), [
    (GOOD[:20], 0, "requires at least 32 bytes"),
    (GOOD, 4, "channels attribute 4 does not match bits per pixel from file 3"),
    (_with(GOOD, 28, "<H", 8), 0, "Number of channels must be 3 or 4, was 1"),
    (_with(GOOD, 18, "<i", 0), 0, "Width must be positive"),
    (_with(GOOD, 22, "<i", 0), 0, "Height must be nonzero"),
    (GOOD[:-4], 0, "requires at least 75 bytes, got 74"),
])
def test_bad_bitmaps_raise_with_tf_wording(data: bytes, channels: int, text: str) -> None:
    with pytest.raises(BmpError, match=text):
        decode_bmp(data, channels)


def test_the_compression_field_is_ignored_as_by_tf() -> None:
    """TF reads the rows' bytes whatever the field says (``bitfields_6x3``: TF's decode of a
    32-bit file marked BI_BITFIELDS)."""
    np.testing.assert_array_equal(decode_bmp(_with(GOOD, 30, "<I", 3)), decode_bmp(GOOD))
    data = (DATA / "bitfields_6x3.bmp").read_bytes()
    np.testing.assert_array_equal(decode_bmp(data), TF["bitfields_6x3_ch0"])


def test_missing_padding_after_the_last_row_is_fine() -> None:
    assert decode_bmp(GOOD[:-3]).shape == (2, 3, 3)


@pytest.mark.parametrize("name", ["rgb_7x5", "rgb_4x9", "rgba_6x3"])
def test_pillows_files_decode_as_tf(name: str) -> None:
    """Against TF 2.21's ``decode_bmp`` of BMPs Pillow wrote (``data/bmp``), at the file's own
    channel count (TF 2.21 also converts 3 <-> 4 channels, which TF 1.15 refuses)."""
    data = (DATA / f"{name}.bmp").read_bytes()
    native = 4 if name.startswith("rgba") else 3
    for channels in (0, native):
        np.testing.assert_array_equal(decode_bmp(data, channels), TF[f"{name}_ch{channels}"])
