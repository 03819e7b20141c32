"""tw.keras.regularizers: L1L2 penalties against numpy, `get`, and Keras layers taking them
(objects and names) into the model's loss."""

import numpy as np
import pytest

import tensorweave as tw
from tensorweave import keras
from tensorweave.keras import layers, regularizers
from tests.keras_support import fresh_graph, run  # noqa: F401 - the fixture

W = np.array([[1.0, -2.0], [0.5, 0.0]], np.float32)


@pytest.mark.parametrize("regularizer, expect", [
    (regularizers.l1(0.1), 0.1 * np.abs(W).sum()),
    (regularizers.l2(0.2), 0.2 * (W ** 2).sum()),
    (regularizers.l1_l2(0.1, 0.2), 0.1 * np.abs(W).sum() + 0.2 * (W ** 2).sum()),
    (regularizers.L1L2(), 0.0),
])
def test_penalties_match_numpy(regularizer, expect):
    value = run(regularizer(tw.constant(W)))
    assert value.dtype == np.float32
    np.testing.assert_allclose(value, expect, rtol=1e-6)


def test_get_resolves_names_configs_and_callables():
    assert regularizers.get(None) is None
    assert regularizers.get("l2").get_config() == {"l1": 0.0, "l2": pytest.approx(0.01)}
    config = {"class_name": "L1L2", "config": {"l1": 0.5, "l2": 0.0}}
    assert regularizers.get(config).get_config() == {"l1": 0.5, "l2": 0.0}
    assert regularizers.get(abs) is abs
    with pytest.raises(ValueError, match="Could not interpret regularizer identifier: l3"):
        regularizers.get("l3")


def test_dense_regularizers_add_to_the_models_loss():
    model = keras.Sequential([layers.Dense(2, input_shape=(2,), use_bias=False,
                                           kernel_regularizer=keras.regularizers.l2(0.5))])
    model.compile("sgd", "mse")
    model.set_weights([W])
    x, y = np.ones((3, 2), np.float32), np.zeros((3, 2), np.float32)
    data_loss = np.mean((x @ W) ** 2)
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0),
                               data_loss + 0.5 * (W ** 2).sum(), rtol=1e-6)


def test_add_weight_takes_keras_names():
    class Scale(layers.Layer):
        def build(self, input_shape):
            self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1],),
                                          initializer="ones", regularizer="l1")
            super().build(input_shape)

        def call(self, inputs):
            return inputs * self.kernel

    layer = Scale()
    out = layer(tw.constant(W))
    np.testing.assert_array_equal(run(out), W)
    np.testing.assert_allclose(run(layer.losses[0]), 0.01 * 2, rtol=1e-6)


def test_serialize_round_trips_and_unknown_class_fails():
    config = regularizers.serialize(regularizers.l1_l2(0.25, 0.5))
    assert config == {"class_name": "L1L2", "config": {"l1": 0.25, "l2": 0.5}}
    assert regularizers.deserialize(config).get_config() == config["config"]
    with pytest.raises(ValueError, match="Unknown regularizer: L3"):
        regularizers.get({"class_name": "L3", "config": {}})


def test_string_kernel_and_activity_regularizers_in_a_layer():
    model = keras.Sequential([layers.Dense(2, input_shape=(2,), use_bias=False,
                                           kernel_regularizer="l2", activity_regularizer="l1")])
    model.compile("sgd", "mse")
    model.set_weights([W])
    x = np.array([[1.0, 2.0], [-1.0, 0.5], [0.0, 3.0]], np.float32)
    y = np.zeros((3, 2), np.float32)
    out = x @ W
    expect = np.mean(out ** 2) + 0.01 * (W ** 2).sum() + 0.01 * np.abs(out).sum() / 3
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0), expect, rtol=1e-6)
