"""TensorFlow's PNG encodes and decodes, for ``tests/test_formats_png.py``; not run by the suite.

Usage, with a Python that has TensorFlow: ``python tests/data/png/make_tf_fixtures.py``. Writes
``tf.npz``: ``<kind>`` the source image (8-bit grey, grey+alpha, RGB, RGBA, and 16-bit grey and
RGBA, each 19x29 of gradients, edges and noise), ``<kind>_c<level>`` TF's ``encode_png`` bytes
at compression ``level`` (-1, 0, 1, 6, 9) as uint8, and ``<kind>_ch<n>``/``<kind>_u16``
TF's ``decode_png`` of the default-level file with ``channels=n`` / ``dtype=uint16``; and
``big`` (128x128 RGB, so zlib's full window and several IDAT chunks) with ``big_c<level>``
for levels -1 and 9.
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))


def picture(channels: int, dtype: type, seed: int, height: int = 19, width: int = 29,
            noise: float = 0.05) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(float)
    top = np.iinfo(dtype).max
    planes = [top * x / width, top * y / height,
              np.where((x // 6 + y // 5) % 2 == 0, 0.15, 0.85) * top,
              top * (x + y) / (height + width)]
    image = np.stack(planes[:channels], -1) + rng.normal(0, top * noise,
                                                         (height, width, channels))
    return np.clip(image, 0, top).astype(dtype)


def main() -> None:
    out = {}
    kinds = {"grey": (1, np.uint8), "greya": (2, np.uint8), "rgb": (3, np.uint8),
             "rgba": (4, np.uint8), "grey16": (1, np.uint16), "rgba16": (4, np.uint16)}
    for seed, (kind, (channels, dtype)) in enumerate(kinds.items()):
        image = picture(channels, dtype, seed)
        out[kind] = image
        for level in (-1, 0, 1, 6, 9):
            data = tf.io.encode_png(image, compression=level).numpy()
            out[f"{kind}_c{level}"] = np.frombuffer(data, np.uint8)
        data = tf.io.encode_png(image).numpy()
        for n in (0, 1, 3, 4):
            out[f"{kind}_ch{n}"] = tf.io.decode_png(data, channels=n).numpy()
            out[f"{kind}_ch{n}_u16"] = tf.io.decode_png(data, channels=n, dtype=tf.uint16).numpy()
    out["big"] = picture(3, np.uint8, 9, 128, 128, noise=0.004)
    for level in (-1, 9):
        data = tf.io.encode_png(out["big"], compression=level).numpy()
        out[f"big_c{level}"] = np.frombuffer(data, np.uint8)
    np.savez_compressed(os.path.join(HERE, "tf.npz"), **out)


if __name__ == "__main__":
    main()
