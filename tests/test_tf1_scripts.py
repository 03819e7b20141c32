"""TF1 graph-mode scripts, written as TF 1.x tutorials and user code write them, run with
``import tensorweave as tf`` and checked against numpy.

Each test is one small, self-contained program (forward passes only: no optimizers). They
exercise the API the way real scripts combine it: placeholders fed in a loop, variables built
under name scopes, string and nested fetches, default sessions, device scopes, and errors caught
and recovered from.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorweave as tf

# -- numpy references ---------------------------------------------------------------------------


def np_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_conv2d_same(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Stride-1 SAME convolution (cross-correlation) of NHWC `x` with HWIO `w`."""
    kh, kw = w.shape[:2]
    top, left = (kh - 1) // 2, (kw - 1) // 2
    padded = np.pad(x, [(0, 0), (top, kh - 1 - top), (left, kw - 1 - left), (0, 0)])
    n, h, wd, _ = x.shape
    out = np.zeros((n, h, wd, w.shape[3]), np.float64)
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nhwc,co->nhwo", padded[:, i:i + h, j:j + wd, :], w[i, j])
    return out


def np_max_pool_2x2(x: np.ndarray) -> np.ndarray:
    n, h, w, c = x.shape
    return x.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


# -- scripts ------------------------------------------------------------------------------------


def test_softmax_regression_forward_in_a_feed_loop():
    # The "MNIST for ML beginners" model, evaluated batch by batch.
    rng = np.random.RandomState(0)
    w_init = rng.randn(20, 5).astype(np.float32) * 0.1
    b_init = rng.randn(5).astype(np.float32) * 0.1

    x = tf.placeholder("float", [None, 20])  # the 2015 tutorial's spelling
    W = tf.Variable(w_init)
    b = tf.Variable(b_init)
    y = tf.nn.softmax(tf.matmul(x, W) + b)
    y_ = tf.placeholder(tf.float32, [None, 5])
    cross_entropy = tf.reduce_mean(-tf.reduce_sum(y_ * tf.log(y), reduction_indices=[1]))
    correct_prediction = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, "float"))
    assert x.dtype == tf.float32 and accuracy.dtype == tf.float32

    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    for step in range(4):
        batch_xs = rng.randn(8 + step, 20).astype(x.dtype.as_numpy_dtype)
        labels = rng.randint(0, 5, size=8 + step)
        batch_ys = np.eye(5, dtype=np.float32)[labels]
        ce, acc, probs = sess.run([cross_entropy, accuracy, y],
                                  feed_dict={x: batch_xs, y_: batch_ys})
        expected = np_softmax(batch_xs @ w_init + b_init)
        np.testing.assert_allclose(probs, expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ce, np.mean(-np.sum(batch_ys * np.log(expected), 1)),
                                   rtol=1e-5)
        assert acc.dtype == np.float32
        assert acc == pytest.approx(np.mean(expected.argmax(1) == labels))
    sess.close()
    with pytest.raises(RuntimeError):
        sess.run(accuracy, {x: batch_xs, y_: batch_ys})


