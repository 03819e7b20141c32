"""tw.keras.models.clone_model: same architecture and variable names in a fresh graph, new
weights, given input tensors, shared layers, nested models, and the subclassed-model error."""

import numpy as np
import pytest

import tensorweave as tw
from tensorweave import keras
from tensorweave.keras import backend, layers
from tests.keras_support import fresh_graph  # noqa: F401 - the fixture

X = np.random.RandomState(0).rand(5, 3).astype(np.float32)


def names(model):
    return [w.op.name for w in model.weights]


def test_sequential_clone_in_a_fresh_graph_has_the_same_names_and_computes_alike():
    model = keras.Sequential([layers.Dense(4, activation="relu", input_shape=(3,),
                                           kernel_regularizer="l2"),
                              layers.Dense(2, kernel_initializer="ones")])
    with tw.Graph().as_default():
        clone = keras.models.clone_model(model)
        assert names(clone) == names(model) == ["dense/kernel", "dense/bias", "dense_1/kernel",
                                                "dense_1/bias"]
        assert clone._input_names == model._input_names == ["dense_input"]
        assert len(clone.losses) == 1  # the regularizer came along
        np.testing.assert_array_equal(clone.get_weights()[2], np.ones((4, 2), np.float32))
        clone.set_weights(model.get_weights())
        np.testing.assert_allclose(clone.predict(X), model.predict(X), rtol=1e-6)


def test_functional_clone_on_given_tensors_keeps_shared_layers_shared():
    a, b = keras.Input((3,), name="a"), keras.Input((3,), name="b")
    shared = layers.Dense(2, name="shared")
    out = layers.Dense(1)(layers.concatenate([shared(a), shared(b)]))
    model = keras.Model([a, b], out)
    x, y = tw.placeholder(tw.float32, [None, 3]), tw.placeholder(tw.float32, [None, 3])
    clone = keras.models.clone_model(model, [x, y])
    assert clone.inputs == [x, y] and clone._input_names == ["a", "b"]
    # in the same graph the clone's scopes get new names
    assert names(clone) == ["shared_1/kernel", "shared_1/bias", "dense_1/kernel", "dense_1/bias"]
    clone.set_weights(model.get_weights())
    np.testing.assert_allclose(backend.get_session().run(clone.outputs[0], {x: X, y: X}),
                               model.predict([X, X]), rtol=1e-6)


def test_nested_models_are_cloned_too():
    inner = keras.Sequential([layers.Dense(2, input_shape=(3,))], name="inner")
    x = keras.Input((3,))
    model = keras.Model(x, layers.Dense(1)(inner(x)))
    clone = keras.models.clone_model(model)
    assert clone.layers[1] is not inner and clone.layers[1].name == "inner"
    clone.set_weights(model.get_weights())
    np.testing.assert_allclose(clone.predict(X), model.predict(X), rtol=1e-6)


def test_subclassed_models_cannot_be_cloned():
    class Custom(keras.Model):
        def call(self, inputs):
            return inputs

    with pytest.raises(ValueError, match="got a subclass model instead"):
        keras.models.clone_model(Custom())
