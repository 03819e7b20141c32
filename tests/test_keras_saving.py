"""tw.keras.saving: JSON configs of Sequential and functional models (shared layers, nested
models, call arguments), whole models saved to a directory and loaded back with the same
predictions, metrics and compile arguments, and the HDF5 / subclassed-model errors."""

import json

import numpy as np
import pytest

import tensorweave as tw
from tensorweave import keras
from tensorweave.keras import backend, layers
from tests.keras_support import fresh_graph  # noqa: F401 - the fixture

X = np.random.RandomState(0).rand(16, 3).astype(np.float32)
LABELS = np.random.RandomState(1).randint(0, 3, 16)


def classifier():
    model = keras.Sequential([
        layers.Dense(4, activation="relu", input_shape=(3,), kernel_constraint="non_neg",
                     kernel_regularizer=keras.regularizers.l2(0.1)),
        layers.BatchNormalization(),
        layers.Dense(3, activation="softmax")])
    model.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy",
                  metrics=["acc"])
    model.fit(X, LABELS, epochs=2, batch_size=8, verbose=0)
    return model


def test_saved_model_loads_with_its_weights_and_compile_arguments(tmp_path):
    model = classifier()
    path = tmp_path / "model"
    model.save(str(path))
    assert sorted(p.name for p in path.iterdir()) == [
        "checkpoint", "model.json", "weights.data-00000-of-00001", "weights.index"]
    predicted, evaluated = model.predict(X), model.evaluate(X, LABELS, verbose=0)
    backend.clear_session()
    loaded = keras.models.load_model(str(path))
    np.testing.assert_allclose(loaded.predict(X), predicted, rtol=1e-6)
    np.testing.assert_allclose(loaded.evaluate(X, LABELS, verbose=0), evaluated, rtol=1e-6)
    assert isinstance(loaded.optimizer, keras.optimizers.Adam)
    assert loaded.optimizer.get_config() == {"learning_rate": 0.01}
    assert loaded.metrics_names == ["loss", "acc"]
    loaded.fit(X, LABELS, epochs=1, verbose=0)  # trains, constraint included
    assert loaded.get_weights()[0].min() >= 0
    uncompiled = keras.models.load_model(str(path), compile=False)
    with pytest.raises(RuntimeError, match="must compile your model"):
        uncompiled.evaluate(X, LABELS, verbose=0)


def test_sequential_json_round_trip_keeps_the_layer_arguments():
    model = keras.Sequential([layers.InputLayer(input_shape=(3,), name="features"),
                              layers.Dense(2, activation="tanh", use_bias=False,
                                           kernel_initializer=keras.initializers.Constant(0.5)),
                              layers.Dropout(0.25)])
    config = json.loads(model.to_json())
    assert config["class_name"] == "Sequential"
    assert [c["class_name"] for c in config["config"]["layers"]] == ["InputLayer", "Dense",
                                                                     "Dropout"]
    assert config["config"]["layers"][1]["config"]["kernel_initializer"]["class_name"] == \
        "Constant"
    with tw.Graph().as_default():
        rebuilt = keras.models.model_from_json(model.to_json())
        assert rebuilt._input_names == ["features"]
        assert [layer.get_config() for layer in rebuilt.layers] == \
            [layer.get_config() for layer in model.layers]
        np.testing.assert_allclose(rebuilt.predict(X), np.tanh(X @ np.full((3, 2), 0.5)),
                                   rtol=1e-6)


def test_functional_config_with_shared_and_nested_layers():
    a, b = keras.Input((3,), name="a"), keras.Input((3,), name="b")
    shared = layers.Dense(2, name="shared")
    inner = keras.Sequential([layers.Dense(2, input_shape=(4,))], name="inner")
    out = layers.Dense(1, name="out")(inner(layers.concatenate([shared(a), shared(b)])))
    model = keras.Model([a, b], out)
    config = model.get_config()
    by_name = {entry["name"]: entry for entry in config["layers"]}
    assert [[ref[:3] for ref in node] for node in by_name["shared"]["inbound_nodes"]] == \
        [[["a", 0, 0]], [["b", 0, 0]]]
    assert [ref[:3] for ref in by_name["concatenate"]["inbound_nodes"][0]] == \
        [["shared", 0, 0], ["shared", 1, 0]]
    assert config["output_layers"] == [["out", 0, 0]]
    with tw.Graph().as_default():
        rebuilt = keras.Model.from_config(config)
        assert [w.op.name for w in rebuilt.weights] == [w.op.name for w in model.weights]
        rebuilt.set_weights(model.get_weights())
        np.testing.assert_allclose(rebuilt.predict([X, X]), model.predict([X, X]), rtol=1e-6)


def test_custom_objects_resolve_custom_activations_and_losses(tmp_path):
    def scaled_tanh(x):
        return 2.0 * tw.tanh(x)

    def half_mse(y_true, y_pred):
        return 0.5 * keras.losses.mse(y_true, y_pred)

    model = keras.Sequential([layers.Dense(1, activation=scaled_tanh, input_shape=(3,))])
    model.compile("sgd", half_mse)
    model.save(str(tmp_path / "m"))
    y = np.ones(16, np.float32)
    expect = model.evaluate(X, y, verbose=0)
    backend.clear_session()
    with pytest.raises(ValueError, match="Unknown activation function:scaled_tanh"):
        keras.models.load_model(str(tmp_path / "m"))
    backend.clear_session()
    loaded = keras.models.load_model(str(tmp_path / "m"), custom_objects={
        "scaled_tanh": scaled_tanh, "half_mse": half_mse})
    assert loaded.evaluate(X, y, verbose=0) == pytest.approx(expect, rel=1e-6)


def test_hdf5_and_subclassed_models_are_refused(tmp_path):
    model = keras.Sequential([layers.Dense(1, input_shape=(3,))])
    with pytest.raises(ImportError, match="`save_model` requires h5py"):
        model.save(str(tmp_path / "model.h5"))
    with pytest.raises(ImportError, match="`save_model` requires h5py"):
        model.save(str(tmp_path / "model"), save_format="h5")
    with pytest.raises(ImportError, match="`load_model` requires h5py"):
        keras.models.load_model(str(tmp_path / "weights.hdf5"))
    with pytest.raises(OSError, match="SavedModel file does not exist"):
        keras.models.load_model(str(tmp_path / "missing"))

    class Custom(keras.Model):
        def call(self, inputs):
            return inputs

    with pytest.raises(NotImplementedError, match="Subclassed models have no config"):
        Custom().to_json()


def test_a_lambda_argument_cannot_be_serialized():
    model = keras.Sequential([layers.Dense(1, activation=lambda x: x, input_shape=(3,))])
    with pytest.raises(TypeError, match="Cannot serialize activation"):
        model.to_json()
