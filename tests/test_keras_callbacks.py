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


class Recorder(callbacks.Callback):
    """Every hook it gets, with the batch logs' keys."""

    def __init__(self):
        super().__init__()
        self.events = []

    def __getattribute__(self, name):
        if name.startswith("on_") and not name.startswith(("on_batch", "on_epoch")):
            events = object.__getattribute__(self, "events")
            return lambda *args: events.append((name, *[
                sorted(a) if isinstance(a, dict) else a for a in args]))
        return object.__getattribute__(self, name)


def test_evaluate_and_predict_run_the_test_and_predict_hooks():
    model = linear_model(0.1)
    recorder = Recorder()
    model.evaluate(X, Y, batch_size=10, verbose=0, callbacks=[recorder])
    assert recorder.events == [
        ("on_test_begin",),
        ("on_test_batch_begin", 0, ["batch", "size"]), ("on_test_batch_end", 0,
                                                        ["batch", "loss", "size"]),
        ("on_test_batch_begin", 1, ["batch", "size"]), ("on_test_batch_end", 1,
                                                        ["batch", "loss", "size"]),
        ("on_test_end",),
    ]
    assert recorder.params["samples"] == 16 and recorder.params["metrics"] == ["loss"]
    outputs = []
    predicted = model.predict(X, batch_size=10, callbacks=[callbacks.LambdaCallback(
        on_predict_batch_end=lambda batch, logs: outputs.append(logs["outputs"][0]))])
    np.testing.assert_array_equal(np.concatenate(outputs), predicted)


def test_predict_hooks_on_a_dataset_and_validation_hooks_in_fit():
    model = linear_model(0.1)
    recorder = Recorder()
    model.predict(tw.data.Dataset.from_tensor_slices(X).batch(8), callbacks=[recorder])
    assert [e[0] for e in recorder.events] == [
        "on_predict_begin", "on_predict_batch_begin", "on_predict_batch_end",
        "on_predict_batch_begin", "on_predict_batch_end", "on_predict_end"]
    recorder = Recorder()
    model.fit(X, Y, batch_size=16, epochs=1, verbose=0, validation_data=(X, Y),
              callbacks=[recorder])
    assert [e[0] for e in recorder.events] == [
        "on_train_begin", "on_train_batch_begin", "on_train_batch_end", "on_test_begin",
        "on_test_batch_begin", "on_test_batch_end", "on_test_end", "on_train_end"]


def test_learning_rate_scheduler_sets_the_rate_the_updates_use():
    model = linear_model(0.1)
    before = model.get_weights()
    scheduler = callbacks.LearningRateScheduler(lambda epoch: 0.0 if epoch == 0 else 0.05)
    history = model.fit(X, Y, batch_size=16, epochs=1, verbose=0, callbacks=[scheduler])
    assert history.history["lr"] == [0.0]
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)  # a zero rate does not move the weights
    history = model.fit(X, Y, batch_size=16, epochs=2, verbose=0, callbacks=[
        callbacks.LearningRateScheduler(lambda epoch, lr: lr + 0.25)])
    np.testing.assert_allclose(history.history["lr"], [0.25, 0.5], rtol=1e-6)
    np.testing.assert_allclose(backend.get_value(model.optimizer.lr), 0.5)


def test_scheduled_rate_matches_one_numpy_sgd_step():
    model = linear_model(0.1)
    (kernel, bias) = model.get_weights()
    model.fit(X, Y, batch_size=16, epochs=1, verbose=0, shuffle=False, callbacks=[
        callbacks.LearningRateScheduler(lambda epoch: 0.3)])
    error = X @ kernel[:, 0] + bias[0] - Y
    expect_kernel = kernel[:, 0] - 0.3 * 2 * X.T @ error / len(X)
    np.testing.assert_allclose(model.get_weights()[0][:, 0], expect_kernel, rtol=1e-5)


