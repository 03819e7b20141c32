"""MaxPoolGrad/MaxPoolGradGrad's routing rule (`plugins.kernels.pool2d`) against TF: TF 1.15's
``pooling_ops_test`` cases and TF's own outputs (``tests/data/pool``) for ties, NaNs and
padding; and the pools' edge cases against naive loops."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tensorweave as tf
from tests.numeric import run

FIXTURES = np.load(os.path.join(os.path.dirname(__file__), "data", "pool", "tf.npz"))
CASES = sorted({key.split("/")[0] for key in FIXTURES.files})


def max_pool_grad(x, dy, ksize, strides, padding):
    x = np.asarray(x)
    y = tf.nn.max_pool(x, ksize, strides, padding)
    return tf.raw_ops.MaxPoolGrad(orig_input=x, orig_output=y, grad=np.asarray(dy, x.dtype),
                                  ksize=ksize, strides=strides, padding=padding)


@pytest.mark.parametrize("name", CASES)
def test_routing_matches_tf(name: str) -> None:
    f = {key: FIXTURES[f"{name}/{key}"] for key in ("x", "dy", "dx", "g", "ddy", "geometry")}
    kh, kw, sh, sw, same = (int(v) for v in f["geometry"])
    ksize, strides, padding = [1, kh, kw, 1], [1, sh, sw, 1], "SAME" if same else "VALID"
    y = tf.nn.max_pool(f["x"], ksize, strides, padding)
    dx = tf.raw_ops.MaxPoolGrad(orig_input=f["x"], orig_output=y, grad=f["dy"], ksize=ksize,
                                strides=strides, padding=padding)
    ddy = tf.raw_ops.MaxPoolGradGrad(orig_input=f["x"], orig_output=y, grad=f["g"],
                                     ksize=ksize, strides=strides, padding=padding)
    got_dx, got_ddy = run([dx, ddy])
    assert got_dx.dtype == got_ddy.dtype == f["x"].dtype
    np.testing.assert_array_equal(got_dx, f["dx"])
    # MaxPoolGradGrad is MaxPoolGrad's transpose: <MaxPoolGrad(dy), g> = <dy, GradGrad(g)>.
    wide = {key: value.astype(np.float64) for key, value in
            (("dx", got_dx), ("ddy", got_ddy), ("g", f["g"]), ("dy", f["dy"]))}
    assert (wide["dx"] * wide["g"]).sum() == (wide["dy"] * wide["ddy"]).sum()
    if name.startswith(("nans", "neg_inf")):
        # TF's GradGrad picks the first element equal to TF's forward output, which skips NaNs
        # and starts at -FLT_MAX (so it matches no -inf); MaxPool here keeps NaN and -inf, and
        # GradGrad stays the transpose instead.
        return
    np.testing.assert_array_equal(got_ddy, f["ddy"])


# TF 1.15 pooling_ops_test._testMaxPoolGradDirect1_1, 1_2, 1_3, WithNans2_1 and 2_2 (CPU).
NAN = float("nan")
CHECKER = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0]
NINE = [11.0, 12.0, 13.0, 15.0, 16.0, 17.0, 19.0, 20.0, 21.0]
DIRECT = [
    ([1.0] * 16, NINE, [11, 12, 13, 0, 15, 16, 17, 0, 19, 20, 21, 0, 0, 0, 0, 0], 2, "VALID"),
    (CHECKER, NINE, [11, 0, 25, 0, 0, 31, 0, 17, 19, 0, 41, 0, 0, 0, 0, 0], 2, "VALID"),
    (CHECKER, list(range(11, 27)), [54, 0, 62, 0, 0, 60, 0, 22, 47, 0, 51, 0, 0, 0, 0, 0], 3,
     "SAME"),
    ([NAN] * 16, NINE, [11, 12, 13, 0, 15, 16, 17, 0, 19, 20, 21, 0, 0, 0, 0, 0], 2, "VALID"),
    ([NAN] * 16, [NAN, 12, 13, 15, NAN, 17, 19, 20, NAN],
     [NAN, 12, 13, 0, 15, NAN, 17, 0, 19, 20, NAN, 0, 0, 0, 0, 0], 2, "VALID"),
]


@pytest.mark.parametrize("x,dy,expected,window,padding", DIRECT)
def test_tf_max_pool_grad_direct_cases(x, dy, expected, window, padding) -> None:
    out = 4 if padding == "SAME" else 3
    grad = max_pool_grad(np.reshape(x, (1, 4, 4, 1)).astype(np.float32),
                         np.reshape(dy, (1, out, out, 1)), [1, window, window, 1],
                         [1, 1, 1, 1], padding)
    np.testing.assert_array_equal(run(grad).ravel(), np.asarray(expected, np.float32))


def test_an_infinite_gradient_stays_in_its_element() -> None:
    x = np.array([1.0, 3.0, 2.0, 0.0], np.float32).reshape(1, 2, 2, 1)
    grad = max_pool_grad(x, [[[[np.inf]]]], [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    np.testing.assert_array_equal(run(grad).ravel(), [0, np.inf, 0, 0])


def naive_max_pool_grad(x, dy, window, strides, padding):
    """TF's scan: the first element inside the image starts, strictly greater replaces."""
    n, h, w, c = x.shape
    oh, ow = dy.shape[1:3]
    if padding == "SAME":
        top = max((oh - 1) * strides[0] + window[0] - h, 0) // 2
        left = max((ow - 1) * strides[1] + window[1] - w, 0) // 2
    else:
        top = left = 0
    dx = np.zeros_like(x)
    for b, i, j, d in np.ndindex(n, oh, ow, c):
        best = None
        for r in range(i * strides[0] - top, i * strides[0] - top + window[0]):
            for s in range(j * strides[1] - left, j * strides[1] - left + window[1]):
                if 0 <= r < h and 0 <= s < w and (best is None or x[b, r, s, d] > x[best]):
                    best = (b, r, s, d)
        dx[best] += dy[b, i, j, d]
    return dx


