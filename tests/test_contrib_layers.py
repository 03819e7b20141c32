"""`tw.contrib.layers`: initializer statistics with fixed seeds, regularizer values and the
``REGULARIZATION_LOSSES`` collection, the functional layers against numpy with contrib's
variable names and collections, batch_norm's update ops (collected, or run with the output), and
`arg_scope` defaults."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw

layers = tw.contrib.layers
RNG = np.random.RandomState(3)


def run(fetches: object, feed: dict | None = None) -> object:
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        return sess.run(fetches, feed)


# -- initializers --------------------------------------------------------------------------------


def sample(init: object, shape: list[int]) -> np.ndarray:
    return run(init(shape))


def test_variance_scaling_normal_is_truncated_with_contribs_stddev() -> None:
    shape = [3, 3, 40, 60]  # fan_in = 360, fan_out = 540
    values = sample(layers.variance_scaling_initializer(seed=1), shape)
    stddev = np.sqrt(1.3 * 2.0 / 360)
    assert values.dtype == np.float32 and values.shape == tuple(shape)
    assert np.abs(values).max() <= 2 * stddev + 1e-6
    # a normal truncated at two standard deviations keeps 0.8796 of its stddev
    assert values.std() == pytest.approx(stddev * 0.87962566, rel=0.03)
    assert abs(values.mean()) < 0.1 * stddev


def test_variance_scaling_uniform_fan_out_and_fan_avg() -> None:
    shape = [300, 500]
    uniform = sample(layers.variance_scaling_initializer(1.0, "FAN_OUT", True, seed=2), shape)
    limit = np.sqrt(3.0 / 500)
    assert np.abs(uniform).max() <= limit
    assert uniform.std() == pytest.approx(limit / np.sqrt(3), rel=0.03)
    xavier = sample(layers.xavier_initializer(seed=3), shape)
    assert np.abs(xavier).max() <= np.sqrt(6.0 / 800)
    assert xavier.std() == pytest.approx(np.sqrt(2.0 / 800), rel=0.03)
    normal = sample(layers.xavier_initializer(uniform=False, seed=3), shape)
    assert normal.std() == pytest.approx(np.sqrt(1.3 / 400) * 0.87962566, rel=0.03)
    assert layers.xavier_initializer_conv2d is layers.xavier_initializer


def test_initializers_with_a_seed_repeat_and_check_their_arguments() -> None:
    init = layers.xavier_initializer(seed=7, dtype=tw.float64)
    first, second = run([init([4, 5]), init([4, 5])])
    assert first.dtype == np.float64
    np.testing.assert_array_equal(first, second)
    with pytest.raises(TypeError, match="non-floating point"):
        layers.variance_scaling_initializer(dtype=tw.int32)
    with pytest.raises(TypeError, match="Unknown mode fan_in"):
        layers.variance_scaling_initializer(mode="fan_in")


# -- regularizers --------------------------------------------------------------------------------


def test_l1_l2_and_sum_regularizers() -> None:
    w = RNG.randn(3, 4).astype(np.float32)
    weights = tw.constant(w)
    l1 = layers.l1_regularizer(0.5)(weights)
    l2 = layers.l2_regularizer(0.25, scope="my_l2")(weights)
    both = layers.sum_regularizer([layers.l1_regularizer(0.5), None,
                                   layers.l2_regularizer(0.25)])(weights)
    assert l1.op.name == "l1_regularizer" and l2.op.name == "my_l2"
    got = run([l1, l2, both, layers.l1_l2_regularizer(1.0, 2.0)(weights)])
    want_l1, want_l2 = 0.5 * np.abs(w).sum(), 0.25 * (w ** 2).sum() / 2
    np.testing.assert_allclose(got, [want_l1, want_l2, want_l1 + want_l2,
                                     np.abs(w).sum() + (w ** 2).sum()], rtol=1e-5)
    assert layers.l2_regularizer(0.0)(weights) is None
    assert layers.sum_regularizer([None]) is None


def test_regularizer_scale_errors() -> None:
    with pytest.raises(ValueError, match="less than 0"):
        layers.l1_regularizer(-0.1)
    with pytest.raises(ValueError, match="cannot be an integer"):
        layers.l2_regularizer(2)


def test_apply_regularization_sums_and_collects() -> None:
    a, b = tw.Variable(np.ones((2, 2), np.float32)), tw.Variable(np.full(3, 2.0, np.float32))
    penalty = layers.apply_regularization(layers.l1_regularizer(0.1), [a, b])
    assert penalty in tw.get_collection(tw.GraphKeys.REGULARIZATION_LOSSES)
    assert penalty.op.name == "get_regularization_penalty"
    assert run(penalty) == pytest.approx(0.1 * (4 + 6))
    with pytest.raises(ValueError, match="No weights to regularize"):
        layers.apply_regularization(layers.l1_regularizer(0.1))


# -- fully_connected and conv2d ------------------------------------------------------------------


def test_fully_connected_names_values_and_collections() -> None:
    x = RNG.randn(5, 4).astype(np.float32)
    out = layers.fully_connected(tw.constant(x), 3, weights_regularizer=layers.l2_regularizer(0.1),
                                 variables_collections={"weights": ["my_weights"]},
                                 outputs_collections="my_outputs")
    second = layers.fully_connected(out, 2, activation_fn=None)
    names = [v.name for v in tw.global_variables()]
    assert names == ["fully_connected/weights:0", "fully_connected/biases:0",
                     "fully_connected_1/weights:0", "fully_connected_1/biases:0"]
    assert [v.name for v in tw.get_collection(tw.GraphKeys.MODEL_VARIABLES)] == names
    assert [v.name for v in tw.get_collection("my_weights")] == ["fully_connected/weights:0"]
    assert tw.get_collection("my_outputs") == [out]
    (loss,) = tw.get_collection(tw.GraphKeys.REGULARIZATION_LOSSES)
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        y, z, reg, w0, b0, w1, b1 = sess.run([out, second, loss, *tw.global_variables()])
    want = np.maximum(x @ w0 + b0, 0)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(z, want @ w1 + b1, rtol=1e-5, atol=1e-6)
    assert reg == pytest.approx(0.1 * (w0 ** 2).sum() / 2, rel=1e-5)
    np.testing.assert_array_equal(b0, 0)


def test_fully_connected_reuse_normalizer_and_errors() -> None:
    x = tw.placeholder(tw.float32, [None, 4])
    layers.fully_connected(x, 3, scope="fc")
    layers.fully_connected(x, 3, scope="fc", reuse=True)
    normalized = layers.fully_connected(x, 3, normalizer_fn=layers.batch_norm, scope="fc_bn")
    assert normalized.shape.as_list() == [None, 3]
    names = {v.name[:-2] for v in tw.global_variables()}
    assert names == {"fc/weights", "fc/biases", "fc_bn/weights", "fc_bn/BatchNorm/beta",
                     "fc_bn/BatchNorm/moving_mean", "fc_bn/BatchNorm/moving_variance"}
    with pytest.raises(ValueError, match="num_outputs type"):
        layers.fully_connected(x, 3.0)
    with pytest.raises(ValueError, match="already exists"):
        layers.fully_connected(x, 3, scope="fc")


def conv_reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A stride-1 SAME convolution (odd kernel) by explicit sums."""
    kh, kw = w.shape[:2]
    padded = np.pad(x, [(0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)])
    out = np.zeros(x.shape[:3] + (w.shape[3],), np.float64)
    for i in range(x.shape[1]):
        for j in range(x.shape[2]):
            patch = padded[:, i:i + kh, j:j + kw, :]
            out[:, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


def test_conv2d_matches_numpy_under_scope_conv() -> None:
    x = RNG.randn(2, 5, 5, 3).astype(np.float32)
    out = layers.conv2d(tw.constant(x), 4, 3, activation_fn=tw.nn.tanh,
                        biases_initializer=tw.constant_initializer(0.5))
    assert out.shape.as_list() == [2, 5, 5, 4]
    assert layers.conv2d(out, 2, [1, 1], stride=2).shape.as_list() == [2, 3, 3, 2]
    assert [v.name for v in tw.global_variables()] == [
        "Conv/weights:0", "Conv/biases:0", "Conv_1/weights:0", "Conv_1/biases:0"]
    got, kernel = run([out, tw.global_variables()[0]])
    want = np.tanh(conv_reference(x, kernel) + 0.5)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert layers.convolution2d is layers.conv2d
    with pytest.raises(ValueError, match="rank 4"):
        layers.conv2d(tw.constant(x[0]), 4, 3)
    with pytest.raises(ValueError, match="Invalid data_format"):
        layers.conv2d(tw.constant(x), 4, 3, data_format="NWC")


# -- pooling, flatten, dropout -------------------------------------------------------------------


def test_pooling_flatten_and_dropout() -> None:
    x = RNG.randn(2, 4, 6, 3).astype(np.float32)
    blocks = x.reshape(2, 2, 2, 3, 2, 3)
    mx, av = layers.max_pool2d(tw.constant(x), 2), layers.avg_pool2d(tw.constant(x), [2, 2])
    flat = layers.flatten(tw.constant(x))
    kept = layers.dropout(tw.constant(x), 0.5, is_training=False)
    dropped = layers.dropout(tw.constant(x), 0.5, seed=1)
    got = run([mx, av, flat, kept, dropped])
    np.testing.assert_allclose(got[0], blocks.max(axis=(2, 4)))
    np.testing.assert_allclose(got[1], blocks.mean(axis=(2, 4)), rtol=1e-6)
    np.testing.assert_array_equal(got[2], x.reshape(2, -1))
    np.testing.assert_array_equal(got[3], x)
    assert np.all((got[4] == 0) | np.isclose(got[4], 2 * x))
    assert 0 < np.count_nonzero(got[4]) < x.size
    with pytest.raises(ValueError, match="NCHW or NHWC"):
        layers.max_pool2d(tw.constant(x), 2, data_format="NWC")


# -- batch_norm ----------------------------------------------------------------------------------


def test_batch_norm_training_collects_updates_with_bessel_for_2d() -> None:
    x = RNG.randn(8, 3).astype(np.float32) * 2 + 1
    out = layers.batch_norm(tw.constant(x), decay=0.9, is_training=True)
    assert [v.name for v in tw.global_variables()] == [
        "BatchNorm/beta:0", "BatchNorm/moving_mean:0", "BatchNorm/moving_variance:0"]
    assert [v.name for v in tw.trainable_variables()] == ["BatchNorm/beta:0"]
    updates = tw.get_collection(tw.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    moving = tw.global_variables()[1:]
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        y = sess.run(out)
        np.testing.assert_array_equal(sess.run(moving[0]), 0)  # not run with the output
        sess.run(updates)
        mean, var = sess.run(moving)
    want = (x - x.mean(0)) / np.sqrt(x.var(0) + 0.001)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mean, 0.1 * x.mean(0), rtol=1e-5)
    np.testing.assert_allclose(var, 0.9 + 0.1 * x.var(0, ddof=1), rtol=1e-5)


def test_batch_norm_updates_collections_none_runs_updates_with_the_output() -> None:
    x = RNG.randn(4, 2, 2, 3).astype(np.float32)
    out = layers.batch_norm(tw.constant(x), scale=True, updates_collections=None, decay=0.5,
                            param_initializers={"gamma": tw.constant_initializer(2.0)})
    assert tw.get_collection(tw.GraphKeys.UPDATE_OPS) == []
    assert "BatchNorm/gamma:0" in [v.name for v in tw.trainable_variables()]
    moving = [v for v in tw.global_variables() if "moving" in v.name]
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        y = sess.run(out)
        mean, var = sess.run(moving)
    flat = x.reshape(-1, 3)
    np.testing.assert_allclose(y, 2 * (x - flat.mean(0)) / np.sqrt(flat.var(0) + 0.001),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mean, 0.5 * flat.mean(0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(var, 0.5 + 0.5 * flat.var(0, ddof=1), rtol=1e-5)


def test_batch_norm_inference_and_unfused_and_custom_collection() -> None:
    x = RNG.randn(6, 3).astype(np.float32)
    inference = layers.batch_norm(tw.constant(x), is_training=False, scope="bn")
    assert tw.get_collection(tw.GraphKeys.UPDATE_OPS) == []
    np.testing.assert_allclose(run(inference), x / np.sqrt(1.001), rtol=1e-5)
    layers.batch_norm(tw.constant(x), fused=False, decay=0.0, updates_collections="mine",
                      scope="plain")
    updates = tw.get_collection("mine")
    assert len(updates) == 2 and tw.get_collection(tw.GraphKeys.UPDATE_OPS) == []
    moving = [v for v in tw.global_variables() if v.name.startswith("plain/moving")]
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        sess.run(updates)
        np.testing.assert_allclose(sess.run(moving[1]), x.var(0), rtol=1e-5)  # no Bessel


def test_batch_norm_with_a_training_tensor() -> None:
    x = RNG.randn(5, 2).astype(np.float32) + 3
    training = tw.placeholder(tw.bool, [])
    out = layers.batch_norm(tw.constant(x), is_training=training, updates_collections=None)
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        np.testing.assert_allclose(sess.run(out, {training: False}), x / np.sqrt(1.001),
                                   rtol=1e-5)
        trained = sess.run(out, {training: True})
    np.testing.assert_allclose(trained.mean(0), 0, atol=1e-5)


# -- embed_sequence and arg_scope ----------------------------------------------------------------


def test_embed_sequence() -> None:
    ids = np.array([[1, 3, 1], [0, 2, 3]], np.int32)
    out = layers.embed_sequence(tw.constant(ids), vocab_size=4, embed_dim=5)
    unique = layers.embed_sequence(tw.constant(ids), scope="EmbedSequence", reuse=True,
                                   unique=True)
    assert out.shape.as_list() == unique.shape.as_list() == [2, 3, 5]
    assert [v.name for v in tw.get_collection(tw.GraphKeys.MODEL_VARIABLES)] == [
        "EmbedSequence/embeddings:0"]
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        got, got_unique, table = sess.run([out, unique, tw.global_variables()[0]])
    np.testing.assert_array_equal(got, table[ids])
    np.testing.assert_array_equal(got_unique, table[ids])
    with pytest.raises(ValueError, match="Must specify vocab size"):
        layers.embed_sequence(tw.constant(ids), vocab_size=4)


def test_arg_scope_supplies_layer_defaults() -> None:
    framework = tw.contrib.framework
    x = tw.constant(RNG.randn(2, 3).astype(np.float32))
    with framework.arg_scope([layers.fully_connected], activation_fn=None,
                             biases_initializer=tw.constant_initializer(1.0)):
        out = layers.fully_connected(x, 2)
        relu = layers.fully_connected(x, 2, activation_fn=tw.nn.relu)
    assert out.op.type == "BiasAdd" and relu.op.type == "Relu"
    assert run(tw.global_variables()[1]).tolist() == [1.0, 1.0]
