"""tw.keras.estimator.model_to_estimator: the Estimator's evaluate, predict and train steps
against the Keras model's own numbers (weights warm-started, batch-norm statistics included),
features keyed by input name, and TF's errors."""

import numpy as np
import pytest

import tensorweave as tw
from tensorweave import keras
from tensorweave.keras import backend, layers

X = np.random.RandomState(0).rand(32, 3).astype(np.float32)
LABELS = np.random.RandomState(1).randint(0, 3, 32)


@pytest.fixture(autouse=True)
def fresh_graph():
    backend.clear_session()
    tw.set_random_seed(2)
    yield
    backend.clear_session()


def classifier():
    model = keras.Sequential([layers.Dense(4, activation="relu", input_shape=(3,)),
                              layers.BatchNormalization(),
                              layers.Dense(3, activation="softmax")])
    model.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy",
                  metrics=["acc"])
    model.fit(X, LABELS, epochs=2, batch_size=8, verbose=0)  # moves the weights and BN stats
    return model


def train_input():
    return tw.data.Dataset.from_tensor_slices(({"dense_input": X}, LABELS)).batch(32)


def test_evaluate_predict_and_a_train_step_match_the_keras_model(tmp_path):
    model = classifier()
    estimator = keras.estimator.model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    assert (tmp_path / "keras" / "keras_model.ckpt.index").exists()
    results = estimator.evaluate(train_input)
    loss, acc = model.evaluate(X, LABELS, batch_size=32, verbose=0)
    assert results["global_step"] == 0
    assert results["loss"] == pytest.approx(loss, rel=1e-5)
    assert results["acc"] == pytest.approx(acc, rel=1e-6)
    output = model._output_names[0]
    predicted = np.array([p[output] for p in estimator.predict(
        lambda: tw.data.Dataset.from_tensor_slices({"dense_input": X}).batch(8))])
    np.testing.assert_allclose(predicted, model.predict(X), rtol=1e-5, atol=1e-7)
    # one SGD step on the same batch, in both (batch-norm updates included)
    model.train_on_batch(X, LABELS)
    estimator.train(train_input, steps=1)
    after = estimator.evaluate(train_input)
    assert after["global_step"] == 1
    assert after["loss"] == pytest.approx(model.evaluate(X, LABELS, batch_size=32,
                                                         verbose=0)[0], rel=1e-5)


def test_functional_model_with_two_named_inputs_and_a_regression_label(tmp_path):
    a, b = keras.Input((2,), name="a"), keras.Input((1,), name="b")
    out = layers.Dense(1, name="out")(layers.concatenate([a, b]))
    model = keras.Model([a, b], out)
    model.compile("sgd", "mse", metrics=["mae"])
    xa = np.random.RandomState(3).rand(10, 2).astype(np.float32)
    xb = np.random.RandomState(4).rand(10, 1)  # float64: cast to the input's float32
    y = np.random.RandomState(5).rand(10).astype(np.float32)
    estimator = keras.estimator.model_to_estimator(model, model_dir=str(tmp_path))
    results = estimator.evaluate(
        lambda: tw.data.Dataset.from_tensor_slices(({"a": xa, "b": xb}, y)).batch(10))
    loss, mae = model.evaluate([xa, xb.astype(np.float32)], y, verbose=0)
    assert results["loss"] == pytest.approx(loss, rel=1e-5)
    assert results["mean_absolute_error"] == pytest.approx(mae, rel=1e-5)
    with pytest.raises(ValueError, match="does not have the expected inputs keys"):
        estimator.evaluate(
            lambda: tw.data.Dataset.from_tensor_slices(({"a": xa, "c": xb}, y)).batch(10))


def test_conversion_errors():
    model = keras.Sequential([layers.Dense(1, input_shape=(2,))])
    with pytest.raises(ValueError, match="has not been compiled yet"):
        keras.estimator.model_to_estimator(model)
    with pytest.raises(ValueError, match="needs to be provided"):
        keras.estimator.model_to_estimator()
    with pytest.raises(ValueError, match="HDF5"):
        keras.estimator.model_to_estimator(keras_model_path="model.h5")
