"""BMP files written by Pillow and TensorFlow's ``decode_bmp`` of each, for ``tests/test_bmp.py``;
not run by the suite.

Usage, with a Python that has TensorFlow and Pillow: ``python tests/data/bmp/make_tf_fixtures.py``.
Writes ``<name>.bmp`` (24-bit RGB and 32-bit RGBA, bottom-up, widths that need row padding) and
``tf.npz`` (``<name>_ch<n>``: TF 2.21's ``decode_bmp`` with ``channels`` n in 0, 3, 4; a
decode TF refuses is left out), and ``bitfields_6x3.bmp``: ``rgba_6x3`` marked BI_BITFIELDS.
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    rng = np.random.default_rng(5)
    cases = {"rgb_7x5": (7, 5, "RGB"), "rgb_4x9": (4, 9, "RGB"), "rgba_6x3": (6, 3, "RGBA")}
    out = {}
    for name, (height, width, mode) in cases.items():
        pixels = rng.integers(0, 256, (height, width, len(mode))).astype(np.uint8)
        path = os.path.join(HERE, name + ".bmp")
        Image.fromarray(pixels, mode).save(path)
        data = open(path, "rb").read()
        for channels in (0, 3, 4):
            try:
                out[f"{name}_ch{channels}"] = tf.io.decode_bmp(data, channels=channels).numpy()
            except tf.errors.InvalidArgumentError:
                pass
    # TF reads the pixel bytes whatever the compression field says: a 32-bit file marked
    # BI_BITFIELDS (3), as Windows writes them, decodes as BGRA
    data = bytearray(open(os.path.join(HERE, "rgba_6x3.bmp"), "rb").read())
    data[30:34] = (3).to_bytes(4, "little")
    with open(os.path.join(HERE, "bitfields_6x3.bmp"), "wb") as f:
        f.write(data)
    out["bitfields_6x3_ch0"] = tf.io.decode_bmp(bytes(data)).numpy()
    np.savez_compressed(os.path.join(HERE, "tf.npz"), **out)


if __name__ == "__main__":
    main()
