"""``tw.layers.conv2d_transpose`` / ``Conv2DTranspose`` against a numpy scatter reference:
values and output shapes for both paddings, kernel layout and names, reuse, gradients, and
construction errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(11)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def np_conv2d_transpose(x, k, stride, padding):
    """Each input pixel adds ``x[n, i, j, c] * k[:, :, f, c]`` at ``(i*stride, j*stride)``."""
    n, h, w, _ = x.shape
    kh, kw, filters, _ = k.shape
    full = np.zeros((n, (h - 1) * stride + kh + stride, (w - 1) * stride + kw + stride, filters))
    for i in range(h):
        for j in range(w):
            full[:, i * stride:i * stride + kh, j * stride:j * stride + kw] += np.einsum(
                "nc,abfc->nabf", x[:, i, j], k)
    if padding == "valid":
        out_h, out_w, top, left = h * stride + max(kh - stride, 0), \
            w * stride + max(kw - stride, 0), 0, 0
    else:
        out_h, out_w = h * stride, w * stride
        top, left = max(kh - stride, 0) // 2, max(kw - stride, 0) // 2
    return full[:, top:top + out_h, left:left + out_w]


@pytest.mark.parametrize(("kernel", "stride", "padding"),
                         [(4, 2, "valid"), (2, 2, "valid"), (3, 1, "same"), (3, 2, "same"),
                          (1, 2, "valid")])
def test_conv2d_transpose_matches_numpy(kernel, stride, padding):
    x = randn(2, 3, 4, 5)
    inputs = tf.placeholder(tf.float32, [None, 3, 4, 5])
    layer = tf.layers.Conv2DTranspose(6, kernel, strides=stride, padding=padding,
                                      bias_initializer=tf.constant_initializer(0.5))
    y = layer(inputs)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, k = sess.run([y, layer.kernel], {inputs: x})
    want = np_conv2d_transpose(x, k, stride, padding) + 0.5
    assert k.shape == (kernel, kernel, 6, 5)
    assert y.shape.as_list() == [None, *want.shape[1:]]
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_dcgan_generator_shapes_names_and_reuse():
    noise = tf.placeholder(tf.float32, [None, 6, 6, 8])

    def generator(reuse):
        with tf.variable_scope("Generator", reuse=reuse):
            h = tf.layers.conv2d_transpose(noise, 4, 4, strides=2, activation=tf.nn.tanh)
            return tf.layers.conv2d_transpose(h, 1, 2, strides=2)

    out = generator(False)
    assert out.shape.as_list() == [None, 28, 28, 1]
    generator(True)
    assert [v.name for v in tf.trainable_variables()] == [
        "Generator/conv2d_transpose/kernel:0", "Generator/conv2d_transpose/bias:0",
        "Generator/conv2d_transpose_1/kernel:0", "Generator/conv2d_transpose_1/bias:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(out, {noise: randn(3, 6, 6, 8)})
    assert got.shape == (3, 28, 28, 1)


def test_unknown_spatial_size_comes_from_the_runtime_shape():
    inputs = tf.placeholder(tf.float32, [None, None, None, 2])
    y = tf.layers.conv2d_transpose(inputs, 3, 3, strides=2, use_bias=False)
    assert y.shape.as_list() == [None, None, None, 3]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(y, {inputs: randn(1, 5, 2, 2)})
    assert got.shape == (1, 11, 5, 3)


def test_gradients_reach_the_kernel_and_the_inputs():
    x = tf.constant(randn(1, 2, 2, 1))
    layer = tf.layers.Conv2DTranspose(1, 2, strides=2, use_bias=False)
    loss = tf.reduce_sum(layer(x))
    dk, dx = tf.gradients(loss, [layer.kernel, x])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_dk, got_dx, k, xv = sess.run([dk, dx, layer.kernel, x])
    # Stride 2 with a 2x2 kernel: each input pixel touches its own 2x2 output block once.
    np.testing.assert_allclose(got_dk, np.full((2, 2, 1, 1), xv.sum()), rtol=1e-5)
    np.testing.assert_allclose(got_dx, np.full((1, 2, 2, 1), k.sum()), rtol=1e-5)


def test_construction_errors():
    with pytest.raises(ValueError, match="expected ndim=4"):
        tf.layers.conv2d_transpose(tf.ones([2, 3, 3]), 2, 3)
    with pytest.raises(ValueError, match="channel dimension"):
        tf.layers.conv2d_transpose(tf.placeholder(tf.float32, [1, 3, 3, None]), 2, 3)
    with pytest.raises(TypeError, match="non-floating"):
        tf.layers.conv2d_transpose(tf.ones([1, 3, 3, 1], tf.int32), 2, 3)
    with pytest.raises(ValueError, match="padding"):
        tf.layers.Conv2DTranspose(2, 3, padding="full")
