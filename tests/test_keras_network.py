"""tw.keras functional and subclassed models: graph walking, replay on new inputs, layers and
weights, summary() parameter counts, get_layer and save/load_weights."""

import numpy as np
import pytest

import tensorweave as tw
from tensorweave import keras
from tensorweave.keras import backend, layers


@pytest.fixture(autouse=True)
def fresh_graph():
    backend.clear_session()
    tw.set_random_seed(2)
    np.random.seed(2)
    yield
    backend.clear_session()


def two_input_model():
    a = keras.Input(shape=(3,), name="a")
    b = keras.Input(shape=(2,), name="b")
    joined = layers.Concatenate()([a, b])
    hidden = layers.Dense(4, activation="tanh")(joined)
    return keras.Model(inputs=[a, b], outputs=layers.Dense(1)(hidden))


def test_functional_two_inputs_learn_and_predict_like_numpy():
    model = two_input_model()
    assert [layer.name for layer in model.layers] == ["a", "b", "concatenate", "dense",
                                                     "dense_1"]
    model.compile(keras.optimizers.Adam(0.05), "mse")
    rng = np.random.RandomState(0)
    xa, xb = rng.randn(64, 3).astype(np.float32), rng.randn(64, 2).astype(np.float32)
    y = xa.sum(1) - 2 * xb[:, 0]
    history = model.fit([xa, xb], y, epochs=30, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.1 * history.history["loss"][0]
    w1, b1, w2, b2 = model.get_weights()
    expect = np.tanh(np.concatenate([xa, xb], 1) @ w1 + b1) @ w2 + b2
    np.testing.assert_allclose(model.predict({"a": xa, "b": xb}), expect, rtol=1e-4,
                               atol=1e-5)


def test_model_called_on_new_inputs_shares_weights():
    model = two_input_model()
    a2, b2 = keras.Input(shape=(3,)), keras.Input(shape=(2,))
    out = model([a2, b2])
    outer = keras.Model([a2, b2], layers.Dense(2)(out))
    assert outer.layers[2] is model
    assert len(outer.weights) == 6 and outer.weights[:4] == model.weights
    xa, xb = np.ones((2, 3), np.float32), np.ones((2, 2), np.float32)
    np.testing.assert_allclose(backend.get_session().run(out, {a2: xa, b2: xb}),
                               model.predict([xa, xb]), rtol=1e-6)


def test_graph_disconnected_and_bad_inputs():
    a, b = keras.Input(shape=(2,)), keras.Input(shape=(2,))
    out = layers.Add()([a, b])
    with pytest.raises(ValueError, match="Graph disconnected"):
        keras.Model(a, out)
    with pytest.raises(ValueError, match="must come from `tf.keras.Input`"):
        keras.Model(tw.placeholder(tw.float32, [None, 2]), out)


def test_summary_param_counts_match_keras(capsys):
    x = keras.Input(shape=(4,))
    h = layers.Dense(3)(x)
    h = layers.BatchNormalization()(h)
    model = keras.Model(x, layers.Dense(2, activation="softmax")(h))
    model.summary()
    out = capsys.readouterr().out
    # Dense(3) on 4 inputs: 15; BatchNormalization(3): 12 (6 trainable); Dense(2) on 3: 8
    assert "dense (Dense)                (None, 3)                 15" in out
    assert "batch_normalization (BatchNo (None, 3)                 12" in out
    assert "Total params: 35\nTrainable params: 29\nNon-trainable params: 6" in out
    assert model.count_params() == 35


def test_summary_of_a_branching_model_lists_connections(capsys):
    two_input_model().summary()
    out = capsys.readouterr().out
    assert "Connected to" in out and "a[0][0]" in out and "b[0][0]" in out
    assert "Total params: 29" in out


def test_get_layer():
    model = two_input_model()
    assert model.get_layer("dense").name == "dense"
    assert model.get_layer(index=2).name == "concatenate"
    with pytest.raises(ValueError, match="No such layer: nope"):
        model.get_layer("nope")
    with pytest.raises(ValueError, match="at index 9 but model only has 5 layers"):
        model.get_layer(index=9)


class TwoLayer(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = layers.Dense(8, activation="relu")
        self.dropout = layers.Dropout(0.2)
        self.out = layers.Dense(3, activation="softmax")

    def call(self, inputs, training=None):
        return self.out(self.dropout(self.hidden(inputs), training=training))


def test_subclassed_model_trains_and_tracks_its_layers():
    model = TwoLayer()
    assert model.name == "two_layer" and len(model.layers) == 3
    model.compile(keras.optimizers.Adam(0.02), "sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    rng = np.random.RandomState(0)
    x = rng.randn(90, 2).astype(np.float32)
    y = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0).astype(int)
    history = model.fit(x, y, epochs=40, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.6 * history.history["loss"][0]
    assert model.evaluate(x, y, verbose=0)[1] > 0.8
    assert [w.name for w in model.weights] == [
        "two_layer/dense/kernel:0", "two_layer/dense/bias:0", "two_layer/dense_1/kernel:0",
        "two_layer/dense_1/bias:0"]
    assert model.inputs[0].shape.as_list() == [None, 2]


def test_save_and_load_weights_round_trip(tmp_path):
    model = two_input_model()
    saved = model.get_weights()
    path = str(tmp_path / "weights")
    model.save_weights(path)
    model.set_weights([np.zeros_like(w) for w in saved])
    model.load_weights(path)
    for a, b in zip(saved, model.get_weights()):
        np.testing.assert_array_equal(a, b)
    # the checkpoint is keyed by position, so a fresh copy of the architecture loads it
    other = two_input_model()
    other.load_weights(path)
    for a, b in zip(saved, other.get_weights()):
        np.testing.assert_array_equal(a, b)
    names = {name for name, _ in tw.train.list_variables(path)}
    assert "layer_with_weights-0/kernel" in names and "layer_with_weights-1/bias" in names
    with pytest.raises(ValueError, match="not a valid checkpoint"):
        model.load_weights(str(tmp_path / "missing"))


def test_save_weights_creates_the_checkpoint_directory(tmp_path):
    model = two_input_model()
    path = str(tmp_path / "weights" / "nested" / "my_model")
    model.save_weights(path)
    saved = model.get_weights()
    model.set_weights([np.zeros_like(w) for w in saved])
    model.load_weights(path)
    for a, b in zip(saved, model.get_weights()):
        np.testing.assert_array_equal(a, b)
