"""``tensorweave.formats.png`` and the PNG ops against TensorFlow's encodes and decodes in
``data/png`` (``make_tf_fixtures.py`` made them with TF 2.21)."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.formats import png
from tests.image_files import chunk
from tests.image_files import png as png_file

TF = np.load(Path(__file__).parent / "data" / "png" / "tf.npz")
KINDS = ["grey", "greya", "rgb", "rgba", "grey16", "rgba16"]
RNG = np.random.RandomState(7)
SAMPLES = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def _random(color: int, depth: int, shape: tuple[int, int] = (11, 13)) -> np.ndarray:
    top = 8 if color == 3 and depth == 8 else depth  # 256 palette entries at most
    values = RNG.randint(0, 1 << top, shape + (SAMPLES[color],))
    return values.astype(np.uint16 if depth == 16 else np.uint8)


@pytest.mark.parametrize(("color", "depth"), [(0, 8), (0, 16), (2, 8), (2, 16), (4, 8),
                                              (4, 16), (6, 8), (6, 16)])
@pytest.mark.parametrize("interlace", [False, True])
def test_every_filter_and_interlacing_round_trip(color: int, depth: int,
                                                 interlace: bool) -> None:
    samples = _random(color, depth)
    data = png_file(samples, color, depth, filters=(0, 1, 2, 3, 4), interlace=interlace)
    np.testing.assert_array_equal(png.decode(data, 0, depth), samples)


@pytest.mark.parametrize("level", [-1, 0, 1, 6, 9])
@pytest.mark.parametrize("kind", KINDS)
def test_encode_gives_tfs_bytes(kind: str, level: int) -> None:
    assert png.encode(TF[kind], level) == TF[f"{kind}_c{level}"].tobytes()


@pytest.mark.parametrize("level", [-1, 9])
def test_encode_gives_tfs_bytes_with_a_full_window_and_several_idat_chunks(level: int) -> None:
    data = png.encode(TF["big"], level)
    assert data.count(b"IDAT") == 3
    assert data == TF[f"big_c{level}"].tobytes()
    np.testing.assert_array_equal(png.decode(data), TF["big"])


@pytest.mark.parametrize("channels", [0, 1, 3, 4])
@pytest.mark.parametrize("kind", KINDS)
def test_decode_gives_tfs_pixels(kind: str, channels: int) -> None:
    data = TF[f"{kind}_c-1"].tobytes()
    np.testing.assert_array_equal(png.decode(data, channels), TF[f"{kind}_ch{channels}"])
    np.testing.assert_array_equal(png.decode(data, channels, 16), TF[f"{kind}_ch{channels}_u16"])


def test_native_channels_match_the_file() -> None:
    for channels in (1, 2, 3, 4):
        image = RNG.randint(0, 256, (5, 4, channels)).astype(np.uint8)
        out = png.decode(png.encode(image))
        assert out.dtype == np.uint8
        np.testing.assert_array_equal(out, image)


def test_low_depth_grey_scales_to_eight_bits() -> None:
    for depth, scale in ((1, 255), (2, 85), (4, 17)):
        samples = _random(0, depth)
        out = png.decode(png_file(samples, 0, depth))
        np.testing.assert_array_equal(out, samples * scale)


def test_sixteen_bits_keep_the_high_byte_or_everything() -> None:
    samples = _random(2, 16)
    data = png_file(samples, 2, 16)
    np.testing.assert_array_equal(png.decode(data), (samples >> 8).astype(np.uint8))
    wide = png.decode(data, bits=16)
    assert wide.dtype == np.uint16
    np.testing.assert_array_equal(wide, samples)


def test_eight_bits_widen_by_257() -> None:
    samples = _random(0, 8)
    np.testing.assert_array_equal(png.decode(png_file(samples, 0, 8), bits=16),
                                  samples.astype(np.uint16) * 257)


def test_palette_with_and_without_transparency() -> None:
    indices = np.array([[[0], [1], [2]], [[2], [1], [0]]], np.uint8)
    palette = np.array([[255, 0, 0], [0, 255, 0], [0, 0, 255]], np.uint8)
    plain = png_file(indices, 3, 2, palette=palette)
    np.testing.assert_array_equal(png.decode(plain), palette[indices[..., 0]])
    see_through = png_file(indices, 3, 2, palette=palette, trns=b"\x00\x80")  # index 2 stays opaque
    rgba = png.decode(see_through)
    assert rgba.shape == (2, 3, 4)
    np.testing.assert_array_equal(rgba[..., 3], [[0, 128, 255], [255, 128, 0]])
    np.testing.assert_array_equal(png.decode(see_through, 3), palette[indices[..., 0]])
    # no tRNS, alpha asked for: TF's filler is (1 << bit_depth) - 1 of the index depth
    np.testing.assert_array_equal(png.decode(plain, 4)[..., 3], 3)


def test_grey_and_rgb_transparent_colour_only_with_alpha_wanted() -> None:
    grey = np.array([[[0], [7], [9]]], np.uint8)
    data = png_file(grey, 0, 8, trns=struct.pack(">H", 7))
    assert png.decode(data).shape == (1, 3, 1)  # channels 0: the file's one channel
    np.testing.assert_array_equal(png.decode(data, 2)[0, :, 1], [255, 0, 255])
    rgb = np.array([[[1, 2, 3], [1, 2, 4]]], np.uint8)
    data = png_file(rgb, 2, 8, trns=struct.pack(">HHH", 1, 2, 3))
    np.testing.assert_array_equal(png.decode(data, 4)[0, :, 3], [0, 255])
    assert png.decode(data).shape == (1, 2, 3)


def test_rgb_to_grey_uses_libpng_fixed_point_weights() -> None:
    rgb = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [90, 90, 90]]], np.uint8)
    out = png.decode(png.encode(rgb), 1)
    # 0.299, 0.587 and the remainder, in 1/32768ths, truncated
    np.testing.assert_array_equal(out[0, :, 0], [76, 149, 29, 90])
    rgba = np.concatenate([rgb, np.full((1, 4, 1), 9, np.uint8)], axis=-1)
    np.testing.assert_array_equal(png.decode(png.encode(rgba), 2)[0, :, 1], 9)


def test_grey_to_rgb_and_added_alpha() -> None:
    grey = RNG.randint(0, 256, (3, 4, 1)).astype(np.uint8)
    out = png.decode(png.encode(grey), 4)
    np.testing.assert_array_equal(out[..., :3], np.repeat(grey, 3, axis=-1))
    np.testing.assert_array_equal(out[..., 3], 255)
    np.testing.assert_array_equal(png.decode(png.encode(grey), 3),
                                  np.repeat(grey, 3, axis=-1))


def test_split_idat_and_ancillary_chunks() -> None:
    samples = _random(6, 8)
    text = chunk(b"tEXt", b"Comment\x00hello")
    bad_crc = chunk(b"zzZz", b"data", crc=1)  # ancillary: skipped despite its CRC
    data = png_file(samples, 6, 8, extra=[text, bad_crc], idat_parts=3)
    np.testing.assert_array_equal(png.decode(data), samples)


def test_ops_decode_and_encode_as_tf() -> None:
    data = TF["rgba16_c-1"].tobytes()
    with tw.Session() as sess:
        wide, grey, encoded = sess.run([
            tw.image.decode_png(data, dtype=tw.uint16), tw.image.decode_png(data, channels=1),
            tw.image.encode_png(TF["rgb"], compression=1)])
    np.testing.assert_array_equal(wide, TF["rgba16_ch0_u16"])
    np.testing.assert_array_equal(grey, TF["rgba16_ch1"])
    assert encoded == TF["rgb_c1"].tobytes()


def test_bad_data_is_invalid_argument() -> None:
    good = TF["rgb_c-1"].tobytes()
    with pytest.raises(errors.InvalidArgumentError, match="Invalid PNG header"):
        png.decode(b"\x89PNG\r\n\x1a\nshort")
    with pytest.raises(errors.InvalidArgumentError, match="Invalid PNG data"):
        png.decode(good[:len(good) // 2])
    with pytest.raises(errors.InvalidArgumentError, match="DecodePng"):
        with tw.Session() as sess:
            sess.run(tw.image.decode_png(good[:60]))
