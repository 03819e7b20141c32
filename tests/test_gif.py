"""``tensorweave.formats.gif``: GIF frames as TF 1.15's DecodeGif gives them, against GIFs built
independently (``tests/image_files.py``) and TF's decodes of GIFs Pillow wrote."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tensorweave.formats.gif import GifError, decode_gif
from tests.image_files import gif, gif_frame

DATA = Path(__file__).parent / "data" / "gif"
TF = np.load(DATA / "tf.npz")
RNG = np.random.RandomState(3)
TABLE = RNG.randint(0, 256, (4, 3)).astype(np.uint8)


def test_one_frame_through_the_global_table() -> None:
    indices = RNG.randint(0, 4, (5, 7))
    out = decode_gif(gif(7, 5, [gif_frame(indices)], TABLE))
    assert out.dtype == np.uint8 and out.shape == (1, 5, 7, 3)
    np.testing.assert_array_equal(out[0], TABLE[indices])


def test_large_image_fills_and_resets_the_lzw_table() -> None:
    table = RNG.randint(0, 256, (256, 3)).astype(np.uint8)
    indices = RNG.randint(0, 256, (90, 80))  # noise: thousands of codes, several clear codes
    smooth = np.add.outer(np.arange(90), np.arange(80)) // 7 % 256  # long repeats: long codes
    out = decode_gif(gif(80, 90, [gif_frame(indices, min_bits=8),
                                  gif_frame(smooth, min_bits=8)], table))
    np.testing.assert_array_equal(out[0], table[indices])
    np.testing.assert_array_equal(out[1], table[smooth])


def test_local_tables_and_interlacing() -> None:
    local = RNG.randint(0, 256, (8, 3)).astype(np.uint8)
    first, second = RNG.randint(0, 4, (11, 6)), RNG.randint(0, 8, (11, 6))
    out = decode_gif(gif(6, 11, [gif_frame(first, interlace=True),
                                 gif_frame(second, table=local, min_bits=3)], TABLE))
    np.testing.assert_array_equal(out[0], TABLE[first])
    np.testing.assert_array_equal(out[1], local[second])


def test_partial_frame_starts_from_the_previous_one_and_is_clipped() -> None:
    base, patch = RNG.randint(0, 4, (6, 6)), RNG.randint(0, 4, (3, 4))
    out = decode_gif(gif(6, 6, [gif_frame(base), gif_frame(patch, left=4, top=2)], TABLE))
    expected = TABLE[base].copy()
    expected[2:5, 4:6] = TABLE[patch[:, :2]]
    np.testing.assert_array_equal(out[1], expected)
    np.testing.assert_array_equal(out[0], TABLE[base])


@pytest.mark.parametrize(("data", "text"), [
    (b"GIF89a" + b"\x02\x00\x02\x00\x00\x00\x00\x3b", "does not contain any image"),
    (gif(2, 2, [gif_frame(np.zeros((1, 2), int))], TABLE), "first frame does not fill"),
    (gif(2, 2, [gif_frame(np.zeros((2, 2), int))]), "missing color map"),
    (gif(2, 2, [gif_frame(np.full((2, 2), 5), min_bits=3)], TABLE), "outside of color map"),
    (gif(3, 3, [gif_frame(np.zeros((3, 3), int))], TABLE)[:-12], "truncated"),
    (b"GIF89a" + b"\x01\x00\x01\x00\x00\x00\x00\x99", "unknown block"),
    (b"PNG...", "signature"),
])
def test_malformed_files_raise(data: bytes, text: str) -> None:
    with pytest.raises(GifError, match=text):
        decode_gif(data)


def test_image_data_ending_early_raises() -> None:
    whole = gif_frame(np.zeros((1, 2), int))
    short = gif(2, 2, [whole], TABLE)  # descriptor says 1x2 in a 2x2 canvas: fix the size
    short = short.replace(b"\x2c\x00\x00\x00\x00\x02\x00\x01\x00", b"\x2c\x00\x00\x00\x00\x02"
                          b"\x00\x02\x00")
    with pytest.raises(GifError, match="ends after 2 of 4 pixels"):
        decode_gif(short)


@pytest.mark.parametrize("name", ["still_13x17", "three_full_13x17"])
def test_pillows_files_decode_as_tf(name: str) -> None:
    """Against TF 2.21's ``decode_gif`` of GIFs Pillow wrote (``data/gif``)."""
    data = (DATA / f"{name}.gif").read_bytes()
    np.testing.assert_array_equal(decode_gif(data), TF[name])
