"""tw.keras.layers: Keras naming, arguments and forward passes against numpy with the layers'
own weights (get_weights)."""

import numpy as np
import pytest

import tensorweave as tw
from tensorweave import keras
from tensorweave.keras import backend, layers
from tests.keras_support import fresh_graph  # noqa: F401 - the fixture


def run(tensor, feeds, training=False):
    if training:
        feeds = {**feeds, backend.learning_phase(): True}
    return backend.get_session().run(tensor, feeds)


def test_names_are_unique_per_graph_and_are_the_variable_scopes():
    first, second = layers.Dense(2), layers.Dense(2)
    assert (first.name, second.name) == ("dense", "dense_1")
    assert layers.Conv2D(1, 3).name == "conv2d"
    assert layers.MaxPooling2D().name == "max_pooling2d"
    assert layers.SimpleRNN(2).name == "simple_rnn"
    assert layers.Dense(1, name="out").name == "out"
    x = keras.Input(shape=(3,))
    second(x)
    assert [w.name for w in second.weights] == ["dense_1/kernel:0", "dense_1/bias:0"]


def test_input_is_a_named_placeholder_with_keras_history():
    x = keras.Input(shape=(4,))
    y = keras.Input(shape=(2, 3), name="pixels", dtype="int32")
    assert x.op.type == "Placeholder" and x.op.name == "input_1"
    assert x.shape.as_list() == [None, 4]
    assert y.op.name == "pixels" and y.dtype == tw.int32 and y.shape.as_list() == [None, 2, 3]
    assert isinstance(x._keras_history[0], layers.InputLayer)
    with pytest.raises(ValueError, match="either a `shape` or a `tensor`"):
        keras.Input()


def test_dense_forward_matches_numpy_with_its_own_weights():
    x = keras.Input(shape=(4,))
    dense = layers.Dense(3, activation="relu")
    y = dense(x)
    data = np.random.RandomState(0).randn(5, 4).astype(np.float32)
    kernel, bias = dense.get_weights()
    assert kernel.shape == (4, 3) and bias.shape == (3,)
    out = run(y, {x: data})
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.maximum(data @ kernel + bias, 0), rtol=1e-5)
    assert dense.output_shape == (None, 3) and dense.input_shape == (None, 4)
    assert dense.count_params() == 15


def test_dense_initializer_and_activation_strings():
    dense = layers.Dense(2, kernel_initializer="ones", bias_initializer="ones",
                         activation="sigmoid")
    x = keras.Input(shape=(3,))
    out = run(dense(x), {x: np.ones((1, 3), np.float32)})
    np.testing.assert_allclose(out, 1 / (1 + np.exp(-4.0)) * np.ones((1, 2)), rtol=1e-6)
    with pytest.raises(ValueError, match="Unknown activation function:swishy"):
        layers.Dense(2, activation="swishy")
    with pytest.raises(ValueError, match="Unknown initializer: nope"):
        layers.Dense(2, kernel_initializer="nope")


def test_input_shape_arguments_give_batch_input_shape():
    assert layers.Dense(2, input_shape=(3,))._batch_input_shape == (None, 3)
    assert layers.Dense(2, input_dim=5)._batch_input_shape == (None, 5)
    assert layers.Dense(2, batch_input_shape=(8, 5))._batch_input_shape == (8, 5)


def test_dropout_follows_the_learning_phase():
    x = keras.Input(shape=(1000,))
    y = layers.Dropout(0.5)(x)
    data = np.ones((1, 1000), np.float32)
    np.testing.assert_array_equal(run(y, {x: data}), data)
    trained = run(y, {x: data}, training=True)
    assert set(np.unique(trained)) <= {0.0, 2.0}
    assert 300 < (trained == 0).sum() < 700
    explicit = layers.Dropout(0.5)(x, training=True)
    assert (run(explicit, {x: data}) == 0).any()


def test_flatten_reshape_activation():
    x = keras.Input(shape=(2, 3))
    flat = layers.Flatten()(x)
    reshaped = layers.Reshape((3, -1))(x)
    act = layers.Activation("tanh")(x)
    data = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    assert flat.shape.as_list() == [None, 6] and reshaped.shape.as_list() == [None, 3, 2]
    a, b, c = run([flat, reshaped, act], {x: data})
    np.testing.assert_array_equal(a, data.reshape(2, 6))
    np.testing.assert_array_equal(b, data.reshape(2, 3, 2))
    np.testing.assert_allclose(c, np.tanh(data), rtol=1e-6)
    with pytest.raises(ValueError, match="total size of new array must be unchanged"):
        layers.Reshape((4,))(x)