def test_deep_mnist_style_cnn_forward():
    # "Deep MNIST for experts", scaled down to 8x8 single-channel images.
    tf.set_random_seed(1234)

    def weight_variable(shape):
        initial = tf.truncated_normal(shape, stddev=0.1)
        return tf.Variable(initial)

    def bias_variable(shape):
        initial = tf.constant(0.1, shape=shape)
        return tf.Variable(initial)

    def conv2d(x, W):
        return tf.nn.conv2d(x, W, strides=[1, 1, 1, 1], padding="SAME")

    def max_pool_2x2(x):
        return tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")

    x = tf.placeholder(tf.float32, shape=[None, 64])
    keep_prob = tf.placeholder(tf.float32)
    x_image = tf.reshape(x, [-1, 8, 8, 1])

    W_conv1 = weight_variable([3, 3, 1, 4])
    b_conv1 = bias_variable([4])
    h_conv1 = tf.nn.relu(tf.nn.bias_add(conv2d(x_image, W_conv1), b_conv1))
    h_pool1 = max_pool_2x2(h_conv1)
    assert h_pool1.get_shape().as_list() == [None, 4, 4, 4]

    W_fc1 = weight_variable([4 * 4 * 4, 16])
    b_fc1 = bias_variable([16])
    h_pool1_flat = tf.reshape(h_pool1, [-1, 4 * 4 * 4])
    h_fc1 = tf.nn.relu(tf.matmul(h_pool1_flat, W_fc1) + b_fc1)
    h_fc1_drop = tf.nn.dropout(h_fc1, keep_prob)

    W_fc2 = weight_variable([16, 3])
    b_fc2 = bias_variable([3])
    y_conv = tf.matmul(h_fc1_drop, W_fc2) + b_fc2
    probs = tf.nn.softmax(y_conv)
    assert y_conv.shape.as_list() == [None, 3]

    images = np.random.RandomState(1).rand(5, 64).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w1, b1, w2, b2, w3, b3 = sess.run([W_conv1, b_conv1, W_fc1, b_fc1, W_fc2, b_fc2])
        assert np.all(np.abs(w1) <= 0.2) and w1.std() > 0.02  # truncated at two stddevs
        np.testing.assert_array_equal(b1, np.full([4], 0.1, np.float32))
        out, p = sess.run([y_conv, probs], feed_dict={x: images, keep_prob: 1.0})

    conv = np.maximum(np_conv2d_same(images.reshape(-1, 8, 8, 1), w1) + b1, 0)
    fc1 = np.maximum(np_max_pool_2x2(conv).reshape(-1, 64) @ w2 + b2, 0)
    expected = fc1 @ w3 + b3
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(p, np_softmax(expected), rtol=1e-4, atol=1e-6)
    assert out.dtype == np.float32


def _mnist_inference(images, hidden1_units, hidden2_units, pixels, classes):
    # TF's tutorials/mnist/mnist.py `inference`.
    with tf.name_scope("hidden1"):
        weights = tf.Variable(
            tf.truncated_normal([pixels, hidden1_units], stddev=1.0 / math.sqrt(float(pixels)),
                                seed=1),
            name="weights")
        biases = tf.Variable(tf.zeros([hidden1_units]), name="biases")
        hidden1 = tf.nn.relu(tf.matmul(images, weights) + biases)
    with tf.name_scope("hidden2"):
        weights = tf.Variable(
            tf.truncated_normal([hidden1_units, hidden2_units],
                                stddev=1.0 / math.sqrt(float(hidden1_units)), seed=2),
            name="weights")
        biases = tf.Variable(tf.zeros([hidden2_units]), name="biases")
        hidden2 = tf.nn.relu(tf.matmul(hidden1, weights) + biases)
    with tf.name_scope("softmax_linear"):
        weights = tf.Variable(
            tf.random_normal([hidden2_units, classes], stddev=1.0 / math.sqrt(hidden2_units),
                             seed=3),
            name="weights")
        biases = tf.Variable(tf.zeros([classes]), name="biases")
        logits = tf.matmul(hidden2, weights) + biases
    return logits


