"""``tw.nn``'s convolution variants and fused batch norm (`tensorweave.api.nn_conv_ops`) against
loop-based numpy references, with their construction-time and run-time errors and numerical
gradient checks."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tests.numeric import gradient_error, run, window_geometry

RNG = np.random.default_rng(7)
grad_error = functools.partial(gradient_error, RNG)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def np_depthwise(x, k, strides=(1, 1), rates=(1, 1), padding="VALID"):
    """The definition in TF's docs, one output element at a time."""
    n, h, w, c = x.shape
    kh, kw, _, m = k.shape
    if padding == "SAME":
        (oh, top), (ow, left) = (window_geometry(h, kh, strides[0], rates[0], "SAME"),
                                 window_geometry(w, kw, strides[1], rates[1], "SAME"))
    else:
        oh = (h - (kh - 1) * rates[0] - 1) // strides[0] + 1
        ow = (w - (kw - 1) * rates[1] - 1) // strides[1] + 1
        top = left = 0
    out = np.zeros((n, oh, ow, c * m), np.float64)
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                for ch in range(c):
                    for q in range(m):
                        total = 0.0
                        for di in range(kh):
                            for dj in range(kw):
                                y = strides[0] * i + rates[0] * di - top
                                z = strides[1] * j + rates[1] * dj - left
                                if 0 <= y < h and 0 <= z < w:
                                    total += k[di, dj, ch, q] * x[b, y, z, ch]
                        out[b, i, j, ch * m + q] = total
    return out


def np_conv2d(x, k, strides=(1, 1), rates=(1, 1), padding="VALID"):
    """Full convolution as a sum of depthwise convolutions, one per output channel."""
    outs = [np_depthwise(x, k[..., o:o + 1], strides, rates, padding)
            for o in range(k.shape[3])]
    return np.stack([o.reshape(*o.shape[:3], x.shape[3]).sum(-1) for o in outs], -1)


# -- depthwise ------------------------------------------------------------------------------------


@pytest.mark.parametrize("strides,rate,padding", [
    ((1, 1), (1, 1), "VALID"), ((1, 1), (1, 1), "SAME"), ((2, 2), (1, 1), "SAME"),
    ((2, 1), (1, 1), "VALID"), ((1, 1), (2, 2), "SAME"), ((1, 1), (2, 1), "VALID"),
])
def test_depthwise_conv2d_matches_the_definition(strides, rate, padding) -> None:
    x, k = randn(2, 6, 5, 3), randn(3, 2, 3, 2)
    y = tw.nn.depthwise_conv2d(x, k, [1, *strides, 1], padding, rate=list(rate))
    want = np_depthwise(x, k, strides, rate, padding)
    assert y.shape.as_list() == list(want.shape)
    got = run(y)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_depthwise_docs_example_and_dtypes() -> None:
    x = np.array([[1., 2.], [3., 4.], [5., 6.]], np.float32).reshape((1, 3, 2, 1))
    k = np.array([[1., 2.], [3., 4]], np.float32).reshape((2, 1, 1, 2))
    y = tw.nn.depthwise_conv2d(x, k, strides=[1, 1, 1, 1], padding="VALID")
    np.testing.assert_array_equal(run(y), [[[[10., 14.], [14., 20.]], [[18., 26.], [22., 32.]]]])
    for dtype in (np.float16, np.float64):
        got = run(tw.nn.depthwise_conv2d(x.astype(dtype), k.astype(dtype), [1, 1, 1, 1],
                                         "VALID"))
        assert got.dtype == dtype
        np.testing.assert_allclose(got, np_depthwise(x, k), rtol=1e-3)
    assert y.op.type == "DepthwiseConv2dNative"


