"""tw.keras.callbacks: the order of events in fit, History, EarlyStopping, LambdaCallback."""

import numpy as np
import pytest

import tensorweave as tw
from tensorweave import keras
from tensorweave.keras import backend, callbacks, layers


@pytest.fixture(autouse=True)
def fresh_graph():
    backend.clear_session()
    tw.set_random_seed(4)
    yield
    backend.clear_session()


def linear_model(rate):
    model = keras.Sequential([layers.Dense(1, input_shape=(2,))])
    model.compile(keras.optimizers.SGD(rate), "mse")
    return model


X = np.random.RandomState(0).randn(16, 2).astype(np.float32)
Y = X @ np.array([1.0, -2.0], np.float32)


def test_events_reach_a_callback_in_order():
    events = []

    class Recorder(callbacks.Callback):
        def on_train_begin(self, logs=None):
            events.append(("train_begin", self.params["epochs"], self.model is model))

        def on_epoch_begin(self, epoch, logs=None):
            events.append(("epoch_begin", epoch))

        def on_batch_end(self, batch, logs=None):
            events.append(("batch_end", batch, logs["size"], "loss" in logs))

        def on_epoch_end(self, epoch, logs=None):
            events.append(("epoch_end", epoch, sorted(logs)))

        def on_train_end(self, logs=None):
            events.append(("train_end",))

    model = linear_model(0.1)
    model.fit(X, Y, batch_size=10, epochs=2, verbose=0, callbacks=[Recorder()])
    assert events == [
        ("train_begin", 2, True),
        ("epoch_begin", 0), ("batch_end", 0, 10, True), ("batch_end", 1, 6, True),
        ("epoch_end", 0, ["loss"]),
        ("epoch_begin", 1), ("batch_end", 0, 10, True), ("batch_end", 1, 6, True),
        ("epoch_end", 1, ["loss"]),
        ("train_end",),
    ]


def test_early_stopping_stops_when_the_loss_stops_improving():
    model = linear_model(0.0)  # nothing changes, so the loss never improves
    stopper = callbacks.EarlyStopping(monitor="loss", patience=2)
    history = model.fit(X, Y, epochs=20, verbose=0, shuffle=False, callbacks=[stopper])
    assert history.epoch == [0, 1, 2] and stopper.stopped_epoch == 2


def test_early_stopping_keeps_going_while_improving_and_restores_the_best():
    model = linear_model(0.05)
    stopper = callbacks.EarlyStopping(monitor="val_loss", patience=1, min_delta=1e9,
                                      restore_best_weights=True)
    history = model.fit(X, Y, epochs=10, verbose=0, validation_data=(X, Y),
                        callbacks=[stopper])
    # min_delta is so large that no epoch after the first counts as an improvement
    assert history.epoch == [0, 1]
    np.testing.assert_allclose(model.evaluate(X, Y, verbose=0), history.history["val_loss"][0],
                               rtol=1e-5)


def test_early_stopping_warns_about_a_missing_metric():
    model = linear_model(0.1)
    with pytest.warns(RuntimeWarning, match="val_loss"):
        history = model.fit(X, Y, epochs=2, verbose=0,
                            callbacks=[callbacks.EarlyStopping(patience=0)])
    assert history.epoch == [0, 1]


def test_lambda_callback():
    seen = []
    model = linear_model(0.1)
    model.fit(X, Y, epochs=3, verbose=0, callbacks=[callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: seen.append((epoch, round(logs["loss"], 6))))])
    assert [e for e, _ in seen] == [0, 1, 2]
    assert seen[-1][1] < seen[0][1]