def test_name_scoped_mnist_layers_with_seeded_initializers():
    images = tf.placeholder(tf.float32, shape=(None, 12), name="images")
    labels = tf.placeholder(tf.int32, shape=(None,), name="labels")
    logits = _mnist_inference(images, 10, 6, 12, 4)
    correct = tf.nn.in_top_k(logits, labels, 1)
    true_count = tf.reduce_sum(tf.cast(correct, tf.int32))
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
        name="xentropy_mean")
    assert loss.name == "xentropy_mean:0"

    graph = tf.get_default_graph()
    names = [v.name for v in tf.global_variables()]
    assert names == [f"{s}/{n}:0" for s in ("hidden1", "hidden2", "softmax_linear")
                     for n in ("weights", "biases")]
    assert tf.trainable_variables() == tf.global_variables()
    assert logits.op.name == "softmax_linear/add"
    assert graph.get_tensor_by_name("hidden1/weights:0").shape.as_list() == [12, 10]
    assert graph.get_operation_by_name("hidden2/Relu").outputs[0].dtype == tf.float32

    feed = np.random.RandomState(3).rand(7, 12).astype(np.float32)
    feed_labels = np.array([0, 1, 2, 3, 0, 1, 2], np.int32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        params = sess.run(tf.global_variables())
        out, count, xent = sess.run(["softmax_linear/add:0", true_count, "xentropy_mean:0"],
                                    {"images:0": feed, labels: feed_labels})
    w1, b1, w2, b2, w3, b3 = params
    assert np.abs(w1).max() <= 2 / math.sqrt(12)
    h1 = np.maximum(feed @ w1 + b1, 0)
    h2 = np.maximum(h1 @ w2 + b2, 0)
    expected = h2 @ w3 + b3
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    assert count == np.sum(expected.argmax(1) == feed_labels) and count.dtype == np.int32
    log_probs = np.log(np_softmax(expected.astype(np.float64)))
    np.testing.assert_allclose(xent, -log_probs[np.arange(7), feed_labels].mean(), rtol=1e-5)

    # Op-level seeds: building the same model in a new graph gives the same weights.
    with tf.Graph().as_default() as g2:
        images2 = tf.placeholder(tf.float32, shape=(None, 12), name="images")
        _mnist_inference(images2, 10, 6, 12, 4)
        with tf.Session(graph=g2) as sess2:
            sess2.run(tf.global_variables_initializer())
            params2 = sess2.run(tf.global_variables())
    for a, b in zip(params, params2):
        np.testing.assert_array_equal(a, b)


def test_selection_gathering_and_accuracy_metrics():
    scores = tf.placeholder(tf.float32, [None, 4], name="scores")
    targets = tf.placeholder(tf.int64, [None], name="targets")
    predictions = tf.argmax(scores, axis=1)
    assert predictions.dtype == tf.int64
    one_hot = tf.one_hot(targets, depth=4)
    hits = tf.equal(predictions, targets)
    accuracy = tf.reduce_mean(tf.cast(hits, tf.float32))
    wrong_rows = tf.squeeze(tf.where(tf.logical_not(hits)), axis=1)
    wrong_scores = tf.gather(scores, wrong_rows)
    clipped = tf.where(scores > 0.5, scores, tf.zeros_like(scores))
    target_scores = tf.reduce_sum(scores * one_hot, axis=1, keep_dims=True)
    top_values, top_indices = tf.nn.top_k(scores, k=2)

    s = np.array([[0.1, 0.7, 0.1, 0.1], [0.6, 0.2, 0.1, 0.1], [0.2, 0.2, 0.5, 0.1]],
                 np.float32)
    t = np.array([1, 2, 2], np.int64)
    with tf.Session() as sess:
        out = sess.run({"acc": accuracy, "wrong": (wrong_rows, wrong_scores),
                        "clip": clipped, "target": target_scores, "oh": one_hot,
                        "top": [top_values, top_indices]},
                       feed_dict={scores: s, targets: t})
    assert out["acc"] == pytest.approx(2 / 3)
    np.testing.assert_array_equal(out["wrong"][0], [1])
    assert out["wrong"][0].dtype == np.int64
    np.testing.assert_array_equal(out["wrong"][1], s[[1]])
    np.testing.assert_array_equal(out["clip"], np.where(s > 0.5, s, 0))
    np.testing.assert_allclose(out["target"], s[np.arange(3), t][:, None])
    np.testing.assert_array_equal(out["oh"], np.eye(4, dtype=np.float32)[t])
    order = np.argsort(-s, axis=1, kind="stable")[:, :2]
    np.testing.assert_array_equal(out["top"][1], order)
    assert out["top"][1].dtype == np.int32
    np.testing.assert_array_equal(out["top"][0], np.take_along_axis(s, order, 1))


def test_control_dependencies_assign_and_group():
    counter = tf.Variable(0, name="counter")
    total = tf.Variable(0.0, name="total")
    x = tf.placeholder(tf.float32, [], name="x")
    increment = tf.assign_add(counter, 1)
    accumulate = tf.assign_add(total, x)
    with tf.control_dependencies([increment, accumulate]):
        mean = tf.identity(total / tf.cast(counter, tf.float32), name="running_mean")
    reset = tf.group(tf.assign(counter, 0), tf.assign(total, 0.0), name="reset")
    assert reset.type == "NoOp" and reset.name == "reset"

    values = [3.0, 5.0, 10.0, 2.0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        means = [sess.run(mean, {x: v}) for v in values]
        np.testing.assert_allclose(means, np.cumsum(values) / np.arange(1, 5))
        assert sess.run(counter) == 4 and sess.run(counter).dtype == np.int32
        assert sess.run(reset) is None
        assert sess.run([counter, total]) == [0, 0.0]


def test_moving_average_update_loop():
    decay = 0.9
    value = tf.placeholder(tf.float32, shape=[3])
    shadow = tf.Variable(tf.zeros([3]), trainable=False, name="shadow")
    step = tf.Variable(0, trainable=False, name="global_step")
    new_shadow = decay * shadow + (1 - decay) * value
    update = tf.group(tf.assign(shadow, new_shadow), tf.assign_add(step, 1))
    assert shadow not in tf.trainable_variables() and shadow in tf.global_variables()

    rng = np.random.RandomState(5)
    expected = np.zeros(3, np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(10):
            v = rng.rand(3).astype(np.float32)
            sess.run(update, feed_dict={value: v})
            expected = decay * expected + (1 - decay) * v
        np.testing.assert_allclose(sess.run(shadow), expected, rtol=1e-5)
        assert sess.run(step) == 10


def test_slicing_joining_and_reshaping():
    data = np.arange(2 * 4 * 5, dtype=np.float32).reshape(2, 4, 5)
    x = tf.constant(data, name="x")
    i = tf.placeholder(tf.int32, [])
    pieces = {
        "mid_reversed": x[:, 1:3, ::-1],
        "newaxis": x[tf.newaxis, 0, ..., -1],
        "ellipsis": x[..., 2],
        "dynamic": x[i, :, i + 1],
        "expanded": x[:, tf.newaxis, :, 1::2],
        "stepped": x[1, ::2, -2:],
    }
    assert pieces["mid_reversed"].shape.as_list() == [2, 2, 5]
    assert pieces["newaxis"].shape.as_list() == [1, 4]
    assert pieces["expanded"].get_shape().as_list() == [2, 1, 4, 2]
    first, second = tf.split(x, 2, axis=1)
    a, b, c = tf.split(x, [1, 3, 1], axis=2)
    joined = tf.concat([c, b, a], 2)
    stacked = tf.stack(tf.unstack(x, axis=1), axis=2)
    tiled = tf.tile(x[:, :1, :2], [1, 2, 3])
    padded = tf.pad(x[0], [[1, 0], [0, 2]])
    flat = tf.reshape(tf.transpose(x, [1, 0, 2]), [4, -1])
    assert tf.shape(x).dtype == tf.int32 and tf.size(x).dtype == tf.int32

    with tf.Session() as sess:
        out = sess.run(pieces, {i: 1})
        parts = sess.run([first, second, joined, stacked, tiled, padded, flat, tf.shape(x),
                          tf.size(x), tf.rank(x)])
    np.testing.assert_array_equal(out["mid_reversed"], data[:, 1:3, ::-1])
    np.testing.assert_array_equal(out["newaxis"], data[np.newaxis, 0, ..., -1])
    np.testing.assert_array_equal(out["ellipsis"], data[..., 2])
    np.testing.assert_array_equal(out["dynamic"], data[1, :, 2])
    np.testing.assert_array_equal(out["expanded"], data[:, np.newaxis, :, 1::2])
    np.testing.assert_array_equal(out["stepped"], data[1, ::2, -2:])
    np.testing.assert_array_equal(parts[0], data[:, :2])
    np.testing.assert_array_equal(parts[1], data[:, 2:])
    np.testing.assert_array_equal(parts[2], np.concatenate(
        [data[..., 4:], data[..., 1:4], data[..., :1]], 2))
    np.testing.assert_array_equal(parts[3], np.stack(list(data.transpose(1, 0, 2)), axis=2))
    np.testing.assert_array_equal(parts[4], np.tile(data[:, :1, :2], [1, 2, 3]))
    np.testing.assert_array_equal(parts[5], np.pad(data[0], [[1, 0], [0, 2]]))
    np.testing.assert_array_equal(parts[6], data.transpose(1, 0, 2).reshape(4, -1))
    np.testing.assert_array_equal(parts[7], [2, 4, 5])
    assert parts[8] == 40 and parts[9] == 3


def test_fetch_structures_names_and_callables():
    with tf.name_scope("model"):
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable([[1.0], [2.0], [3.0]], name="w")
        y = tf.matmul(x, w, name="y")
        total = tf.reduce_sum(y, name="total")
    graph = tf.get_default_graph()
    assert y.name == "model/y:0" and graph.get_tensor_by_name("model/total:0") is total
    assert graph.get_operation_by_name("model/y").outputs == [y]
    assert [t.name for t in y.op.inputs] == ["model/x:0", "model/w/read:0"]

    batch = np.array([[1, 0, 0], [0, 1, 1]], np.float32)
    sess = tf.Session()
    assert sess.graph is graph
    sess.run(tf.global_variables_initializer())
    out = sess.run({"model": {"y": "model/y:0", "weights": w}, "total": [total, "model/total:0"],
                    "init": "model/w/Assign"}, feed_dict={"model/x:0": batch})
    np.testing.assert_array_equal(out["model"]["y"], [[1.0], [5.0]])
    np.testing.assert_array_equal(out["model"]["weights"], [[1.0], [2.0], [3.0]])
    assert out["total"] == [6.0, 6.0] and out["init"] is None
    w_value, y_value = sess.run([w, y], {x: batch})
    assert w_value.shape == (3, 1) and y_value.shape == (2, 1)

    predict = sess.make_callable([y, total], feed_list=[x])
    for rows in (batch, np.ones([4, 3], np.float32)):
        y_out, total_out = predict(rows)
        np.testing.assert_allclose(y_out, rows @ [[1.0], [2.0], [3.0]])
        assert total_out == pytest.approx(y_out.sum())
    sess.close()


def test_multi_device_session_with_device_scopes():
    config = tf.ConfigProto(device_count={"CPU": 2}, log_device_placement=False)
    a = tf.placeholder(tf.float32, [2, 2], name="a")
    with tf.device("/cpu:0"):
        b = tf.matmul(a, a, name="b")
    with tf.device("/cpu:1"):
        c = tf.nn.relu(b - 3.0, name="c")
        v = tf.Variable(tf.ones([2, 2]), name="v")
        d = tf.add(c, v, name="d")
    e = tf.reduce_sum(d, name="e")
    assert b.device == "/device:CPU:0" and e.device == ""
    assert c.device == v.device == d.device == "/device:CPU:1"

    value = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    with tf.Session(config=config) as sess:
        devices = [dev.name for dev in sess.list_devices()]
        assert sum(name.endswith("CPU:1") for name in devices) == 1
        sess.run(tf.global_variables_initializer())
        options = tf.RunOptions(output_partition_graphs=True)
        metadata = tf.RunMetadata()
        out = sess.run(e, {a: value}, options=options, run_metadata=metadata)
    assert out == pytest.approx(np.sum(np.maximum(value @ value - 3.0, 0) + 1.0))
    assert len(metadata.partition_graphs) == 2


def test_placeholder_with_default_and_dropout_keep_prob():
    keep_prob = tf.placeholder_with_default(1.0, shape=[], name="keep_prob")
    scale = tf.placeholder_with_default(tf.constant([1.0, 1.0, 1.0, 1.0]), shape=[None])
    x = tf.ones([200, 4]) * scale
    dropped = tf.nn.dropout(x, keep_prob=keep_prob, seed=7)
    kept_fraction = tf.reduce_mean(tf.to_float(tf.not_equal(dropped, 0.0)))

    with tf.Session() as sess:
        eval_out = sess.run(dropped)  # the default: keep everything
        np.testing.assert_array_equal(eval_out, np.ones([200, 4], np.float32))
        train_out, fraction = sess.run([dropped, kept_fraction], {keep_prob: 0.5})
        assert set(np.unique(train_out).tolist()) <= {0.0, 2.0}
        assert 0.4 < fraction < 0.6
        scaled = sess.run(dropped, {scale: [1.0, 2.0, 3.0, 4.0]})
        np.testing.assert_array_equal(scaled, np.tile([1.0, 2.0, 3.0, 4.0], [200, 1]))


def test_eval_run_default_sessions_and_graph_nesting():
    g1 = tf.Graph()
    with g1.as_default():
        a = tf.constant([1.0, 2.0], name="a")
        counter = tf.Variable(10, name="counter")
        bump = counter.assign_add(5)
    g2 = tf.Graph()
    with g2.as_default():
        b = tf.constant(3, name="b")
        with tf.Graph().as_default():
            inner = tf.constant(4, name="b")
        assert tf.get_default_graph() is g2 and b.graph is g2 and inner.graph is not g2
        assert inner.name == "b:0" and b.name == "b:0"
    assert tf.get_default_graph() is not g1

    sess = tf.Session(graph=g1)
    with sess.as_default():
        assert tf.get_default_session() is sess
        counter.initializer.run()
        bump.op.run()
        assert counter.eval() == 15
        np.testing.assert_array_equal((a * 2).eval(), [2.0, 4.0])
        np.testing.assert_array_equal(a.eval(session=sess), [1.0, 2.0])
    assert tf.get_default_session() is None
    with pytest.raises(ValueError):
        b.eval(session=sess)  # b lives in another graph
    sess.close()

    with g2.as_default():
        isess = tf.InteractiveSession()
        assert tf.get_default_session() is isess
        assert b.eval() == 3 and (b * b).eval() == 9
        isess.close()
    assert tf.get_default_session() is None


def test_bad_feeds_raise_and_the_session_keeps_working():
    x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
    idx = tf.placeholder(tf.int32, shape=[None], name="idx")
    rows = tf.gather(x, idx)
    flat = tf.reshape(x, [-1, 2])
    needs_feed = x + 1.0
    v = tf.Variable(1.0, name="late")

    feed = np.ones([2, 3], np.float32)
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="shape"):
            sess.run(rows, {x: np.ones([2, 4]), idx: [0]})  # statically wrong: at feed time
        failures = []
        for indices in ([0, 1], [5], [1, 0]):
            try:
                out = sess.run(rows, {x: feed, idx: indices})
            except tf.errors.InvalidArgumentError as e:
                failures.append(e)
                continue
            assert out.shape == (len(indices), 3)
        assert len(failures) == 1 and "GatherV2" in failures[0].message
        assert isinstance(failures[0], tf.errors.OpError)
        assert failures[0].error_code == tf.errors.INVALID_ARGUMENT
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(flat, {x: np.ones([3, 3])})  # 9 elements do not split into pairs
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value"):
            sess.run(needs_feed)
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(v)
        sess.run(v.initializer)
        assert sess.run(v) == 1.0
        np.testing.assert_array_equal(sess.run(needs_feed, {x: feed}), feed + 1)


def test_regularized_logistic_model_with_losses():
    rng = np.random.RandomState(11)
    w_init = rng.randn(6, 1).astype(np.float32)
    features = tf.placeholder(tf.float32, [None, 6])
    labels = tf.placeholder(tf.float32, [None, 1])
    with tf.name_scope("logistic"):
        w = tf.Variable(w_init, name="w")
        b = tf.Variable(tf.zeros([1]), name="b")
        logits = tf.add(tf.matmul(features, w), b, name="logits")
        probs = tf.sigmoid(logits)
    xent = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))
    l2 = tf.add_n([tf.nn.l2_loss(v) for v in tf.trainable_variables()])
    loss = xent + 1e-3 * l2
    safe = tf.clip_by_value(probs, 1e-6, 1 - 1e-6)
    manual = -tf.reduce_mean(labels * tf.log(safe) + (1 - labels) * tf.log(1 - safe))
    mean, variance = tf.nn.moments(features, axes=[0])
    normalized = tf.nn.batch_normalization(features, mean, variance, None, None, 1e-3)

    xs = rng.randn(16, 6).astype(np.float32)
    ys = (rng.rand(16, 1) > 0.5).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = sess.run({"loss": loss, "xent": xent, "manual": manual, "norm": normalized},
                       {features: xs, labels: ys})
    z = xs.astype(np.float64) @ w_init
    expected_xent = np.mean(np.maximum(z, 0) - z * ys + np.log1p(np.exp(-np.abs(z))))
    assert out["xent"] == pytest.approx(expected_xent, rel=1e-5)
    assert out["manual"] == pytest.approx(expected_xent, rel=1e-4)
    assert out["loss"] == pytest.approx(expected_xent + 1e-3 * np.sum(w_init ** 2) / 2,
                                        rel=1e-5)
    np.testing.assert_allclose(out["norm"], (xs - xs.mean(0)) / np.sqrt(xs.var(0) + 1e-3),
                               rtol=1e-4, atol=1e-5)


