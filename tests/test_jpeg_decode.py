"""JPEG decoding (``tensorweave.formats.jpeg_decode`` and the ``DecodeJpeg``, ``DecodeAndCropJpeg``,
``ExtractJpegShape`` and ``DecodeImage`` ops on JPEG bytes): exact equality with libjpeg-turbo's
pixels stored in ``tests/data/jpeg`` (made by Pillow, see its README), channel conversions,
crops, shapes and TF's errors for bad or truncated data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.formats.jpeg_decode import (
    JpegError,
    JpegUnsupportedError,
    decode_jpeg,
    read_jpeg_header,
)
from tests.datasets import fresh_graph  # noqa: F401 - the fixture

DATA = Path(__file__).parent / "data" / "jpeg"
NAMES = sorted(p.stem for p in DATA.glob("*.jpg"))
EXPECTED = dict(np.load(DATA / "expected.npz"))
COLOUR = "c420_q75_64x48"  # a 4:2:0 baseline file
GREY = "grey_q75_23x37"


def jpeg(name: str) -> bytes:
    return (DATA / f"{name}.jpg").read_bytes()


def expected(key: str) -> np.ndarray:
    image = EXPECTED[key]
    return image[..., None] if image.ndim == 2 else image


def run(fetch):
    with tw.Session() as s:
        return s.run(fetch)


def test_the_fixtures_cover_every_mode() -> None:
    assert len(NAMES) >= 19
    for part in ("grey", "c444", "c422", "c420", "prog", "restart", "opt", "q50", "q95"):
        assert any(part in n for n in NAMES), part


# -- exactness against libjpeg-turbo --------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_accurate_idct_with_fancy_upsampling_is_exact(name: str) -> None:
    image = decode_jpeg(jpeg(name))
    assert image.dtype == np.uint8
    np.testing.assert_array_equal(image, expected(name))


@pytest.mark.parametrize("name", NAMES)
def test_fast_idct_without_fancy_upsampling_is_exact(name: str) -> None:
    image = decode_jpeg(jpeg(name), fancy_upscaling=False, fast_idct=True)
    np.testing.assert_array_equal(image, expected(name + "_fast"))


@pytest.mark.parametrize("name", [n for n in NAMES if not n.startswith("grey")])
def test_grey_from_colour_is_libjpegs_luma(name: str) -> None:
    np.testing.assert_array_equal(decode_jpeg(jpeg(name), channels=1),
                                  expected(name + "_grey"))


def test_grey_files_replicate_to_three_channels() -> None:
    image = decode_jpeg(jpeg(GREY), channels=3)
    assert image.shape == (23, 37, 3)
    for c in range(3):
        np.testing.assert_array_equal(image[..., c], expected(GREY)[..., 0])


def test_read_jpeg_header() -> None:
    header = read_jpeg_header(jpeg("c422_q75_21x35"))
    assert (header.height, header.width, header.components) == (21, 35, 3)
    assert read_jpeg_header(jpeg(GREY)).components == 1


# -- the ops ------------------------------------------------------------------------------------


def test_decode_jpeg_op_attrs_pick_idct_and_upsampling(fresh_graph) -> None:  # noqa: F811
    data = jpeg(COLOUR)
    accurate = tw.image.decode_jpeg(data, dct_method="INTEGER_ACCURATE")
    assert accurate.dtype == tw.uint8 and accurate.shape.as_list() == [None, None, None]
    fast_plain = tw.image.decode_jpeg(data, fancy_upscaling=False)  # "" is TF's IFAST
    fast_named = tw.io.decode_jpeg(data, channels=3, fancy_upscaling=False,
                                   dct_method="INTEGER_FAST")
    assert fast_named.shape.as_list() == [None, None, 3]
    got = run([accurate, fast_plain, fast_named])
    np.testing.assert_array_equal(got[0], expected(COLOUR))
    np.testing.assert_array_equal(got[1], expected(COLOUR + "_fast"))
    np.testing.assert_array_equal(got[2], expected(COLOUR + "_fast"))


def test_decode_jpeg_channels(fresh_graph) -> None:  # noqa: F811
    grey = tw.image.decode_jpeg(jpeg(COLOUR), channels=1, dct_method="INTEGER_ACCURATE")
    rgb = tw.image.decode_jpeg(jpeg(GREY), channels=3, dct_method="INTEGER_ACCURATE")
    assert grey.shape.as_list() == [None, None, 1]
    got = run([grey, rgb])
    np.testing.assert_array_equal(got[0], expected(COLOUR + "_grey"))
    np.testing.assert_array_equal(got[1], np.repeat(expected(GREY), 3, axis=2))


def test_other_decode_ops_take_jpeg_bytes_with_tfs_defaults(fresh_graph) -> None:  # noqa: F811
    data = jpeg("c444_q75_19x29")
    default = decode_jpeg(data, fast_idct=True)  # TF's defaults: IFAST, fancy upsampling
    png_op = tw.image.decode_png(data)
    gif_op = tw.image.decode_gif(data)
    any_op = tw.image.decode_image(data)
    as_float = tw.image.decode_image(data, dtype=tw.float32)
    got = run([png_op, gif_op, any_op, as_float])
    np.testing.assert_array_equal(got[0], default)
    np.testing.assert_array_equal(got[1], default[None])
    np.testing.assert_array_equal(got[2], default)
    assert got[3].dtype == np.float32
    np.testing.assert_allclose(got[3], default / np.float32(255), rtol=1e-6)
    with pytest.raises(errors.InvalidArgumentError, match="uint8 only"):
        run(tw.image.decode_png(data, dtype=tw.uint16))


def test_extract_jpeg_shape(fresh_graph) -> None:  # noqa: F811
    shape = tw.image.extract_jpeg_shape(jpeg("c420_prog_q75_37x53"))
    wide = tw.io.extract_jpeg_shape(jpeg(GREY), output_type=tw.int64)
    assert shape.dtype == tw.int32 and shape.shape.as_list() == [3]
    assert wide.dtype == tw.int64
    got = run([shape, wide])
    np.testing.assert_array_equal(got[0], [37, 53, 3])
    assert got[1].dtype == np.int64
    np.testing.assert_array_equal(got[1], [23, 37, 1])
    with pytest.raises(errors.InvalidArgumentError, match="Invalid JPEG data, size 3"):
        run(tw.image.extract_jpeg_shape(b"\xff\xd8\xff"))


def test_decode_and_crop_matches_decode_then_crop(fresh_graph) -> None:  # noqa: F811
    data = jpeg("c420_restart_40x56")
    crop = tw.image.decode_and_crop_jpeg(data, [5, 7, 20, 33], channels=3)
    assert crop.shape.as_list() == [20, 33, 3]
    window = tw.placeholder(tw.int32, [4])
    fed = tw.image.decode_and_crop_jpeg(data, window, dct_method="INTEGER_ACCURATE")
    assert fed.shape.as_list() == [None, None, None]
    with tw.Session() as s:
        got = s.run(crop)
        whole = s.run(fed, {window: [0, 0, 40, 56]})
        corner = s.run(fed, {window: [39, 55, 1, 1]})
        with pytest.raises(errors.InvalidArgumentError,
                           match="Invalid JPEG data or crop window, data size"):
            s.run(fed, {window: [30, 0, 11, 4]})
        with pytest.raises(errors.InvalidArgumentError, match="crop window"):
            s.run(fed, {window: [0, 0, 0, 4]})
    np.testing.assert_array_equal(got, decode_jpeg(data, fast_idct=True)[5:25, 7:40])
    np.testing.assert_array_equal(whole, expected("c420_restart_40x56"))
    np.testing.assert_array_equal(corner, expected("c420_restart_40x56")[39:, 55:])


def test_crop_window_must_be_a_vector_of_four(fresh_graph) -> None:  # noqa: F811
    with pytest.raises(ValueError, match="four elements"):
        tw.image.decode_and_crop_jpeg(jpeg(COLOUR), [0, 0, 4])
    with pytest.raises(ValueError, match="rank 1"):
        tw.image.decode_and_crop_jpeg(jpeg(COLOUR), [[0, 0, 4, 4]])


# -- bad data and unsupported requests ----------------------------------------------------------


def test_truncated_data_is_invalid_unless_recovering(fresh_graph) -> None:  # noqa: F811
    data = jpeg("c444_q75_19x29")
    cut = data[:len(data) * 3 // 4]
    with pytest.raises(errors.InvalidArgumentError,
                       match=f"Invalid JPEG data or crop window, data size {len(cut)}"):
        run(tw.image.decode_jpeg(cut))
    with pytest.raises(errors.InvalidArgumentError, match="Premature end"):
        run(tw.image.decode_image(data[:-2]))  # every scan there, EOI missing
    recovered = run(tw.image.decode_jpeg(cut, try_recover_truncated=True,
                                         dct_method="INTEGER_ACCURATE"))
    assert recovered.shape == (19, 29, 3)
    # the first MCU row lies wholly before the cut and does not depend on later rows (4:4:4)
    np.testing.assert_array_equal(recovered[:8], expected("c444_q75_19x29")[:8])
    headers_only = data[:200]
    with pytest.raises(errors.InvalidArgumentError, match="Invalid JPEG data"):
        run(tw.image.decode_jpeg(headers_only, try_recover_truncated=True))


def test_corrupt_headers_are_invalid(fresh_graph) -> None:  # noqa: F811
    data = jpeg(COLOUR)
    no_huffman = _without_segments(data, 0xC4)
    with pytest.raises(JpegError, match="Huffman table 0x00 was not defined"):
        decode_jpeg(no_huffman)
    no_quant = _without_segments(data, 0xDB)
    with pytest.raises(errors.InvalidArgumentError, match="Quantization table"):
        run(tw.image.decode_jpeg(no_quant))
    huge = _sof_with_components(3, size=30000)
    assert read_jpeg_header(huge).height == 30000
    with pytest.raises(errors.InvalidArgumentError, match="Image too large: 2700000000"):
        run(tw.image.decode_jpeg(huge))
    with pytest.raises(errors.InvalidArgumentError, match="no image"):
        run(tw.image.decode_jpeg(b"\xff\xd8\xff\xd9"))
    with pytest.raises(errors.InvalidArgumentError, match="Invalid JPEG data, size"):
        run(tw.image.extract_jpeg_shape(b"\x89PNG\r\n\x1a\n"))


def test_unsupported_files_are_unimplemented(fresh_graph) -> None:  # noqa: F811
    data = jpeg(COLOUR)
    sof = data.index(b"\xff\xc0")
    twelve_bit = data[:sof + 4] + b"\x0c" + data[sof + 5:]
    with pytest.raises(JpegUnsupportedError, match="precision 12"):
        decode_jpeg(twelve_bit)
    arithmetic = data[:sof + 1] + b"\xc9" + data[sof + 2:]
    with pytest.raises(errors.UnimplementedError, match="SOF type 0xc9"):
        run(tw.image.decode_jpeg(arithmetic))
    cmyk = _sof_with_components(4)
    with pytest.raises(errors.UnimplementedError, match="4 components"):
        run(tw.image.decode_jpeg(cmyk))


def test_bad_attrs(fresh_graph) -> None:  # noqa: F811
    data = jpeg(COLOUR)
    with pytest.raises(errors.UnimplementedError, match="ratio 2"):
        run(tw.image.decode_jpeg(data, ratio=2))
    with pytest.raises(errors.InvalidArgumentError, match="ratio must be 1, 2, 4, or 8, got 3"):
        run(tw.image.decode_jpeg(data, ratio=3))
    with pytest.raises(errors.InvalidArgumentError, match="dct_method must be one of"):
        run(tw.image.decode_jpeg(data, dct_method="FLOAT"))
    with pytest.raises(errors.InvalidArgumentError, match="1 or 3 channels, not 4"):
        run(tw.image.decode_jpeg(data, channels=4))


def _without_segments(data: bytes, marker: int) -> bytes:
    """`data` less every marker segment of type `marker` (before the first scan)."""
    out, pos = bytearray(data[:2]), 2
    while data[pos + 1] != 0xDA:
        length = int.from_bytes(data[pos + 2:pos + 4], "big")
        if data[pos + 1] != marker:
            out += data[pos:pos + 2 + length]
        pos += 2 + length
    return bytes(out + data[pos:])


def _sof_with_components(count: int, size: int = 8) -> bytes:
    """Headers of a `size` x `size` frame of `count` components, with one scan of nothing."""
    side = size.to_bytes(2, "big")
    body = bytes([8]) + side + side + bytes([count]) + b"".join(
        bytes([i + 1, 0x11, 0]) for i in range(count))
    scan = b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00"
    return (b"\xff\xd8\xff\xc0" + (2 + len(body)).to_bytes(2, "big") + body + scan
            + b"\xff\xd9")