def test_depthwise_errors() -> None:
    x = tw.placeholder(tw.float32, [1, 5, 5, 3])
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tw.nn.depthwise_conv2d(x, np.ones((2, 2, 4, 1), np.float32), [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="strides > 1 not supported"):
        tw.nn.depthwise_conv2d(x, np.ones((2, 2, 3, 1), np.float32), [1, 2, 2, 1], "SAME",
                               rate=[2, 2])
    with pytest.raises(ValueError, match="rate must be positive"):
        tw.nn.depthwise_conv2d(x, np.ones((2, 2, 3, 1), np.float32), [1, 1, 1, 1], "SAME",
                               rate=[0, 1])
    with pytest.raises(ValueError, match="strides in the batch"):
        tw.nn.depthwise_conv2d(x, np.ones((2, 2, 3, 1), np.float32), [2, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="Negative dimension"):
        tw.nn.depthwise_conv2d(x, np.ones((6, 2, 3, 1), np.float32), [1, 1, 1, 1], "VALID")
    with pytest.raises(TypeError):
        tw.nn.depthwise_conv2d(tw.placeholder(tw.int32, [1, 5, 5, 3]),
                               np.ones((2, 2, 3, 1), np.int32), [1, 1, 1, 1], "SAME")
    dynamic = tw.placeholder(tw.float32, [None, None, None, 3])
    y = tw.nn.depthwise_conv2d(dynamic, np.ones((2, 2, 3, 1), np.float32), [1, 1, 1, 1],
                               "VALID")
    with pytest.raises(errors.InvalidArgumentError, match="Computed output size"):
        run(y, {dynamic: np.ones((1, 1, 4, 3), np.float32)})


@pytest.mark.parametrize("strides,rate,padding", [
    ((1, 1), (1, 1), "SAME"), ((2, 2), (1, 1), "VALID"), ((1, 1), (2, 1), "SAME"),
])
def test_depthwise_gradients(strides, rate, padding) -> None:
    def fn(x, k):
        return tw.nn.depthwise_conv2d(x, k, [1, *strides, 1], padding, rate=list(rate))

    assert grad_error(fn, [[1, 5, 4, 2], [2, 2, 2, 3]]) < 1e-8


def test_depthwise_backprops_are_the_raw_ops() -> None:
    x, k, dy = randn(1, 4, 4, 2), randn(2, 2, 2, 2), randn(1, 3, 3, 4)
    dx = tw.nn.depthwise_conv2d_native_backprop_input([1, 4, 4, 2], k, dy, [1, 1, 1, 1],
                                                      "VALID")
    dk = tw.nn.depthwise_conv2d_native_backprop_filter(x, [2, 2, 2, 2], dy, [1, 1, 1, 1],
                                                       "VALID")
    assert dx.shape.as_list() == [1, 4, 4, 2] and dk.shape.as_list() == [2, 2, 2, 2]
    # <dy, conv(x, k)> is bilinear: its gradients are the two backprops.
    xt, kt = tw.constant(x), tw.constant(k)
    loss = tw.reduce_sum(dy * tw.nn.depthwise_conv2d(xt, kt, [1, 1, 1, 1], "VALID"))
    want = tw.gradients(loss, [xt, kt])
    got = run([dx, dk, *want])
    np.testing.assert_allclose(got[0], got[2], rtol=1e-5)
    np.testing.assert_allclose(got[1], got[3], rtol=1e-5)
    with pytest.raises(errors.InvalidArgumentError, match="out_backprop has shape"):
        run(tw.nn.depthwise_conv2d_native_backprop_input(
            [1, 4, 4, 2], k, randn(1, 2, 2, 4), [1, 1, 1, 1], "VALID"))


def test_separable_conv2d() -> None:
    x, dk, pk = randn(2, 5, 5, 2), randn(3, 3, 2, 2), randn(1, 1, 4, 3)
    y = tw.nn.separable_conv2d(x, dk, pk, [1, 1, 1, 1], "SAME")
    want = np.einsum("nhwc,co->nhwo", np_depthwise(x, dk, padding="SAME"), pk[0, 0])
    assert y.shape.as_list() == [2, 5, 5, 3]
    np.testing.assert_allclose(run(y), want, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="not compatible"):
        tw.nn.separable_conv2d(x, dk, randn(2, 1, 4, 3), [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="rank 4"):
        tw.nn.separable_conv2d(x, dk, randn(4, 3), [1, 1, 1, 1], "SAME")

    def fn(x, d, p):
        return tw.nn.separable_conv2d(x, d, p, [1, 2, 2, 1], "SAME")

    assert grad_error(fn, [[1, 4, 4, 2], [2, 2, 2, 1], [1, 1, 2, 2]]) < 1e-8


# -- conv2d_transpose, conv1d, atrous -------------------------------------------------------------


def np_conv2d_transpose(dy, k, out_shape, strides, padding):
    """The adjoint of `np_conv2d`, by scattering each output element's window."""
    n, h, w, _ = out_shape
    kh, kw = k.shape[:2]
    top = left = 0
    if padding == "SAME":
        _, top = window_geometry(h, kh, strides[0], 1, "SAME")
        _, left = window_geometry(w, kw, strides[1], 1, "SAME")
    dx = np.zeros(out_shape)
    for b in range(n):
        for i in range(dy.shape[1]):
            for j in range(dy.shape[2]):
                for di in range(kh):
                    for dj in range(kw):
                        y, z = strides[0] * i + di - top, strides[1] * j + dj - left
                        if 0 <= y < h and 0 <= z < w:
                            dx[b, y, z] += k[di, dj] @ dy[b, i, j]
    return dx


@pytest.mark.parametrize("out_shape,strides,padding", [
    ([2, 6, 6, 3], (2, 2), "SAME"), ([2, 5, 5, 3], (2, 2), "SAME"),
    ([1, 7, 5, 3], (2, 1), "VALID"), ([1, 4, 4, 3], (1, 1), "SAME"),
])
def test_conv2d_transpose(out_shape, strides, padding) -> None:
    oh = [(-(-s // t) if padding == "SAME" else (s - 3) // t + 1)
          for s, t in zip(out_shape[1:3], strides)]
    value, k = randn(out_shape[0], *oh, 4), randn(3, 3, 3, 4)
    y = tw.nn.conv2d_transpose(value, k, out_shape, [1, *strides, 1], padding)
    assert y.op.type == "Conv2DBackpropInput" and y.shape.as_list() == out_shape
    np.testing.assert_allclose(run(y), np_conv2d_transpose(value, k, out_shape, strides,
                                                           padding), rtol=1e-4, atol=1e-4)


def test_conv2d_transpose_errors() -> None:
    value, k = randn(1, 3, 3, 4), randn(3, 3, 2, 4)
    with pytest.raises(ValueError, match="input channels does not match"):
        tw.nn.conv2d_transpose(value, randn(3, 3, 2, 5), [1, 6, 6, 2], [1, 2, 2, 1])
    with pytest.raises(ValueError, match=r"output_shape must have shape \(4,\)"):
        tw.nn.conv2d_transpose(value, k, [1, 6, 6], [1, 2, 2, 1])
    with pytest.raises(ValueError, match="output_shape does not match filter's output"):
        tw.nn.conv2d_transpose(value, k, [1, 6, 6, 3], [1, 2, 2, 1])
    with pytest.raises(ValueError, match="padding must be either VALID or SAME"):
        tw.nn.conv2d_transpose(value, k, [1, 6, 6, 2], [1, 2, 2, 1], padding="FULL")
    with pytest.raises(ValueError, match="data_format has to be either"):
        tw.nn.conv2d_transpose(value, k, [1, 6, 6, 2], [1, 2, 2, 1], data_format="NWHC")
    # A shape the strides cannot have produced `value` from fails at run time, as in TF.
    with pytest.raises(errors.InvalidArgumentError, match="out_backprop"):
        run(tw.nn.conv2d_transpose(value, k, [1, 9, 9, 2], [1, 2, 2, 1]))


def test_conv2d_transpose_partly_known_output_shape() -> None:
    value = tw.placeholder(tw.float32, [None, 3, 3, 4])
    y = tw.nn.conv2d_transpose(value, randn(3, 3, 2, 4), [tw.shape(value)[0], 6, 6, 2],
                               [1, 2, 2, 1])
    assert y.shape.as_list() == [None, 6, 6, 2]
    assert run(y, {value: randn(3, 3, 3, 4)}).shape == (3, 6, 6, 2)


def test_conv2d_transpose_gradients() -> None:
    def fn(v, k):
        return tw.nn.conv2d_transpose(v, k, [1, 5, 5, 2], [1, 2, 2, 1], "SAME")

    assert grad_error(fn, [[1, 3, 3, 3], [3, 3, 2, 3]]) < 1e-8


def test_conv2d_backprop_filter_is_differentiable() -> None:
    def fn(x, dy):
        return tw.nn.conv2d_backprop_filter(x, [2, 2, 2, 3], dy, [1, 1, 1, 1], "VALID")

    assert grad_error(fn, [[1, 3, 3, 2], [1, 2, 2, 3]]) < 1e-8


@pytest.mark.parametrize("stride,padding,rate", [(1, "VALID", 1), (2, "SAME", 1),
                                                 (1, "SAME", 2)])
def test_conv1d(stride, padding, rate) -> None:
    x, k = randn(2, 9, 3), randn(3, 3, 4)
    y = tw.nn.conv1d(x, k, stride, padding, dilations=rate)
    want = np_conv2d(x[:, None], k[None], (1, stride), (1, rate), padding)[:, 0]
    assert y.shape.as_list() == list(want.shape)
    np.testing.assert_allclose(run(y), want, rtol=1e-4, atol=1e-5)
    assert {op.type for op in y.graph.get_operations()} >= {"ExpandDims", "Conv2D", "Squeeze"}


def test_conv1d_errors_and_gradient() -> None:
    with pytest.raises(ValueError, match='data_format must be "NWC" or "NCW"'):
        tw.nn.conv1d(randn(1, 5, 2), randn(2, 2, 1), 1, "SAME", data_format="NHCW")
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tw.nn.conv1d(randn(1, 5, 2), randn(2, 3, 1), 1, "SAME")
    with pytest.raises(ValueError, match="stride should be of length"):
        tw.nn.conv1d(randn(1, 5, 2), randn(2, 2, 1), [1, 1], "SAME")
    assert grad_error(lambda x, k: tw.nn.conv1d(x, k, 2, "SAME"), [[1, 7, 2], [3, 2, 2]]) < 1e-8


def test_atrous_conv2d() -> None:
    x, k = randn(1, 7, 7, 2), randn(3, 3, 2, 2)
    for padding in ("SAME", "VALID"):
        y = tw.nn.atrous_conv2d(x, k, 2, padding)
        want = np_conv2d(x, k, rates=(2, 2), padding=padding)
        assert y.shape.as_list() == list(want.shape)
        np.testing.assert_allclose(run(y), want, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="must be positive"):
        tw.nn.atrous_conv2d(x, k, 0, "SAME")
    fn = lambda x, k: tw.nn.atrous_conv2d(x, k, 2, "SAME")  # noqa: E731
    assert grad_error(fn, [[1, 5, 5, 1], [2, 2, 1, 2]]) < 1e-8


def test_conv2d_dilations_match_the_reference() -> None:
    x, k = randn(1, 8, 7, 2), randn(2, 3, 2, 3)
    y = tw.nn.conv2d(x, k, [1, 1, 1, 1], "SAME", dilations=[1, 2, 3, 1])
    np.testing.assert_allclose(run(y), np_conv2d(x, k, rates=(2, 3), padding="SAME"),
                               rtol=1e-4, atol=1e-5)


def test_pool_maps_to_max_and_avg_pool() -> None:
    x = randn(1, 4, 4, 2)
    y_max = tw.nn.pool(x, [2, 2], "MAX", "VALID", strides=[2, 2])
    y_avg = tw.nn.pool(x, [2, 2], "AVG", "VALID", strides=[2, 2])
    blocks = x.reshape(1, 2, 2, 2, 2, 2)
    got = run([y_max, y_avg])
    np.testing.assert_allclose(got[0], blocks.max(axis=(2, 4)))
    np.testing.assert_allclose(got[1], blocks.mean(axis=(2, 4)), rtol=1e-6)
    with pytest.raises(ValueError, match="pooling_type"):
        tw.nn.pool(x, [2, 2], "MIN", "VALID")


# -- fused_batch_norm -----------------------------------------------------------------------------


def test_fused_batch_norm_training() -> None:
    x, scale, offset = randn(2, 3, 4, 3) * 2 + 1, randn(3), randn(3)
    y, mean, var = tw.nn.fused_batch_norm(x, scale, offset, epsilon=1e-3)
    got = run([y, mean, var])
    mu, sigma2 = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))
    np.testing.assert_allclose(got[0], (x - mu) / np.sqrt(sigma2 + 1e-3) * scale + offset,
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[1], mu, rtol=1e-5, atol=1e-6)
    # The variance returned is Bessel-corrected; the one normalizing y is not.
    np.testing.assert_allclose(got[2], sigma2 * 24 / 23, rtol=1e-5)
    assert [t.shape.as_list() for t in (y, mean, var)] == [[2, 3, 4, 3], [3], [3]]
    assert [g.dtype for g in got] == [np.float32] * 3


def test_fused_batch_norm_inference_float16_and_nchw() -> None:
    x, scale, offset = randn(2, 3, 2, 2), randn(2), randn(2)
    mean, variance = randn(2), np.abs(randn(2)) + 0.5
    y, m, v = tw.nn.fused_batch_norm(x.astype(np.float16), scale, offset, mean, variance,
                                     epsilon=0.0, is_training=False)
    got = run([y, m, v])
    want = (x - mean) / np.sqrt(variance + 1.001e-5) * scale + offset
    assert got[0].dtype == np.float16 and got[1].dtype == np.float32
    np.testing.assert_allclose(got[0], want, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(got[1:], [mean, variance])
    xc = x.transpose(0, 3, 1, 2)
    yc, _, _ = tw.nn.fused_batch_norm(xc, scale, offset, mean, variance, epsilon=0.0,
                                      data_format="NCHW", is_training=False)
    np.testing.assert_allclose(run(yc), want.transpose(0, 3, 1, 2), rtol=1e-4, atol=1e-5)


def test_fused_batch_norm_errors() -> None:
    x = randn(2, 2, 2, 3)
    with pytest.raises(ValueError, match="must be a 1D tensor"):
        tw.nn.fused_batch_norm(x, randn(3), randn(3), is_training=False)
    with pytest.raises(ValueError, match="must be None when is_training"):
        tw.nn.fused_batch_norm(x, randn(3), randn(3), mean=randn(3), variance=randn(3))
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tw.nn.fused_batch_norm(x, randn(4), randn(4))
    with pytest.raises(ValueError, match="rank 4"):
        tw.nn.fused_batch_norm(randn(2, 3), randn(3), randn(3))
    with pytest.raises(TypeError):
        tw.nn.fused_batch_norm(x.astype(np.float64), randn(3), randn(3))


def test_fused_batch_norm_gradients() -> None:
    def fn(x, s, o):
        return tw.nn.fused_batch_norm(x, s, o)[0]

    assert grad_error(fn, [[2, 2, 3, 2], [2], [2]], dtype=tw.float32, delta=1e-2) < 5e-3
    # As FusedBatchNormGrad: the mean and variance given to inference get no gradient.
    mean = tw.constant([0.5, -0.5])
    y = tw.nn.fused_batch_norm(randn(1, 2, 2, 2), [1.0, 1.0], [0.0, 0.0], mean, [1.0, 2.0],
                               is_training=False)[0]
    assert tw.gradients(y, mean) == [None]
