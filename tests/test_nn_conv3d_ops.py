"""``tw.nn``'s 3-D convolution and pooling, the N-D ``convolution``/``pool`` dispatchers and the
pooling aliases (`tensorweave.api.nn_conv3d_ops`) against loop-based numpy references, with
their construction-time and run-time errors and numerical gradient checks."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tests.numeric import gradient_error, run, window_geometry

RNG = np.random.default_rng(11)
grad_error = functools.partial(gradient_error, RNG)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def geometry(sizes, window, strides, rates, padding):
    """Per spatial dimension: (output size, padding before), TF's SAME/VALID rule."""
    return [window_geometry(size, k, s, r, padding)
            for size, k, s, r in zip(sizes, window, strides, rates)]


def windows(x, window, strides, rates, padding):
    """Yield (output index, [(window offset, input position or None)]) of channels-last `x`."""
    geo = geometry(x.shape[1:-1], window, strides, rates, padding)
    for idx in itertools.product(*(range(o) for o, _ in geo)):
        members = []
        for off in itertools.product(*(range(k) for k in window)):
            pos = tuple(i * s + o * r - before for i, s, o, r, (_, before)
                        in zip(idx, strides, off, rates, geo))
            inside = all(0 <= p < n for p, n in zip(pos, x.shape[1:-1]))
            members.append((off, pos if inside else None))
        yield idx, members


def out_shape(x, window, strides, rates, padding, channels):
    geo = geometry(x.shape[1:-1], window, strides, rates, padding)
    return (x.shape[0], *(o for o, _ in geo), channels)


def np_conv(x, k, strides, rates, padding):
    """N-D convolution of channels-last `x` with ``[*window, in, out]`` `k`."""
    window = k.shape[:-2]
    out = np.zeros(out_shape(x, window, strides, rates, padding, k.shape[-1]))
    for idx, members in windows(x, window, strides, rates, padding):
        for off, pos in members:
            if pos is not None:
                out[(slice(None), *idx)] += x[(slice(None), *pos)] @ k[off]
    return out


def np_pool(x, window, strides, padding, kind, rates=None):
    rates = rates or [1] * len(window)
    out = np.zeros(out_shape(x, window, strides, rates, padding, x.shape[-1]))
    for idx, members in windows(x, window, strides, rates, padding):
        values = [x[(slice(None), *pos)] for _, pos in members if pos is not None]
        reduce = np.max if kind == "MAX" else np.mean
        out[(slice(None), *idx)] = reduce(np.stack(values), axis=0)
    return out


