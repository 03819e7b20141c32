"""JPEG encoding (``tensorweave.formats.jpeg.encode`` and the ``EncodeJpeg`` op) against
libjpeg-turbo's files for the same pixels and settings, written by Pillow (``data/jpeg/encode``,
see its README); TF's own bytes are checked in ``test_formats_jpeg.py``."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.formats import jpeg

DATA = Path(__file__).parent / "data" / "jpeg" / "encode"
NAMES = sorted(p.stem for p in DATA.glob("*.jpg"))
ARRAYS = dict(np.load(DATA / "encode.npz"))
XMP = "<x:xmpmeta xmlns:x='adobe:ns:meta/'/>"


def image(name: str) -> np.ndarray:
    pixels = ARRAYS[name + "_image"]
    return pixels[..., None] if pixels.ndim == 2 else pixels


def reference(name: str) -> bytes:
    return (DATA / f"{name}.jpg").read_bytes()


def tf_attrs(name: str) -> dict:
    """The ``encode_jpeg`` arguments of a fixture, from its name."""
    attrs = {"quality": int(re.search(r"_q(\d+)", name).group(1)),
             "optimize_size": "_opt" in name, "chroma_downsampling": "c444" not in name,
             "progressive": "_prog" in name}
    if "xmp" in name:
        attrs["xmp_metadata"] = XMP
    return attrs


def run(fetch):
    with tw.Session() as s:
        return s.run(fetch)


def segments(data: bytes) -> list[tuple[int, bytes]]:
    """(marker, body) of each segment up to SOS, then (0, entropy-coded data and EOI)."""
    out, pos = [], 2
    while True:
        marker, length = data[pos + 1], int.from_bytes(data[pos + 2:pos + 4], "big")
        out.append((marker, data[pos + 4:pos + 2 + length]))
        pos += 2 + length
        if marker == 0xDA:
            return [*out, (0, data[pos:])]


def test_the_fixtures_cover_every_mode() -> None:
    assert len(NAMES) == 15
    for part in ("grey", "c444", "c420", "opt", "prog", "xmp", "q1_", "q100", "q95", "flat",
                 "tile"):
        assert any(part in n for n in NAMES), part


@pytest.mark.parametrize("name", NAMES)
def test_op_writes_libjpeg_turbo_bytes(name: str) -> None:
    encoded = tw.image.encode_jpeg(image(name), **tf_attrs(name))
    assert encoded.dtype == tw.string and encoded.shape.as_list() == []
    assert run(encoded) == reference(name)


# the flat image's decode only costs time: its bytes are checked above
@pytest.mark.parametrize("name", [n for n in NAMES if "flat" not in n])
def test_round_trip_gives_libjpeg_pixels(name: str) -> None:
    data = run(tw.image.encode_jpeg(image(name), **tf_attrs(name) | {"xmp_metadata": ""}))
    decoded = jpeg.decode(data, fast_idct=False)
    expected = ARRAYS[name + "_decoded"]
    np.testing.assert_array_equal(decoded, expected[..., None] if expected.ndim == 2 else expected)


def test_defaults_are_tfs_and_io_alias() -> None:
    pixels = image("c420_q95_48x64")
    assert run(tw.io.encode_jpeg(pixels)) == reference("c420_q95_48x64")
    assert run(tw.image.encode_jpeg(pixels, format="rgb")) == reference("c420_q95_48x64")
    grey = image("grey_q95_23x37")
    assert run(tw.image.encode_jpeg(grey, format="grayscale")) == reference("grey_q95_23x37")


def test_header_layout() -> None:
    parts = segments(jpeg.encode(image("c420_q95_37x53")))
    assert [m for m, _ in parts] == [0xE0, 0xDB, 0xDB, 0xC0, 0xC4, 0xC4, 0xC4, 0xC4, 0xDA, 0]
    sof = dict(parts)[0xC0]
    assert sof == bytes([8, 0, 37, 0, 53, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1])
    grey = segments(jpeg.encode(image("grey_q95_23x37")))
    assert [m for m, _ in grey] == [0xE0, 0xDB, 0xC0, 0xC4, 0xC4, 0xDA, 0]
    assert grey[-1][1].endswith(b"\xff\xd9")


def test_progressive_scan_script() -> None:
    """libjpeg's simple progression: 10 scans for YCbCr, 6 for grey; each scan's tables come
    right before it (none for DC refinement), the SOS naming only the class it uses."""
    data = jpeg.encode(image("c420_q90_prog_37x53"), progressive=True)
    assert data.count(b"\xff\xc2") == 1 and data.count(b"\xff\xda") == 10
    assert jpeg.encode(image("grey_q60_prog_23x37"), progressive=True).count(b"\xff\xda") == 6
    first = data.index(b"\xff\xda")
    parts = segments(data[:first] + data[first:first + 2 + 14] + b"\xff\xd9")
    assert [m for m, _ in parts] == [0xE0, 0xDB, 0xDB, 0xC2, 0xC4, 0xC4, 0xDA, 0]
    assert [body[0] for m, body in parts if m == 0xC4] == [0x00, 0x01]  # DC 0 and DC 1
    assert parts[-2][1] == bytes([3, 1, 0x00, 2, 0x10, 3, 0x10, 0, 0, 0x01])
    # the progressive attr ignores optimize_size: libjpeg always optimises progressive tables
    pixels = image("c444_q75_prog_19x29")
    assert (run(tw.image.encode_jpeg(pixels, quality=75, progressive=True, optimize_size=True,
                                     chroma_downsampling=False))
            == reference("c444_q75_prog_19x29"))


def test_density_and_xmp_attrs() -> None:
    pixels = image("c444_q50_19x29")
    data = run(tw.image.encode_jpeg(pixels, density_unit="cm", x_density=72, y_density=118,
                                    xmp_metadata="<a/>"))
    parts = segments(data)
    assert parts[0] == (0xE0, b"JFIF\x00\x01\x01\x02\x00\x48\x00\x76\x00\x00")
    assert parts[1] == (0xE1, b"http://ns.adobe.com/xap/1.0/\x00<a/>")
    # the rest of the file does not depend on these attrs
    assert parts[2:] == segments(run(tw.image.encode_jpeg(pixels)))[1:]


@pytest.mark.parametrize("shape", [(5, 4, 3), (16, 16, 1), (33, 18, 3)])
def test_flat_images_round_trip_exactly(shape: tuple[int, int, int]) -> None:
    pixels = np.full(shape, 77, np.uint8)
    for downsample in (True, False):
        for optimize in (True, False):
            data = jpeg.encode(pixels, 90, optimize=optimize, chroma_downsampling=downsample)
            out = jpeg.decode(data, fast_idct=False)
            assert out.shape == shape
            if shape[2] == 1:  # grey is lossless on a flat image
                np.testing.assert_array_equal(out, pixels)
            else:  # colour goes through YCbCr with rounding
                assert np.abs(out.astype(int) - 77).max() <= 1


def test_bad_attrs_and_images() -> None:
    rgb = np.zeros((4, 4, 3), np.uint8)
    with pytest.raises(ValueError, match="rank"):
        tw.image.encode_jpeg(np.zeros((4, 4), np.uint8))
    with pytest.raises(TypeError):
        tw.image.encode_jpeg(tw.constant(np.zeros((4, 4, 3), np.float32)))
    cases = [({"format": "bgr"}, rgb, "format must be '', grayscale or rgb, got bgr"),
             ({"quality": 101}, rgb, r"quality must be in \[0,100\], got 101"),
             ({"density_unit": "mm"}, rgb, "density_unit must be 'in' or 'cm'"),
             ({"format": "grayscale"}, rgb, "format grayscale expects 1 channels"),
             ({"format": "rgb"}, rgb[..., :1], "format rgb expects 3 channels"),
             ({}, np.zeros((4, 4, 4), np.uint8), "image must have 1 or 3 channels")]
    for attrs, pixels, message in cases:
        with pytest.raises(errors.InvalidArgumentError, match=message):
            run(tw.image.encode_jpeg(pixels, **attrs))
    for pixels in (np.zeros((0, 4, 3), np.uint8), np.zeros((1, 65501, 1), np.uint8)):
        with pytest.raises(errors.InternalError, match="JPEG encoding failed"):
            run(tw.image.encode_jpeg(pixels))
    with pytest.raises(errors.InternalError, match="JPEG encoding failed"):
        run(tw.image.encode_jpeg(rgb, xmp_metadata="x" * 65505))
