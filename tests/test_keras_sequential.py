"""tw.keras.Sequential: building with and without an input shape, layers, errors."""

import numpy as np
import pytest

from tensorweave import keras
from tensorweave.keras import layers
from tests.keras_support import fresh_graph  # noqa: F401 - the fixture


def test_input_shape_builds_at_once_with_a_named_input():
    model = keras.Sequential()
    model.add(layers.Dense(3, input_shape=(4,)))
    model.add(layers.Dense(1))
    assert model.inputs[0].op.name == "dense_input"
    assert model.outputs[0].shape.as_list() == [None, 1]
    assert [layer.name for layer in model.layers] == ["dense", "dense_1"]
    assert model.count_params() == 15 + 4


def test_model_input_and_output_shapes_as_tf():
    # A graph network's first inbound node is itself (TF's Network), so its shapes answer.
    model = keras.Sequential([layers.Dense(4, input_shape=(3,)), layers.Dense(2)])
    assert model.output_shape == (None, 2) and model.input_shape == (None, 3)
    assert model.layers[0].output_shape == (None, 4)
    model.add(layers.Dense(5))
    assert model.output_shape == (None, 5)
    inputs = keras.Input((7,))
    functional = keras.Model(inputs, layers.Dense(3)(inputs))
    assert functional.output_shape == (None, 3)
    outer_in = keras.Input((7,))
    outer = keras.Model(outer_in, functional(outer_in))
    assert outer.output_shape == (None, 3)
    with pytest.raises(AttributeError, match="no inbound nodes"):
        keras.Sequential([layers.Dense(1)]).output_shape  # noqa: B018 - not built yet


def test_input_layer_first():
    model = keras.Sequential([layers.InputLayer(input_shape=(2,)), layers.Dense(1)])
    assert len(model.layers) == 1 and model.inputs[0].shape.as_list() == [None, 2]


def test_without_input_shape_builds_from_data():
    model = keras.Sequential([layers.Dense(2), layers.Dense(1)])
    assert model.inputs == []
    with pytest.raises(ValueError, match="has not yet been built"):
        model.summary()
    predicted = model.predict(np.ones((3, 5)))
    assert predicted.shape == (3, 1)
    assert model.inputs[0].shape.as_list() == [None, 5]
    assert model.layers[0].get_weights()[0].shape == (5, 2)


def test_build_with_an_input_shape():
    model = keras.Sequential([layers.Conv2D(2, 3), layers.Flatten(), layers.Dense(1)])
    model.build((None, 5, 5, 1))
    assert model.outputs[0].shape.as_list() == [None, 1]
    assert model.count_params() == (9 * 2 + 2) + (18 + 1)


def test_conv_net_learns_a_bright_corner():
    rng = np.random.RandomState(0)
    x = rng.rand(64, 6, 6, 1).astype(np.float32)
    y = rng.randint(0, 2, 64)
    x[y == 1, :3, :3, 0] += 1.0
    model = keras.Sequential([layers.Conv2D(4, 3, activation="relu", input_shape=(6, 6, 1)),
                              layers.MaxPooling2D(), layers.Flatten(),
                              layers.Dense(2, activation="softmax")])
    model.compile(keras.optimizers.Adam(0.02), "sparse_categorical_crossentropy", ["acc"])
    history = model.fit(x, y, epochs=15, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    assert model.evaluate(x, y, verbose=0)[1] >= 0.9


def test_add_refuses_what_is_not_a_layer():
    with pytest.raises(TypeError, match="must be an instance of class Layer"):
        keras.Sequential().add(lambda x: x)
