"""nn ops against numpy references: activations, softmax, cross-entropies, bias, convolution,
pooling, top-k and the ``tw.nn`` composites."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tests.numeric import run

RNG = np.random.default_rng(1234)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def np_log_softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


# -- activations -------------------------------------------------------------------------------

SELU = (1.6732632423543772848170429916717, 1.0507009873554804934193349852946)
ACTIVATIONS = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "elu": lambda x: np.where(x < 0, np.expm1(x), x),
    "selu": lambda x: SELU[1] * np.where(x < 0, SELU[0] * np.expm1(x), x),
    "softplus": lambda x: np.log1p(np.exp(x)),
    "softsign": lambda x: x / (1 + np.abs(x)),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activations_match_numpy(name, dtype):
    x = (randn(4, 5) * 4).astype(dtype)
    t = getattr(tw.nn, name)(x)
    assert t.dtype == tw.as_dtype(dtype) and t.shape == tw.TensorShape([4, 5])
    value = run(t)
    assert value.dtype == dtype
    np.testing.assert_allclose(value, ACTIVATIONS[name](x.astype(np.float64)), rtol=1e-5,
                               atol=1e-6)


def test_relu_on_integers_keeps_dtype():
    x = np.array([-3, 0, 4, 9], np.int32)
    relu, relu6 = run([tw.nn.relu(x), tw.nn.relu6(x)])
    assert relu.dtype == np.int32 and relu.tolist() == [0, 0, 4, 9]
    assert relu6.tolist() == [0, 0, 4, 6]


def test_softplus_is_stable_for_large_magnitudes():
    x = np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0], np.float32)
    value = run(tw.nn.softplus(x))
    assert np.all(np.isfinite(value))
    np.testing.assert_allclose(value, [0.0, np.exp(-30.0), np.log(2), 30.0, 1000.0], rtol=1e-6)


def test_activation_dtype_constraints():
    with pytest.raises(TypeError):
        tw.nn.elu(np.array([1, 2], np.int32))
    with pytest.raises(TypeError):
        tw.nn.softmax(np.array([1, 2], np.int32))


def test_leaky_relu():
    x = randn(3, 4)
    np.testing.assert_allclose(run(tw.nn.leaky_relu(x, alpha=0.1)), np.where(x < 0, 0.1 * x, x),
                               rtol=1e-6)
    ints = tw.nn.leaky_relu(np.array([-2, 3], np.int32))
    assert ints.dtype == tw.float32
    np.testing.assert_allclose(run(ints), [-0.4, 3.0])


# -- softmax and cross-entropies ------------------------------------------------------------------


def test_softmax_and_log_softmax():
    x = randn(6, 7) * 10
    soft, log_soft = run([tw.nn.softmax(x), tw.nn.log_softmax(x)])
    np.testing.assert_allclose(soft.sum(axis=1), np.ones(6), rtol=1e-6)
    np.testing.assert_allclose(log_soft, np_log_softmax(x.astype(np.float64)), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(soft, np.exp(np_log_softmax(x.astype(np.float64))), atol=1e-6)


def test_softmax_on_another_axis_and_half_precision():
    x = randn(3, 4, 5)
    t = tw.nn.softmax(x, axis=1)
    assert t.shape == tw.TensorShape([3, 4, 5])
    np.testing.assert_allclose(run(t), np.exp(np_log_softmax(x, axis=1)), rtol=1e-5)
    np.testing.assert_allclose(run(tw.nn.log_softmax(x, dim=0)), np_log_softmax(x, axis=0),
                               rtol=1e-5, atol=1e-6)
    half = run(tw.nn.softmax(x.astype(np.float16)))
    assert half.dtype == np.float16
    np.testing.assert_allclose(half, np.exp(np_log_softmax(x)), atol=1e-3)


def test_softmax_axis_may_be_a_tensor():
    x = randn(1, 2, 3, 4)
    t = tw.nn.softmax(x, dim=tw.constant(1))  # a constant tensor is read as its value
    assert t.shape == tw.TensorShape([1, 2, 3, 4])
    np.testing.assert_allclose(run(t), np.exp(np_log_softmax(x, axis=1)), rtol=1e-5)
    axis = tw.placeholder_with_default(-3, [])
    t = tw.nn.log_softmax(x, axis=axis)
    assert t.shape == tw.TensorShape([1, 2, 3, 4])
    np.testing.assert_allclose(run(t), np_log_softmax(x, axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run(t, {axis: 2}), np_log_softmax(x, axis=2), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(errors.InvalidArgumentError, match=r"Dimension \(7\) must be in"):
        tw.nn.softmax(x, axis=tw.constant(7))


def test_softmax_argument_errors():
    with pytest.raises(ValueError, match="at least rank 1"):
        tw.nn.softmax(np.float32(1.0))
    with pytest.raises(ValueError, match="both 'axis' and 'dim'"):
        tw.nn.softmax(randn(2, 2), axis=0, dim=0)
    with pytest.raises(errors.InvalidArgumentError, match="must be in the range"):
        tw.nn.softmax(randn(2, 2), axis=2)


def test_softmax_cross_entropy_matches_formula():
    logits = randn(5, 4) * 3
    labels = RNG.dirichlet(np.ones(4), size=5).astype(np.float32)
    expected = -(labels * np_log_softmax(logits.astype(np.float64))).sum(axis=1)
    v1 = tw.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    v2 = tw.nn.softmax_cross_entropy_with_logits_v2(labels, logits)
    assert v1.shape == tw.TensorShape([5]) and v1.dtype == tw.float32
    a, b = run([v1, v2])
    np.testing.assert_allclose(a, expected, rtol=1e-5)
    np.testing.assert_allclose(b, expected, rtol=1e-5)


def test_softmax_cross_entropy_raw_op_outputs_backprop():
    logits, labels = randn(3, 4), RNG.dirichlet(np.ones(4), size=3).astype(np.float32)
    loss, backprop = tw.raw_ops.SoftmaxCrossEntropyWithLogits(features=logits, labels=labels)
    assert backprop.shape == tw.TensorShape([3, 4])
    _, grad = run([loss, backprop])
    np.testing.assert_allclose(grad, np.exp(np_log_softmax(logits)) - labels, atol=1e-6)


def test_softmax_cross_entropy_over_rank_3_and_other_axis():
    logits = randn(2, 3, 5)
    labels = RNG.dirichlet(np.ones(5), size=(2, 3)).astype(np.float32)
    t = tw.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    assert t.shape == tw.TensorShape([2, 3])
    np.testing.assert_allclose(run(t), -(labels * np_log_softmax(logits)).sum(-1), rtol=1e-5)
    moved = np.moveaxis(labels, -1, 1)
    t = tw.nn.softmax_cross_entropy_with_logits_v2(labels=moved, logits=np.moveaxis(logits, -1, 1),
                                                   axis=1)
    assert t.shape == tw.TensorShape([2, 3])
    np.testing.assert_allclose(run(t), -(labels * np_log_softmax(logits)).sum(-1), rtol=1e-5)


def test_cross_entropies_with_unknown_leading_dims():
    logits = tw.placeholder(tw.float32, [None, 3, 5])
    labels = tw.placeholder(tw.float32, [None, 3, 5])
    classes = tw.placeholder(tw.int64, [None, 3])
    dense = tw.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    sparse = tw.nn.sparse_softmax_cross_entropy_with_logits(labels=classes, logits=logits)
    assert dense.shape == sparse.shape == tw.TensorShape([None, 3])
    x, c = randn(2, 3, 5), RNG.integers(0, 5, (2, 3))
    d, s = run([dense, sparse], {logits: x, labels: np.eye(5, dtype=np.float32)[c], classes: c})
    expected = -np.take_along_axis(np_log_softmax(x), c[..., None], -1)[..., 0]
    np.testing.assert_allclose(d, expected, rtol=1e-5)
    np.testing.assert_allclose(s, expected, rtol=1e-5)


def test_softmax_cross_entropy_argument_errors():
    logits = randn(2, 3)
    with pytest.raises(ValueError, match="named arguments"):
        tw.nn.softmax_cross_entropy_with_logits(logits, logits)
    with pytest.raises(ValueError, match="Both labels and logits"):
        tw.nn.softmax_cross_entropy_with_logits(logits=logits)
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
        tw.nn.softmax_cross_entropy_with_logits_v2(labels=randn(2, 4), logits=logits)
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tw.raw_ops.SoftmaxCrossEntropyWithLogits(features=logits, labels=randn(2, 4))


def test_softmax_cross_entropy_broadcasts_labels_like_tf():
    # xent_op_test.testShapeBroadcast: one row of labels serves every row of logits.
    logits = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]], np.float32)
    labels = np.array([[0.0, 1.0, 0.0]], np.float32)
    full = np.broadcast_to(labels, logits.shape)
    loss, backprop = tw.raw_ops.SoftmaxCrossEntropyWithLogits(features=logits, labels=labels)
    assert loss.shape == tw.TensorShape([2]) and backprop.shape == tw.TensorShape([2, 3])
    a, b = run([loss, backprop])
    np.testing.assert_allclose(a, -(full * np_log_softmax(logits)).sum(-1), rtol=1e-6)
    np.testing.assert_allclose(b, np.exp(np_log_softmax(logits)) - full, atol=1e-6)
    logits_t, labels_t = tw.constant(logits), tw.constant(labels)
    v2 = tw.nn.softmax_cross_entropy_with_logits_v2(labels=labels_t, logits=logits_t)
    np.testing.assert_allclose(run(v2), a, rtol=1e-6)
    # Each operand's gradient is summed back to its own shape.
    g_logits, g_labels = tw.gradients(v2, [logits_t, labels_t])
    assert g_labels.shape == tw.TensorShape([1, 3])
    gl, gy = run([g_logits, g_labels])
    np.testing.assert_allclose(gl, b, atol=1e-6)
    np.testing.assert_allclose(gy, -np_log_softmax(logits).sum(0, keepdims=True), rtol=1e-5)


def test_softmax_cross_entropy_rank_errors_word_tf():
    xent = tw.raw_ops.SoftmaxCrossEntropyWithLogits
    with pytest.raises(ValueError, match="broadcasted with rank 2, but is rank 3"):
        xent(features=randn(2, 1, 4), labels=randn(2, 1, 4))
    with pytest.raises(ValueError, match="broadcasted with rank 2, but is rank 1"):
        xent(features=randn(4), labels=randn(4))
    a, b = tw.placeholder(tw.float32), tw.placeholder(tw.float32)
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"must be broadcastable: logits_size=\[2, 3\] labels_size=\[3, 3\]"):
        run(xent(features=a, labels=b)[0], {a: randn(2, 3), b: randn(3, 3)})


@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
def test_sparse_softmax_cross_entropy(label_dtype):
    logits = randn(4, 6) * 2
    labels = np.array([0, 5, 2, 2], label_dtype)
    t = tw.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert t.shape == tw.TensorShape([4]) and t.dtype == tw.float32
    expected = -np_log_softmax(logits.astype(np.float64))[np.arange(4), labels]
    np.testing.assert_allclose(run(t), expected, rtol=1e-5)
    _, backprop = tw.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=logits, labels=labels)
    one_hot = np.eye(6)[labels]
    np.testing.assert_allclose(run(backprop), np.exp(np_log_softmax(logits)) - one_hot,
                               atol=1e-6)


def test_sparse_softmax_cross_entropy_rank_3():
    logits, labels = randn(2, 3, 4), np.array([[0, 1, 3], [2, 2, 0]], np.int64)
    t = tw.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert t.shape == tw.TensorShape([2, 3])
    expected = -np.take_along_axis(np_log_softmax(logits), labels[..., None], -1)[..., 0]
    np.testing.assert_allclose(run(t), expected, rtol=1e-5)


def test_sparse_softmax_cross_entropy_errors():
    logits = randn(3, 4)
    with pytest.raises(ValueError, match="Rank mismatch"):
        tw.nn.sparse_softmax_cross_entropy_with_logits(labels=[[0, 1, 2]], logits=logits)
    with pytest.raises(ValueError, match="Shape mismatch"):
        tw.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 1], logits=logits)
    with pytest.raises(TypeError):
        tw.nn.sparse_softmax_cross_entropy_with_logits(labels=[0.0, 1.0, 2.0], logits=logits)
    labels = tw.placeholder(tw.int32, [3])
    loss = tw.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    with pytest.raises(errors.InvalidArgumentError, match="label value of 4 which is outside"):
        run(loss, {labels: [0, 4, 1]})
    with pytest.raises(errors.InvalidArgumentError, match="label value of -1"):
        run(loss, {labels: [0, 1, -1]})


def test_sigmoid_cross_entropy_is_stable():
    logits = np.array([-200.0, -3.0, 0.0, 2.5, 200.0], np.float32)
    labels = np.array([0.0, 1.0, 0.5, 0.0, 1.0], np.float32)
    value = run(tw.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))
    x = logits.astype(np.float64)
    expected = np.maximum(x, 0) - x * labels + np.log1p(np.exp(-np.abs(x)))
    np.testing.assert_allclose(value, expected, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="same shape"):
        tw.nn.sigmoid_cross_entropy_with_logits(labels=labels[:3], logits=logits)


def test_weighted_cross_entropy():
    logits, labels = randn(4, 3) * 3, RNG.uniform(size=(4, 3)).astype(np.float32)
    value = run(tw.nn.weighted_cross_entropy_with_logits(labels=labels, logits=logits,
                                                         pos_weight=2.5))
    sig = 1 / (1 + np.exp(-logits.astype(np.float64)))
    expected = -2.5 * labels * np.log(sig) - (1 - labels) * np.log(1 - sig)
    np.testing.assert_allclose(value, expected, rtol=1e-5)


def test_l2_loss():
    x = randn(3, 5)
    t = tw.nn.l2_loss(x)
    assert t.shape == tw.TensorShape([]) and t.dtype == tw.float32
    np.testing.assert_allclose(run(t), (x.astype(np.float64) ** 2).sum() / 2, rtol=1e-6)
    half = run(tw.nn.l2_loss(x.astype(np.float16)))
    assert half.dtype == np.float16 and half.shape == ()


# -- bias ---------------------------------------------------------------------------------------


def test_bias_add_formats_and_errors():
    x, b = randn(2, 3, 4), randn(4)
    np.testing.assert_allclose(run(tw.nn.bias_add(x, b)), x + b)
    y, c = randn(2, 3, 4, 5), randn(3)
    np.testing.assert_allclose(run(tw.nn.bias_add(y, c, data_format="NCHW")),
                               y + c[None, :, None, None])
    assert run(tw.nn.bias_add(np.array([[1, 2]], np.int32), [10, 20])).tolist() == [[11, 22]]
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tw.nn.bias_add(x, randn(3))
    with pytest.raises(ValueError, match="rank 1"):
        tw.nn.bias_add(x, randn(1, 4))
    with pytest.raises(ValueError, match="N...C"):
        tw.nn.bias_add(x, b, data_format="HWC")


# -- convolution and pooling --------------------------------------------------------------------


def same_pads(size, window, stride, dilation):
    effective = (window - 1) * dilation + 1
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + effective - size, 0)
    return out, total // 2


def naive_conv2d(x, w, strides, padding, dilations):
    n, h, wd, _ = x.shape
    kh, kw, _, cout = w.shape
    (sh, sw), (dh, dw) = strides, dilations
    if padding == "SAME":
        (oh, top), (ow, left) = same_pads(h, kh, sh, dh), same_pads(wd, kw, sw, dw)
    else:
        oh, ow = (h - (kh - 1) * dh - 1) // sh + 1, (wd - (kw - 1) * dw - 1) // sw + 1
        top = left = 0
    out = np.zeros((n, oh, ow, cout))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    r, c = i * sh + a * dh - top, j * sw + b * dw - left
                    if 0 <= r < h and 0 <= c < wd:
                        out[:, i, j, :] += x[:, r, c, :] @ w[a, b]
    return out


CONV_CASES = [
    # (image, filter (kh, kw), strides, padding, dilations)
    ((2, 7, 9), (3, 3), (1, 1), "SAME", (1, 1)),
    ((2, 7, 9), (3, 3), (1, 1), "VALID", (1, 1)),
    ((1, 8, 8), (2, 2), (1, 1), "SAME", (1, 1)),
    ((2, 9, 7), (3, 2), (2, 3), "SAME", (1, 1)),
    ((2, 9, 7), (3, 2), (2, 3), "VALID", (1, 1)),
    ((1, 10, 11), (3, 3), (1, 1), "SAME", (2, 3)),
    ((1, 10, 11), (2, 3), (1, 2), "VALID", (3, 2)),
    ((3, 5, 5), (1, 1), (2, 2), "SAME", (1, 1)),
    ((1, 4, 6), (4, 6), (1, 1), "VALID", (1, 1)),
]


@pytest.mark.parametrize("image,window,strides,padding,dilations", CONV_CASES)
def test_conv2d_matches_naive_loop(image, window, strides, padding, dilations):
    x = randn(*image, 3)
    w = randn(*window, 3, 4)
    t = tw.nn.conv2d(x, w, strides=[1, *strides, 1], padding=padding,
                     dilations=[1, *dilations, 1])
    expected = naive_conv2d(x.astype(np.float64), w.astype(np.float64), strides, padding,
                            dilations)
    assert t.shape == tw.TensorShape(expected.shape)
    value = run(t)
    assert value.dtype == np.float32
    np.testing.assert_allclose(value, expected, rtol=1e-4, atol=1e-4)


def test_conv2d_same_padding_puts_the_extra_row_after():
    # An even window with stride 1 pads one element in total: TF puts it after, not before.
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 4, 1)
    w = np.array([1, 0], np.float32).reshape(1, 2, 1, 1)
    assert run(tw.nn.conv2d(x, w, 1, "SAME")).ravel().tolist() == [0, 1, 2, 3]


def test_conv2d_explicit_padding_dtypes_and_unknown_batch():
    x, w = randn(2, 5, 6, 2, dtype=np.float64), randn(3, 3, 2, 3, dtype=np.float64)
    t = tw.nn.conv2d(x, w, strides=1, padding=[[0, 0], [2, 0], [1, 1], [0, 0]])
    assert t.shape == tw.TensorShape([2, 5, 6, 3]) and t.dtype == tw.float64
    padded = np.pad(x, [(0, 0), (2, 0), (1, 1), (0, 0)])
    np.testing.assert_allclose(run(t), naive_conv2d(padded, w, (1, 1), "VALID", (1, 1)),
                               rtol=1e-10)
    half = run(tw.nn.conv2d(x.astype(np.float16), w.astype(np.float16), 1, "SAME"))
    assert half.dtype == np.float16
    np.testing.assert_allclose(half, naive_conv2d(x, w, (1, 1), "SAME", (1, 1)), atol=5e-2)
    images = tw.placeholder(tw.float32, [None, 6, 6, 2])
    conv = tw.nn.conv2d(images, w.astype(np.float32), [1, 2, 2, 1], "SAME")
    assert conv.shape == tw.TensorShape([None, 3, 3, 3])
    assert run(conv, {images: randn(4, 6, 6, 2)}).shape == (4, 3, 3, 3)


def test_conv2d_construction_errors():
    x, w = randn(1, 4, 4, 3), randn(3, 3, 3, 2)
    with pytest.raises(ValueError, match="NHWC"):
        tw.nn.conv2d(x, w, 1, "SAME", data_format="NCHW")
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        tw.nn.conv2d(x, randn(3, 3, 2, 2), 1, "SAME")
    with pytest.raises(ValueError, match="Negative dimension size"):
        tw.nn.conv2d(x, randn(5, 5, 3, 2), 1, "VALID")
    with pytest.raises(ValueError, match="rank 4"):
        tw.nn.conv2d(randn(4, 4, 3), w, 1, "SAME")
    with pytest.raises(ValueError, match="batch and depth"):
        tw.nn.conv2d(x, w, [2, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="padding must be one of"):
        tw.nn.conv2d(x, w, 1, "FULL")
    with pytest.raises(ValueError, match="strides should be of length"):
        tw.nn.conv2d(x, w, [1, 1, 1], "SAME")
    with pytest.raises(TypeError):
        tw.nn.conv2d(x.astype(np.int32), w.astype(np.int32), 1, "SAME")


def naive_pool(x, window, strides, padding, reduce):
    n, h, w, c = x.shape
    if padding == "SAME":
        (oh, top), (ow, left) = same_pads(h, window[0], strides[0], 1), \
            same_pads(w, window[1], strides[1], 1)
    else:
        oh, ow = (h - window[0]) // strides[0] + 1, (w - window[1]) // strides[1] + 1
        top = left = 0
    out = np.zeros((n, oh, ow, c), x.dtype)
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * strides[0] - top, j * strides[1] - left
            rows = slice(max(r0, 0), min(r0 + window[0], h))
            cols = slice(max(c0, 0), min(c0 + window[1], w))
            out[:, i, j, :] = reduce(x[:, rows, cols, :], axis=(1, 2))
    return out


POOL_CASES = [
    ((2, 5, 7), (2, 2), (2, 2), "SAME"),
    ((2, 5, 7), (2, 2), (2, 2), "VALID"),
    ((1, 7, 7), (3, 3), (2, 2), "SAME"),
    ((1, 6, 9), (3, 2), (1, 3), "SAME"),
    ((1, 6, 9), (3, 2), (1, 3), "VALID"),
    ((2, 4, 4), (4, 4), (1, 1), "SAME"),
]


@pytest.mark.parametrize("image,window,strides,padding", POOL_CASES)
def test_pools_match_naive_loop(image, window, strides, padding):
    x = randn(*image, 3)
    kwargs = {"ksize": [1, *window, 1], "strides": [1, *strides, 1], "padding": padding}
    mx, avg = tw.nn.max_pool(x, **kwargs), tw.nn.avg_pool(x, **kwargs)
    expected_max = naive_pool(x, window, strides, padding, np.max)
    assert mx.shape == tw.TensorShape(expected_max.shape) == avg.shape
    vmax, vavg = run([mx, avg])
    assert vmax.dtype == vavg.dtype == np.float32
    np.testing.assert_array_equal(vmax, expected_max)
    np.testing.assert_allclose(vavg, naive_pool(x, window, strides, padding, np.mean),
                               rtol=1e-5, atol=1e-6)


def test_avg_pool_same_averages_valid_elements_only():
    x = np.ones((1, 3, 3, 1), np.float32)
    assert np.all(run(tw.nn.avg_pool(x, 3, 1, "SAME")) == 1.0)
    x = np.arange(9, dtype=np.float32).reshape(1, 3, 3, 1)
    corner = run(tw.nn.avg_pool(x, 2, 2, "SAME"))[0, :, :, 0]
    np.testing.assert_allclose(corner, [[(0 + 1 + 3 + 4) / 4, (2 + 5) / 2], [(6 + 7) / 2, 8]])


def test_max_pool_integers_and_errors():
    x = -np.arange(16, dtype=np.int32).reshape(1, 4, 4, 1)
    value = run(tw.nn.max_pool(x, 3, 2, "SAME"))
    assert value.dtype == np.int32
    np.testing.assert_array_equal(value, naive_pool(x, (3, 3), (2, 2), "SAME", np.max))
    with pytest.raises(ValueError, match="NHWC"):
        tw.nn.max_pool(randn(1, 4, 4, 1), 2, 2, "SAME", data_format="NCHW")
    with pytest.raises(ValueError, match="depth"):
        tw.nn.avg_pool(randn(1, 4, 4, 2), [1, 1, 1, 2], [1, 1, 1, 2], "SAME")
    with pytest.raises(ValueError, match="ksize cannot be zero"):
        tw.nn.avg_pool(randn(1, 4, 4, 1), 0, 1, "SAME")
    with pytest.raises(ValueError, match="Negative dimension size"):
        tw.nn.avg_pool(randn(1, 2, 2, 1), 3, 1, "VALID")
    with pytest.raises(TypeError):
        tw.nn.avg_pool(x, 2, 2, "SAME")


def test_max_pool_over_depth():
    # pooling_ops_test.testDepthwiseMaxPool*: disjoint channel windows on CPU.
    x = np.arange(24, dtype=np.float32).reshape(1, 2, 2, 6)
    t = tw.nn.max_pool(x, [1, 1, 1, 2], [1, 1, 1, 2], "VALID")
    assert t.shape == tw.TensorShape([1, 2, 2, 3])
    np.testing.assert_array_equal(run(t), x.reshape(1, 2, 2, 3, 2).max(-1))
    t = tw.nn.max_pool(x, [1, 1, 1, 3], [1, 1, 1, 3], "SAME")
    np.testing.assert_array_equal(run(t), x.reshape(1, 2, 2, 2, 3).max(-1))


@pytest.mark.parametrize(("ksize", "strides", "message"), [
    ([1, 1, 1, 4], [1, 1, 1, 4], "evenly divide the input depth"),
    ([1, 1, 1, 2], [1, 1, 1, 1], "depth window to equal the depth stride"),
    ([1, 2, 2, 2], [1, 1, 1, 2], "exactly one of pooling across depth"),
])
def test_max_pool_over_depth_errors(ksize, strides, message):
    t = tw.nn.max_pool(np.zeros((1, 2, 2, 6), np.float32), ksize, strides, "VALID")
    with pytest.raises(errors.UnimplementedError, match=message):
        run(t)


def test_max_pool_over_depth_has_no_gradient_kernel():
    x = tw.constant(np.zeros((1, 2, 2, 4), np.float32))
    grad = tw.gradients(tw.nn.max_pool(x, [1, 1, 1, 2], [1, 1, 1, 2], "VALID"), x)[0]
    with pytest.raises(errors.UnimplementedError, match="not yet supported on the depth"):
        run(grad)


def test_max_pool_v2_reads_ksize_and_strides_when_run():
    x = randn(1, 4, 4, 2)
    ksize, strides = tw.placeholder(tw.int32, [4]), tw.placeholder(tw.int32, [4])
    t = tw.raw_ops.MaxPoolV2(input=x, ksize=ksize, strides=strides, padding="SAME")
    assert t.shape.ndims is None  # unknown until the window is fed
    feed = {ksize: [1, 3, 3, 1], strides: [1, 2, 2, 1]}
    np.testing.assert_array_equal(run(t, feed), naive_pool(x, (3, 3), (2, 2), "SAME", np.max))
    # nn.max_pool with a tensor ksize builds the same op; constants give the static shape.
    t = tw.nn.max_pool(x, ksize=tw.constant([1, 2, 2, 1]), strides=[1, 2, 2, 1],
                       padding="VALID")
    assert t.op.type == "MaxPoolV2" and t.shape == tw.TensorShape([1, 2, 2, 2])
    np.testing.assert_array_equal(run(t), naive_pool(x, (2, 2), (2, 2), "VALID", np.max))


def test_max_pool_v2_gradient_matches_max_pool():
    x = tw.constant(randn(1, 4, 4, 2))
    ksize = tw.placeholder_with_default(np.array([1, 2, 2, 1], np.int32), [4])
    v2 = tw.raw_ops.MaxPoolV2(input=x, ksize=ksize, strides=[1, 1, 1, 1], padding="VALID")
    v1 = tw.nn.max_pool(x, [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
    g2, g1 = tw.gradients(v2, x)[0], tw.gradients(v1, x)[0]
    assert g2.op.type == "MaxPoolGradV2"
    a, b = run([g2, g1])
    np.testing.assert_array_equal(a, b)


# -- top-k ---------------------------------------------------------------------------------------


def test_top_k_values_indices_and_ties():
    x = np.array([[1, 5, 3, 5, 2], [0, 0, 0, 1, 0]], np.float32)
    values, indices = tw.nn.top_k(x, k=3)
    assert values.shape == indices.shape == tw.TensorShape([2, 3])
    assert indices.dtype == tw.int32
    v, i = run([values, indices])
    np.testing.assert_array_equal(v, [[5, 5, 3], [1, 0, 0]])
    np.testing.assert_array_equal(i, [[1, 3, 2], [3, 0, 1]])  # ties: lower index first
    ints = run(tw.nn.top_k(np.array([7, -2, 9, 7], np.int64), 2).values)
    assert ints.dtype == np.int64 and ints.tolist() == [9, 7]


def test_top_k_errors():
    with pytest.raises(ValueError, match="k = 5"):
        tw.nn.top_k(randn(2, 3), k=5)
    with pytest.raises(ValueError, match="at least rank 1"):
        tw.nn.top_k(np.float32(1), k=1)
    k = tw.placeholder(tw.int32, [])
    values, _ = tw.nn.top_k(randn(2, 3), k=k)
    assert values.shape == tw.TensorShape([2, None])
    assert run(values, {k: 2}).shape == (2, 2)
    with pytest.raises(errors.InvalidArgumentError, match="at least k columns"):
        run(values, {k: 4})


def test_in_top_k():
    predictions = np.array([[0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.5, np.nan, 0.2]], np.float32)
    targets = np.array([1, 0, 0], np.int32)
    t = tw.nn.in_top_k(predictions, targets, 2)
    assert t.dtype == tw.bool and t.shape == tw.TensorShape([3])
    assert run(t).tolist() == [True, True, False]  # a non-finite row is never "in top k"
    assert run(tw.nn.in_top_k(predictions, np.array([2, 1, 5], np.int64), 1)).tolist() == \
        [False, False, False]


# -- composites ----------------------------------------------------------------------------------


def test_dropout_keeps_and_scales():
    x = np.ones((200, 500), np.float32)
    t = tw.nn.dropout(x, keep_prob=0.75, seed=11)
    assert t.shape == tw.TensorShape([200, 500]) and t.dtype == tw.float32
    first, second = run(t), run(t)
    assert set(np.unique(first).tolist()) == {0.0, np.float32(1 / 0.75)}
    assert abs((first != 0).mean() - 0.75) < 0.01
    np.testing.assert_array_equal(first, second)  # a seeded op repeats in a new session
    rate = run(tw.nn.dropout(x, rate=0.25, seed=11))
    assert abs((rate != 0).mean() - 0.75) < 0.01


def test_dropout_noise_shape_and_no_op():
    x = np.ones((50, 8), np.float32)
    value = run(tw.nn.dropout(x, keep_prob=0.5, noise_shape=[50, 1], seed=1))
    assert np.all(value == value[:, :1])  # one decision per row
    t = tw.constant(x)
    assert tw.nn.dropout(t, keep_prob=1.0) is t
    assert tw.nn.dropout(t, rate=0.0) is t


def test_dropout_errors():
    with pytest.raises(ValueError, match="range \\(0, 1\\]"):
        tw.nn.dropout(randn(2), keep_prob=0.0)
    with pytest.raises(ValueError, match="range \\[0, 1\\)"):
        tw.nn.dropout(randn(2), rate=1.0)
    with pytest.raises(ValueError, match="floating point"):
        tw.nn.dropout(np.array([1, 2], np.int32), keep_prob=0.5)
    with pytest.raises(ValueError, match="provide a rate"):
        tw.nn.dropout(randn(2))


def test_l2_normalize():
    x = randn(3, 4)
    value = run(tw.nn.l2_normalize(x, axis=1))
    np.testing.assert_allclose(value, x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(run(tw.nn.l2_normalize(np.zeros(3, np.float32))), np.zeros(3))


def test_moments():
    x = randn(4, 5, 6)
    mean, variance = tw.nn.moments(x, axes=[0, 1])
    assert mean.shape == variance.shape == tw.TensorShape([6])
    m, v = run([mean, variance])
    np.testing.assert_allclose(m, x.mean(axis=(0, 1)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(v, x.var(axis=(0, 1)), rtol=1e-5)
    mean, _ = tw.nn.moments(x, axes=[2], keepdims=True)
    assert mean.shape == tw.TensorShape([4, 5, 1])


def test_batch_normalization():
    x, mean, var = randn(4, 3), randn(3), np.abs(randn(3)) + 0.5
    offset, scale = randn(3), randn(3)
    value = run(tw.nn.batch_normalization(x, mean, var, offset, scale, 1e-3))
    np.testing.assert_allclose(value, (x - mean) * scale / np.sqrt(var + 1e-3) + offset,
                               rtol=1e-5, atol=1e-6)
    bare = run(tw.nn.batch_normalization(x, mean, var, None, None, 1e-3))
    np.testing.assert_allclose(bare, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-5, atol=1e-6)


def test_embedding_lookup_single_and_sharded():
    table = randn(10, 3)
    ids = np.array([[1, 9], [4, 4]], np.int32)
    single = tw.nn.embedding_lookup(table, ids)
    assert single.shape == tw.TensorShape([2, 2, 3])
    np.testing.assert_array_equal(run(single), table[ids])
    mod_shards = [table[p::3] for p in range(3)]
    div_shards = [table[:4], table[4:7], table[7:]]
    mod, div = (tw.nn.embedding_lookup(mod_shards, ids),
                tw.nn.embedding_lookup(div_shards, ids, partition_strategy="div"))
    np.testing.assert_array_equal(run(mod), table[ids])
    np.testing.assert_array_equal(run(div), table[ids])
    clipped = run(tw.nn.embedding_lookup(table * 10, ids, max_norm=1.0))
    np.testing.assert_allclose(np.linalg.norm(clipped, axis=-1), np.ones((2, 2)), rtol=1e-5)


def test_xw_plus_b():
    x, w, b = randn(3, 4), randn(4, 2), randn(2)
    np.testing.assert_allclose(run(tw.nn.xw_plus_b(x, w, b)), x @ w + b, rtol=1e-5)


# -- local response normalization and zero_fraction ------------------------------------------------


def np_lrn(x, radius, bias, alpha, beta):
    out = np.empty_like(x, dtype=np.float64)
    channels = x.shape[-1]
    for d in range(channels):
        window = x[..., max(0, d - radius):min(channels, d + radius + 1)].astype(np.float64)
        out[..., d] = x[..., d] / (bias + alpha * (window ** 2).sum(-1)) ** beta
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_local_response_normalization(dtype):
    x = randn(2, 3, 4, 7, dtype=dtype)
    # cifar10's settings, then TF's defaults (through the `lrn` alias)
    cifar = tw.nn.local_response_normalization(x, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75)
    default = tw.nn.lrn(x)
    assert cifar.op.type == "LRN" and default.op.get_attr("depth_radius") == 5
    out, out_default = run([cifar, default])
    tol = 2e-3 if dtype == np.float16 else 1e-5
    assert out.dtype == dtype and out.shape == x.shape
    np.testing.assert_allclose(out, np_lrn(x, 4, 1.0, 0.001 / 9.0, 0.75), rtol=tol, atol=tol)
    np.testing.assert_allclose(out_default, np_lrn(x, 5, 1.0, 1.0, 0.5), rtol=tol, atol=tol)


def test_local_response_normalization_errors():
    with pytest.raises(ValueError, match="rank 4"):
        tw.nn.lrn(tw.ones([2, 3]))
    with pytest.raises(TypeError):
        tw.nn.lrn(tw.ones([1, 1, 1, 2], tw.float64))


def test_zero_fraction():
    value = np.array([[0, 1, 0], [3, 0, 0]], np.int32)
    out = run(tw.nn.zero_fraction(value))
    assert out.dtype == np.float32 and out == pytest.approx(4 / 6)
