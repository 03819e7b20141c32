"""``tensorweave.formats.png_decode``: PNG parsing and TF's channel/bit-depth conversions, against
PNG files built independently (``tests/image_files.py``)."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

from tensorweave.formats.png_decode import PngError, decode_png, read_png
from tensorweave.formats.png_encode import encode_png
from tests.image_files import chunk, png

RNG = np.random.RandomState(7)
CASES = [(0, 1), (0, 2), (0, 4), (0, 8), (0, 16), (2, 8), (2, 16), (3, 1), (3, 2), (3, 4),
         (3, 8), (4, 8), (4, 16), (6, 8), (6, 16)]
SAMPLES = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def _random(color: int, depth: int, shape: tuple[int, int] = (11, 13)) -> np.ndarray:
    top = 8 if color == 3 and depth == 8 else depth  # 256 palette entries at most
    values = RNG.randint(0, 1 << top, shape + (SAMPLES[color],))
    return values.astype(np.uint16 if depth == 16 else np.uint8)


def _palette(depth: int) -> np.ndarray:
    return RNG.randint(0, 256, (1 << min(depth, 8), 3)).astype(np.uint8)


@pytest.mark.parametrize(("color", "depth"), CASES)
@pytest.mark.parametrize("interlace", [False, True])
def test_raw_samples_of_every_colour_type_depth_and_interlace(color: int, depth: int,
                                                               interlace: bool) -> None:
    samples = _random(color, depth)
    palette = _palette(depth) if color == 3 else None
    header, raw = read_png(png(samples, color, depth, filters=(0, 1, 2, 3, 4),
                               interlace=interlace, palette=palette))
    assert (header.width, header.height, header.bit_depth, header.color_type,
            header.interlaced) == (13, 11, depth, color, interlace)
    assert raw.dtype == (np.uint16 if depth == 16 else np.uint8)
    np.testing.assert_array_equal(raw, samples)


@pytest.mark.parametrize("kind", [0, 1, 2, 3, 4])
@pytest.mark.parametrize(("color", "depth"), [(0, 1), (2, 8), (6, 16)])
def test_each_filter_type_alone(kind: int, color: int, depth: int) -> None:
    samples = _random(color, depth, (6, 9))
    np.testing.assert_array_equal(read_png(png(samples, color, depth, filters=(kind,)))[1],
                                  samples)


@pytest.mark.parametrize(("height", "width"), [(1, 1), (1, 9), (9, 1), (3, 2), (17, 10)])
def test_adam7_with_empty_passes(height: int, width: int) -> None:
    samples = _random(2, 8, (height, width))
    np.testing.assert_array_equal(
        read_png(png(samples, 2, 8, filters=(4, 1), interlace=True))[1], samples)


def test_native_channels_match_the_file() -> None:
    for channels in (1, 2, 3, 4):
        image = RNG.randint(0, 256, (5, 4, channels)).astype(np.uint8)
        out = decode_png(encode_png(image))
        assert out.dtype == np.uint8
        np.testing.assert_array_equal(out, image)


def test_low_depth_grey_scales_to_eight_bits() -> None:
    for depth, scale in ((1, 255), (2, 85), (4, 17)):
        samples = _random(0, depth)
        out = decode_png(png(samples, 0, depth))
        np.testing.assert_array_equal(out, samples * scale)


def test_sixteen_bits_keep_the_high_byte_or_everything() -> None:
    samples = _random(2, 16)
    data = png(samples, 2, 16)
    np.testing.assert_array_equal(decode_png(data), (samples >> 8).astype(np.uint8))
    wide = decode_png(data, bits=16)
    assert wide.dtype == np.uint16
    np.testing.assert_array_equal(wide, samples)


def test_eight_bits_widen_by_257() -> None:
    samples = _random(0, 8)
    np.testing.assert_array_equal(decode_png(png(samples, 0, 8), bits=16),
                                  samples.astype(np.uint16) * 257)


def test_palette_with_and_without_transparency() -> None:
    indices = np.array([[[0], [1], [2]], [[2], [1], [0]]], np.uint8)
    palette = np.array([[255, 0, 0], [0, 255, 0], [0, 0, 255]], np.uint8)
    plain = png(indices, 3, 2, palette=palette)
    np.testing.assert_array_equal(decode_png(plain), palette[indices[..., 0]])
    see_through = png(indices, 3, 2, palette=palette, trns=b"\x00\x80")  # index 2 stays opaque
    rgba = decode_png(see_through)
    assert rgba.shape == (2, 3, 4)
    np.testing.assert_array_equal(rgba[..., 3], [[0, 128, 255], [255, 128, 0]])
    np.testing.assert_array_equal(decode_png(see_through, 3), palette[indices[..., 0]])
    # no tRNS, alpha asked for: TF's filler is (1 << bit_depth) - 1 of the index depth
    np.testing.assert_array_equal(decode_png(plain, 4)[..., 3], 3)


def test_grey_and_rgb_transparent_colour_only_with_alpha_wanted() -> None:
    grey = np.array([[[0], [7], [9]]], np.uint8)
    data = png(grey, 0, 8, trns=struct.pack(">H", 7))
    assert decode_png(data).shape == (1, 3, 1)  # channels 0: the file's one channel
    np.testing.assert_array_equal(decode_png(data, 2)[0, :, 1], [255, 0, 255])
    rgb = np.array([[[1, 2, 3], [1, 2, 4]]], np.uint8)
    data = png(rgb, 2, 8, trns=struct.pack(">HHH", 1, 2, 3))
    np.testing.assert_array_equal(decode_png(data, 4)[0, :, 3], [0, 255])
    assert decode_png(data).shape == (1, 2, 3)


def test_rgb_to_grey_uses_libpng_fixed_point_weights() -> None:
    rgb = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [90, 90, 90]]], np.uint8)
    out = decode_png(encode_png(rgb), 1)
    # 0.299, 0.587 and the remainder, in 1/32768ths, truncated
    np.testing.assert_array_equal(out[0, :, 0], [76, 149, 29, 90])
    rgba = np.concatenate([rgb, np.full((1, 4, 1), 9, np.uint8)], axis=-1)
    np.testing.assert_array_equal(decode_png(encode_png(rgba), 2)[0, :, 1], 9)


def test_grey_to_rgb_and_added_alpha() -> None:
    grey = RNG.randint(0, 256, (3, 4, 1)).astype(np.uint8)
    out = decode_png(encode_png(grey), 4)
    np.testing.assert_array_equal(out[..., :3], np.repeat(grey, 3, axis=-1))
    np.testing.assert_array_equal(out[..., 3], 255)
    np.testing.assert_array_equal(decode_png(encode_png(grey), 3),
                                  np.repeat(grey, 3, axis=-1))


def test_split_idat_and_ancillary_chunks() -> None:
    samples = _random(6, 8)
    text = chunk(b"tEXt", b"Comment\x00hello")
    bad_crc = chunk(b"zzZz", b"data", crc=1)  # ancillary: skipped despite its CRC
    data = png(samples, 6, 8, extra=[text, bad_crc], idat_parts=3)
    np.testing.assert_array_equal(decode_png(data), samples)


def _corrupt(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]


@pytest.mark.parametrize(("make", "header", "text"), [
    (lambda d: b"\x89PNG\r\n\x1a\x00" + d[8:], True, "signature"),
    (lambda d: _corrupt(d, 20), True, "IHDR chunk CRC"),
    (lambda d: d[:8] + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 3, 2, 0, 0, 0)) + d[33:],
     True, "bit depth 3"),
    (lambda d: d[:8] + chunk(b"IHDR", struct.pack(">IIBBBBB", 0, 2, 8, 2, 0, 0, 0)) + d[33:],
     True, "size"),
    (lambda d: _corrupt(d, 45), False, "IDAT chunk CRC"),
    (lambda d: d[:-12], False, "truncated"),
    (lambda d: d[:45], False, "runs past"),
    (lambda d: d[:38], True, "truncated"),
    (lambda d: d[:33] + chunk(b"ABCD", b"") + d[33:], True, "unknown critical"),
])
def test_corrupt_files_raise(make, header: bool, text: str) -> None:
    data = encode_png(np.zeros((2, 2, 3), np.uint8))
    with pytest.raises(PngError, match=text) as info:
        decode_png(make(data))
    assert info.value.in_header == header


def test_bad_filter_and_short_or_damaged_stream() -> None:
    head = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 0, 0, 0, 0))
    end = chunk(b"IEND", b"")
    with pytest.raises(PngError, match="filter type 7"):
        decode_png(head + chunk(b"IDAT", zlib.compress(b"\x07\x00\x00" * 2)) + end)
    with pytest.raises(PngError, match="not enough image data"):
        decode_png(head + chunk(b"IDAT", zlib.compress(b"\x00\x00\x00")) + end)
    with pytest.raises(PngError, match="damaged"):
        decode_png(head + chunk(b"IDAT", b"not zlib") + end)
    with pytest.raises(PngError, match="PLTE"):
        decode_png(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 3, 0,
                                                                      0, 0))
                   + chunk(b"IDAT", zlib.compress(b"\x00\x00")) + end)


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_sixteen_bit_encode_decode_round_trip_is_exact(channels: int) -> None:
    image = np.random.RandomState(channels).randint(0, 65536, (4, 6, channels)).astype(np.uint16)
    image[0, 0], image[0, 1] = 65535, 0
    wide = decode_png(encode_png(image), bits=16)
    assert wide.dtype == np.uint16
    np.testing.assert_array_equal(wide, image)
