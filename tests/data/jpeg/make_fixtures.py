"""Regenerate the JPEG decoding and encoding fixtures with Pillow (libjpeg-turbo); not run by
the test suite.

Usage (Pillow must not be a tensorweave dependency, so use a scratch environment):
    python -m venv /tmp/pilvenv && /tmp/pilvenv/bin/pip install pillow numpy
    /tmp/pilvenv/bin/python tests/data/jpeg/make_fixtures.py

Writes one ``<name>.jpg`` per case and ``expected.npz`` holding, per case, Pillow's decode
(``<name>``: RGB or L, libjpeg-turbo's defaults: ISLOW IDCT, fancy upsampling) and, for colour
files, libjpeg's own grey output (``<name>_grey``, via ``draft("L")`` at full size), and
``<name>_fast``: Pillow's "draft" decode, which is libjpeg's JDCT_IFAST IDCT (TensorFlow's
default ``dct_method``) without fancy upsampling (merged upsampling for colour).

Encoder references (``encode_fixtures``, in ``encode/``): ``<name>.jpg`` is Pillow's file for
the pixels ``<name>_image`` of ``encode.npz``, saved as TF's ``encode_jpeg`` drives libjpeg (JFIF
at 300 dpi, 4:2:0 or 4:4:4, ``optimize``, ``progressive``, an XMP packet); ``<name>_decoded``
is Pillow's decode of it. Pillow gives a grey image 2x2 sampling factors when ``subsampling``
asks for 4:2:0, so grey cases use ``subsampling=0`` (1x1, as TF's).
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


# An 8x8 block whose AC coefficients quantised at quality 90 are 0 or at least 4 in magnitude:
# tiled, every block of a progressive file's last refinement scan only sends correction bits, so
# that libjpeg forces out its EOBRUN when its correction-bit buffer fills.
TILE = np.array([
    [133, 121, 102, 155, 107, 131, 147, 105], [135, 118, 122, 155, 102, 135, 133, 115],
    [141, 111, 144, 151, 98, 148, 114, 126], [148, 105, 149, 142, 102, 166, 103, 132],
    [148, 105, 139, 133, 111, 177, 103, 131], [137, 117, 127, 133, 116, 164, 108, 130],
    [118, 138, 124, 142, 115, 133, 113, 132], [103, 153, 126, 151, 111, 106, 115, 136]], np.uint8)

ENCODE_CASES = {
    # name: (height, width, pixels ("colour", "grey", "tile" or "flat" grey), save options)
    "c420_q95_37x53": (37, 53, "colour", {"quality": 95, "subsampling": 2}),
    "c420_q95_48x64": (48, 64, "colour", {"quality": 95, "subsampling": 2}),
    "c420_q75_opt_17x33": (17, 33, "colour", {"quality": 75, "subsampling": 2, "optimize": True}),
    "c420_q100_9x3": (9, 3, "colour", {"quality": 100, "subsampling": 2}),
    "c420_q1_1x1": (1, 1, "colour", {"quality": 1, "subsampling": 2}),
    "c420_q85_xmp_31x45": (31, 45, "colour", {"quality": 85, "subsampling": 2,
                                              "xmp": b"<x:xmpmeta xmlns:x='adobe:ns:meta/'/>"}),
    "c444_q50_19x29": (19, 29, "colour", {"quality": 50, "subsampling": 0}),
    "c444_q90_opt_24x40": (24, 40, "colour", {"quality": 90, "subsampling": 0, "optimize": True}),
    "grey_q95_23x37": (23, 37, "grey", {"quality": 95, "subsampling": 0}),
    "grey_q30_opt_16x16": (16, 16, "grey", {"quality": 30, "subsampling": 0, "optimize": True}),
    "c420_q90_prog_37x53": (37, 53, "colour", {"quality": 90, "subsampling": 2,
                                               "progressive": True}),
    "c444_q75_prog_19x29": (19, 29, "colour", {"quality": 75, "subsampling": 0,
                                               "progressive": True}),
    "grey_q60_prog_23x37": (23, 37, "grey", {"quality": 60, "subsampling": 0,
                                             "progressive": True}),
    # more than 0x7FFF blocks with nothing to send: libjpeg's longest EOBRUN
    "grey_q75_prog_flat_1460x1460": (1460, 1460, "flat", {"quality": 75, "subsampling": 0,
                                                           "progressive": True}),
    "grey_q90_prog_tile_256x320": (256, 320, "tile", {"quality": 90, "subsampling": 0,
                                                      "progressive": True}),
}


def encode_fixtures() -> None:
    os.makedirs(os.path.join(HERE, "encode"), exist_ok=True)
    arrays = {}
    for seed, (name, (height, width, kind, options)) in enumerate(sorted(ENCODE_CASES.items())):
        if kind == "tile":
            image = Image.fromarray(np.tile(TILE, (height // 8, width // 8)))
        elif kind == "flat":
            image = Image.fromarray(np.full((height, width), 90, np.uint8))
        else:
            image = Image.fromarray(picture(height, width, 100 + seed))
            if kind == "grey":
                image = image.convert("L")
        buffer = io.BytesIO()
        image.save(buffer, "JPEG", dpi=(300, 300), **options)
        with open(os.path.join(HERE, "encode", f"{name}.jpg"), "wb") as f:
            f.write(buffer.getvalue())
        arrays[name + "_image"] = np.asarray(image)
        arrays[name + "_decoded"] = np.asarray(Image.open(io.BytesIO(buffer.getvalue())))
    np.savez_compressed(os.path.join(HERE, "encode", "encode.npz"), **arrays)


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
    encode_fixtures()


if __name__ == "__main__":
    main()
