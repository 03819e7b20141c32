"""``tw.layers.Layer``: one variable scope per layer object, shared by every call; tracked
weights, losses and updates; layer objects against the functional layers; RNN cells as
layers."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf


def names(variables):
    return [v.name for v in variables]


class Scale(tf.layers.Layer):
    """A user layer as TF1 scripts write them: weights made in `build`, used in `call`."""

    def build(self, input_shape):
        self.w = self.add_weight("w", [input_shape[-1]], initializer=tf.ones_initializer(),
                                 regularizer=lambda w: tf.reduce_sum(w * w))
        self.count = self.add_weight("count", [], dtype=tf.int32, trainable=False,
                                     initializer=tf.zeros_initializer())
        super().build(input_shape)

    def call(self, inputs):
        return inputs * self.w


def test_a_user_layer_builds_once_and_shares_its_weights_across_calls():
    layer = Scale()
    assert layer.name == "scale" and not layer.built
    with pytest.raises(ValueError, match="has not been used yet"):
        _ = layer.scope_name
    a = layer(tf.constant([[1.0, 2.0]]))
    with tf.variable_scope("elsewhere"):
        b = layer(tf.constant([[3.0, 4.0]]))
    assert layer.built and layer.scope_name == "scale"
    assert names(tf.global_variables()) == ["scale/w:0", "scale/count:0"]
    assert names(layer.trainable_weights) == ["scale/w:0"]
    assert names(layer.non_trainable_variables) == ["scale/count:0"]
    assert names(layer.weights) == names(layer.variables) == ["scale/w:0", "scale/count:0"]
    assert layer.count_params() == 3
    assert len(layer.losses) == 1  # the regularizer ran once, when `w` was made
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(layer.w.assign([2.0, -1.0]))
        got_a, got_b, loss = sess.run([a, b, layer.losses[0]])
    np.testing.assert_array_equal(got_a, [[2.0, -2.0]])
    np.testing.assert_array_equal(got_b, [[6.0, -4.0]])
    assert loss == 5.0


def test_layer_objects_get_unique_scopes_and_keep_them():
    x = tf.placeholder(tf.float32, [None, 3])
    first, second, named = tf.layers.Dense(2), tf.layers.Dense(2), tf.layers.Dense(2, name="fc")
    second(x)
    first(x)
    named(x)
    tf.layers.Dense(2, name="fc")(x)
    assert [second.name, first.name, named.name] == ["dense", "dense_1", "fc"]
    assert names(first.trainable_variables) == ["dense_1/kernel:0", "dense_1/bias:0"]
    assert names(tf.trainable_variables())[-2:] == ["fc_1/kernel:0", "fc_1/bias:0"]
    first(x)
    assert len(tf.trainable_variables()) == 8  # a second call makes no variable


def test_functional_layers_reuse_by_name_or_by_their_base_name():
    x = tf.placeholder(tf.float32, [None, 3])
    tf.layers.dense(x, 2)
    tf.layers.dense(x, 2, reuse=True)  # TF1: reuses the scope "dense"
    tf.layers.dense(x, 2, name="fc")
    tf.layers.dense(x, 2, name="fc", reuse=tf.AUTO_REUSE)
    with pytest.raises(ValueError, match="already exists"):
        tf.layers.dense(x, 2, name="fc")
    assert names(tf.trainable_variables()) == ["dense/kernel:0", "dense/bias:0",
                                               "fc/kernel:0", "fc/bias:0"]


def test_a_dense_object_matches_the_dense_function_with_the_same_weights():
    x_value = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    layer = tf.layers.Dense(5, activation=tf.nn.relu, use_bias=True,
                            kernel_initializer=tf.constant_initializer(0.5),
                            bias_initializer=tf.constant_initializer(-1.0),
                            activity_regularizer=tf.reduce_sum)
    y = layer(x_value)
    z = tf.layers.dense(x_value, 5, activation=tf.nn.relu,
                        kernel_initializer=tf.constant_initializer(0.5),
                        bias_initializer=tf.constant_initializer(-1.0))
    assert y.shape.as_list() == [4, 5] and layer.kernel.shape.as_list() == [3, 5]
    assert len(layer.losses) == 1  # the activity loss of the call
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_y, got_z, activity = sess.run([y, z, layer.losses[0]])
    want = np.maximum(x_value @ np.full((3, 5), 0.5) - 1.0, 0)
    np.testing.assert_allclose(got_y, want, rtol=1e-6)
    np.testing.assert_array_equal(got_y, got_z)
    assert activity == pytest.approx(want.sum() / 4, rel=1e-5)


def test_conv_pool_flatten_dropout_objects():
    images = np.random.default_rng(1).standard_normal((2, 6, 6, 3)).astype(np.float32)
    conv = tf.layers.Conv2D(4, 3, padding="same", activation=tf.nn.relu)
    pool = tf.layers.MaxPooling2D(2, 2)
    avg = tf.layers.AveragePooling2D(2, 2)
    flat = tf.layers.Flatten()
    drop = tf.layers.Dropout(rate=0.5, seed=3)
    features = conv(images)
    pooled = pool(features)
    out = flat(pooled)
    kept = drop(out, training=False)
    dropped = drop(out, training=True)
    assert features.shape.as_list() == [2, 6, 6, 4]
    assert avg(features).shape.as_list() == pooled.shape.as_list() == [2, 3, 3, 4]
    assert out.shape.as_list() == [2, 36]
    assert names(conv.weights) == ["conv2d/kernel:0", "conv2d/bias:0"]
    assert pool.weights == [] and drop.name == "dropout"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_out, got_kept, got_dropped = sess.run([out, kept, dropped])
    np.testing.assert_array_equal(got_kept, got_out)
    survivors = got_dropped != 0
    np.testing.assert_allclose(got_dropped[survivors], 2 * got_out[survivors], rtol=1e-6)


def test_batch_normalization_object_tracks_moving_statistics_and_updates():
    x = tf.placeholder(tf.float32, [None, 3])
    bn = tf.layers.BatchNormalization(momentum=0.5)
    y = bn(x, training=True)
    assert names(bn.trainable_weights) == ["batch_normalization/gamma:0",
                                           "batch_normalization/beta:0"]
    assert names(bn.non_trainable_weights) == ["batch_normalization/moving_mean:0",
                                               "batch_normalization/moving_variance:0"]
    assert len(bn.updates) == 2
    assert bn.updates == tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    x_value = np.array([[1.0, 2.0, 3.0], [3.0, 6.0, 9.0]], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, _ = sess.run([y, bn.updates], {x: x_value})
        mean = sess.run(bn.moving_mean)
    np.testing.assert_allclose(got, (x_value - x_value.mean(0)) / np.sqrt(x_value.var(0) + 1e-3),
                               rtol=1e-5)
    np.testing.assert_allclose(mean, 0.5 * x_value.mean(0), rtol=1e-6)


def test_a_layer_that_is_not_trainable_has_only_non_trainable_weights():
    layer = tf.layers.Dense(2, trainable=False)
    layer(tf.zeros([1, 2]))
    assert layer.trainable_weights == [] and tf.trainable_variables() == []
    assert names(layer.non_trainable_weights) == ["dense/kernel:0", "dense/bias:0"]


def test_bad_arguments():
    with pytest.raises(TypeError, match="Keyword argument not understood: units_"):
        tf.layers.Dense(2, units_=3)
    with pytest.raises(ValueError, match="positive integer"):
        tf.layers.Dense(0)
    with pytest.raises(ValueError, match="expected ndim=4"):
        tf.layers.Conv2D(2, 3)(tf.zeros([2, 3]))
    with pytest.raises(ValueError, match="isn't built"):
        tf.layers.Dense(2).count_params()


def test_rnn_cells_are_layers_with_their_weights():
    inputs = tf.placeholder(tf.float32, [2, 5, 3])
    lstm = tf.nn.rnn_cell.BasicLSTMCell(4)
    stack = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.DropoutWrapper(lstm),
                                         tf.nn.rnn_cell.GRUCell(2)])
    tf.nn.dynamic_rnn(stack, inputs, dtype=tf.float32)
    assert isinstance(lstm, tf.layers.Layer)
    assert names(lstm.trainable_variables) == [
        "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel:0",
        "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/bias:0"]
    assert names(stack.variables) == names(tf.trainable_variables())
    assert len(stack.weights) == 6
    assert names(stack._cells[0].weights) == names(lstm.weights)


def test_a_user_rnn_cell_built_from_the_input_shape():
    class Accumulator(tf.nn.rnn_cell.RNNCell):
        state_size = 3
        output_size = 3

        def build(self, inputs_shape):
            self.w = self.add_variable("w", [inputs_shape[-1], 3],
                                       initializer=tf.ones_initializer())
            self.built = True

        def call(self, inputs, state):
            new = state + tf.matmul(inputs, self.w)
            return new, new

    x_value = np.arange(12, dtype=np.float32).reshape(1, 6, 2)
    cell = Accumulator()
    outputs, state = tf.nn.dynamic_rnn(cell, tf.constant(x_value), dtype=tf.float32)
    assert names(cell.weights) == ["rnn/accumulator/w:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(state)
    np.testing.assert_array_equal(got, np.full((1, 3), x_value.sum()))


def test_ops_go_to_the_name_scope_the_layer_scope_was_opened_with() -> None:
    x = tf.placeholder(tf.float32, [1, 3])
    layer = tf.layers.Dense(2)
    first, second = layer(x), layer(x)
    assert (first.op.name, second.op.name) == ("dense/BiasAdd", "dense/BiasAdd_1")
    with tf.variable_scope("given") as given:
        pass
    shared = tf.layers.Dense(2, _scope=given)(x)
    assert shared.op.name == "given/BiasAdd"
    assert [v.name for v in tf.trainable_variables()][-2:] == ["given/kernel:0",
                                                              "given/bias:0"]