def test_scheduler_errors():
    model = linear_model(0.1)
    with pytest.raises(ValueError, match='"schedule" function should be float'):
        model.fit(X, Y, verbose=0, callbacks=[callbacks.LearningRateScheduler(lambda e: 1)])
    model.compile(tw.train.GradientDescentOptimizer(0.1), "mse")
    with pytest.raises(ValueError, match='Optimizer must have a "lr" attribute.'):
        model.fit(X, Y, verbose=0,
                  callbacks=[callbacks.LearningRateScheduler(lambda e: 0.1)])


def test_reduce_lr_on_plateau_with_patience_and_cooldown():
    model = linear_model(1e-9)  # with min_delta 10, no epoch after the first improves
    reducer = callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, cooldown=2,
                                          min_delta=10.0, min_lr=3e-10)
    history = model.fit(X, Y, epochs=6, verbose=0, callbacks=[reducer])
    # 0 sets the best; 1 runs out of patience and halves; 2 cools down; 3 halves, down to
    # min_lr; 4 cools down; 5 stays at min_lr (logged before each epoch's reduction)
    np.testing.assert_allclose(history.history["lr"], [1e-9, 1e-9, 5e-10, 5e-10, 3e-10, 3e-10],
                               rtol=1e-6)
    np.testing.assert_allclose(backend.get_value(model.optimizer.lr), 3e-10, rtol=1e-6)
    with pytest.raises(ValueError, match="does not support a factor >= 1.0"):
        callbacks.ReduceLROnPlateau(factor=1.0)


def test_terminate_on_nan_stops_after_the_bad_batch(capsys):
    model = linear_model(0.1)
    seen = []
    y = Y.copy()
    y[0] = np.inf
    history = model.fit(X, y, batch_size=4, epochs=3, verbose=0, shuffle=False, callbacks=[
        callbacks.TerminateOnNaN(),
        callbacks.LambdaCallback(on_batch_end=lambda batch, logs: seen.append(batch))])
    assert seen == [0] and history.epoch == [0]
    assert "Batch 0: Invalid loss, terminating training" in capsys.readouterr().out


def test_model_checkpoint_saves_formatted_paths_and_the_best(tmp_path):
    model = linear_model(0.1)
    pattern = str(tmp_path / "w.{epoch:02d}-{loss:.3f}")
    saved = []

    class Saving(callbacks.ModelCheckpoint):
        def _save(self, epoch, logs):
            super()._save(epoch, logs)
            saved.append(model.get_weights())

    history = model.fit(X, Y, batch_size=16, epochs=2, verbose=0, callbacks=[
        Saving(pattern, monitor="loss", save_weights_only=True)])
    for epoch, loss in enumerate(history.history["loss"]):
        path = pattern.format(epoch=epoch + 1, loss=loss)
        assert tw.train.checkpoint_exists(path)
    fresh = linear_model(0.1)
    fresh.load_weights(pattern.format(epoch=1, loss=history.history["loss"][0]))
    for a, b in zip(saved[0], fresh.get_weights()):
        np.testing.assert_array_equal(a, b)
    best = tmp_path / "best"
    checkpoint = callbacks.ModelCheckpoint(str(best), monitor="loss", save_best_only=True,
                                           save_weights_only=True, verbose=1)
    frozen = linear_model(0.0)
    frozen.fit(X, Y, epochs=2, verbose=0, callbacks=[checkpoint])
    assert tw.train.checkpoint_exists(str(best)) and checkpoint.best == pytest.approx(
        frozen.evaluate(X, Y, verbose=0), rel=1e-5)
    with pytest.raises(ValueError, match="Unrecognized save_freq: often"):
        callbacks.ModelCheckpoint(str(best), save_freq="often")


