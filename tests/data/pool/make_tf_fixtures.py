"""Makes ``tf.npz``: TF's MaxPoolGrad (and MaxPoolGradGrad) where the routing rule decides the
result: ties, NaNs, -inf and integer minima next to SAME padding, windows wider than their
stride and strides wider than their window.

Run with a Python that has TensorFlow: ``python tests/data/pool/make_tf_fixtures.py``. Each case
``NAME`` stores ``NAME/x`` (input), ``NAME/dy`` (output gradient), ``NAME/dx`` (TF's
MaxPoolGrad), ``NAME/ddy`` (TF's MaxPoolGradGrad of ``NAME/g``, an input-shaped gradient) and
``NAME/geometry`` (kh, kw, sh, sw, same).
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf

RNG = np.random.default_rng(7)
HERE = os.path.dirname(os.path.abspath(__file__))


def case(x: np.ndarray, kh: int, kw: int, sh: int, sw: int, padding: str) -> dict:
    ksize, strides = [1, kh, kw, 1], [1, sh, sw, 1]
    y = tf.raw_ops.MaxPool(input=x, ksize=ksize, strides=strides, padding=padding)
    dy = RNG.integers(1, 50, y.shape).astype(x.dtype)
    dx = tf.raw_ops.MaxPoolGrad(orig_input=x, orig_output=y, grad=dy, ksize=ksize,
                                strides=strides, padding=padding)
    g = RNG.integers(1, 50, x.shape).astype(x.dtype)
    ddy = tf.raw_ops.MaxPoolGradGrad(orig_input=x, orig_output=y, grad=g, ksize=ksize,
                                     strides=strides, padding=padding)
    return {"x": x, "dy": dy, "dx": dx.numpy(), "g": g, "ddy": ddy.numpy(),
            "geometry": np.array([kh, kw, sh, sw, padding == "SAME"])}


def main() -> None:
    nan, inf = np.nan, np.inf
    ties = RNG.integers(0, 2, (2, 5, 6, 3)).astype(np.float32)
    nans = RNG.normal(size=(1, 5, 5, 2)).astype(np.float32)
    nans[0, ::2, 1::2, 0] = nan  # NaNs that come first in some windows and later in others
    lows = np.full((1, 4, 5, 2), -inf, np.float32)
    lows[0, 3, 4, 1] = 1.0
    cases = {
        "ties_3x3s1_same": case(ties, 3, 3, 1, 1, "SAME"),
        "ties_2x2s2_same_odd": case(ties, 2, 2, 2, 2, "SAME"),
        "ties_3x2s2x1_valid": case(ties, 3, 2, 2, 1, "VALID"),
        "ties_1x1s3_valid": case(ties, 1, 1, 3, 3, "VALID"),
        "ties_2x2s3_same": case(ties, 2, 2, 3, 3, "SAME"),
        "nans_3x3s1_same": case(nans, 3, 3, 1, 1, "SAME"),
        "nans_2x2s1_valid": case(nans, 2, 2, 1, 1, "VALID"),
        "neg_inf_3x3s2_same": case(lows, 3, 3, 2, 2, "SAME"),
        "neg_inf_4x4s1_same": case(lows, 4, 4, 1, 1, "SAME"),
        "int_min_3x3s1_same": case(np.full((1, 3, 4, 1), np.iinfo(np.int32).min, np.int32),
                                   3, 3, 1, 1, "SAME"),
        "float64_1x1_image": case(np.array([[[[2.5, -1.0]]]]), 3, 3, 2, 2, "SAME"),
    }
    arrays = {f"{name}/{key}": value for name, fields in cases.items()
              for key, value in fields.items()}
    np.savez_compressed(os.path.join(HERE, "tf.npz"), **arrays)


if __name__ == "__main__":
    main()
