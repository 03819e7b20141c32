"""Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter (`plugins.kernels.im2col` and the
flipped-filter and scatter paths of the input gradient) on TF 1.15 ``conv_ops_test``'s edge
shapes: empty batches, 1x1 images, strides wider than the filter, SAME padding of odd sizes,
filters as large as the image, explicit padding wider than the filter; the backprops checked
as the exact adjoints of a naive Conv2D."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tests.numeric import run

RNG = np.random.default_rng(11)


def pads_of(size, k, s, d, padding, axis):
    """(out, before) of one spatial dimension, as TF's GetWindowedOutputSizeVerbose."""
    eff = (k - 1) * d + 1
    if padding == "SAME":
        out = -(-size // s)
        return out, max((out - 1) * s + eff - size, 0) // 2
    before, after = padding[1 + axis] if isinstance(padding, list) else (0, 0)
    return (size + before + after - eff) // s + 1, before


def naive_conv2d(x, w, strides, padding, dilations):
    n, h, wd, _ = x.shape
    kh, kw, _, o = w.shape
    (oh, top), (ow, left) = (pads_of(h, kh, strides[0], dilations[0], padding, 0),
                             pads_of(wd, kw, strides[1], dilations[1], padding, 1))
    out = np.zeros((n, oh, ow, o))
    for i, j, a, b in np.ndindex(oh, ow, kh, kw):
        r, c = i * strides[0] + a * dilations[0] - top, j * strides[1] + b * dilations[1] - left
        if 0 <= r < h and 0 <= c < wd:
            out[:, i, j, :] += x[:, r, c, :] @ w[a, b]
    return out


EDGES = [  # image, filter, strides, padding, dilations
    ((0, 5, 5, 2), (3, 3, 2, 3), (1, 1), "SAME", (1, 1)),        # an empty batch
    ((2, 1, 1, 3), (3, 3, 3, 2), (1, 1), "SAME", (1, 1)),        # 1x1 image, larger filter
    ((2, 1, 1, 3), (1, 1, 3, 2), (2, 2), "VALID", (1, 1)),       # 1x1 image, stride 2
    ((1, 7, 7, 2), (1, 1, 2, 3), (3, 3), "SAME", (1, 1)),        # stride wider than the filter
    ((1, 7, 6, 2), (2, 2, 2, 2), (3, 3), "VALID", (1, 1)),
    ((2, 5, 4, 2), (2, 3, 2, 2), (2, 2), "SAME", (1, 1)),        # SAME on odd sizes
    ((1, 4, 4, 3), (4, 4, 3, 2), (1, 1), "VALID", (1, 1)),       # filter as large as the image
    ((2, 6, 5, 1), (3, 3, 1, 4), (1, 1), "SAME", (1, 1)),        # one channel (column layout)
    ((2, 6, 5, 3), (3, 3, 3, 7), (1, 1), "SAME", (1, 1)),        # O > 2C: scatter at stride 1
    ((2, 6, 7, 4), (3, 2, 4, 2), (1, 1), "SAME", (2, 2)),        # flipped filter, dilated
    ((1, 4, 5, 2), (2, 2, 2, 2), (1, 1), [[0, 0], [3, 1], [0, 4], [0, 0]], (1, 1)),
    ((1, 3, 3, 2), (2, 2, 2, 1), (1, 1), [[0, 0], [0, 3], [2, 2], [0, 0]], (2, 1)),
    # window rows of >= 256 values: Conv2D sums one product per filter row
    ((1, 5, 6, 128), (3, 2, 128, 3), (2, 1), "SAME", (1, 2)),
    ((2, 5, 4, 40), (3, 4, 40, 64), (1, 1), "SAME", (1, 1)),  # the flipped filter's (4*64)
    ((0, 4, 4, 128), (2, 2, 128, 2), (1, 1), "VALID", (1, 1)),
    ((1, 2, 2, 128), (3, 3, 128, 2), (3, 3), "SAME", (1, 1)),  # filter larger than the image
]


@pytest.mark.parametrize("image,kernel,strides,padding,dilations", EDGES, ids=str)
def test_conv2d_and_backprops_on_edge_shapes(image, kernel, strides, padding, dilations):
    x, w = RNG.normal(size=image), RNG.normal(size=kernel)
    attrs = {"strides": [1, *strides, 1], "padding": padding, "dilations": [1, *dilations, 1]}
    y = tf.nn.conv2d(x, w, **attrs)
    expected = naive_conv2d(x, w, strides, padding, dilations)
    assert y.shape.as_list() == list(expected.shape)
    dy = RNG.normal(size=expected.shape)
    raw = {"strides": attrs["strides"], "dilations": attrs["dilations"]}
    if isinstance(padding, list):
        raw |= {"padding": "EXPLICIT", "explicit_paddings": [v for pair in padding for v in pair]}
    else:
        raw |= {"padding": padding}
    dx = tf.raw_ops.Conv2DBackpropInput(input_sizes=list(image), filter=w, out_backprop=dy,
                                        **raw)
    dw = tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=list(kernel), out_backprop=dy,
                                         **raw)
    got, gx, gw = run([y, dx, dw])
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert gx.shape == image and gw.shape == kernel
    # The backprops are Conv2D's adjoints: <conv(x, w), dy> = <x, dx(dy)> = <w, dw(dy)>.
    inner = (expected * dy).sum()
    np.testing.assert_allclose((x * gx).sum(), inner, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose((w * gw).sum(), inner, rtol=1e-10, atol=1e-10)
    # and, one element at a time, the naive convolution's derivatives
    for arg, got_grad in ((0, gx), (1, gw)):
        if got_grad.size:
            index = tuple(int(RNG.integers(0, s)) for s in got_grad.shape)
            unit = np.zeros(got_grad.shape)
            unit[index] = 1.0
            args = [x, w]
            args[arg] = unit
            other = naive_conv2d(*args, strides, padding, dilations)
            np.testing.assert_allclose(got_grad[index], (other * dy).sum(), rtol=1e-10,
                                       atol=1e-10)


@pytest.mark.parametrize("dtype,tol", [(np.float16, 3e-2), (np.float32, 1e-5)])
def test_backprops_keep_the_dtype(dtype, tol):
    x, w = RNG.normal(size=(2, 6, 5, 3)), RNG.normal(size=(3, 3, 3, 4))
    dy = RNG.normal(size=(2, 6, 5, 4))
    dx = tf.raw_ops.Conv2DBackpropInput(input_sizes=[2, 6, 5, 3], filter=w.astype(dtype),
                                        out_backprop=dy.astype(dtype), strides=[1, 1, 1, 1],
                                        padding="SAME")
    dw = tf.raw_ops.Conv2DBackpropFilter(input=x.astype(dtype), filter_sizes=[3, 3, 3, 4],
                                         out_backprop=dy.astype(dtype), strides=[1, 1, 1, 1],
                                         padding="SAME")
    wide = run([tf.raw_ops.Conv2DBackpropInput(input_sizes=[2, 6, 5, 3], filter=w,
                                               out_backprop=dy, strides=[1, 1, 1, 1],
                                               padding="SAME"),
                tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=[3, 3, 3, 4],
                                                out_backprop=dy, strides=[1, 1, 1, 1],
                                                padding="SAME")])
    for got, want in zip(run([dx, dw]), wide):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
