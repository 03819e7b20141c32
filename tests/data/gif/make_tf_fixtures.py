"""GIF files written by Pillow and TensorFlow's ``decode_gif`` of each, for ``tests/test_gif.py``;
not run by the suite.

Usage, with a Python that has TensorFlow and Pillow: ``python tests/data/gif/make_tf_fixtures.py``.
Writes ``<name>.gif`` and ``tf.npz`` (``<name>``: TF 2.21's frames, uint8 ``[n, h, w, 3]``).
The files: one frame, and three full frames. (TF 2.21 also composites frames that use a
transparent index, which TF 1.15, tensorweave's reference, refuses as out of the colour map, so
such files are not fixtures.)
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))


def frames(count: int, seed: int, side: tuple[int, int] = (13, 17)) -> list[Image.Image]:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 255, side + (3,)).astype(np.uint8) // 64 * 64
    out = []
    for i in range(count):
        frame = base.copy()
        frame[2 + i:6 + i, 3:9] = (255, 32 * i, 0)  # a moving patch: later frames differ there
        out.append(Image.fromarray(frame).convert("P", palette=Image.ADAPTIVE, colors=16))
    return out


def main() -> None:
    cases = {
        "still_13x17": (frames(1, 0), {}),
        "three_full_13x17": (frames(3, 1), {"optimize": False}),
    }
    out = {}
    for name, (images, options) in cases.items():
        path = os.path.join(HERE, name + ".gif")
        images[0].save(path, save_all=len(images) > 1, append_images=images[1:], **options)
        out[name] = tf.io.decode_gif(open(path, "rb").read()).numpy()
    np.savez_compressed(os.path.join(HERE, "tf.npz"), **out)


if __name__ == "__main__":
    main()