def test_model_checkpoint_save_freq_counts_samples(tmp_path):
    model = linear_model(0.1)
    paths = []

    class Saving(callbacks.ModelCheckpoint):
        def _save(self, epoch, logs):
            paths.append((epoch, logs["batch"]))

    model.fit(X, Y, batch_size=4, epochs=2, verbose=0, shuffle=False,
              callbacks=[Saving(str(tmp_path / "w"), save_freq=8)])
    assert paths == [(0, 1), (0, 3), (1, 1), (1, 3)]


def test_csv_logger_writes_and_appends(tmp_path):
    path = tmp_path / "log.csv"
    model = linear_model(0.1)
    history = model.fit(X, Y, epochs=2, verbose=0, validation_data=(X, Y),
                        callbacks=[callbacks.CSVLogger(str(path))])
    lines = path.read_text().splitlines()
    assert lines[0] == "epoch,loss,val_loss" and len(lines) == 3
    epoch, loss, val_loss = lines[2].split(",")
    assert epoch == "1" and float(loss) == pytest.approx(history.history["loss"][1])
    assert float(val_loss) == pytest.approx(history.history["val_loss"][1])
    model.fit(X, Y, epochs=1, verbose=0, validation_data=(X, Y),
              callbacks=[callbacks.CSVLogger(str(path), separator=",", append=True)])
    lines = path.read_text().splitlines()
    assert len(lines) == 4 and lines[3].startswith("0,")


def test_tensorboard_writes_epoch_and_batch_scalars(tmp_path):
    from tensorweave.formats.event_file import summary_iterator

    model = linear_model(0.1)
    history = model.fit(X, Y, batch_size=8, epochs=2, verbose=0, callbacks=[
        callbacks.TensorBoard(str(tmp_path), update_freq="batch")])
    (event_file,) = list(tmp_path.iterdir())
    scalars, graphs = [], 0
    for event in summary_iterator(str(event_file)):
        graphs += event.HasField("graph_def")
        if event.HasField("summary"):
            for value in event.summary.value:
                scalars.append((value.tag, event.step, value.simple_value))
    assert graphs == 1
    batch_tags = [(tag, step) for tag, step, _ in scalars if tag.startswith("batch_")]
    assert batch_tags == [("batch_loss", 0), ("batch_loss", 1), ("batch_loss", 2),
                          ("batch_loss", 3)]
    epochs = [(step, value) for tag, step, value in scalars if tag == "epoch_loss"]
    assert [s for s, _ in epochs] == [8 * 2, 8 * 4]  # update_freq by samples: steps count them
    np.testing.assert_allclose([v for _, v in epochs], history.history["loss"], rtol=1e-6)
    with pytest.raises(ValueError, match="writes scalars"):
        callbacks.TensorBoard(str(tmp_path), histogram_freq=1)


def test_progbar_and_base_logger(capsys):
    model = linear_model(0.1)
    averaged = {}
    base = callbacks.BaseLogger()
    record = callbacks.LambdaCallback(on_epoch_end=lambda e, logs: averaged.update(logs))
    history = model.fit(X, Y, batch_size=10, epochs=2, verbose=0,
                        callbacks=[base, callbacks.ProgbarLogger(), record])
    assert averaged["loss"] == pytest.approx(history.history["loss"][-1], rel=1e-6)
    assert capsys.readouterr().out == ""  # verbose 0: the progress logger stays quiet
    model.fit(X, Y, batch_size=10, epochs=2, verbose=2,
              callbacks=[callbacks.ProgbarLogger("steps")])
    out = capsys.readouterr().out
    assert "Epoch 2/2" in out and "2/2 - " in out


def test_model_checkpoint_saves_whole_models(tmp_path):
    model = linear_model(0.1)
    model.fit(X, Y, epochs=2, verbose=0, callbacks=[
        callbacks.ModelCheckpoint(str(tmp_path / "model-{epoch}"))])
    expect = model.predict(X)
    backend.clear_session()
    loaded = keras.models.load_model(str(tmp_path / "model-2"))
    np.testing.assert_allclose(loaded.predict(X), expect, rtol=1e-6)
