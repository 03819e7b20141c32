"""tw.keras.Model.fit / evaluate / predict on tf.data datasets and Python generators: the same
training as numpy batches, epoch boundaries with and without steps, validation in History,
sample weights, dict inputs and TF 1.15's errors."""

import logging

import numpy as np
import pytest

import tensorweave as tw
from tensorweave import keras
from tensorweave.keras import backend, callbacks, layers

Dataset = tw.data.Dataset
X = np.random.RandomState(0).randn(10, 3).astype(np.float32)
Y = np.random.RandomState(1).randn(10).astype(np.float32)


@pytest.fixture(autouse=True)
def fresh_graph():
    backend.clear_session()
    tw.set_random_seed(3)
    yield
    backend.clear_session()


def linear(metrics=("mae",)):
    model = keras.Sequential([layers.Dense(1, input_shape=(3,))])
    model.compile(keras.optimizers.SGD(0.1), "mse", metrics=list(metrics))
    return model


def twin(model):
    """A second model with the same initial weights."""
    other = linear()
    other.set_weights(model.get_weights())
    return other


def batch_sizes(model, *args, **kwargs):
    sizes = []
    record = callbacks.LambdaCallback(on_batch_begin=lambda b, logs: sizes.append(logs["size"]))
    history = model.fit(*args, callbacks=[record], verbose=0, **kwargs)
    return sizes, history


def test_fit_on_a_dataset_trains_as_the_same_numpy_batches():
    model = linear()
    reference = twin(model)
    history = model.fit(Dataset.from_tensor_slices((X, Y)).batch(4), epochs=3, verbose=0)
    reference.fit(X, Y, batch_size=4, epochs=3, shuffle=False, verbose=0)
    for got, want in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert history.epoch == [0, 1, 2]


def test_epoch_loss_is_the_mean_over_steps_and_metrics_over_samples():
    model = linear()
    reference = twin(model)
    history = model.fit(Dataset.from_tensor_slices((X, Y)).batch(4), epochs=1, verbose=0)
    steps = [reference.train_on_batch(X[s:s + 4], Y[s:s + 4]) for s in (0, 4, 8)]
    losses, maes = np.array(steps).T
    np.testing.assert_allclose(history.history["loss"], [losses.mean()], rtol=1e-6)
    np.testing.assert_allclose(history.history["mean_absolute_error"],
                               [np.average(maes, weights=[4, 4, 2])], rtol=1e-6)


def test_without_steps_each_epoch_restarts_the_dataset():
    sizes, history = batch_sizes(linear(), Dataset.from_tensor_slices((X, Y)).batch(4),
                                 epochs=2)
    assert sizes == [4, 4, 2, 4, 4, 2] and len(history.epoch) == 2


def test_with_steps_the_iterator_runs_on_across_epochs():
    ds = Dataset.from_tensor_slices((X, Y)).batch(4).repeat()
    sizes, history = batch_sizes(linear(), ds, epochs=3, steps_per_epoch=2)
    assert sizes == [4, 4, 2, 4, 4, 2] and history.epoch == [0, 1, 2]


def test_each_fit_call_starts_the_dataset_again():
    model = linear()
    ds = Dataset.from_tensor_slices((X, Y)).batch(4)
    assert batch_sizes(model, ds, steps_per_epoch=2)[0] == [4, 4]
    assert batch_sizes(model, ds, steps_per_epoch=2)[0] == [4, 4]


def test_running_out_with_steps_warns_and_stops_training(caplog):
    ds = Dataset.from_tensor_slices((X, Y)).batch(4)
    with caplog.at_level(logging.WARNING, logger="tensorweave"):
        sizes, history = batch_sizes(linear(), ds, epochs=3, steps_per_epoch=2)
    assert sizes == [4, 4, 2] and history.epoch == [0, 1]
    assert "Your dataset ran out of data; interrupting training" in caplog.text
    assert "(in this case, 6 batches)" in caplog.text


def test_an_infinite_dataset_needs_steps():
    model = linear()
    ds = Dataset.from_tensor_slices((X, Y)).batch(4).repeat()
    with pytest.raises(ValueError, match="infinitely repeating dataset, you must specify the "
                                         "`steps_per_epoch` argument"):
        model.fit(ds, verbose=0)
    with pytest.raises(ValueError, match="specify the `steps` argument"):
        model.evaluate(ds, verbose=0)
    with pytest.raises(ValueError, match="specify the `validation_steps` argument"):
        model.fit(Dataset.from_tensor_slices((X, Y)).batch(4), validation_data=ds, verbose=0)


