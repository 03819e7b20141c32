"""TensorFlow's decodes and encodes of the JPEG fixtures, for the pixel- and byte-identity tests
(``tests/test_formats_jpeg.py``); not run by the test suite.

Usage, with a Python that has TensorFlow and Pillow (neither is a tensorweave dependency):
    python tests/data/jpeg/make_tf_fixtures.py

Writes ``cmyk_*.jpg`` (Pillow's Adobe CMYK files, which TF decodes to RGB), then ``tf.npz``
with, for every ``*.jpg`` here, under the file's stem:

- ``<name>``: ``tf.io.decode_jpeg`` with its defaults (``dct_method=""``, fancy upscaling);
- ``<name>_accurate``: ``dct_method="INTEGER_ACCURATE"``; ``<name>_nofancy``:
  ``fancy_upscaling=False``; ``<name>_ch1``/``<name>_ch3``: ``channels=1``/``3`` (left out
  where equal to ``<name>``, at the file's own channel count);
  ``<name>_ratio2`` (4, 8): ``ratio``;
- ``<name>_truncated``: the first two thirds of the file with ``try_recover_truncated=True``
  and ``acceptable_fraction=0.1``;
- ``failures``: the keys of the decodes TF refuses (``InvalidArgumentError``).

``tf_crop.npz`` (``crop_fixtures``: ``decode_and_crop_jpeg`` at many windows per file) and
``encode/tf.npz`` with TF's ``encode_jpeg`` bytes (as uint8 arrays) for each
``encode/encode.npz`` image, under ``<name>`` with the settings its name says, and a few
settings Pillow's fixtures lack (``<name>_cm``: density in cm; ``<name>_defaults``: TF's
default attrs).
"""

from __future__ import annotations

import glob
import os

import numpy as np
import tensorflow as tf
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
XMP = b"<x:xmpmeta xmlns:x='adobe:ns:meta/'/>"


def cmyk_fixtures() -> None:
    rng = np.random.default_rng(7)
    for name, (height, width, quality) in {"cmyk_q90_24x32": (24, 32, 90),
                                           "cmyk_q75_13x21": (13, 21, 75)}.items():
        y, x = np.mgrid[0:height, 0:width]
        planes = [x * 255 // width, y * 255 // height, (x + y) % 255,
                  rng.integers(0, 255, (height, width))]
        image = Image.fromarray(np.stack(planes, -1).astype(np.uint8), "CMYK")
        image.save(os.path.join(HERE, name + ".jpg"), "JPEG", quality=quality)


