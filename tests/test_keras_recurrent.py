"""tw.keras SimpleRNN / GRU / LSTM: Keras's weights and gate equations against a numpy
reference with the layers' own weights, return_sequences / return_state / go_backwards, and an
LSTM that learns a toy sequence task."""

import numpy as np
import pytest

import tensorweave as tw
from tensorweave import keras
from tensorweave.keras import backend, layers
from tests.keras_support import fresh_graph  # noqa: F401 - the fixture


def hard_sigmoid(x):
    return np.clip(0.2 * x + 0.5, 0, 1)


def numpy_rnn(kind, weights, data, units):
    kernel, recurrent, bias = weights
    h = np.zeros((data.shape[0], units), np.float32)
    c = np.zeros_like(h)
    outputs = []
    for t in range(data.shape[1]):
        x = data[:, t]
        if kind == "simple":
            h = np.tanh(x @ kernel + h @ recurrent + bias)
        elif kind == "gru":
            xz, xr, xh = np.split(x @ kernel + bias, 3, axis=1)
            z = hard_sigmoid(xz + h @ recurrent[:, :units])
            r = hard_sigmoid(xr + h @ recurrent[:, units:2 * units])
            candidate = np.tanh(xh + (r * h) @ recurrent[:, 2 * units:])
            h = z * h + (1 - z) * candidate
        else:
            zi, zf, zc, zo = np.split(x @ kernel + h @ recurrent + bias, 4, axis=1)
            c = hard_sigmoid(zf) * c + hard_sigmoid(zi) * np.tanh(zc)
            h = hard_sigmoid(zo) * np.tanh(c)
        outputs.append(h)
    return np.stack(outputs, 1), h, c


@pytest.mark.parametrize("kind, cls, gates", [("simple", layers.SimpleRNN, 1),
                                              ("gru", layers.GRU, 3),
                                              ("lstm", layers.LSTM, 4)])
def test_forward_matches_numpy(kind, cls, gates):
    units = 3
    x = keras.Input(shape=(5, 2))
    layer = cls(units, return_sequences=True, bias_initializer="random_uniform")
    sequences = layer(x)
    last = cls(units)(x)
    assert sequences.shape.as_list() == [None, 5, units]
    assert last.shape.as_list() == [None, units]
    weights = layer.get_weights()
    assert [w.shape for w in weights] == [(2, gates * units), (units, gates * units),
                                          (gates * units,)]
    assert [w.name.split("/")[-1] for w in layer.weights] == [
        "kernel:0", "recurrent_kernel:0", "bias:0"]
    # Keras's parameter count
    assert layer.count_params() == gates * (units * (2 + units) + units)
    data = np.random.RandomState(0).randn(4, 5, 2).astype(np.float32)
    expect, _, _ = numpy_rnn(kind, weights, data, units)
    np.testing.assert_allclose(backend.get_session().run(sequences, {x: data}), expect, rtol=1e-4,
                               atol=1e-5)


def test_recurrent_kernel_is_orthogonal_and_lstm_forget_bias_is_one():
    layer = layers.LSTM(4)
    layer(keras.Input(shape=(3, 2)))
    _, recurrent, bias = layer.get_weights()
    np.testing.assert_allclose(recurrent @ recurrent.T, np.eye(4), atol=1e-5)
    np.testing.assert_array_equal(bias, [0] * 4 + [1] * 4 + [0] * 8)


def test_return_state_and_go_backwards():
    x = keras.Input(shape=(4, 2))
    layer = layers.LSTM(3, return_state=True, go_backwards=True)
    output, h, c = layer(x)
    data = np.random.RandomState(1).randn(2, 4, 2).astype(np.float32)
    out, hv, cv = backend.get_session().run([output, h, c], {x: data})
    _, expect_h, expect_c = numpy_rnn("lstm", layer.get_weights(), data[:, ::-1], 3)
    np.testing.assert_allclose(out, expect_h, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(hv, expect_h, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(cv, expect_c, rtol=1e-4, atol=1e-5)


def test_unsupported_arguments_are_refused():
    with pytest.raises(ValueError, match="dropout"):
        layers.LSTM(2, dropout=0.2)
    with pytest.raises(ValueError, match="stateful"):
        layers.GRU(2, stateful=True)


def test_lstm_learns_the_sign_of_a_sequence_sum():
    tw.set_random_seed(3)
    np.random.seed(3)  # fit's shuffling
    rng = np.random.RandomState(3)
    x = rng.randn(128, 6, 1).astype(np.float32)
    y = (x.sum(axis=(1, 2)) > 0).astype(np.float32)
    model = keras.Sequential([layers.LSTM(8, input_shape=(6, 1)),
                              layers.Dense(1, activation="sigmoid")])
    model.compile(keras.optimizers.Adam(0.03), "binary_crossentropy", ["accuracy"])
    history = model.fit(x, y, epochs=10, batch_size=32, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    assert model.evaluate(x, y, verbose=0)[1] >= 0.85