# -- conv3d -------------------------------------------------------------------------------------


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("strides,rates", [((1, 1, 1), (1, 1, 1)), ((2, 1, 2), (1, 1, 1)),
                                           ((1, 1, 1), (2, 1, 2))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv3d_matches_reference(padding, strides, rates, dtype):
    x, k = randn(2, 5, 4, 6, 3, dtype=dtype), randn(2, 2, 3, 3, 4, dtype=dtype)
    y = tw.nn.conv3d(x, k, [1, *strides, 1], padding, dilations=[1, *rates, 1])
    want = np_conv(x.astype(np.float64), k.astype(np.float64), strides, rates, padding)
    assert y.shape.as_list() == list(want.shape)
    got = run(y)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_conv3d_half_is_computed_wide():
    x, k = randn(1, 3, 3, 3, 2), randn(2, 2, 2, 2, 2)
    got = run(tw.nn.conv3d(x.astype(np.float16), k.astype(np.float16), [1] * 5, "SAME"))
    assert got.dtype == np.float16
    want = np_conv(x.astype(np.float16).astype(np.float64), k.astype(np.float16), [1] * 3,
                   [1] * 3, "SAME")
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)


def test_conv3d_unknown_batch_and_filters_alias():
    x = tw.placeholder(tw.float32, [None, 4, 4, 4, 2])
    y = tw.nn.conv3d(x, filters=randn(3, 3, 3, 2, 5), strides=[1, 2, 2, 2, 1], padding="SAME")
    assert y.shape.as_list() == [None, 2, 2, 2, 5]
    value = randn(3, 4, 4, 4, 2)
    assert run(y, {x: value}).shape == (3, 2, 2, 2, 5)


@pytest.mark.parametrize("padding,strides,rates", [("SAME", (2, 1, 2), (1, 1, 1)),
                                                   ("VALID", (1, 1, 1), (1, 2, 1))])
def test_conv3d_gradients(padding, strides, rates):
    err = grad_error(lambda x, k: tw.nn.conv3d(x, k, [1, *strides, 1], padding,
                                               dilations=[1, *rates, 1]),
                     [(1, 4, 4, 3, 2), (2, 2, 2, 2, 2)])
    assert err < 1e-6


def test_conv3d_backprop_filter_matches_reference():
    x, dy = randn(2, 4, 3, 5, 2), randn(2, 2, 3, 3, 3)
    got = run(tw.nn.conv3d_backprop_filter_v2(x, [2, 2, 2, 2, 3], dy, [1, 2, 1, 2, 1], "SAME"))
    want = np.zeros((2, 2, 2, 2, 3))
    for idx, members in windows(x, (2, 2, 2), (2, 1, 2), (1, 1, 1), "SAME"):
        for off, pos in members:
            if pos is not None:
                want[off] += x[(slice(None), *pos)].T @ dy[(slice(None), *idx)]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert tw.nn.conv3d_backprop_filter is tw.nn.conv3d_backprop_filter_v2


def test_conv3d_backprop_input_takes_int64_sizes():
    k, dy = randn(2, 2, 2, 2, 3), randn(1, 2, 2, 2, 3)
    sizes = np.array([1, 3, 3, 3, 2], np.int64)
    y = tw.raw_ops.Conv3DBackpropInputV2(input_sizes=sizes, filter=k, out_backprop=dy,
                                         strides=[1, 1, 1, 1, 1], padding="VALID")
    assert y.shape.as_list() == [1, 3, 3, 3, 2]
    want = np.zeros((1, 3, 3, 3, 2))
    for idx, members in windows(np.zeros((1, 3, 3, 3, 2)), (2, 2, 2), (1, 1, 1), (1, 1, 1),
                                "VALID"):
        for off, pos in members:
            want[(slice(None), *pos)] += dy[(slice(None), *idx)] @ k[off].T
    np.testing.assert_allclose(run(y), want, rtol=1e-4, atol=1e-5)


def test_conv3d_errors_at_construction():
    x = tw.placeholder(tw.float32, [1, 4, 4, 4, 3])
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tw.nn.conv3d(x, randn(2, 2, 2, 2, 1), [1] * 5, "SAME")
    with pytest.raises(ValueError, match="strides in the batch"):
        tw.nn.conv3d(x, randn(2, 2, 2, 3, 1), [2, 1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="NDHWC"):
        tw.nn.conv3d(x, randn(2, 2, 2, 3, 1), [1] * 5, "SAME", data_format="NCDHW")
    with pytest.raises(ValueError, match="Negative dimension size"):
        tw.nn.conv3d(x, randn(5, 2, 2, 3, 1), [1] * 5, "VALID")
    with pytest.raises(ValueError, match="5 dimensions"):
        tw.nn.conv3d(x, randn(2, 2, 2, 3, 1), [1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="rank 5"):
        tw.nn.conv3d(tw.placeholder(tw.float32, [4, 4, 4, 3]), randn(2, 2, 2, 3, 1), [1] * 5,
                     "SAME")
    with pytest.raises(TypeError):
        tw.nn.conv3d(tw.placeholder(tw.int32, [1, 4, 4, 4, 3]),
                     np.ones((2, 2, 2, 3, 1), np.int32), [1] * 5, "SAME")


# -- conv3d_transpose, conv1d_transpose, atrous_conv2d_transpose ----------------------------------


def adjoint_gap(forward, transpose, x_shape, y_shape):
    """|<forward(x), y> - <x, transpose(y)>|, zero when `transpose` is `forward`'s adjoint."""
    x, y = randn(*x_shape, dtype=np.float64), randn(*y_shape, dtype=np.float64)
    fx, ty = run([forward(x), transpose(y)])
    assert fx.shape == tuple(y_shape) and ty.shape == tuple(x_shape)
    return abs(float(np.sum(fx * y) - np.sum(x * ty)))


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv3d_transpose_is_adjoint_of_conv3d(padding):
    k = randn(2, 3, 2, 4, 3, dtype=np.float64)  # [d, h, w, out, in]
    strides = [1, 2, 1, 2, 1]
    x_shape = (2, 5, 4, 6, 4)
    y_shape = out_shape(np.zeros(x_shape), (2, 3, 2), strides[1:4], (1, 1, 1), padding, 3)
    gap = adjoint_gap(lambda x: tw.nn.conv3d(x, k, strides, padding),
                      lambda y: tw.nn.conv3d_transpose(y, k, list(x_shape), strides, padding),
                      x_shape, y_shape)
    assert gap < 1e-9


def test_conv3d_transpose_gradients_and_static_shape():
    y = tw.nn.conv3d_transpose(tw.placeholder(tw.float32, [None, 2, 2, 2, 3]),
                               randn(2, 2, 2, 4, 3), [5, 4, 4, 4, 4], [1, 2, 2, 2, 1])
    assert y.shape.as_list() == [5, 4, 4, 4, 4]
    err = grad_error(lambda v, k: tw.nn.conv3d_transpose(v, k, [1, 4, 3, 4, 2],
                                                         [1, 2, 1, 2, 1], "SAME"),
                     [(1, 2, 3, 2, 3), (2, 2, 2, 2, 3)])
    assert err < 1e-6


def test_conv3d_transpose_errors():
    k = randn(2, 2, 2, 4, 3)
    with pytest.raises(ValueError, match="input channels does not match"):
        tw.nn.conv3d_transpose(randn(1, 2, 2, 2, 2), k, [1, 4, 4, 4, 4], [1, 2, 2, 2, 1])
    with pytest.raises(ValueError, match="output channels"):
        tw.nn.conv3d_transpose(randn(1, 2, 2, 2, 3), k, [1, 4, 4, 4, 5], [1, 2, 2, 2, 1])
    with pytest.raises(ValueError, match="shape \\(5,\\)"):
        tw.nn.conv3d_transpose(randn(1, 2, 2, 2, 3), k, [1, 4, 4, 4], [1, 2, 2, 2, 1])
    with pytest.raises(ValueError, match="VALID or SAME"):
        tw.nn.conv3d_transpose(randn(1, 2, 2, 2, 3), k, [1, 4, 4, 4, 4], [1, 2, 2, 2, 1],
                               padding="FULL")
    sizes = tw.placeholder(tw.int32, [5])
    y = tw.nn.conv3d_transpose(randn(1, 2, 2, 2, 3), k, sizes, [1, 2, 2, 2, 1])
    with pytest.raises(errors.InvalidArgumentError, match="out_backprop"):
        run(y, {sizes: [1, 9, 9, 9, 4]})


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv1d_transpose_is_adjoint_of_conv1d(padding):
    k = randn(3, 2, 4, dtype=np.float64)  # [w, out, in]
    x_shape = (2, 7, 2)
    y_shape = out_shape(np.zeros(x_shape), (3,), (2,), (1,), padding, 4)
    gap = adjoint_gap(lambda x: tw.nn.conv1d(x, k, 2, padding),
                      lambda y: tw.nn.conv1d_transpose(y, k, list(x_shape), 2, padding),
                      x_shape, y_shape)
    assert gap < 1e-9


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_atrous_conv2d_transpose_is_adjoint_of_atrous_conv2d(padding):
    k = randn(2, 3, 2, 3, dtype=np.float64)  # [h, w, out, in]
    x_shape = (1, 7, 8, 2)
    y_shape = out_shape(np.zeros(x_shape), (2, 3), (1, 1), (2, 2), padding, 3)
    gap = adjoint_gap(lambda x: tw.nn.atrous_conv2d(x, k, 2, padding),
                      lambda y: tw.nn.atrous_conv2d_transpose(y, k, list(x_shape), 2, padding),
                      x_shape, y_shape)
    assert gap < 1e-9
    with pytest.raises(ValueError, match="cannot be less than one"):
        tw.nn.atrous_conv2d_transpose(randn(*y_shape), k, list(x_shape), 0, padding)
    with pytest.raises(ValueError, match="input channels"):
        tw.nn.atrous_conv2d_transpose(randn(1, 7, 8, 5), k, list(x_shape), 2, padding)


# -- 3-D pooling -----------------------------------------------------------------------------------


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("kind", ["MAX", "AVG"])
@pytest.mark.parametrize("ksize,strides", [((2, 2, 2), (2, 2, 2)), ((3, 1, 2), (1, 2, 1))])
def test_pool3d_matches_reference(padding, kind, ksize, strides):
    x = randn(2, 5, 4, 5, 3, dtype=np.float64)
    fn = tw.nn.max_pool3d if kind == "MAX" else tw.nn.avg_pool3d
    y = fn(x, [1, *ksize, 1], [1, *strides, 1], padding)
    want = np_pool(x, ksize, strides, padding, kind)
    assert y.shape.as_list() == list(want.shape)
    got = run(y)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_pool3d_scalar_ksize_and_float32():
    x = randn(1, 4, 4, 4, 2)
    got = run(tw.nn.avg_pool3d(x, 2, 2, "VALID"))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np_pool(x, (2, 2, 2), (2, 2, 2), "VALID", "AVG"),
                               rtol=1e-5)


@pytest.mark.parametrize("kind", ["MAX", "AVG"])
def test_pool3d_gradients(kind):
    fn = tw.nn.max_pool3d if kind == "MAX" else tw.nn.avg_pool3d
    err = grad_error(lambda x: fn(x, [1, 2, 2, 3, 1], [1, 2, 1, 2, 1], "SAME"),
                     [(2, 3, 3, 4, 2)])
    assert err < 1e-6


@pytest.mark.parametrize("kind", ["MAX", "AVG"])
def test_pool3d_second_order(kind):
    """The gradient ops' own gradients (``MaxPool3DGradGrad``, ``AvgPool3D``) with respect to
    the incoming gradient."""
    fn = tw.nn.max_pool3d if kind == "MAX" else tw.nn.avg_pool3d
    x = tw.constant(randn(1, 3, 4, 3, 2, dtype=np.float64))
    y = fn(x, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "SAME")
    shape = y.shape.as_list()
    err = grad_error(lambda g: tw.gradients(y, x, grad_ys=g)[0], [tuple(shape)])
    assert err < 1e-6
    g = tw.placeholder(tw.float64, shape)
    second = tw.gradients(tw.gradients(y, x, grad_ys=g)[0], g, grad_ys=tw.ones_like(x))[0]
    assert second.shape.as_list() == shape


def test_pool3d_errors():
    x = tw.placeholder(tw.float32, [1, 4, 4, 4, 2])
    with pytest.raises(ValueError, match="batch dimension"):
        tw.nn.max_pool3d(x, [2, 2, 2, 2, 1], [1] * 5, "SAME")
    with pytest.raises(ValueError, match="depth dimension"):
        tw.nn.avg_pool3d(x, [1, 2, 2, 2, 2], [1] * 5, "SAME")
    with pytest.raises(ValueError, match="Negative dimension size"):
        tw.nn.max_pool3d(x, [1, 5, 1, 1, 1], [1] * 5, "VALID")
    with pytest.raises(ValueError, match="ksize cannot be zero"):
        tw.nn.max_pool3d(x, [1, 0, 1, 1, 1], [1] * 5, "VALID")
    with pytest.raises(ValueError, match="padding"):
        tw.nn.max_pool3d(x, 2, 2, "FULL")


# -- pooling aliases ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["MAX", "AVG"])
def test_pool1d_and_2d_aliases(kind):
    x1, x2 = randn(2, 7, 3, dtype=np.float64), randn(2, 5, 6, 3, dtype=np.float64)
    if kind == "MAX":
        one, two, v2 = tw.nn.max_pool1d, tw.nn.max_pool2d, tw.nn.max_pool_v2
    else:
        one, two, v2 = tw.nn.avg_pool1d, tw.nn.avg_pool2d, tw.nn.avg_pool_v2
    y1 = one(x1, 3, 2, "SAME")
    y2 = two(x2, [2, 3], [2, 2], "VALID")
    y3 = v2(randn(1, 4, 4, 4, 1, dtype=np.float64), 2, 2, "VALID")
    assert y1.shape.as_list() == [2, 4, 3]
    got1, got2, got3 = run([y1, y2, y3])
    np.testing.assert_allclose(got1, np_pool(x1, (3,), (2,), "SAME", kind), rtol=1e-12)
    np.testing.assert_allclose(got2, np_pool(x2, (2, 3), (2, 2), "VALID", kind), rtol=1e-12)
    assert got3.shape == (1, 2, 2, 2, 1)
    with pytest.raises(ValueError, match="rank 3, 4 or 5"):
        v2(randn(2, 3), 1, 1, "VALID")


# -- convolution and pool ------------------------------------------------------------------------


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("window,strides,rates", [
    ((3,), (2,), (1,)), ((2,), (1,), (3,)),
    ((2, 3), (1, 2), (1, 1)), ((2, 2), (1, 1), (2, 1)),
    ((2, 1, 2), (2, 1, 1), (1, 1, 1)), ((2, 2, 2), (1, 1, 1), (1, 2, 2)),
])
def test_convolution_dispatches_by_rank(padding, window, strides, rates):
    x = randn(2, *([6] * len(window)), 3, dtype=np.float64)
    k = randn(*window, 3, 2, dtype=np.float64)
    y = tw.nn.convolution(x, k, padding, strides=strides, dilation_rate=rates)
    want = np_conv(x, k, strides, rates, padding)
    assert y.shape.as_list() == list(want.shape)
    np.testing.assert_allclose(run(y), want, rtol=1e-10, atol=1e-10)


def test_convolution_gradient_with_dilation():
    err = grad_error(lambda x, k: tw.nn.convolution(x, k, "SAME", dilation_rate=[2, 1]),
                     [(1, 5, 4, 2), (2, 2, 2, 2)])
    assert err < 1e-6


def test_convolution_errors():
    x = tw.placeholder(tw.float32, [1, 6, 6, 3])
    k = randn(2, 2, 3, 2)
    with pytest.raises(ValueError, match="strides > 1 not supported"):
        tw.nn.convolution(x, k, "SAME", strides=[2, 2], dilation_rate=[2, 2])
    with pytest.raises(ValueError, match="len\\(dilation_rate\\)=3 but should be 2"):
        tw.nn.convolution(x, k, "SAME", dilation_rate=[1, 1, 1])
    with pytest.raises(ValueError, match="must be positive"):
        tw.nn.convolution(x, k, "SAME", dilation_rate=[0, 1])
    with pytest.raises(ValueError, match="number of input channels"):
        tw.nn.convolution(x, randn(2, 2, 4, 2), "SAME")
    with pytest.raises(ValueError, match="must have rank 5"):
        tw.nn.convolution(x, randn(2, 2, 2, 3, 2), "SAME")


@pytest.mark.parametrize("kind", ["MAX", "AVG"])
@pytest.mark.parametrize("window,strides", [((3,), (2,)), ((2, 3), (2, 1)),
                                            ((2, 2, 1), (1, 2, 1))])
def test_pool_dispatches_by_rank(kind, window, strides):
    x = randn(2, *([5] * len(window)), 2, dtype=np.float64)
    y = tw.nn.pool(x, window, kind, "SAME", strides=strides)
    np.testing.assert_allclose(run(y), np_pool(x, window, strides, "SAME", kind), rtol=1e-12)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("kind", ["MAX", "AVG"])
def test_pool_with_dilation(padding, kind):
    """TF builds dilated pooling with space-to-batch, whose SAME padding is zeros that the
    windows then include."""
    x = randn(1, 7, 6, 2, dtype=np.float64)
    window, rates = (2, 3), (3, 2)
    y = tw.nn.pool(x, window, kind, padding, dilation_rate=rates)
    pads = [(0, 0)]
    for k, r in zip(window, rates):
        total = (k - 1) * r if padding == "SAME" else 0
        pads.append((total // 2, total - total // 2))
    padded = np.pad(x, pads + [(0, 0)])
    want = np_pool(padded, window, (1, 1), "VALID", kind, rates)
    assert y.shape.as_list() == list(want.shape)
    np.testing.assert_allclose(run(y), want, rtol=1e-12)
    err = grad_error(lambda v: tw.nn.pool(v, window, kind, padding, dilation_rate=rates),
                     [(1, 7, 6, 2)])
    assert err < 1e-6


def test_pool_errors():
    x = tw.placeholder(tw.float32, [1, 6, 6, 3])
    with pytest.raises(ValueError, match="Invalid pooling_type"):
        tw.nn.pool(x, [2, 2], "MIN", "VALID")
    with pytest.raises(ValueError, match="strides > window_shape"):
        tw.nn.pool(x, [2, 2], "MAX", "SAME", strides=[3, 1])
    with pytest.raises(ValueError, match="strides > 1 not supported"):
        tw.nn.pool(x, [2, 2], "MAX", "VALID", strides=[2, 2], dilation_rate=[2, 2])
    with pytest.raises(ValueError, match="must have rank 3"):
        tw.nn.pool(x, [2], "MAX", "VALID")
