"""``tensorweave.formats.jpeg`` and the JPEG ops (``DecodeJpeg``, ``DecodeAndCropJpeg``,
``ExtractJpegShape``, ``EncodeJpeg``, ``DecodeImage`` on JPEG bytes) against TensorFlow's own
decodes and encodes of the fixtures in ``data/jpeg`` (``make_tf_fixtures.py``, TF 2.21), and
against libjpeg-turbo's pixels as Pillow gives them (``expected.npz``, see the README)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.formats import jpeg
from tensorweave.formats.jpeg import decode as decode_jpeg
from tensorweave.formats.jpeg import read_header as read_jpeg_header
from tests.datasets import fresh_graph  # noqa: F401 - the fixture

DATA = Path(__file__).parent / "data" / "jpeg"
TF = np.load(DATA / "tf.npz")
TF_ENCODED = np.load(DATA / "encode" / "tf.npz")
IMAGES = np.load(DATA / "encode" / "encode.npz")
FILES = sorted(p.stem for p in DATA.glob("*.jpg"))
FAILURES = set(TF["failures"].tolist())
XMP = b"<x:xmpmeta xmlns:x='adobe:ns:meta/'/>"


NAMES = [name for name in FILES if not name.startswith("cmyk")]  # Pillow's references
EXPECTED = dict(np.load(DATA / "expected.npz"))
COLOUR = "c420_q75_64x48"  # a 4:2:0 baseline file
GREY = "grey_q75_23x37"


def _data(name: str) -> bytes:
    return (DATA / f"{name}.jpg").read_bytes()


def _run(fetch):
    with tw.Session() as sess:
        return sess.run(fetch)


def test_the_fixtures_cover_every_layout() -> None:
    kinds = {name.split("_")[0] for name in FILES}
    assert kinds == {"c420", "c422", "c444", "grey", "cmyk"}
    assert any("prog" in n for n in FILES) and any("restart" in n for n in FILES)


VARIANTS = {"": {}, "_accurate": {"fast_idct": False}, "_nofancy": {"fancy_upsampling": False},
            "_ratio2": {"ratio": 2}, "_ratio4": {"ratio": 4}, "_ratio8": {"ratio": 8}}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("name", FILES)
def test_decode_gives_tfs_pixels(name: str, variant: str) -> None:
    # c420_tiny_1x1 at ratio 2-8: every scale gives 1x1, so TurboJPEG must be steered to
    # libjpeg's 1 / ratio (whose scaled IDCT TF uses)
    got = jpeg.decode(_data(name), **VARIANTS[variant])
    np.testing.assert_array_equal(got, TF[name + variant])


@pytest.mark.parametrize("channels", [1, 3])
@pytest.mark.parametrize("name", FILES)
def test_decode_channels_as_tf(name: str, channels: int) -> None:
    key = f"{name}_ch{channels}"
    if key in FAILURES:  # a CMYK file has no grey conversion in libjpeg
        with pytest.raises(errors.InvalidArgumentError, match="color conversion"):
            jpeg.decode(_data(name), channels)
        return
    want = TF[key] if key in TF else TF[name]  # left out: the default decode (see the script)
    np.testing.assert_array_equal(jpeg.decode(_data(name), channels), want)


@pytest.mark.parametrize("name", FILES)
def test_truncated_files(name: str) -> None:
    data = _data(name)
    cut = data[:len(data) * 2 // 3]
    with pytest.raises(errors.InvalidArgumentError):
        jpeg.decode(cut)
    key = name + "_truncated"
    if key in FAILURES:
        with pytest.raises(errors.InvalidArgumentError):
            jpeg.decode(cut, recover_truncated=True)
        return
    recovered = jpeg.decode(cut, recover_truncated=True)
    if "prog" in name:  # TurboJPEG's recovery: TF's shape only
        assert recovered.shape == TF[key].shape
    else:  # TF's source manager's reading, modelled by formats.jpeg_cut
        np.testing.assert_array_equal(recovered, TF[key])


def test_op_decodes_with_tfs_attrs() -> None:
    data = _data("c420_q75_64x48")
    outs = [tw.image.decode_jpeg(data), tw.image.decode_jpeg(data, dct_method="INTEGER_ACCURATE"),
            tw.image.decode_jpeg(data, ratio=4), tw.image.decode_jpeg(data, channels=1)]
    got = _run(outs)
    for out, key in zip(got, ["", "_accurate", "_ratio4", "_ch1"]):
        np.testing.assert_array_equal(out, TF["c420_q75_64x48" + key])
    cmyk = _run(tw.image.decode_image(_data("cmyk_q90_24x32")))
    np.testing.assert_array_equal(cmyk, TF["cmyk_q90_24x32"])


def test_bad_data_is_invalid_argument() -> None:
    for bad in (b"", b"\xff\xd8\xff\xe0garbage"):
        with pytest.raises(errors.InvalidArgumentError):
            jpeg.decode(bad)
        with pytest.raises(errors.InvalidArgumentError):
            jpeg.read_header(bad)
    with pytest.raises(errors.InvalidArgumentError, match="DecodeJpeg"):
        _run(tw.image.decode_jpeg(b"\xff\xd8\xff\xe0garbage"))


def test_read_header() -> None:
    assert jpeg.read_header(_data("grey_q75_23x37")) == jpeg.JpegHeader(23, 37, 1)
    assert jpeg.read_header(_data("c420_q50_31x45")) == jpeg.JpegHeader(31, 45, 3)
    assert jpeg.read_header(_data("cmyk_q90_24x32")) == jpeg.JpegHeader(24, 32, 4)
    shape = _run(tw.image.extract_jpeg_shape(_data("cmyk_q90_24x32")))
    assert shape.tolist() == [24, 32, 4]


def _settings(name: str) -> dict:
    return {"quality": int(name.split("_q")[1].split("_")[0]), "progressive": "prog" in name,
            "optimize": "opt" in name, "chroma_downsampling": "c420" in name,
            "xmp": XMP if "xmp" in name else b""}


ENCODED = sorted(TF_ENCODED)


@pytest.mark.parametrize("key", ENCODED)
def test_encode_gives_tfs_bytes(key: str) -> None:
    name = key.removesuffix("_cm").removesuffix("_defaults")
    image = IMAGES[name + "_image"]
    image = image[..., None] if image.ndim == 2 else image
    if key.endswith("_defaults"):
        settings: dict = {}
    else:
        settings = _settings(name)
        if key.endswith("_cm"):
            settings.update(density_unit=2, x_density=72, y_density=96)
    assert jpeg.encode(image, **settings) == TF_ENCODED[key].tobytes()


def test_encode_op_gives_tfs_bytes() -> None:
    image = IMAGES["c420_q85_xmp_31x45_image"]
    op = tw.image.encode_jpeg(image, quality=85, xmp_metadata=XMP.decode(), density_unit="cm",
                              x_density=72, y_density=96)
    assert _run(op) == TF_ENCODED["c420_q85_xmp_31x45_cm"].tobytes()


def test_encode_refusals_are_internal_errors() -> None:
    with pytest.raises(errors.InternalError, match="JPEG encoding failed"):
        jpeg.encode(np.zeros((0, 4, 3), np.uint8))
    with pytest.raises(errors.InternalError, match="EncodeJpeg"):
        _run(tw.image.encode_jpeg(np.zeros((70000, 1, 1), np.uint8)))


# -- against Pillow's libjpeg-turbo references, and the ops' attrs and errors ------------------


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
    image = decode_jpeg(_data(name), fast_idct=False)
    assert image.dtype == np.uint8
    np.testing.assert_array_equal(image, expected(name))


@pytest.mark.parametrize("name", NAMES)
def test_fast_idct_without_fancy_upsampling_is_exact(name: str) -> None:
    image = decode_jpeg(_data(name), fancy_upsampling=False)
    np.testing.assert_array_equal(image, expected(name + "_fast"))


@pytest.mark.parametrize("name", [n for n in NAMES if not n.startswith("grey")])
def test_grey_from_colour_is_libjpegs_luma(name: str) -> None:
    np.testing.assert_array_equal(decode_jpeg(_data(name), 1, fast_idct=False),
                                  expected(name + "_grey"))


def test_grey_files_replicate_to_three_channels() -> None:
    image = decode_jpeg(_data(GREY), 3, fast_idct=False)
    assert image.shape == (23, 37, 3)
    for c in range(3):
        np.testing.assert_array_equal(image[..., c], expected(GREY)[..., 0])


def test_read_jpeg_header() -> None:
    header = read_jpeg_header(_data("c422_q75_21x35"))
    assert (header.height, header.width, header.components) == (21, 35, 3)
    assert read_jpeg_header(_data(GREY)).components == 1


# -- the ops ------------------------------------------------------------------------------------


def test_decode_jpeg_op_attrs_pick_idct_and_upsampling(fresh_graph) -> None:  # noqa: F811
    data = _data(COLOUR)
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
    grey = tw.image.decode_jpeg(_data(COLOUR), channels=1, dct_method="INTEGER_ACCURATE")
    rgb = tw.image.decode_jpeg(_data(GREY), channels=3, dct_method="INTEGER_ACCURATE")
    assert grey.shape.as_list() == [None, None, 1]
    got = run([grey, rgb])
    np.testing.assert_array_equal(got[0], expected(COLOUR + "_grey"))
    np.testing.assert_array_equal(got[1], np.repeat(expected(GREY), 3, axis=2))


def test_other_decode_ops_take_jpeg_bytes_with_tfs_defaults(fresh_graph) -> None:  # noqa: F811
    data = _data("c444_q75_19x29")
    default = decode_jpeg(data)  # TF's defaults: IFAST, fancy upsampling
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
    shape = tw.image.extract_jpeg_shape(_data("c420_prog_q75_37x53"))
    wide = tw.io.extract_jpeg_shape(_data(GREY), output_type=tw.int64)
    assert shape.dtype == tw.int32 and shape.shape.as_list() == [3]
    assert wide.dtype == tw.int64
    got = run([shape, wide])
    np.testing.assert_array_equal(got[0], [37, 53, 3])
    assert got[1].dtype == np.int64
    np.testing.assert_array_equal(got[1], [23, 37, 1])
    with pytest.raises(errors.InvalidArgumentError, match="Invalid JPEG data, size 3"):
        run(tw.image.extract_jpeg_shape(b"\xff\xd8\xff"))


def test_decode_and_crop_op(fresh_graph) -> None:  # noqa: F811
    data = _data("c420_restart_40x56")
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
    # TF's window: the full decode's pixels but in the last column, where the cropped chroma
    # (its 20 samples from x = 0) ends and libjpeg-turbo replicates the edge
    np.testing.assert_array_equal(got, decode_jpeg(data, crop=(5, 7, 20, 33)))
    np.testing.assert_array_equal(got[:, :-1], decode_jpeg(data)[5:25, 7:39])
    assert not np.array_equal(got[:, -1], decode_jpeg(data)[5:25, 39])
    np.testing.assert_array_equal(whole, expected("c420_restart_40x56"))
    np.testing.assert_array_equal(corner, expected("c420_restart_40x56")[39:, 55:])


def test_crop_window_must_be_a_vector_of_four(fresh_graph) -> None:  # noqa: F811
    with pytest.raises(ValueError, match="four elements"):
        tw.image.decode_and_crop_jpeg(_data(COLOUR), [0, 0, 4])
    with pytest.raises(ValueError, match="rank 1"):
        tw.image.decode_and_crop_jpeg(_data(COLOUR), [[0, 0, 4, 4]])


# -- bad data and unsupported requests ----------------------------------------------------------


def test_truncated_data_is_invalid_unless_recovering(fresh_graph) -> None:  # noqa: F811
    data = _data("c444_q75_19x29")
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
    data = _data(COLOUR)
    no_huffman = _without_segments(data, 0xC4)
    # libjpeg-turbo falls back on the standard tables, which the file used: TF decodes it too
    np.testing.assert_array_equal(decode_jpeg(no_huffman), decode_jpeg(data))
    no_quant = _without_segments(data, 0xDB)
    with pytest.raises(errors.InvalidArgumentError, match="Quantization table"):
        run(tw.image.decode_jpeg(no_quant))
    huge = _sof_with_components(3, size=30000)
    assert read_jpeg_header(huge).height == 30000
    with pytest.raises(errors.InvalidArgumentError, match="Invalid JPEG data"):
        run(tw.image.decode_jpeg(huge))
    with pytest.raises(errors.InvalidArgumentError, match="Invalid JPEG data"):
        run(tw.image.decode_jpeg(b"\xff\xd8\xff\xd9"))
    with pytest.raises(errors.InvalidArgumentError, match="Invalid JPEG data, size"):
        run(tw.image.extract_jpeg_shape(b"\x89PNG\r\n\x1a\n"))


def test_warnings_decode_as_in_tf(fresh_graph) -> None:  # noqa: F811
    data = _data(COLOUR)
    sof = data.index(b"\xff\xc0")
    # Huffman data read as arithmetic-coded: libjpeg warns (extraneous bytes) and TF decodes
    arithmetic = data[:sof + 1] + b"\xc9" + data[sof + 2:]
    assert run(tw.image.decode_jpeg(arithmetic)).shape == (64, 48, 3)
    with pytest.raises(errors.InvalidArgumentError, match="Invalid JPEG data"):
        run(tw.image.decode_jpeg(_sof_with_components(4)))  # no scan data at all


def test_bad_attrs(fresh_graph) -> None:  # noqa: F811
    data = _data(COLOUR)
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


CROPS = np.load(DATA / "tf_crop.npz")
CROP_VARIANTS = {"": {}, "_accurate": {"fast_idct": False}, "_nofancy": {"fancy_upsampling": False}}


@pytest.mark.parametrize("variant", sorted(CROP_VARIANTS))
@pytest.mark.parametrize("name", FILES)
def test_crop_gives_tfs_pixels_at_every_window(name: str, variant: str) -> None:
    """Against TF's ``decode_and_crop_jpeg`` (``tf_crop.npz``: windows at odd offsets, at and
    off iMCU boundaries, at the edges, 1-4 pixels wide), where libjpeg-turbo's cropped
    component widths change the upsampling at the window's edges."""
    data, flat, pos = _data(name), CROPS[f"{name}_crops{variant}"], 0
    windows = CROPS[name + "_windows"].tolist()
    for window in windows:
        got = jpeg.decode(data, crop=tuple(window), **CROP_VARIANTS[variant])
        assert got.shape[:2] == tuple(window[2:])
        np.testing.assert_array_equal(got, flat[pos:pos + got.size].reshape(got.shape),
                                      err_msg=str(window))
        pos += got.size
    assert pos == flat.size


def test_crop_windows_cover_the_upsampling_cases() -> None:
    windows = CROPS["c420_q75_96x128_windows"].tolist()
    assert len(windows) >= 15
    assert any(x % 16 == 0 and x for _, x, _, _ in windows)  # an iMCU-aligned left edge
    assert any(x % 2 for _, x, _, _ in windows) and any(w <= 2 for *_, w in windows)