def test_validation_metrics_are_in_history_and_restart_each_epoch():
    model = linear()
    train = Dataset.from_tensor_slices((X[:6], Y[:6])).batch(3)
    val = Dataset.from_tensor_slices((X[6:], Y[6:])).batch(3)
    history = model.fit(train, epochs=3, validation_data=val, verbose=0)
    assert sorted(history.history) == ["loss", "mean_absolute_error", "val_loss",
                                       "val_mean_absolute_error"]
    assert all(len(v) == 3 for v in history.history.values())
    np.testing.assert_allclose([history.history["val_loss"][-1],
                                history.history["val_mean_absolute_error"][-1]],
                               model.evaluate(val, verbose=0), rtol=1e-6)
    arrays = linear().fit(train, epochs=1, validation_data=(X[6:], Y[6:]), verbose=0)
    assert len(arrays.history["val_loss"]) == 1
    with pytest.raises(ValueError, match="`validation_steps` should not be specified"):
        model.fit(train, validation_steps=2, verbose=0)


def test_evaluate_and_predict_on_a_dataset_match_numpy():
    model = linear()
    ds = Dataset.from_tensor_slices((X, Y)).batch(4)
    batches = [model.test_on_batch(X[s:s + 4], Y[s:s + 4]) for s in (0, 4, 8)]
    losses, maes = np.array(batches).T
    loss, mae = model.evaluate(ds, verbose=0)
    np.testing.assert_allclose(loss, losses.mean(), rtol=1e-6)
    np.testing.assert_allclose(mae, np.average(maes, weights=[4, 4, 2]), rtol=1e-6)
    predicted = model.predict(ds)
    assert predicted.shape == (10, 1) and predicted.dtype == np.float32
    np.testing.assert_allclose(predicted, model.predict(X), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(model.predict(Dataset.from_tensor_slices(X).batch(4), steps=2),
                               model.predict(X[:8]), rtol=1e-6, atol=1e-6)


def test_sample_weights_from_a_dataset_weight_the_loss():
    weights = np.linspace(0.0, 2.0, 10).astype(np.float32)
    model = linear()
    reference = twin(model)
    predicted = model.predict(X)[:, 0]
    ds = Dataset.from_tensor_slices((X, Y, weights)).batch(10)
    loss, mae = model.evaluate(ds, verbose=0)
    np.testing.assert_allclose(loss, np.mean((predicted - Y) ** 2 * weights), rtol=1e-5)
    np.testing.assert_allclose(mae, np.mean(np.abs(predicted - Y)), rtol=1e-5)
    model.fit(Dataset.from_tensor_slices((X, Y, weights)).batch(4), epochs=2, verbose=0)
    reference.fit(X, Y, sample_weight=weights, batch_size=4, epochs=2, shuffle=False,
                  verbose=0)
    for got, want in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_numpy_sample_weights_are_checked():
    model = linear()
    np.testing.assert_allclose(model.evaluate(X, Y, sample_weight=np.zeros(10), verbose=0)[0],
                               0.0)
    with pytest.raises(ValueError, match="sample_weight array with shape \\(10, 1\\)"):
        model.evaluate(X, Y, sample_weight=np.zeros((10, 1)), verbose=0)
    with pytest.raises(ValueError, match="sample_weight cannot be broadcast"):
        model.train_on_batch(X, Y, sample_weight=np.zeros(3))


def test_dict_inputs_feed_a_multi_input_model():
    a, b = keras.Input((2,), name="a"), keras.Input((1,), name="b")
    out = layers.Dense(1)(layers.Concatenate()([a, b]))
    model = keras.Model([a, b], out)
    model.compile("sgd", "mse")
    ds = Dataset.from_tensor_slices(({"a": X[:, :2], "b": X[:, 2:]}, Y)).batch(4)
    expect = model.predict([X[:, :2], X[:, 2:]])
    np.testing.assert_allclose(model.predict(ds), expect, rtol=1e-6, atol=1e-6)
    history = model.fit(ds, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    assert not np.allclose(model.predict([X[:, :2], X[:, 2:]]), expect)


def test_a_model_without_inputs_is_built_from_the_first_batch():
    model = keras.Sequential([layers.Dense(2), layers.Dense(1)])
    model.compile("sgd", "mse", metrics=["mae"])
    history = model.fit(Dataset.from_tensor_slices((X, Y)).batch(5), epochs=2, verbose=0)
    assert model.inputs[0].shape.as_list() == [None, 3]
    assert list(history.history) == ["loss", "mean_absolute_error"]


def test_generators_train_as_numpy_batches_and_need_steps():
    def batches():
        while True:
            for s in (0, 4, 8):
                yield X[s:s + 4], Y[s:s + 4]

    model = linear()
    reference = twin(model)
    history = model.fit(batches(), steps_per_epoch=3, epochs=2, verbose=0,
                        validation_data=batches(), validation_steps=3)
    reference.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    for got, want in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert len(history.history["val_loss"]) == 2
    np.testing.assert_allclose(model.evaluate_generator(batches(), steps=3),
                               model.evaluate(Dataset.from_tensor_slices((X, Y)).batch(4),
                                              verbose=0), rtol=1e-6)
    np.testing.assert_allclose(model.predict_generator(batches(), steps=3), model.predict(X),
                               rtol=1e-6, atol=1e-6)
    assert model.fit_generator(batches(), steps_per_epoch=1, verbose=0).epoch == [0]
    with pytest.raises(ValueError, match="specify the number of steps via the "
                                         "`steps_per_epoch` argument"):
        model.fit(batches(), verbose=0)
    with pytest.raises(ValueError, match="Please specify the `validation_steps` argument"):
        model.fit(batches(), steps_per_epoch=1, validation_data=batches(), verbose=0)


def test_a_generator_that_stops_early_stops_training(caplog):
    model = linear()
    with caplog.at_level(logging.WARNING, logger="tensorweave"):
        sizes, history = batch_sizes(model, ((X[:2], Y[:2]) for _ in range(3)),
                                     steps_per_epoch=2, epochs=4)
    assert sizes == [2, 2, 2] and history.epoch == [0, 1]
    assert "Your dataset iterator ran out of data" in caplog.text


def test_invalid_combinations_raise_tfs_errors():
    model = linear()
    ds = Dataset.from_tensor_slices((X, Y)).batch(4)
    with pytest.raises(ValueError, match="you should not specify a target"):
        model.fit(ds, Y, verbose=0)
    with pytest.raises(ValueError, match="`batch_size` argument must not be specified"):
        model.fit(ds, batch_size=4, verbose=0)
    with pytest.raises(ValueError, match="`batch_size` argument must not be specified"):
        model.predict(ds, batch_size=4)
    with pytest.raises(ValueError, match="third element of your dataset"):
        model.evaluate(ds, sample_weight=np.ones(10), verbose=0)
    with pytest.raises(ValueError, match="`validation_split` argument is not supported"):
        model.fit(ds, validation_split=0.2, verbose=0)
    with pytest.raises(ValueError, match="not iterators that have been manually generated"):
        model.fit(ds.make_one_shot_iterator(), verbose=0)
    with pytest.raises(ValueError, match="list or tuple of 2 or 3 elements"):
        model.fit(Dataset.from_tensor_slices((X, Y, Y, Y)).batch(4), verbose=0)
    with pytest.raises(ValueError, match="must give targets"):
        model.fit(Dataset.from_tensor_slices(X).batch(4), verbose=0)
    with pytest.raises(ValueError, match="Empty training data"):
        model.fit(ds.take(0), verbose=0)
    with pytest.raises(ValueError, match="takes steps_per_epoch with a dataset or a generator"):
        model.fit(X, Y, steps_per_epoch=2, verbose=0)


def test_verbose_fit_on_a_dataset_prints_steps(capsys):
    linear().fit(Dataset.from_tensor_slices((X, Y)).batch(4), epochs=1, verbose=1)
    out = capsys.readouterr().out
    assert "Train on 3 steps" in out and "3/3 - " in out and "Epoch 1/1" in out


class Batches(keras.utils.Sequence):
    """`X`, `Y` in batches of `size`, recording the indices read and the passes ended."""

    def __init__(self, size=4, targets=True):
        self.size, self.targets = size, targets
        self.read, self.passes = [], 0

    def __len__(self):
        return -(-len(X) // self.size)

    def __getitem__(self, index):
        self.read.append(index)
        part = slice(index * self.size, (index + 1) * self.size)
        return (X[part], Y[part]) if self.targets else X[part]

    def on_epoch_end(self):
        self.passes += 1


def test_fit_on_a_sequence_trains_as_the_same_numpy_batches():
    model = linear()
    reference = twin(model)
    sequence = Batches()
    sizes, history = batch_sizes(model, sequence, epochs=2, shuffle=False)
    assert sizes == [4, 4, 2] * 2 and sequence.read == [0, 1, 2] * 2 and sequence.passes == 2
    reference.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    for a, b in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5)
    shuffled = Batches()
    linear().fit_generator(shuffled, epochs=3, verbose=0)
    assert [sorted(shuffled.read[i:i + 3]) for i in (0, 3, 6)] == [[0, 1, 2]] * 3


def test_evaluate_and_predict_on_a_sequence_and_validation():
    model = linear()
    np.testing.assert_allclose(model.predict(Batches(targets=False)), model.predict(X),
                               rtol=1e-6)
    expect = model.evaluate(X, Y, batch_size=4, verbose=0)
    np.testing.assert_allclose(model.evaluate(Batches(size=5), verbose=0), expect, rtol=1e-5)
    validation = Batches(size=5)
    history = model.fit(X, Y, epochs=2, verbose=0, validation_data=validation)
    assert validation.read == [0, 1, 0, 1] and len(history.history["val_loss"]) == 2
    with pytest.raises(ValueError, match="`y` argument is not supported when data is a "
                                         "generator or Sequence"):
        model.fit(Batches(), Y, verbose=0)
