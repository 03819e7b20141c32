"""``tw.layers`` against numpy references: values, variable names and scoping, collections and
construction errors; and a TF1-style CNN trained with layers, losses, metrics and a schedule."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(7)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def init_and_run(fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict)


def names(variables):
    return [v.name for v in variables]


def np_conv2d(x, w, stride=1, padding="VALID"):
    kh, kw = w.shape[:2]
    if padding == "SAME":
        n, h, wd, _ = x.shape
        out_h, out_w = -(-h // stride), -(-wd // stride)
        pad_h = max((out_h - 1) * stride + kh - h, 0)
        pad_w = max((out_w - 1) * stride + kw - wd, 0)
        x = np.pad(x, [(0, 0), (pad_h // 2, pad_h - pad_h // 2),
                       (pad_w // 2, pad_w - pad_w // 2), (0, 0)])
    n, h, wd, _ = x.shape
    out_h, out_w = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, out_h, out_w, w.shape[3]))
    for i in range(out_h):
        for j in range(out_w):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, w, axes=[[1, 2, 3], [0, 1, 2]])
    return out


# -- dense ---------------------------------------------------------------------------------------


def test_dense_matches_numpy_and_names_its_variables():
    x = randn(4, 5)
    y = tf.layers.dense(x, 3, activation=tf.nn.relu)
    assert y.name == "dense/Relu:0"
    assert y.shape.as_list() == [4, 3] and y.dtype == tf.float32
    kernel, bias = tf.trainable_variables()
    assert names([kernel, bias]) == ["dense/kernel:0", "dense/bias:0"]
    assert kernel.shape.as_list() == [5, 3] and bias.shape.as_list() == [3]
    out, k, b = init_and_run([y, kernel, bias])
    np.testing.assert_array_equal(b, np.zeros(3, np.float32))
    limit = np.sqrt(6 / (5 + 3))  # glorot-uniform default
    assert np.all(np.abs(k) <= limit) and np.std(k) > 0
    np.testing.assert_allclose(out, np.maximum(x @ k + b, 0), rtol=1e-5, atol=1e-6)


def test_dense_layers_get_unique_names_and_honor_variable_scopes():
    x = tf.placeholder(tf.float32, [None, 4])
    first = tf.layers.dense(x, 2)
    tf.layers.dense(first, 2)
    with tf.variable_scope("model"):
        tf.layers.dense(x, 2, use_bias=False)
    assert first.name == "dense/BiasAdd:0"
    assert names(tf.global_variables()) == [
        "dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0",
        "model/dense/kernel:0"]


def test_dense_reuse_shares_variables():
    x = tf.placeholder(tf.float32, [None, 4])
    a = tf.layers.dense(x, 2, name="fc")
    b = tf.layers.dense(x, 2, name="fc", reuse=True)
    with tf.variable_scope("tower"):
        c = tf.layers.dense(x, 2)
    with tf.variable_scope("tower", reuse=True):
        d = tf.layers.dense(x, 2)
    assert names(tf.global_variables()) == ["fc/kernel:0", "fc/bias:0", "tower/dense/kernel:0",
                                            "tower/dense/bias:0"]
    feed = {x: randn(3, 4)}
    va, vb, vc, vd = init_and_run([a, b, c, d], feed)
    np.testing.assert_array_equal(va, vb)
    np.testing.assert_array_equal(vc, vd)
    with pytest.raises(ValueError, match="fc/kernel already exists"):
        tf.layers.dense(x, 2, name="fc")
    with pytest.raises(ValueError, match="shape"):
        tf.layers.dense(tf.placeholder(tf.float32, [None, 5]), 2, name="fc", reuse=True)


def test_dense_on_rank_3_contracts_the_last_axis():
    x = randn(2, 3, 4)
    y = tf.layers.dense(x, 5, kernel_initializer=tf.constant_initializer(0.5),
                        bias_initializer=tf.constant_initializer(1.0))
    assert y.shape.as_list() == [2, 3, 5]
    np.testing.assert_allclose(init_and_run(y), x @ np.full((4, 5), 0.5) + 1.0, rtol=1e-5)


def test_dense_regularizers_trainable_and_dtype():
    x = randn(3, 4).astype(np.float64)
    y = tf.layers.dense(x, 2, kernel_regularizer=lambda w: tf.reduce_sum(tf.square(w)),
                        bias_regularizer=lambda b: tf.reduce_sum(b) + 1.0,
                        activity_regularizer=lambda out: tf.reduce_sum(tf.abs(out)),
                        trainable=False)
    assert y.dtype == tf.float64
    assert tf.trainable_variables() == []
    kernel, _ = tf.global_variables()
    assert kernel.dtype == tf.float64
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 3 and losses[0].name.startswith("dense/kernel/Regularizer/")
    k_loss, b_loss, act_loss, k, out = init_and_run([*losses, kernel, y])
    np.testing.assert_allclose(k_loss, np.sum(k ** 2))
    np.testing.assert_allclose(b_loss, 1.0)
    np.testing.assert_allclose(act_loss, np.abs(out).sum() / 3)


def test_dense_construction_errors():
    with pytest.raises(ValueError, match="expected min_ndim=2, found ndim=1"):
        tf.layers.dense(randn(3), 2)
    with pytest.raises(ValueError, match="last dimension of the inputs to `Dense` should be"):
        tf.layers.dense(tf.placeholder(tf.float32, [2, None]), 2)
    with pytest.raises(TypeError, match="non-floating point dtype int32"):
        tf.layers.dense(np.ones((2, 2), np.int32), 2)
    with pytest.raises(ValueError, match="positive integer"):
        tf.layers.dense(randn(2, 2), 0)
    assert tf.global_variables() == []


# -- convolution and pooling ---------------------------------------------------------------------


@pytest.mark.parametrize("padding,stride", [("valid", 1), ("same", 1), ("same", 2),
                                            ("VALID", 2)])
def test_conv2d_matches_numpy(padding, stride):
    x = randn(2, 7, 6, 3)
    y = tf.layers.conv2d(x, 4, 3, strides=stride, padding=padding,
                         bias_initializer=tf.constant_initializer(0.25))
    assert y.name == "conv2d/BiasAdd:0"
    kernel, bias = tf.trainable_variables()
    assert names([kernel, bias]) == ["conv2d/kernel:0", "conv2d/bias:0"]
    assert kernel.shape.as_list() == [3, 3, 3, 4]
    out, k = init_and_run([y, kernel])
    expected = np_conv2d(x.astype(np.float64), k, stride, padding.upper()) + 0.25
    assert out.shape == expected.shape and y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_conv2d_names_activation_and_kernel_tuple():
    x = tf.placeholder(tf.float32, [None, 8, 8, 2])
    a = tf.layers.conv2d(x, 3, (3, 1), activation=tf.nn.relu, use_bias=False)
    b = tf.layers.conv2d(a, 3, [1, 3], name="top")
    assert a.name == "conv2d/Relu:0" and b.name == "top/BiasAdd:0"
    assert a.shape.as_list() == [None, 6, 8, 3] and b.shape.as_list() == [None, 6, 6, 3]
    assert names(tf.global_variables()) == ["conv2d/kernel:0", "top/kernel:0", "top/bias:0"]
    assert tf.global_variables()[0].shape.as_list() == [3, 1, 2, 3]


def test_conv2d_construction_errors():
    x = randn(1, 5, 5, 2)
    with pytest.raises(ValueError, match="channels_last"):
        tf.layers.conv2d(x, 2, 3, data_format="channels_first")
    with pytest.raises(ValueError, match="`data_format` argument must be one of"):
        tf.layers.conv2d(x, 2, 3, data_format="NHWC")
    with pytest.raises(ValueError, match='`padding` argument must be one of "valid", "same"'):
        tf.layers.conv2d(x, 2, 3, padding="full")
    with pytest.raises(ValueError, match="`kernel_size` argument must be a tuple of 2"):
        tf.layers.conv2d(x, 2, (3, 3, 3))
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        tf.layers.conv2d(randn(5, 5, 2), 2, 3)
    with pytest.raises(ValueError, match="channel dimension of the inputs should be defined"):
        tf.layers.conv2d(tf.placeholder(tf.float32, [1, 5, 5, None]), 2, 3)
    with pytest.raises(ValueError, match="Negative dimension size"):
        tf.layers.conv2d(x, 2, 7)


@pytest.mark.parametrize("layer,op,reduce", [
    (tf.layers.max_pooling2d, "max_pooling2d/MaxPool:0", np.max),
    (tf.layers.average_pooling2d, "average_pooling2d/AvgPool:0", np.mean),
])
def test_pooling_matches_numpy(layer, op, reduce):
    x = randn(2, 6, 4, 3)
    y = layer(x, 2, 2)
    assert y.name == op and y.shape.as_list() == [2, 3, 2, 3]
    expected = reduce(x.reshape(2, 3, 2, 2, 2, 3), axis=(2, 4))
    np.testing.assert_allclose(init_and_run(y), expected, rtol=1e-6)
    second = layer(x, (3, 2), (1, 2), padding="same")
    assert second.name == op.replace("2d/", "2d_1/") and second.shape.as_list() == [2, 6, 2, 3]
    with pytest.raises(ValueError, match="channels_last"):
        layer(x, 2, 2, data_format="channels_first")
    with pytest.raises(ValueError, match="expected ndim=4"):
        layer(randn(2, 6, 4), 2, 2)


# -- flatten and dropout -------------------------------------------------------------------------


def test_flatten_static_and_dynamic_shapes():
    x = randn(2, 3, 4, 2)
    y = tf.layers.flatten(x)
    assert y.name == "flatten/Reshape:0" and y.shape.as_list() == [2, 24]
    np.testing.assert_array_equal(init_and_run(y), x.reshape(2, 24))
    p = tf.placeholder(tf.float32, [None, None, 2])
    z = tf.layers.flatten(p)
    assert z.shape.as_list() == [None, None]
    np.testing.assert_array_equal(init_and_run(z, {p: x.reshape(2, 12, 2)}), x.reshape(2, 24))
    one = tf.layers.flatten(randn(5))
    assert init_and_run(one).shape == (5, 1)


def test_dropout_training_flag():
    x = np.ones((200, 50), np.float32)
    off = tf.layers.dropout(x, 0.4)
    on = tf.layers.dropout(x, 0.4, training=True, seed=3)
    flag = tf.placeholder(tf.bool, [])
    switched = tf.layers.dropout(x, 0.4, training=flag, seed=3)
    assert off.name == "dropout/Identity:0" and on.shape.as_list() == [200, 50]
    v_off, v_on = init_and_run([off, on])
    np.testing.assert_array_equal(v_off, x)
    assert set(np.unique(v_on)) <= {0.0, np.float32(1 / 0.6)}
    assert abs((v_on == 0).mean() - 0.4) < 0.03
    kept = init_and_run(switched, {flag: False})
    dropped = init_and_run(switched, {flag: True})
    np.testing.assert_array_equal(kept, x)
    assert abs((dropped == 0).mean() - 0.4) < 0.03
    with pytest.raises(TypeError, match="bool"):
        tf.layers.dropout(x, 0.4, training=tf.constant(1))
    with pytest.raises(ValueError, match="rate"):
        tf.layers.dropout(x, 1.5, training=True)


# -- batch normalization -------------------------------------------------------------------------


def test_batch_normalization_training_updates_moving_statistics():
    x = randn(6, 4) * 3 + 2
    y = tf.layers.batch_normalization(x, training=True, momentum=0.9)
    gamma, beta, mean, var = tf.global_variables()
    assert names([gamma, beta, mean, var]) == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0",
        "batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"]
    assert tf.trainable_variables() == [gamma, beta]
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    # TF's layers collect operations, not tensors
    assert len(updates) == 2 and updates[0].name == "batch_normalization/AssignMovingAvg"
    assert all(isinstance(u, tf.Operation) for u in updates)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, _ = sess.run([y, updates])
        moving_mean, moving_var = sess.run([mean, var])
    x64 = x.astype(np.float64)
    expected = (x64 - x64.mean(0)) / np.sqrt(x64.var(0) + 1e-3)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(moving_mean, 0.1 * x64.mean(0), rtol=1e-5)
    # 2-D input: TF's non-fused path, which averages the biased batch variance.
    np.testing.assert_allclose(moving_var, 0.9 + 0.1 * x64.var(0), rtol=1e-5)


def test_batch_normalization_4d_uses_fused_bessel_correction_and_axis():
    x = randn(2, 3, 2, 5)
    y = tf.layers.batch_normalization(x, axis=1, training=True, momentum=0.5, epsilon=0.01)
    _, _, _, var = tf.global_variables()
    assert var.shape.as_list() == [3]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, _ = sess.run([y, tf.get_collection(tf.GraphKeys.UPDATE_OPS)])
        moving_var = sess.run(var)
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=(0, 2, 3), keepdims=True)
    sigma2 = x64.var(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(out, (x64 - mu) / np.sqrt(sigma2 + 0.01), rtol=1e-4, atol=1e-4)
    n = 2 * 2 * 5
    np.testing.assert_allclose(moving_var, 0.5 + 0.5 * sigma2.ravel() * n / (n - 1), rtol=1e-5)


def test_batch_normalization_inference_and_bool_tensor_flag():
    x = randn(5, 3)
    init = tf.constant_initializer
    common = dict(moving_mean_initializer=init([1.0, 2.0, 3.0]),
                  moving_variance_initializer=init([4.0, 1.0, 0.25]),
                  gamma_initializer=init(2.0), beta_initializer=init(0.5))
    frozen = tf.layers.batch_normalization(x, **common)
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    flag = tf.placeholder(tf.bool, [])
    switched = tf.layers.batch_normalization(x, training=flag, **common)
    moving_mean = tf.global_variables()[-2]
    assert moving_mean.name == "batch_normalization_1/moving_mean:0"
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    inference = (x - [1.0, 2.0, 3.0]) / np.sqrt(np.array([4.0, 1.0, 0.25]) + 1e-3) * 2 + 0.5
    batch = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3) * 2 + 0.5
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(frozen), inference, rtol=1e-5)
        out, _ = sess.run([switched, updates], {flag: False})
        np.testing.assert_allclose(out, inference, rtol=1e-5)
        np.testing.assert_allclose(sess.run(moving_mean), [1.0, 2.0, 3.0], rtol=1e-6)
        out, _ = sess.run([switched, updates], {flag: True})
        np.testing.assert_allclose(out, batch, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(sess.run(moving_mean),
                                   0.99 * np.array([1.0, 2.0, 3.0]) + 0.01 * x.mean(0),
                                   rtol=1e-5)


def test_batch_normalization_construction_errors():
    with pytest.raises(ValueError, match="Invalid axis: 2"):
        tf.layers.batch_normalization(randn(2, 3), axis=2)
    with pytest.raises(ValueError, match="undefined `axis` dimension"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32, [None, None]))
    with pytest.raises(ValueError, match="undefined rank"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32))
    with pytest.raises(ValueError, match="fused=True"):
        tf.layers.batch_normalization(randn(2, 3), fused=True)
    with pytest.raises(ValueError, match="renorm"):
        tf.layers.batch_normalization(randn(2, 3), renorm=True)


# -- a TF1 training script -----------------------------------------------------------------------


def make_stripes(n, rng):
    """8x8 one-channel images: a bright vertical stripe at column 1, 4 or 6 tells the class."""
    labels = rng.integers(0, 3, n)
    images = rng.normal(0, 0.3, (n, 8, 8, 1)).astype(np.float32)
    for i, label in enumerate(labels):
        images[i, :, [1, 4, 6][label], 0] += 2.0
    return images, labels.astype(np.int64)


def test_tf1_cnn_script_trains_with_layers_losses_metrics_and_decay():
    rng = np.random.default_rng(0)
    train_x, train_y = make_stripes(96, rng)
    test_x, test_y = make_stripes(60, rng)
    tf.set_random_seed(1)

    images = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    is_training = tf.placeholder_with_default(False, [], name="is_training")
    net = tf.layers.conv2d(images, 8, 3, padding="same", activation=tf.nn.relu)
    net = tf.layers.batch_normalization(net, training=is_training)
    net = tf.layers.max_pooling2d(net, 2, 2)
    net = tf.layers.flatten(net)
    net = tf.layers.dense(net, 16, activation=tf.nn.relu)
    net = tf.layers.dropout(net, 0.2, training=is_training)
    logits = tf.layers.dense(net, 3)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    assert tf.losses.get_losses() == [loss]

    global_step = tf.train.get_or_create_global_step()
    learning_rate = tf.train.exponential_decay(0.02, global_step, 10, 0.9, staircase=True)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = tf.train.AdamOptimizer(learning_rate).minimize(loss, global_step=global_step)
    predictions = tf.argmax(logits, axis=1)
    accuracy, update_accuracy = tf.metrics.accuracy(labels, predictions)

    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        first = sess.run(loss, {images: train_x, labels: train_y})
        for _ in range(40):
            sess.run(train_op, {images: train_x, labels: train_y, is_training: True})
        last = sess.run(loss, {images: train_x, labels: train_y})
        for start in range(0, 60, 20):
            sess.run(update_accuracy, {images: test_x[start:start + 20],
                                       labels: test_y[start:start + 20]})
        step, lr, acc = sess.run([global_step, learning_rate, accuracy])
    assert step == 40
    np.testing.assert_allclose(lr, 0.02 * 0.9 ** 4, rtol=1e-6)
    assert last < 0.3 * first
    assert acc >= 0.9


def test_dropout_flag_fed_through_unshaped_placeholder_keeps_static_shape():
    # TF builds a cond on the (scalar) flag, so a dense layer can follow the dropout
    x = tf.placeholder(tf.float32, [None, 6])
    training = tf.placeholder(tf.bool)  # no shape, as TF1 tutorials write it
    dropped = tf.layers.dropout(x, rate=0.5, training=training, seed=3)
    assert dropped.shape.as_list() == [None, 6]
    logits = tf.layers.dense(dropped, 2, kernel_initializer=tf.ones_initializer())
    assert logits.shape.as_list() == [None, 2]
    value = np.arange(12, dtype=np.float32).reshape(2, 6) + 1
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(dropped, {x: value, training: False}), value)
        out = sess.run(dropped, {x: value, training: True})
    kept = out != 0
    np.testing.assert_allclose(out[kept], value[kept] * 2.0, rtol=1e-6)
    assert out.dtype == np.float32