POOL_EDGES = [  # (image, window, strides, padding): TF 1.15 pooling_ops_test shapes and kin
    ((2, 3, 3, 3), (1, 1), (1, 1), "VALID"),
    ((2, 2, 4, 3), (2, 2), (2, 2), "SAME"),
    ((1, 7, 7, 1), (3, 3), (1, 1), "SAME"),
    ((2, 5, 7, 2), (1, 1), (2, 3), "VALID"),     # strides wider than the window
    ((1, 9, 8, 2), (2, 3), (4, 4), "SAME"),      # and with padding
    ((1, 1, 1, 2), (3, 3), (2, 2), "SAME"),      # a 1x1 image
    ((1, 5, 5, 1), (5, 5), (1, 1), "SAME"),      # the window as large as the image
    ((0, 6, 6, 2), (2, 2), (2, 2), "VALID"),     # an empty batch
]


@pytest.mark.parametrize("image,window,strides,padding", POOL_EDGES)
def test_max_pool_grad_edges_match_the_scan(image, window, strides, padding) -> None:
    rng = np.random.default_rng(5)
    x = rng.integers(0, 3, image).astype(np.float64)  # few values: many ties
    y = tf.nn.max_pool(x, [1, *window, 1], [1, *strides, 1], padding)
    dy = rng.integers(1, 9, y.shape.as_list()).astype(np.float64)
    got = run(max_pool_grad(x, dy, [1, *window, 1], [1, *strides, 1], padding))
    np.testing.assert_array_equal(got, naive_max_pool_grad(x, dy, window, strides, padding))


@pytest.mark.parametrize("image,window,strides,padding", POOL_EDGES)
def test_avg_pool_grad_edges_are_the_transpose(image, window, strides, padding) -> None:
    """AvgPoolGrad is AvgPool's transpose: <avg_pool(x), dy> = <x, avg_pool_grad(dy)>."""
    rng = np.random.default_rng(6)
    x = rng.normal(size=image)
    y = tf.nn.avg_pool(x, [1, *window, 1], [1, *strides, 1], padding)
    dy = rng.normal(size=y.shape.as_list())
    dx = tf.raw_ops.AvgPoolGrad(orig_input_shape=list(image), grad=dy, ksize=[1, *window, 1],
                                strides=[1, *strides, 1], padding=padding)
    pooled, grad = run([y, dx])
    assert grad.shape == image
    np.testing.assert_allclose((pooled * dy).sum(), (x * grad).sum(), rtol=1e-12, atol=1e-12)
