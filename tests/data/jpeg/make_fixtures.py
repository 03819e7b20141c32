"""Regenerate the JPEG decoding fixtures with Pillow (libjpeg-turbo). Not run by the test suite.

Usage (Pillow must not be a tensorweave dependency, so use a scratch environment):
    python -m venv /tmp/pilvenv && /tmp/pilvenv/bin/pip install pillow numpy
    /tmp/pilvenv/bin/python tests/data/jpeg/make_fixtures.py

Writes one ``<name>.jpg`` per case and ``expected.npz`` holding, per case, Pillow's decode
(``<name>``: RGB or L, libjpeg-turbo's defaults: ISLOW IDCT, fancy upsampling) and, for colour
files, libjpeg's own grey output (``<name>_grey``, via ``draft("L")`` at full size), and
``<name>_fast``: Pillow's "draft" decode, which is libjpeg's JDCT_IFAST IDCT (TensorFlow's
default ``dct_method``) without fancy upsampling (merged upsampling for colour).
"""

import io
import os

import numpy as np
from PIL import Image, features

HERE = os.path.dirname(os.path.abspath(__file__))


def picture(height: int, width: int, seed: int) -> np.ndarray:
    """Smooth gradients, a few hard edges and noise, so that every coefficient band is used."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(float)
    r = 128 + 100 * np.sin(x / 5.0 + seed) * np.cos(y / 7.0)
    g = 255 * (x + y) / (height + width)
    b = np.where((x // 6 + y // 5) % 2 == 0, 40.0, 220.0)
    img = np.stack([r, g, b], axis=-1) + rng.normal(0, 18, (height, width, 3))
    return np.clip(img, 0, 255).astype(np.uint8)


CASES = {
    # name: (height, width, grey, save options)
    "grey_q75_23x37": (23, 37, True, {"quality": 75}),
    "grey_q95_opt_16x16": (16, 16, True, {"quality": 95, "optimize": True}),
    "grey_prog_q50_33x70": (33, 70, True, {"quality": 50, "progressive": True}),
    "c444_q75_19x29": (19, 29, False, {"quality": 75, "subsampling": 0}),
    "c444_q95_opt_24x32": (24, 32, False, {"quality": 95, "subsampling": 0, "optimize": True}),
    "c422_q75_21x35": (21, 35, False, {"quality": 75, "subsampling": 1}),
    "c422_q50_16x16": (16, 16, False, {"quality": 50, "subsampling": 1}),
    "c420_q75_64x48": (64, 48, False, {"quality": 75, "subsampling": 2}),
    "c420_q50_31x45": (31, 45, False, {"quality": 50, "subsampling": 2}),
    "c420_q95_opt_17x33": (17, 33, False, {"quality": 95, "subsampling": 2, "optimize": True}),
    "c420_narrow_9x3": (9, 3, False, {"quality": 90, "subsampling": 2}),
    "c420_tiny_1x1": (1, 1, False, {"quality": 90, "subsampling": 2}),
    "c422_narrow_5x4": (5, 4, False, {"quality": 90, "subsampling": 1}),
    "c420_restart_40x56": (40, 56, False, {"quality": 80, "subsampling": 2,
                                           "restart_marker_blocks": 3}),
    "c444_restart_rows_24x40": (24, 40, False, {"quality": 80, "subsampling": 0,
                                                "restart_marker_rows": 1}),
    "c420_prog_q75_37x53": (37, 53, False, {"quality": 75, "subsampling": 2,
                                            "progressive": True}),
    "c444_prog_q90_20x28": (20, 28, False, {"quality": 90, "subsampling": 0,
                                            "progressive": True}),
    "c422_prog_restart_26x42": (26, 42, False, {"quality": 85, "subsampling": 1,
                                                "progressive": True,
                                                "restart_marker_blocks": 2}),
    "c420_q75_96x128": (96, 128, False, {"quality": 75, "subsampling": 2}),
}


def main() -> None:
    print("libjpeg-turbo", features.version("libjpeg_turbo"))
    expected = {}
    for seed, (name, (height, width, grey, options)) in enumerate(sorted(CASES.items())):
        image = Image.fromarray(picture(height, width, seed))
        if grey:
            image = image.convert("L")
        buffer = io.BytesIO()
        image.save(buffer, "JPEG", **options)
        data = buffer.getvalue()
        with open(os.path.join(HERE, name + ".jpg"), "wb") as f:
            f.write(data)
        decoded = Image.open(io.BytesIO(data))
        expected[name] = np.asarray(decoded.convert(decoded.mode))
        fast = Image.open(io.BytesIO(data))
        fast.decoderconfig = (1, 1)  # (scale, draft): draft = JDCT_FASTEST, no fancy upsampling
        expected[name + "_fast"] = np.asarray(fast)
        if not grey:
            as_grey = Image.open(io.BytesIO(data))
            as_grey.draft("L", as_grey.size)
            assert as_grey.mode == "L" and as_grey.size == (width, height)
            expected[name + "_grey"] = np.asarray(as_grey)
    np.savez_compressed(os.path.join(HERE, "expected.npz"), **expected)


if __name__ == "__main__":
    main()