def test_bag_of_words_embedding_classifier():
    vocab, dim, classes = 10, 4, 3
    rng = np.random.RandomState(2)
    table = rng.randn(vocab, dim).astype(np.float32)
    proj = rng.randn(dim, classes).astype(np.float32)
    word_ids = tf.placeholder(tf.int32, [None, 5], name="word_ids")
    lengths = tf.placeholder(tf.int32, [None], name="lengths")
    embeddings = tf.Variable(table, name="embeddings")
    embedded = tf.nn.embedding_lookup(embeddings, word_ids)
    mask = tf.sequence_mask(lengths, 5, dtype=tf.float32)
    summed = tf.reduce_sum(embedded * tf.expand_dims(mask, -1), axis=1)
    averaged = summed / tf.to_float(tf.expand_dims(lengths, 1))
    logits = tf.nn.xw_plus_b(averaged, tf.constant(proj), tf.zeros([classes]))
    prediction = tf.argmax(tf.nn.log_softmax(logits), 1, output_type=tf.int32)

    ids = rng.randint(0, vocab, size=(4, 5)).astype(np.int32)
    lens = np.array([5, 3, 1, 4], np.int32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        avg, pred = sess.run([averaged, prediction], {word_ids: ids, lengths: lens})
    mask_np = (np.arange(5)[None, :] < lens[:, None]).astype(np.float32)
    expected = (table[ids] * mask_np[..., None]).sum(1) / lens[:, None]
    np.testing.assert_allclose(avg, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(pred, (expected @ proj).argmax(1))
    assert pred.dtype == np.int32


def _variable_with_weight_decay(name, shape, stddev, wd):
    # TF's cifar10.py helper, with tf.Variable in place of tf.get_variable.
    var = tf.Variable(tf.truncated_normal(shape, stddev=stddev, seed=len(name)), name=name)
    if wd is not None:
        weight_decay = tf.multiply(tf.nn.l2_loss(var), wd, name="weight_loss")
        tf.add_to_collection("losses", weight_decay)
    return var


def test_cifar10_style_inference_with_lrn_and_weight_decay():
    batch_size = 3
    images = tf.placeholder(tf.float32, [batch_size, 8, 8, 3], name="images")
    labels = tf.placeholder(tf.int64, [batch_size], name="labels")
    with tf.name_scope("conv1") as scope:
        kernel = _variable_with_weight_decay("weights", [3, 3, 3, 4], 5e-2, None)
        conv = tf.nn.conv2d(images, kernel, [1, 1, 1, 1], padding="SAME")
        biases = tf.Variable(tf.constant(0.1, shape=[4]), name="biases")
        conv1 = tf.nn.relu(tf.nn.bias_add(conv, biases), name=scope)
    assert conv1.op.name == "conv1" and tf.nn.zero_fraction(conv1).dtype == tf.float32
    pool1 = tf.nn.max_pool(conv1, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME",
                           name="pool1")
    norm1 = tf.nn.lrn(pool1, 2, bias=1.0, alpha=0.001 / 9.0, beta=0.75, name="norm1")
    with tf.name_scope("local3"):
        reshape = tf.reshape(norm1, [images.get_shape().as_list()[0], -1])
        dim = reshape.get_shape()[1]
        assert dim == 4 * 4 * 4
        weights = _variable_with_weight_decay("weights", [dim, 5], 0.04, 0.004)
        local3 = tf.nn.relu(tf.matmul(reshape, weights) + 0.1, name="local3")
    logits = tf.add(tf.matmul(local3, tf.ones([5, 3]) / 5.0), 0.0, name="softmax_linear")
    cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits, name="cross_entropy_per_example")
    tf.add_to_collection("losses", tf.reduce_mean(cross_entropy, name="cross_entropy"))
    total_loss = tf.add_n(tf.get_collection("losses"), name="total_loss")
    assert [t.op.name for t in tf.get_collection("losses")] == [
        "local3/weight_loss", "cross_entropy"]

    batch = np.random.RandomState(4).rand(3, 8, 8, 3).astype(np.float32)
    targets = np.array([0, 2, 1], np.int64)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        k, w = sess.run([kernel, weights])
        out = sess.run({"pool": pool1, "norm": norm1, "loss": total_loss, "logits": logits},
                       {images: batch, labels: targets})

    conv_np = np.maximum(np_conv2d_same(batch, k) + 0.1, 0)
    # SAME 3x3/2 pooling of 8 pixels pads one after (the smaller half, 0, goes before)
    padded = np.pad(conv_np, [(0, 0), (0, 1), (0, 1), (0, 0)], constant_values=-np.inf)
    pool_np = np.stack([np.stack([padded[:, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max(axis=(1, 2))
                                  for j in range(4)], 1) for i in range(4)], 1)
    np.testing.assert_allclose(out["pool"], pool_np, rtol=1e-5, atol=1e-6)
    square_sums = np.stack([(pool_np[..., max(0, c - 2):c + 3] ** 2).sum(-1) for c in range(4)],
                           -1)
    norm_np = pool_np / (1.0 + 0.001 / 9.0 * square_sums) ** 0.75
    np.testing.assert_allclose(out["norm"], norm_np, rtol=1e-5, atol=1e-6)
    logits_np = np.maximum(norm_np.reshape(3, -1) @ w + 0.1, 0) @ np.full([5, 3], 0.2)
    np.testing.assert_allclose(out["logits"], logits_np, rtol=1e-4, atol=1e-5)
    log_probs = np.log(np_softmax(logits_np))
    expected_loss = (-log_probs[np.arange(3), targets].mean()
                     + 0.004 * np.sum(w.astype(np.float64) ** 2) / 2)
    assert out["loss"] == pytest.approx(expected_loss, rel=1e-5)
