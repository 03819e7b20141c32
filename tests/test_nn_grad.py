"""Gradients of the nn ops, checked against numerical Jacobians (``tw.test``) and numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(3)


def error(fn, shapes, out_shape, inits=None, dynamic=False):
    xs = [tf.placeholder(tf.float64, [None] * len(s) if dynamic else s) for s in shapes]
    inits = inits or [RNG.uniform(-1, 1, s) for s in shapes]
    return tf.test.compute_gradient_error(xs, shapes, fn(*xs), out_shape, x_init_value=inits,
                                          delta=1e-5)


def away_from_kinks(shape, kinks=(0.0,)):
    """Values at least 0.05 from each kink, where one-sided derivatives differ."""
    x = RNG.uniform(-1.5, 1.5, shape) if 6.0 not in kinks else RNG.uniform(4.5, 7.5, shape)
    for k in kinks:
        x = np.where(np.abs(x - k) < 0.05, x + 0.1, x)
    return x


ACTIVATIONS = {
    "relu": (tf.nn.relu, (0.0,)), "relu6": (tf.nn.relu6, (0.0, 6.0)), "elu": (tf.nn.elu, (0.0,)),
    "selu": (tf.nn.selu, (0.0,)), "softplus": (tf.nn.softplus, ()),
    "softsign": (tf.nn.softsign, (0.0,)), "sigmoid": (tf.nn.sigmoid, ()),
    "tanh": (tf.nn.tanh, ()), "leaky_relu": (lambda x: tf.nn.leaky_relu(x, alpha=0.3), (0.0,)),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_gradients(name: str) -> None:
    fn, kinks = ACTIVATIONS[name]
    assert error(fn, [[3, 4]], [3, 4], [away_from_kinks([3, 4], kinks)]) < 1e-7


def test_relu_gradient_values() -> None:
    x = tf.constant([-1.0, 0.5, 2.0])
    grad = tf.gradients(tf.nn.relu(x) * [1.0, 2.0, 3.0], x)[0]
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(grad), [0.0, 2.0, 3.0])


@pytest.mark.parametrize("fn", [tf.nn.softmax, tf.nn.log_softmax])
def test_softmax_gradients(fn) -> None:
    assert error(fn, [[3, 4]], [3, 4]) < 1e-8
    assert error(fn, [[2, 3, 4]], [2, 3, 4], dynamic=True) < 1e-8


def distributions(shape):
    p = RNG.uniform(0.1, 1, shape)
    return p / p.sum(axis=-1, keepdims=True)


def test_softmax_cross_entropy_gradient_for_logits_and_labels() -> None:
    def fn(logits, labels):
        return tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)

    inits = [RNG.normal(size=[3, 4]), distributions([3, 4])]
    assert error(fn, [[3, 4], [3, 4]], [3], inits) < 1e-8


def test_softmax_cross_entropy_gradient_equals_softmax_minus_labels() -> None:
    logits_np, labels_np = RNG.normal(size=[2, 3]), distributions([2, 3])
    logits = tf.constant(logits_np)
    loss = tf.reduce_sum(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels_np,
                                                                     logits=logits))
    grad = tf.gradients(loss, logits)[0]
    softmax = np.exp(logits_np) / np.exp(logits_np).sum(axis=1, keepdims=True)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(grad), softmax - labels_np, rtol=1e-12)


def test_sparse_softmax_cross_entropy_gradient() -> None:
    labels = tf.constant([1, 0, 3], dtype=tf.int64)

    def fn(logits):
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)

    assert error(fn, [[3, 4]], [3]) < 1e-8
    logits = tf.placeholder(tf.float64, [3, 4])
    loss = fn(logits)
    assert tf.gradients(loss, labels) == [None]


def test_l2_loss_and_bias_add_gradients() -> None:
    assert error(tf.nn.l2_loss, [[3, 4]], []) < 1e-8
    assert error(tf.nn.bias_add, [[2, 3, 4], [4]], [2, 3, 4]) < 1e-8
    assert error(lambda x, b: tf.nn.bias_add(x, b, data_format="NCHW"), [[2, 3, 2, 2], [3]],
                 [2, 3, 2, 2]) < 1e-8


CONVS = [
    ([2, 5, 5, 3], [3, 3, 3, 2], [1, 1, 1, 1], "SAME", [1, 1, 1, 1]),
    ([2, 6, 5, 3], [3, 2, 3, 2], [1, 2, 2, 1], "SAME", [1, 1, 1, 1]),
    ([1, 7, 6, 2], [3, 3, 2, 3], [1, 2, 1, 1], "VALID", [1, 1, 1, 1]),
    ([1, 7, 7, 1], [2, 2, 1, 2], [1, 1, 1, 1], "SAME", [1, 2, 2, 1]),
    ([1, 5, 6, 2], [2, 3, 2, 1], [1, 3, 2, 1], [[0, 0], [1, 2], [0, 1], [0, 0]],
     [1, 1, 1, 1]),
]


@pytest.mark.parametrize("image,kernel,strides,padding,dilations", CONVS, ids=str)
def test_conv2d_gradients(image, kernel, strides, padding, dilations) -> None:
    x = tf.placeholder(tf.float64, image)
    w = tf.placeholder(tf.float64, kernel)
    y = tf.nn.conv2d(x, w, strides, padding, dilations=dilations)
    out = y.shape.as_list()
    inits = [RNG.uniform(-1, 1, image), RNG.uniform(-1, 1, kernel)]
    assert tf.test.compute_gradient_error([x, w], [image, kernel], y, out,
                                          x_init_value=inits, delta=1e-5) < 1e-8


POOLS = [([1, 1, 1, 1], [1, 1, 1, 1], "VALID"), ([1, 2, 2, 1], [1, 2, 2, 1], "SAME"),
         ([1, 3, 3, 1], [1, 2, 2, 1], "SAME"), ([1, 3, 2, 1], [1, 1, 2, 1], "VALID")]


@pytest.mark.parametrize("ksize,strides,padding", POOLS, ids=str)
@pytest.mark.parametrize("pool", [tf.nn.max_pool, tf.nn.avg_pool])
def test_pool_gradients(pool, ksize, strides, padding) -> None:
    x = tf.placeholder(tf.float64, [2, 5, 5, 2])
    y = pool(x, ksize, strides, padding)
    init = RNG.permutation(100).reshape(2, 5, 5, 2) / 10.0  # distinct: one max per window
    assert tf.test.compute_gradient_error(x, [2, 5, 5, 2], y, y.shape.as_list(),
                                          x_init_value=init, delta=1e-5) < 1e-8


def test_max_pool_gradient_routes_to_the_maximum() -> None:
    x = tf.constant(np.array([[1.0, 4.0], [3.0, 2.0]]).reshape(1, 2, 2, 1))
    grad = tf.gradients(tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID") * 5.0, x)[0]
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(grad).reshape(2, 2), [[0, 5], [0, 0]])


def test_backprop_ops_check_shapes_at_run_time() -> None:
    dy = tf.placeholder(tf.float32, [None, None, None, None])
    dx = tf.raw_ops.Conv2DBackpropInput(input_sizes=[1, 4, 4, 2],
                                        filter=tf.zeros([2, 2, 2, 3]), out_backprop=dy,
                                        strides=[1, 1, 1, 1], padding="VALID")
    assert dx.shape.as_list() == [1, 4, 4, 2]
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(dx, {dy: np.zeros((1, 2, 2, 3), np.float32)})


@pytest.mark.parametrize("radius,bias,alpha,beta", [(2, 1.0, 0.5, 0.75), (1, 2.0, 1.0, 0.5)])
def test_lrn_gradient(radius, bias, alpha, beta) -> None:
    x = tf.placeholder(tf.float32, [1, 2, 2, 6])
    y = tf.nn.lrn(x, radius, bias, alpha, beta)
    init = RNG.uniform(-1, 1, [1, 2, 2, 6]).astype(np.float32)
    assert tf.test.compute_gradient_error(x, [1, 2, 2, 6], y, [1, 2, 2, 6],
                                          x_init_value=init, delta=1e-2) < 2e-3
