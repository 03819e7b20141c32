"""Second-order gradients (the ``*_grad_grad`` gradient modules, ``MaxPoolGradGrad``,
``RandomGammaGrad``, ``tw.hessians``): each first derivative built by ``tw.gradients`` is
differentiated again and checked against finite differences of itself."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _fresh_graph() -> None:
    tf.reset_default_graph()


def _away_from(points: list[float], shape: tuple[int, ...]) -> np.ndarray:
    """Values at least 0.3 from every kink in `points`, so finite differences stay on a side."""
    x = RNG.uniform(-3.0, 8.0, shape)
    for p in points:
        x = np.where(np.abs(x - p) < 0.3, p + 0.5, x)
    return x


def _double_backprop_error(forward: Callable[[tf.Tensor], tf.Tensor], x0: np.ndarray) -> float:
    """Error of d/d(x, w) of ``gradients(forward(x), x, grad_ys=w)``."""
    shape = list(x0.shape)
    x = tf.placeholder(tf.float64, shape)
    y = forward(x)
    w = tf.placeholder(tf.float64, y.shape.as_list())
    g = tf.gradients(y, x, grad_ys=w)[0]
    w0 = RNG.uniform(0.5, 1.5, y.shape.as_list())
    with tf.Session():
        pairs = tf.test.compute_gradient([x, w], [shape, w0.shape], g, shape,
                                         x_init_value=[x0, w0], delta=1e-6)
    return max(float(np.max(np.abs(t - n))) for t, n in pairs)


@pytest.mark.parametrize("fn, kinks", [
    (tf.nn.relu, [0.0]), (tf.nn.relu6, [0.0, 6.0]), (tf.nn.elu, [0.0]), (tf.nn.selu, [0.0]),
    (lambda x: tf.nn.leaky_relu(x, alpha=0.3), [0.0]), (tf.nn.softplus, []),
    (tf.sigmoid, []), (tf.tanh, []),
])
def test_activation_second_derivatives(fn: Callable[..., tf.Tensor], kinks: list[float]) -> None:
    assert _double_backprop_error(fn, _away_from(kinks, (3, 4)) / 2) < 1e-6


@pytest.mark.parametrize("fn", [tf.sqrt, tf.math.rsqrt, tf.math.reciprocal])
def test_power_second_derivatives(fn: Callable[..., tf.Tensor]) -> None:
    assert _double_backprop_error(fn, RNG.uniform(0.5, 2.0, (2, 3))) < 1e-5


def test_second_derivative_values_match_closed_forms() -> None:
    x0 = np.array([-1.5, -0.2, 0.4, 2.0])
    x = tf.constant(x0)
    curvatures = {
        tf.sigmoid: lambda v: (s := 1 / (1 + np.exp(-v))) * (1 - s) * (1 - 2 * s),
        tf.tanh: lambda v: -2 * np.tanh(v) * (1 - np.tanh(v) ** 2),
        tf.nn.softplus: lambda v: np.exp(-v) / (1 + np.exp(-v)) ** 2,
        tf.nn.elu: lambda v: np.where(v < 0, np.exp(v), 0.0),
        tf.nn.relu: lambda v: np.zeros_like(v),
    }
    with tf.Session() as s:
        for fn, ref in curvatures.items():
            second = tf.gradients(tf.gradients(tf.reduce_sum(fn(x)), x)[0], x)[0]
            value = s.run(second)
            assert value.dtype == np.float64
            np.testing.assert_allclose(value, ref(x0), atol=1e-12)


def test_bias_add_grad_gradient_both_layouts() -> None:
    x0 = RNG.normal(size=(2, 3, 4, 5))
    for data_format, channels in (("NHWC", 5), ("NCHW", 3)):
        tf.reset_default_graph()
        x, b = tf.constant(x0), tf.constant(np.zeros(channels))
        w = tf.placeholder(tf.float64, [2, 3, 4, 5])
        gb = tf.gradients(tf.nn.bias_add(x, b, data_format=data_format), b, grad_ys=w)[0]
        with tf.Session():
            err = tf.test.compute_gradient_error(w, [2, 3, 4, 5], gb, [channels],
                                                 x_init_value=x0)
        assert err < 1e-8


def _pool_input() -> np.ndarray:
    # distinct values, so the maxima do not move under finite differences
    return RNG.permutation(2 * 5 * 5 * 3).reshape(2, 5, 5, 3).astype(np.float64) / 10


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_max_pool_grad_and_grad_grad_gradients(padding: str) -> None:
    x0 = _pool_input()
    x = tf.constant(x0)
    y = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], padding)
    out = y.shape.as_list()
    w = tf.placeholder(tf.float64, out)
    g = tf.gradients(y, x, grad_ys=w)[0]  # MaxPoolGrad
    u = tf.placeholder(tf.float64, list(x0.shape))
    h = tf.gradients(g, w, grad_ys=u)[0]  # MaxPoolGradGrad
    assert h.op.type == "MaxPoolGradGrad" and h.shape.as_list() == out
    gx = tf.gradients(g, x, grad_ys=u)[0]
    w0, u0 = RNG.normal(size=out), RNG.normal(size=x0.shape)
    with tf.Session() as s:
        assert tf.test.compute_gradient_error(w, out, g, list(x0.shape), x_init_value=w0) < 1e-8
        assert tf.test.compute_gradient_error(u, list(x0.shape), h, out, x_init_value=u0) < 1e-8
        gv, hv, gxv = s.run([g, h, gx], {w: w0, u: u0})
    # the two ops are transposes: <MaxPoolGrad(w), u> == <w, MaxPoolGradGrad(u)>
    np.testing.assert_allclose(np.sum(gv * u0), np.sum(w0 * hv))
    np.testing.assert_array_equal(gxv, np.zeros_like(x0))


def test_max_pool_grad_grad_matches_numpy() -> None:
    x0 = _pool_input()
    u0 = RNG.normal(size=x0.shape)
    x = tf.constant(x0)
    y = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    h = tf.raw_ops.MaxPoolGradGrad(orig_input=x, orig_output=y, grad=tf.constant(u0),
                                   ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
    windows = x0[:, :4, :4].reshape(2, 2, 2, 2, 2, 3).transpose(0, 1, 3, 2, 4, 5)
    picks = u0[:, :4, :4].reshape(2, 2, 2, 2, 2, 3).transpose(0, 1, 3, 2, 4, 5)
    first = windows.reshape(2, 2, 2, 4, 3).argmax(axis=3)[:, :, :, None]
    want = np.take_along_axis(picks.reshape(2, 2, 2, 4, 3), first, axis=3)[:, :, :, 0]
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(h), want)
    with pytest.raises(ValueError):
        tf.raw_ops.MaxPoolGradGrad(orig_input=x, orig_output=y, grad=tf.constant(u0[:, :3]),
                                   ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")


def test_avg_pool_grad_gradient() -> None:
    x = tf.constant(RNG.normal(size=(1, 5, 5, 2)))
    y = tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
    out = y.shape.as_list()
    w = tf.placeholder(tf.float64, out)
    g = tf.gradients(y, x, grad_ys=w)[0]
    with tf.Session():
        err = tf.test.compute_gradient_error(w, out, g, [1, 5, 5, 2],
                                             x_init_value=RNG.normal(size=out))
    assert err < 1e-8


def test_strided_slice_and_mirror_pad_grad_gradients() -> None:
    x = tf.constant(RNG.normal(size=(4, 5)))
    for y in (x[1:4, ::2], tf.pad(x, [[1, 2], [2, 1]], "REFLECT"),
              tf.pad(x, [[1, 1], [0, 2]], "SYMMETRIC")):
        out = y.shape.as_list()
        w = tf.placeholder(tf.float64, out)
        g = tf.gradients(y, x, grad_ys=w)[0]
        with tf.Session():
            err = tf.test.compute_gradient_error(w, out, g, [4, 5],
                                                 x_init_value=RNG.normal(size=out))
        assert err < 1e-8


@pytest.mark.parametrize("forward", ["conv2d", "depthwise"])
def test_convolution_backprop_gradients(forward: str) -> None:
    x0, f0 = RNG.normal(size=(1, 5, 5, 2)), RNG.normal(size=(3, 3, 2, 2))
    x, f = tf.placeholder(tf.float64, [1, 5, 5, 2]), tf.placeholder(tf.float64, [3, 3, 2, 2])
    if forward == "conv2d":
        y = tf.nn.conv2d(x, f, [1, 2, 2, 1], "SAME")
    else:
        y = tf.nn.depthwise_conv2d_native(x, f, [1, 2, 2, 1], "SAME")
    out = y.shape.as_list()
    w = tf.placeholder(tf.float64, out)
    gx, gf = tf.gradients(y, [x, f], grad_ys=w)
    w0 = RNG.normal(size=out)
    with tf.Session():
        for g, shape in ((gx, [1, 5, 5, 2]), (gf, [3, 3, 2, 2])):
            pairs = tf.test.compute_gradient([x, f, w], [[1, 5, 5, 2], [3, 3, 2, 2], out], g,
                                             shape, x_init_value=[x0, f0, w0])
            assert max(float(np.max(np.abs(t - n))) for t, n in pairs) < 1e-7


def _critic(x: tf.Tensor) -> tf.Tensor:
    with tf.variable_scope("critic", reuse=tf.AUTO_REUSE):
        f = tf.get_variable("f", initializer=tf.constant(RNG.normal(size=(3, 3, 1, 2)) * 0.5))
        w = tf.get_variable("w", initializer=tf.constant(RNG.normal(size=(18, 1)) * 0.5))
        b = tf.get_variable("b", initializer=tf.constant(np.zeros(1)))
    h = tf.nn.leaky_relu(tf.nn.conv2d(x, f, [1, 2, 2, 1], "SAME"), alpha=0.2)
    return tf.matmul(tf.reshape(h, [-1, 18]), w) + b


def test_wgan_gp_gradient_penalty_trains_and_matches_finite_differences() -> None:
    x = tf.constant(RNG.normal(size=(4, 6, 6, 1)))
    scores = _critic(x)
    slopes = tf.gradients(scores, x)[0]
    norms = tf.sqrt(tf.reduce_sum(tf.square(slopes), axis=[1, 2, 3]) + 1e-12)
    penalty = tf.reduce_mean(tf.square(norms - 1.0))
    loss = tf.reduce_mean(scores) + 10.0 * penalty
    variables = tf.trainable_variables()
    train = tf.train.GradientDescentOptimizer(1e-3).minimize(loss)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for v in variables:
            shape = v.shape.as_list()
            err = tf.test.compute_gradient_error(v, shape, penalty, [],
                                                 x_init_value=s.run(v))
            assert err < 1e-6, v.name
        before = s.run(loss)
        for _ in range(5):
            s.run(train)
        after = s.run(loss)
    assert np.isfinite(after) and after < before


def test_hessians_of_a_quadratic_form() -> None:
    a = RNG.normal(size=(3, 3))
    x = tf.Variable(np.array([0.5, -1.0, 2.0]))
    y = tf.reduce_sum(x * tf.linalg.matvec(tf.constant(a), x))
    m = tf.placeholder(tf.float64, [2, 2])
    z = tf.reduce_sum(tf.matmul(m, m) * tf.constant(a[:2, :2]))
    hx, = tf.hessians(y, x)
    hm, = tf.hessians(z, m)
    assert hx.shape.as_list() == [3, 3] and hm.shape.as_list() == [2, 2, 2, 2]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        np.testing.assert_allclose(s.run(hx), a + a.T, atol=1e-12)
        hm_value = s.run(hm, {m: RNG.normal(size=(2, 2))})
    # z = sum_ij (m m)_ij a_ij; d2z/dm_pq dm_rs = a_ps [q == r] + a_rq [s == p]
    want = np.zeros((2, 2, 2, 2))
    for p, q, r, t in np.ndindex(2, 2, 2, 2):
        want[p, q, r, t] = a[p, t] * (q == r) + a[r, q] * (t == p)
    np.testing.assert_allclose(hm_value, want, atol=1e-12)
    with pytest.raises(ValueError, match="statically-known"):
        tf.hessians(y, tf.placeholder(tf.float64))


@pytest.mark.parametrize("make", [
    lambda: (lambda x: (x, x))(tf.placeholder(tf.float32, (10, 10))),  # d(dx/dx)/dx is None
    lambda: (tf.reduce_sum(tf.constant([1.0, 2.0]) ** 2), tf.constant(1.0)),  # y needs no x
])
def test_hessians_of_undefined_second_derivatives_raise_as_tf(make) -> None:
    # gradients_test.testHessianInvalidDimension: TF's loop cannot write a None derivative.
    ys, xs = make()
    with pytest.raises(ValueError, match="None values not supported"):
        tf.hessians(ys, xs)


def test_random_gamma_gradient_is_the_implicit_reparameterization() -> None:
    alpha = tf.constant(np.array([0.7, 2.0, 5.0]))
    samples = tf.random_gamma([40000], alpha, dtype=tf.float64, seed=3)
    # E[x] = alpha and E[x^2] = alpha (alpha + 1), so their pathwise derivatives average to
    # 1 and 2 alpha + 1
    d_mean = tf.gradients(tf.reduce_mean(samples, 0), alpha)[0]
    d_square = tf.gradients(tf.reduce_mean(tf.square(samples), 0), alpha)[0]
    with tf.Session() as s:
        mean, square = s.run([d_mean, d_square])
    assert mean.dtype == np.float64 and mean.shape == (3,)
    np.testing.assert_allclose(mean, 1.0, rtol=0.03)
    np.testing.assert_allclose(square, 2 * np.array([0.7, 2.0, 5.0]) + 1, rtol=0.04)


def test_random_gamma_grad_op_matches_cdf_finite_differences() -> None:
    a0, x0 = np.array([0.5, 1.0, 3.0, 10.0]), np.array([0.2, 1.5, 2.0, 12.0])
    a, x = tf.constant(a0), tf.constant(x0)
    got = tf.raw_ops.RandomGammaGrad(alpha=a, sample=x)
    h = 1e-5
    cdf_slope_a = (tf.math.igamma(a + h, x) - tf.math.igamma(a - h, x)) / (2 * h)
    cdf_slope_x = (tf.math.igamma(a, x + h) - tf.math.igamma(a, x - h)) / (2 * h)
    with tf.Session() as s:
        value, ref = s.run([got, -cdf_slope_a / cdf_slope_x])
    np.testing.assert_allclose(value, ref, rtol=1e-5)
    with pytest.raises(TypeError):
        tf.raw_ops.RandomGammaGrad(alpha=tf.constant([1, 2]), sample=tf.constant([1, 2]))
