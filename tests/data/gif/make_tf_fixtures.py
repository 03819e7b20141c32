"""GIF files and TensorFlow's ``decode_gif`` of each, for ``tests/test_gif.py``; not run by the
suite.

Usage, with a Python that has TensorFlow and Pillow, from the repository root:
``python tests/data/gif/make_tf_fixtures.py``. Writes ``<name>.gif`` and ``tf.npz``
(``<name>``: TF 2.21's frames, uint8 ``[n, h, w, 3]``; ``<name>_first``: ``decode_image`` with
``expand_animations=False``; ``failures``: the names TF refuses, ``InvalidArgumentError``).
Cut files are ``make_tf_cut_fixtures.py``'s.

The files: Pillow's (one frame; three full frames; frames cropped to what changed; disposal
"restore to background" with a transparent index), and files built byte by byte with
``tests/image_files.py``: frames smaller than the canvas, at offsets, clipped at its edge, with
local colour tables and interlacing; transparent indices (on the first frame, on later ones, one
outside the colour map); a first frame that does not fill the canvas and a logical screen larger
than every frame; disposal modes 2 and 3; 256-colour noise that fills and resets the LZW table;
a missing trailer, junk after the last image, a truncated extension after it; and the failures:
an index outside the colour map (in the first frame; in a later one, which
``expand_animations=False`` never reads), no colour map, LZW data that ends early, a 0x0 image,
no image at all.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import tensorflow as tf
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))

from tests.image_files import gif, gif_frame  # noqa: E402


def pillow_frames(count: int, seed: int, side: tuple[int, int] = (13, 17)) -> list[Image.Image]:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 255, side + (3,)).astype(np.uint8) // 64 * 64
    out = []
    for i in range(count):
        frame = base.copy()
        frame[2 + i:6 + i, 3:9] = (255, 32 * i, 0)  # a moving patch: later frames differ there
        out.append(Image.fromarray(frame).convert("P", palette=Image.ADAPTIVE, colors=16))
    return out


def pillow_files() -> dict[str, bytes]:
    cases = {
        "still_13x17": (pillow_frames(1, 0), {}),
        "three_full_13x17": (pillow_frames(3, 1), {"optimize": False}),
        "cropped_13x17": (pillow_frames(4, 2), {}),
        "disposal_bg_13x17": (pillow_frames(3, 3), {"disposal": 2, "transparency": 0}),
    }
    out = {}
    for name, (images, options) in cases.items():
        path = os.path.join(HERE, name + ".gif")
        images[0].save(path, save_all=len(images) > 1, append_images=images[1:], **options)
        out[name] = open(path, "rb").read()
    return out


def built_files() -> dict[str, bytes]:
    rng = np.random.default_rng(15)
    table = rng.integers(0, 256, (4, 3)).astype(np.uint8)
    local = rng.integers(0, 256, (8, 3)).astype(np.uint8)
    wide = rng.integers(0, 256, (256, 3)).astype(np.uint8)

    def idx(h: int, w: int, colours: int = 4) -> np.ndarray:
        return rng.integers(0, colours, (h, w))

    three = [gif_frame(idx(5, 4)) for _ in range(3)]
    smooth = np.add.outer(np.arange(90), np.arange(80)) // 7 % 256
    files = {
        "sub_rect_10x12": gif(12, 10, [
            gif_frame(idx(10, 12)),
            gif_frame(idx(4, 5, 8), left=3, top=2, table=local, min_bits=3),
            gif_frame(idx(5, 6), left=9, top=7),  # clipped at the canvas's right and bottom
            gif_frame(idx(10, 12, 8), table=local, min_bits=3, interlace=True),
            gif_frame(idx(3, 11), top=1, interlace=True)], table),
        "transparent_8x9": gif(9, 8, [
            gif_frame(idx(8, 9), transparent=1),  # the first frame's transparent pixels: 0
            gif_frame(idx(8, 9), transparent=2),
            # 7, the transparent index, lies outside the 4-colour map
            gif_frame(np.where(idx(4, 5) == 0, 7, idx(4, 5)), left=2, top=3, min_bits=3,
                      transparent=7),
            gif_frame(idx(8, 9), transparent=0, disposal=2)], table),
        "first_partial_6x7": gif(20, 20, [
            gif_frame(idx(4, 5), left=2, top=1),
            gif_frame(idx(6, 7)),
            gif_frame(idx(2, 2), left=6, top=5)], table),
        "disposal_6x6": gif(6, 6, [
            gif_frame(idx(6, 6), disposal=2),
            gif_frame(idx(3, 3), left=1, top=1, disposal=3),
            gif_frame(idx(2, 4), left=2, top=4, disposal=2),
            gif_frame(idx(3, 2), left=0, top=0, disposal=0)], table),
        "noise_90x80": gif(80, 90, [gif_frame(rng.integers(0, 256, (90, 80)), min_bits=8),
                                    gif_frame(smooth, min_bits=8)], wide),
        "no_trailer_5x4": gif(4, 5, three, table)[:-1],
        "junk_after_5x4": gif(4, 5, three, table)[:-1] + b"\x99junk",
        "cut_extension_5x4": gif(4, 5, three, table)[:-1] + b"\x21\xfe\x05ab",
        "bad_index_4x4": gif(4, 4, [gif_frame(np.full((4, 4), 5), min_bits=3)], table),
        "bad_later_index_4x4": gif(4, 4, [gif_frame(idx(4, 4)),
                                          gif_frame(np.full((2, 2), 6), min_bits=3)], table),
        "no_color_map_3x3": gif(3, 3, [gif_frame(idx(3, 3))]),
        "lzw_short_4x4": gif(4, 4, [gif_frame(idx(4, 4))], table).replace(
            b"\x2c\x00\x00\x00\x00\x04\x00\x04\x00", b"\x2c\x00\x00\x00\x00\x04\x00\x06\x00"),
        "empty_frame_3x3": gif(3, 3, [gif_frame(idx(1, 3))], table).replace(
            b"\x2c\x00\x00\x00\x00\x03\x00\x01\x00", b"\x2c\x00\x00\x00\x00\x03\x00\x00\x00"),
        "no_image_2x2": b"GIF89a\x02\x00\x02\x00\x00\x00\x00\x3b",
    }
    for name, data in files.items():
        with open(os.path.join(HERE, name + ".gif"), "wb") as f:
            f.write(data)
    return files


def main() -> None:
    out, failures = {}, []
    files = {**pillow_files(), **built_files()}
    for name, data in sorted(files.items()):
        try:
            out[name] = tf.io.decode_gif(data).numpy()
        except tf.errors.InvalidArgumentError:
            failures.append(name)
        try:
            out[name + "_first"] = tf.io.decode_image(data, expand_animations=False).numpy()
        except tf.errors.InvalidArgumentError:
            failures.append(name + "_first")
    np.savez_compressed(os.path.join(HERE, "tf.npz"), failures=np.array(failures), **out)


if __name__ == "__main__":
    main()