def decode_fixtures() -> None:
    out, failures = {}, []

    def attempt(key: str, data: bytes, **attrs: object) -> None:
        try:
            out[key] = tf.io.decode_jpeg(data, **attrs).numpy()
        except tf.errors.InvalidArgumentError:
            failures.append(key)

    for path in sorted(glob.glob(os.path.join(HERE, "*.jpg"))):
        name = os.path.basename(path)[:-4]
        data = open(path, "rb").read()
        attempt(name, data)
        attempt(name + "_accurate", data, dct_method="INTEGER_ACCURATE")
        attempt(name + "_nofancy", data, fancy_upscaling=False)
        for channels in (1, 3):
            key = f"{name}_ch{channels}"
            attempt(key, data, channels=channels)
            if key in out and np.array_equal(out[key], out[name]):
                del out[key]  # the file's own channel count: the default decode
        for ratio in (2, 4, 8):
            attempt(f"{name}_ratio{ratio}", data, ratio=ratio)
        attempt(name + "_truncated", data[:len(data) * 2 // 3], try_recover_truncated=True,
                acceptable_fraction=0.1)
    np.savez_compressed(os.path.join(HERE, "tf.npz"), failures=np.array(failures), **out)


def crop_windows(height: int, width: int) -> list[tuple[int, int, int, int]]:
    """Crop windows ``[y, x, h, w]`` for a `height` x `width` image, each at most 1200 pixels
    (the fixtures stay small): windows at odd and even offsets, at iMCU boundaries (8 and 16
    pixels) and just off them, ending at the right and bottom edges or one short of them,
    one-pixel columns and rows, windows 1-4 pixels wide (libjpeg-turbo's plain upsampling for
    a component one sample wide), and a few at random."""
    rng = np.random.default_rng(height * 1000 + width)
    fixed = [(1, 1, 20, 30), (3, 5, 7, 6), (0, 16, 12, width - 16), (0, 15, height, 1),
             (0, 17, 5, width - 17), (8, 8, height - 8, 9), (7, 9, 6, 7),
             (0, width - 1, height, 1), (height - 1, 0, 1, width), (2, width - 6, 9, 6),
             (5, 3, 4, 13), (1, 16, 5, 2), (2, 17, 5, 1), (0, 31, 6, 3), (4, 0, 5, 4),
             (height - 3, width - 2, 3, 2), (1, 0, height - 2, width - 1)]
    windows = [(y, x, min(h, 1200 // max(w, 1)), w) for y, x, h, w in fixed]
    for _ in range(6):
        y, x = int(rng.integers(0, height)), int(rng.integers(0, width))
        windows.append((y, x, int(rng.integers(1, min(height - y, 24) + 1)),
                        int(rng.integers(1, min(width - x, 40) + 1))))
    return [(y, x, h, w) for y, x, h, w in windows
            if y >= 0 and x >= 0 and h > 0 and w > 0 and y + h <= height and x + w <= width]


def crop_fixtures() -> None:
    """``tf_crop.npz``: ``tf.image.decode_and_crop_jpeg`` of every file here at each of its
    ``crop_windows`` (``<name>_windows``), the windows' pixels flattened and concatenated in
    window order (few entries keep the file small), under ``<name>_crops`` (TF's defaults),
    ``<name>_crops_accurate`` (``INTEGER_ACCURATE``) and ``<name>_crops_nofancy``
    (``fancy_upscaling=False``)."""
    out = {}
    variants = {"": {}, "_accurate": {"dct_method": "INTEGER_ACCURATE"},
                "_nofancy": {"fancy_upscaling": False}}
    for path in sorted(glob.glob(os.path.join(HERE, "*.jpg"))):
        name = os.path.basename(path)[:-4]
        data = open(path, "rb").read()
        height, width = tf.io.decode_jpeg(data).shape[:2]
        windows = crop_windows(height, width)
        out[name + "_windows"] = np.array(windows)
        for suffix, attrs in variants.items():
            out[f"{name}_crops{suffix}"] = np.concatenate([
                tf.image.decode_and_crop_jpeg(data, window, **attrs).numpy().reshape(-1)
                for window in windows])
    np.savez_compressed(os.path.join(HERE, "tf_crop.npz"), **out)


def encode_fixtures() -> None:
    images = np.load(os.path.join(HERE, "encode", "encode.npz"))
    out = {}
    for key in sorted(images):
        if not key.endswith("_image"):
            continue
        name = key[:-len("_image")]
        image = images[key]
        image = image[..., None] if image.ndim == 2 else image
        quality = int(name.split("_q")[1].split("_")[0])
        settings = {"quality": quality, "chroma_downsampling": "c420" in name,
                    "progressive": "prog" in name, "optimize_size": "opt" in name,
                    "xmp_metadata": XMP.decode() if "xmp" in name else ""}
        out[name] = tf.io.encode_jpeg(image, **settings).numpy()
        if image.size < 5000:
            out[name + "_cm"] = tf.io.encode_jpeg(image, density_unit="cm", x_density=72,
                                                  y_density=96, **settings).numpy()
            out[name + "_defaults"] = tf.io.encode_jpeg(image).numpy()
    np.savez_compressed(os.path.join(HERE, "encode", "tf.npz"),
                        **{k: np.frombuffer(v, np.uint8) for k, v in out.items()})


if __name__ == "__main__":
    cmyk_fixtures()
    decode_fixtures()
    crop_fixtures()
    encode_fixtures()