def test_conv2d_and_pooling_match_numpy():
    x = keras.Input(shape=(4, 4, 1))
    conv = layers.Conv2D(2, (2, 2), activation="relu")
    y = conv(x)
    pooled = layers.MaxPooling2D()(x)
    averaged = layers.AveragePooling2D(pool_size=2, strides=1)(x)
    assert y.shape.as_list() == [None, 3, 3, 2]
    assert pooled.shape.as_list() == [None, 2, 2, 1]
    assert averaged.shape.as_list() == [None, 3, 3, 1]
    data = np.random.RandomState(1).randn(2, 4, 4, 1).astype(np.float32)
    kernel, bias = conv.get_weights()
    expect = np.zeros((2, 3, 3, 2), np.float32)
    for i in range(3):
        for j in range(3):
            patch = data[:, i:i + 2, j:j + 2, :]
            expect[:, i, j, :] = np.tensordot(patch, kernel, axes=3) + bias
    out, p, a = run([y, pooled, averaged], {x: data})
    np.testing.assert_allclose(out, np.maximum(expect, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(p, data.reshape(2, 2, 2, 2, 2, 1).max(axis=(2, 4)))
    expect_avg = np.mean([data[:, i:i + 3, j:j + 3] for i in range(2) for j in range(2)], 0)
    np.testing.assert_allclose(a, expect_avg, rtol=1e-5)
    assert conv.count_params() == 2 * 2 * 1 * 2 + 2


def test_batch_normalization_inference_and_training_updates():
    x = keras.Input(shape=(3,))
    bn = layers.BatchNormalization()
    y = bn(x)
    assert [w.name.split("/")[-1] for w in bn.weights] == [
        "gamma:0", "beta:0", "moving_mean:0", "moving_variance:0"]
    assert len(bn.trainable_weights) == 2 and len(bn.updates) == 2
    data = np.random.RandomState(2).randn(8, 3).astype(np.float32) * 3 + 1
    np.testing.assert_allclose(run(y, {x: data}), data / np.sqrt(1 + 1e-3), rtol=1e-5)
    trained = run(y, {x: data}, training=True)
    expect = (data - data.mean(0)) / np.sqrt(data.var(0) + 1e-3)
    np.testing.assert_allclose(trained, expect, rtol=1e-4, atol=1e-5)


def test_embedding_looks_up_rows():
    x = keras.Input(shape=(3,))
    embedding = layers.Embedding(10, 4)
    y = embedding(x)
    assert y.shape.as_list() == [None, 3, 4]
    (table,) = embedding.get_weights()
    assert table.shape == (10, 4) and np.abs(table).max() <= 0.05
    ids = np.array([[1, 2, 9], [0, 0, 3]])
    np.testing.assert_array_equal(run(y, {x: ids}), table[ids])
    with pytest.raises(ValueError, match="should be positive"):
        layers.Embedding(0, 4)


def test_concatenate_and_add():
    a, b = keras.Input(shape=(2,)), keras.Input(shape=(3,))
    joined = layers.Concatenate()([a, b])
    summed = layers.Add()([a, a])
    assert joined.shape.as_list() == [None, 5]
    da, db = np.ones((2, 2), np.float32), np.zeros((2, 3), np.float32)
    j, s = run([joined, summed], {a: da, b: db})
    np.testing.assert_array_equal(j, np.concatenate([da, db], 1))
    np.testing.assert_array_equal(s, 2 * da)
    with pytest.raises(ValueError, match="matching shapes except for the concat axis"):
        layers.Concatenate(axis=0)([a, b])
    with pytest.raises(ValueError, match="could not be broadcast"):
        layers.Add()([a, b])
    with pytest.raises(ValueError, match="list of at least 2 inputs"):
        layers.Add()(a)


def test_layer_input_checks_keep_tensorflows_messages():
    x = keras.Input(shape=(3,))
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=2"):
        layers.Conv2D(1, 2)(x)
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=2"):
        layers.LSTM(2)(x)


def test_set_weights_checks_the_count():
    dense = layers.Dense(2)
    dense(keras.Input(shape=(3,)))
    dense.set_weights([np.ones((3, 2)), np.full(2, 0.5)])
    np.testing.assert_array_equal(dense.get_weights()[1], [0.5, 0.5])
    with pytest.raises(ValueError, match="was expecting 2 weights"):
        dense.set_weights([np.ones((3, 2))])
