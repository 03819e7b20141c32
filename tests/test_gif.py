"""``tensorweave.formats.gif``: GIF frames as TF's DecodeGif gives them, against TF 2.21's decodes
of the files in ``data/gif`` (``make_tf_fixtures.py``: Pillow's files and files built byte by
byte) and against GIFs built independently (``tests/image_files.py``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tensorweave.engine import errors
from tensorweave.formats.gif import decode
from tests.image_files import gif, gif_frame

DATA = Path(__file__).parent / "data" / "gif"
TF = np.load(DATA / "tf.npz")
CUTS = np.load(DATA / "tf_cuts.npz")
FAILURES = set(TF["failures"].tolist())
FILES = sorted(p.stem for p in DATA.glob("*.gif"))
RNG = np.random.RandomState(3)
TABLE = RNG.randint(0, 256, (4, 3)).astype(np.uint8)


def test_the_fixtures_cover_what_tf_composes() -> None:
    for part in ("sub_rect", "transparent", "first_partial", "disposal", "noise", "no_trailer",
                 "junk_after", "bad_index", "no_color_map", "lzw_short"):
        assert any(name.startswith(part) for name in FILES), part
    assert len(FAILURES) >= 5


@pytest.mark.parametrize("first_only", [False, True])
@pytest.mark.parametrize("name", FILES)
def test_decodes_as_tf(name: str, first_only: bool) -> None:
    key = name + "_first" if first_only else name
    data = (DATA / f"{name}.gif").read_bytes()
    if key in FAILURES:
        with pytest.raises(errors.InvalidArgumentError):
            decode(data, first_only)
        return
    got = decode(data, first_only)
    np.testing.assert_array_equal(got[0] if first_only else got, TF[key])


@pytest.mark.parametrize(("name", "text"), [
    ("bad_index_4x4", "found color index 5 outside of color map range 4"),
    ("bad_later_index_4x4", "found color index 6 outside of color map range 4"),
    ("no_color_map_3x3", "missing color map for frame 0"),
    ("lzw_short_4x4", "failed to slurp gif file: Image EOF detected before image complete"),
    ("no_image_2x2", "failed to slurp gif file: No Image Descriptor detected"),
    ("empty_frame_3x3", "failed to slurp gif file"),
])
def test_tfs_refusals_with_tfs_reasons(name: str, text: str) -> None:
    with pytest.raises(errors.InvalidArgumentError, match=text):
        decode((DATA / f"{name}.gif").read_bytes())


def test_one_frame_through_the_global_table() -> None:
    indices = RNG.randint(0, 4, (5, 7))
    out = decode(gif(7, 5, [gif_frame(indices)], TABLE))
    assert out.dtype == np.uint8 and out.shape == (1, 5, 7, 3)
    np.testing.assert_array_equal(out[0], TABLE[indices])


def test_local_tables_and_interlacing() -> None:
    local = RNG.randint(0, 256, (8, 3)).astype(np.uint8)
    first, second = RNG.randint(0, 4, (11, 6)), RNG.randint(0, 8, (11, 6))
    out = decode(gif(6, 11, [gif_frame(first, interlace=True),
                             gif_frame(second, table=local, min_bits=3)], TABLE))
    np.testing.assert_array_equal(out[0], TABLE[first])
    np.testing.assert_array_equal(out[1], local[second])


def test_partial_frame_starts_from_the_previous_one_and_is_clipped() -> None:
    base, patch = RNG.randint(0, 4, (6, 6)), RNG.randint(0, 4, (3, 4))
    out = decode(gif(6, 6, [gif_frame(base), gif_frame(patch, left=4, top=2)], TABLE))
    expected = TABLE[base].copy()
    expected[2:5, 4:6] = TABLE[patch[:, :2]]
    np.testing.assert_array_equal(out[1], expected)
    np.testing.assert_array_equal(out[0], TABLE[base])


def test_transparent_pixels_keep_the_previous_frame_or_zero() -> None:
    base, over = RNG.randint(0, 4, (3, 4)), RNG.randint(0, 4, (3, 4))
    out = decode(gif(4, 3, [gif_frame(base, transparent=2), gif_frame(over, transparent=1)],
                     TABLE))
    first = np.where((base == 2)[..., None], 0, TABLE[base])
    np.testing.assert_array_equal(out[0], first)
    np.testing.assert_array_equal(out[1], np.where((over == 1)[..., None], first, TABLE[over]))


def test_the_canvas_is_the_largest_frame_not_the_screen() -> None:
    small = RNG.randint(0, 4, (2, 3))
    out = decode(gif(40, 30, [gif_frame(small, left=1, top=1)], TABLE))
    expected = np.zeros((2, 3, 3), np.uint8)
    expected[1:, 1:] = TABLE[small[:1, :2]]
    np.testing.assert_array_equal(out[0], expected)


@pytest.mark.parametrize(("data", "text"), [
    (b"PNG...", "Data is not in GIF format"),
    (b"GIF89a\x02\x00", "failed to open gif file"),
    (gif(3, 3, [gif_frame(np.zeros((3, 3), int))], TABLE)[:-12], "Failed to read"),
    (b"GIF89a" + b"\x01\x00\x01\x00\x00\x00\x00\x99", "Wrong record type"),
])
def test_malformed_files_are_invalid(data: bytes, text: str) -> None:
    with pytest.raises(errors.InvalidArgumentError, match=text):
        decode(data)


@pytest.mark.parametrize("name", FILES)
def test_cut_data_decodes_as_tf(name: str) -> None:
    """Every cut of every file (``make_tf_cut_fixtures.py``): a cut inside an image's data,
    in its LZW sub-blocks included, drops that image, as TF's giflib does."""
    whole = (DATA / f"{name}.gif").read_bytes()
    counts = []
    for size in range(len(CUTS[name])):
        try:
            got = decode(whole[:size])
        except errors.InvalidArgumentError:
            counts.append(0)
            continue
        key = f"{name}_at{size}"
        want = CUTS[key] if key in CUTS else TF[name][:len(got)]
        np.testing.assert_array_equal(got, want, err_msg=key)
        counts.append(len(got))
    assert counts == CUTS[name].tolist()
    if name in ("sub_rect_10x12", "noise_90x80", "three_full_13x17"):  # dropped frames
        assert 0 < min(set(counts) - {0}) < max(counts)
