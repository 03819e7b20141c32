"""TensorFlow's ``decode_gif`` of every GIF file here cut at every length, for
``tests/test_gif.py``; not run by the suite.

Usage, with a Python that has TensorFlow (not a tensorweave dependency), from the repository
root: ``python tests/data/gif/make_tf_cut_fixtures.py``. Writes ``tf_cuts.npz``: ``<name>``,
for each length ``n`` from 0 to the file's, the number of frames TF 2.21 decodes from the first
``n`` bytes (0 where it refuses them); and ``<name>_at<n>``, TF's frames, where they are not the
first frames of TF's decode of the whole file (``tf.npz``): where the canvas, the largest frame
kept, is smaller, or where TF refuses the whole file.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    whole_decodes = np.load(os.path.join(HERE, "tf.npz"))
    out = {}
    for path in sorted(glob.glob(os.path.join(HERE, "*.gif"))):
        name = os.path.basename(path)[:-4]
        data = open(path, "rb").read()
        whole = whole_decodes[name] if name in whole_decodes.files else None
        counts = []
        for size in range(len(data) + 1):
            try:
                frames = tf.io.decode_gif(data[:size]).numpy()
            except tf.errors.InvalidArgumentError:
                counts.append(0)
                continue
            counts.append(len(frames))
            if whole is None or not np.array_equal(frames, whole[:len(frames)]):
                out[f"{name}_at{size}"] = frames
        out[name] = np.array(counts, np.int16)
    np.savez_compressed(os.path.join(HERE, "tf_cuts.npz"), **out)


if __name__ == "__main__":
    main()
