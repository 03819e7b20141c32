"""TensorFlow's rows kept from cut JPEG files, for ``tests/test_formats_jpeg_cuts.py``; not run by
the test suite.

Usage, with a Python that has TensorFlow (not a tensorweave dependency):
    python tests/data/jpeg/make_tf_cut_fixtures.py

Every ``*.jpg`` here is cut at every length from the end of its first scan header to its full
length and decoded by ``tf.io.decode_jpeg`` with ``acceptable_fraction=0`` (so that TF keeps
whatever rows it read, the rest black, and refuses only where libjpeg fails outright) with the
attrs of each variant: ``""`` (defaults), ``_nofancy``, ``_ratio2``, ``_ratio4``, ``_ratio8``,
``_ch1`` (colour files; not CMYK, which TF refuses to decode to grey). ``tf_cuts.npz`` holds,
per file and variant, ``<name><variant>``: an int16 array ``[n, 2]`` of (cut length, rows kept),
rows -1 where TF refuses. The kept rows are checked here to equal the first rows of TF's decode
of the whole file, and the rest to be black (the script fails otherwise), so the test needs only
the row counts and ``tf.npz``. ``tf_recover.npz`` holds TF's decodes of a few cuts with
``try_recover_truncated`` (`recover_fixtures`).
"""

from __future__ import annotations

import glob
import os

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
# a cut whose bytes read again hold a marker libjpeg refuses (0xff 0xf8)
EXTRA_RECOVER_CUTS = {"cmyk_q75_13x21": (604,)}
VARIANTS = {"": {}, "_nofancy": {"fancy_upscaling": False}, "_ratio2": {"ratio": 2},
            "_ratio4": {"ratio": 4}, "_ratio8": {"ratio": 8}, "_ch1": {"channels": 1}}


def scan_start(data: bytes) -> int:
    """The offset just past the first start-of-scan header."""
    pos = 2
    while data[pos] == 0xFF:
        marker = data[pos + 1]
        length = int.from_bytes(data[pos + 2:pos + 4], "big")
        pos += 2 + length
        if marker == 0xDA:
            return pos
    raise ValueError("no scan")


def rows_kept(out: np.ndarray, full: np.ndarray) -> int:
    rows = 0
    while rows < len(full) and np.array_equal(out[rows], full[rows]):
        rows += 1
    if np.any(out[rows:]):
        raise AssertionError("rows after the kept ones are not black")
    return rows


def main() -> None:
    out = {}
    for path in sorted(glob.glob(os.path.join(HERE, "*.jpg"))):
        name = os.path.basename(path)[:-4]
        data = open(path, "rb").read()
        for variant, attrs in VARIANTS.items():
            if variant == "_ch1" and name.startswith("grey"):
                continue
            try:
                full = tf.io.decode_jpeg(data, **attrs).numpy()
            except tf.errors.InvalidArgumentError:  # CMYK files have no grey decode
                continue
            table = []
            for cut in range(scan_start(data), len(data) + 1):
                try:
                    got = tf.io.decode_jpeg(data[:cut], acceptable_fraction=0.0, **attrs).numpy()
                    table.append((cut, rows_kept(got, full)))
                except tf.errors.InvalidArgumentError:
                    table.append((cut, -1))
            out[name + variant] = np.array(table, np.int16)
    np.savez_compressed(os.path.join(HERE, "tf_cuts.npz"), **out)


def recover_fixtures() -> None:
    """``tf_recover.npz``: ``<name><variant>_at<n>``, TF's decode with
    ``try_recover_truncated=True`` of the first ``n`` bytes, at four lengths spread over the
    scan of each one-scan file (``tensorweave.formats.jpeg_cut`` models those) but the
    largest; ``failures``: the keys TF refuses."""
    out, failures = {}, []
    for path in sorted(glob.glob(os.path.join(HERE, "*.jpg"))):
        name = os.path.basename(path)[:-4]
        if "prog" in name or name == "c420_q75_96x128":
            continue
        data = open(path, "rb").read()
        start = scan_start(data)
        for variant in ("", "_nofancy", "_ratio2", "_ch1"):
            spread = [start + (len(data) - start) * i // 5 for i in range(1, 5)]
            for cut in spread + list(EXTRA_RECOVER_CUTS.get(name, ())):
                key = f"{name}{variant}_at{cut}"
                try:
                    out[key] = tf.io.decode_jpeg(data[:cut], try_recover_truncated=True,
                                                 **VARIANTS[variant]).numpy()
                except tf.errors.InvalidArgumentError:
                    failures.append(key)
    np.savez_compressed(os.path.join(HERE, "tf_recover.npz"), failures=np.array(failures),
                        **out)


if __name__ == "__main__":
    main()
    recover_fixtures()
