"""tf.contrib.slim: layers under arg scopes, repeat/stack naming, end points, variable helpers,
create_train_op, learning.train, checkpoint assignment, losses, metrics and evaluation."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tensorweave as tw

slim = tw.contrib.slim


@pytest.fixture(autouse=True)
def fresh_graph():
    tw.reset_default_graph()
    yield


def _run(fetches, feed_dict=None):
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        sess.run(tw.local_variables_initializer())
        return sess.run(fetches, feed_dict)


def test_namespace_reuses_contrib_modules():
    assert slim.conv2d is tw.contrib.layers.conv2d
    assert slim.layer_norm is tw.contrib.layers.layer_norm
    assert slim.arg_scope is tw.contrib.framework.arg_scope
    assert slim.variables is tw.contrib.framework
    assert slim.losses is tw.contrib.losses
    assert slim.metrics is tw.contrib.metrics


def test_arg_scope_sets_defaults_of_slim_layers():
    x = np.arange(2 * 5 * 5 * 2, dtype=np.float32).reshape(2, 5, 5, 2)
    with slim.arg_scope([slim.conv2d], padding="VALID", activation_fn=None,
                        weights_initializer=tw.ones_initializer()):
        y = slim.conv2d(x, 3, [3, 3], scope="c")
        same = slim.conv2d(x, 3, [3, 3], padding="SAME", scope="s")
    assert y.shape.as_list() == [2, 3, 3, 3]
    assert same.shape.as_list() == [2, 5, 5, 3]
    got = _run(y)
    want = np.stack([[[x[b, i:i + 3, j:j + 3].sum() for j in range(3)] for i in range(3)]
                     for b in range(2)])
    np.testing.assert_allclose(got, np.repeat(want[..., None], 3, -1), rtol=1e-6)
    assert got.dtype == np.float32


def test_repeat_and_stack_name_each_call_after_the_scope():
    x = tw.zeros([1, 4, 4, 2])
    slim.repeat(x, 3, slim.conv2d, 4, [3, 3], scope="conv")
    names = [v.op.name for v in slim.get_model_variables()]
    assert names == [f"conv/conv_{i}/{k}" for i in (1, 2, 3) for k in ("weights", "biases")]
    y = slim.stack(tw.zeros([2, 3]), slim.fully_connected, [5, (7,)], scope="fc")
    assert y.shape.as_list() == [2, 7]
    assert [v.op.name for v in slim.get_variables("fc", suffix="weights")] == \
        ["fc/fc_1/weights", "fc/fc_2/weights"]
    # without a scope the layer's function name is the prefix
    slim.stack(tw.zeros([2, 3]), slim.fully_connected, [2])
    assert slim.get_variables("Stack/fully_connected_1")
    with pytest.raises(ValueError, match="stack_args"):
        slim.stack(x, slim.conv2d, 4)


def test_outputs_collections_become_end_points_named_by_scope():
    with tw.variable_scope("net") as sc:
        collection = sc.original_name_scope + "_end_points"
        with slim.arg_scope([slim.conv2d, slim.max_pool2d], outputs_collections=collection):
            net = slim.repeat(tw.zeros([1, 8, 8, 1]), 2, slim.conv2d, 2, [3, 3], scope="conv1")
            net = slim.max_pool2d(net, [2, 2], scope="pool1")
        end_points = slim.utils.convert_collection_to_dict(collection)
    assert list(end_points) == ["net/conv1/conv1_1", "net/conv1/conv1_2", "net/pool1"]
    assert end_points["net/pool1"] is net
    assert slim.utils.last_dimension(net.shape, min_rank=4) == 2
    with pytest.raises(ValueError):
        slim.utils.last_dimension(tw.TensorShape([3]), min_rank=4)


def test_layer_norm_matches_numpy_and_creates_beta_gamma():
    x = np.random.RandomState(0).randn(3, 4, 5).astype(np.float32)
    y = slim.layer_norm(x, begin_norm_axis=1, begin_params_axis=-1)
    assert [v.op.name for v in slim.get_model_variables()] == ["LayerNorm/beta",
                                                              "LayerNorm/gamma"]
    mean = x.mean(axis=(1, 2), keepdims=True)
    var = x.var(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(_run(y), (x - mean) / np.sqrt(var + 1e-12), atol=1e-5)
    with pytest.raises(ValueError, match="must be < rank"):
        slim.layer_norm(x, begin_norm_axis=3)


def test_separable_conv2d_depthwise_only_and_with_pointwise():
    x = np.random.RandomState(1).randn(1, 4, 4, 2).astype(np.float32)
    with slim.arg_scope([slim.separable_conv2d], activation_fn=None,
                        weights_initializer=tw.ones_initializer()):
        depthwise = slim.separable_conv2d(x, None, [1, 1], depth_multiplier=2, scope="dw")
        both = slim.separable_conv2d(x, 3, [1, 1], scope="sep")
    names = [v.op.name for v in slim.get_model_variables()]
    assert names == ["dw/depthwise_weights", "dw/biases", "sep/depthwise_weights",
                     "sep/pointwise_weights", "sep/biases"]
    got_dw, got_both = _run([depthwise, both])
    np.testing.assert_allclose(got_dw, np.repeat(x, 2, axis=-1), rtol=1e-6)
    np.testing.assert_allclose(got_both, np.repeat(x.sum(-1, keepdims=True), 3, -1), rtol=1e-5)


def test_conv2d_transpose_bias_add_softmax_unit_norm_one_hot():
    up = slim.conv2d_transpose(tw.ones([1, 3, 3, 2]), 4, [3, 3], stride=2, scope="up")
    assert up.shape.as_list() == [1, 6, 6, 4]
    assert slim.get_variables("up", suffix="weights")[0].shape.as_list() == [3, 3, 4, 2]
    logits = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], np.float32)
    biased = slim.bias_add(logits, initializer=tw.constant_initializer(1.0))
    probs = slim.softmax(logits)
    norm = slim.unit_norm(logits, 1)
    onehot = slim.one_hot_encoding(tw.constant([2, 0]), 3)
    got = _run([biased, probs, norm, onehot])
    np.testing.assert_allclose(got[0], logits + 1)
    e = np.exp(logits - logits.max(1, keepdims=True))
    np.testing.assert_allclose(got[1], e / e.sum(1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(got[2], logits / np.sqrt(1e-7 + (logits ** 2).sum(1,
                                                                                 keepdims=True)),
                               rtol=1e-6)
    np.testing.assert_array_equal(got[3], np.eye(3, dtype=np.float32)[[2, 0]])
    assert got[3].dtype == np.float32


def test_get_variables_to_restore_include_exclude():
    for scope in ("a", "a/inner", "b"):
        with tw.variable_scope(scope):
            slim.model_variable("w", shape=[1])
    names = lambda vs: [v.op.name for v in vs]  # noqa: E731
    assert names(slim.get_variables_to_restore()) == ["a/w", "a/inner/w", "b/w"]
    assert names(slim.get_variables_to_restore(include=["a"], exclude=["a/inner"])) == ["a/w"]
    assert names(slim.get_variables_to_restore(exclude=["b"])) == ["a/w", "a/inner/w"]
    with pytest.raises(TypeError):
        slim.get_variables_to_restore(include="a")


def test_create_train_op_clips_each_gradient_and_runs_update_ops():
    x = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
    y = np.array([[1.0], [0.0]], np.float32)
    w0 = np.array([[0.5], [-0.5]], np.float32)
    b0 = np.array([0.25], np.float32)
    w = tw.Variable(w0, name="w")
    b = tw.Variable(b0, name="b")
    counter = tw.Variable(0.0, name="counter", trainable=False)
    tw.add_to_collection(tw.GraphKeys.UPDATE_OPS, tw.assign_add(counter, 1.0))
    loss = tw.reduce_sum(tw.square(tw.matmul(x, w) + b - y))
    lr, clip = 0.1, 1.0
    train_op = slim.learning.create_train_op(loss, tw.train.GradientDescentOptimizer(lr),
                                             clip_gradient_norm=clip)
    assert train_op in tw.get_collection(tw.GraphKeys.TRAIN_OP)
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        got_loss = sess.run(train_op)
        got_w, got_b, got_counter, step = sess.run([w, b, counter, tw.train.get_global_step()])
    residual = x @ w0 + b0 - y
    np.testing.assert_allclose(got_loss, (residual ** 2).sum(), rtol=1e-6)

    def clipped(g):
        return g * min(1.0, clip / np.linalg.norm(g))

    np.testing.assert_allclose(got_w, w0 - lr * clipped(2 * x.T @ residual), rtol=1e-5)
    np.testing.assert_allclose(got_b, b0 - lr * clipped(2 * residual.sum(0)), rtol=1e-5)
    assert got_counter == 1.0 and step == 1


def test_create_train_op_variables_to_train_and_multipliers():
    a = tw.Variable(1.0, name="a")
    b = tw.Variable(1.0, name="b")
    loss = 3.0 * a + 5.0 * b
    train_op = slim.learning.create_train_op(loss, tw.train.GradientDescentOptimizer(1.0),
                                             variables_to_train=[a],
                                             gradient_multipliers={"a": 2.0},
                                             global_step=None)
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        sess.run(train_op)
        np.testing.assert_allclose(sess.run([a, b]), [1.0 - 6.0, 1.0])


def _linear_model():
    x = tw.constant(np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1))
    prediction = slim.fully_connected(x, 1, activation_fn=None, scope="fc")
    slim.losses.mean_squared_error(prediction, 2.0 * x + 1.0)
    return slim.losses.get_total_loss()


def test_learning_train_runs_steps_saves_and_resumes(tmp_path):
    logdir = str(tmp_path)
    loss = _linear_model()
    train_op = slim.learning.create_train_op(loss, tw.train.GradientDescentOptimizer(0.1))
    final = slim.learning.train(train_op, logdir, number_of_steps=3, save_summaries_secs=0,
                                save_interval_secs=0, log_every_n_steps=0)
    assert np.isfinite(final) and final > 0
    assert tw.train.latest_checkpoint(logdir) == os.path.join(logdir, "model.ckpt-3")

    # a second run restores step 3 from logdir and stops at 5 with a smaller loss
    tw.reset_default_graph()
    loss = _linear_model()
    train_op = slim.learning.create_train_op(loss, tw.train.GradientDescentOptimizer(0.1))
    resumed = slim.learning.train(train_op, logdir, number_of_steps=5, save_summaries_secs=0,
                                  save_interval_secs=0)
    assert resumed < final
    assert tw.train.latest_checkpoint(logdir) == os.path.join(logdir, "model.ckpt-5")
    with pytest.raises(ValueError, match="number_of_steps"):
        slim.learning.train(train_op, logdir, number_of_steps=0)


def test_assign_from_checkpoint_fn_and_assign_from_checkpoint(tmp_path):
    with tw.variable_scope("net"):
        w = slim.model_variable("w", initializer=tw.constant([1.0, 2.0]))
        slim.model_variable("skip", initializer=tw.constant(7.0))
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        path = tw.train.Saver().save(sess, str(tmp_path / "ckpt"))

    tw.reset_default_graph()
    with tw.variable_scope("net"):
        w = slim.model_variable("w", shape=[2], initializer=tw.zeros_initializer())
        extra = slim.model_variable("new", shape=[], initializer=tw.zeros_initializer())
    with pytest.raises(ValueError, match="missing variable"):
        slim.assign_from_checkpoint(path, [w, extra])
    init_fn = slim.assign_from_checkpoint_fn(path, [w, extra], ignore_missing_vars=True)
    assign_op, feed = slim.assign_from_checkpoint(path, {"net/skip": extra})
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        init_fn(sess)
        np.testing.assert_array_equal(sess.run(w), [1.0, 2.0])
        sess.run(assign_op, feed)
        assert sess.run(extra) == 7.0
    assert slim.assign_from_checkpoint_fn(path, [extra], ignore_missing_vars=True) is None


def test_assign_from_values_fn():
    v = slim.variable("v", shape=[2], initializer=tw.zeros_initializer())
    init_fn = slim.assign_from_values_fn({"v": [3.0, 4.0]})
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        init_fn(sess)
        np.testing.assert_array_equal(sess.run(v), [3.0, 4.0])
    with pytest.raises(ValueError, match="wasn't found"):
        slim.assign_from_values({"nope": 1.0})


def test_losses_take_logits_first():
    logits = np.array([[2.0, 0.0], [0.0, 1.0]], np.float32)
    labels = np.array([[1.0, 0.0], [1.0, 0.0]], np.float32)
    loss = slim.losses.softmax_cross_entropy(logits, labels)
    sparse = slim.losses.sparse_softmax_cross_entropy(logits, tw.constant([0, 0]))
    log_p = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    want = -(labels * log_p).sum(1).mean()
    got = _run([loss, sparse, slim.losses.get_total_loss()])
    np.testing.assert_allclose(got[:2], [want, want], rtol=1e-6)
    np.testing.assert_allclose(got[2], 2 * want, rtol=1e-6)


def test_streaming_metrics_and_aggregate_metric_map():
    predictions = tw.constant([1, 0, 1, 1])
    labels = tw.constant([1, 1, 1, 0])
    values, updates = slim.metrics.aggregate_metric_map({
        "accuracy": slim.metrics.streaming_accuracy(predictions, labels),
        "mean": slim.metrics.streaming_mean(tw.constant([1.0, 3.0])),
    })
    assert sorted(values) == ["accuracy", "mean"]
    with tw.Session() as sess:
        sess.run(tw.local_variables_initializer())
        sess.run(list(updates.values()))
        got = sess.run(values)
    assert got == {"accuracy": 0.5, "mean": 2.0}
    with pytest.raises(ValueError):
        slim.metrics.aggregate_metrics()


def test_evaluate_once_restores_and_returns_final_op(tmp_path):
    v = slim.variable("v", initializer=tw.constant(5.0))
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        sess.run(tw.assign(v, 9.0))
        path = tw.train.Saver().save(sess, str(tmp_path / "ckpt"))
    mean, update = slim.metrics.streaming_mean(v * 2.0)
    got = slim.evaluation.evaluate_once("", path, None, num_evals=3, eval_op=update,
                                        final_op=mean, summary_op=None)
    assert got == 18.0


def test_initializers_and_regularizers_submodules() -> None:
    x = tw.placeholder(tw.float32, [2, 8])
    y = slim.fully_connected(x, 6, weights_initializer=slim.initializers.xavier_initializer(),
                             weights_regularizer=slim.regularizers.l2_regularizer(0.5),
                             scope="fc")
    assert y.op.name == "fc/Relu"
    assert [op.name for op in tw.get_default_graph().get_operations()
            if op.type == "MatMul"] == ["fc/MatMul"]
    (weights,) = [v for v in tw.global_variables() if v.op.name == "fc/weights"]
    (loss,) = tw.get_collection(tw.GraphKeys.REGULARIZATION_LOSSES)
    w, penalty = _run([weights, loss])
    limit = np.sqrt(6.0 / (8 + 6))
    assert np.abs(w).max() <= limit
    np.testing.assert_allclose(penalty, 0.5 * 0.5 * np.sum(w ** 2), rtol=1e-5)
