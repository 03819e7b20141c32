"""tw.keras.Model training: compile / fit / evaluate / predict / *_on_batch, their results
against numpy forward passes with the model's own weights, and Keras's errors."""

import numpy as np
import pytest

import tensorweave as tw
from tensorweave import keras
from tensorweave.keras import backend, layers


@pytest.fixture(autouse=True)
def fresh_graph():
    backend.clear_session()
    tw.set_random_seed(1)
    np.random.seed(1)
    yield
    backend.clear_session()


def mlp(hidden=8, activation="sigmoid", inputs=2):
    return keras.Sequential([layers.Dense(hidden, activation="tanh", input_shape=(inputs,)),
                             layers.Dense(1, activation=activation)])


def forward(model, x):
    w1, b1, w2, b2 = model.get_weights()
    return 1 / (1 + np.exp(-(np.tanh(x @ w1 + b1) @ w2 + b2)))


XOR_X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], np.float32)
XOR_Y = np.array([0, 1, 1, 0], np.float32)


def test_sequential_mlp_learns_xor():
    model = mlp()
    model.compile(keras.optimizers.Adam(0.05), "binary_crossentropy", metrics=["accuracy"])
    history = model.fit(XOR_X, XOR_Y, epochs=150, batch_size=4, verbose=0)
    losses = history.history["loss"]
    assert len(losses) == 150 and losses[-1] < 0.1 * losses[0]
    assert history.history["acc"][-1] == 1.0
    assert model.evaluate(XOR_X, XOR_Y, verbose=0)[1] == 1.0
    np.testing.assert_array_equal(model.predict(XOR_X)[:, 0] > 0.5, XOR_Y > 0.5)


def test_evaluate_and_predict_match_numpy_with_the_models_weights():
    model = mlp()
    model.compile("sgd", "mse", metrics=["mae", "acc"])
    x = np.random.RandomState(0).randn(50, 2).astype(np.float32)
    y = np.random.RandomState(1).rand(50).astype(np.float32)
    predicted = model.predict(x, batch_size=7)
    assert predicted.shape == (50, 1) and predicted.dtype == np.float32
    expect = forward(model, x)
    np.testing.assert_allclose(predicted, expect, rtol=1e-5)
    loss, mae, acc = model.evaluate(x, y, batch_size=16, verbose=0)
    assert model.metrics_names == ["loss", "mean_absolute_error", "acc"]
    np.testing.assert_allclose(loss, np.mean((expect[:, 0] - y) ** 2), rtol=1e-5)
    np.testing.assert_allclose(mae, np.mean(np.abs(expect[:, 0] - y)), rtol=1e-5)
    np.testing.assert_allclose(acc, np.mean((expect[:, 0] > 0.5) == y), rtol=1e-6)
    np.testing.assert_allclose(model.predict_on_batch(x[:3]), expect[:3], rtol=1e-5)


def test_evaluate_without_metrics_is_a_scalar():
    model = mlp()
    model.compile("sgd", "mse")
    value = model.evaluate(XOR_X, XOR_Y, verbose=0)
    assert isinstance(value, float)
    assert model.test_on_batch(XOR_X, XOR_Y) == pytest.approx(value, rel=1e-5)


def test_train_on_batch_returns_the_loss_before_the_step_and_trains():
    model = mlp()
    model.compile(keras.optimizers.SGD(0.5), "binary_crossentropy")
    before = model.get_weights()
    first = model.train_on_batch(XOR_X, XOR_Y)
    p = forward_with(before, XOR_X)[:, 0]
    expect = -np.mean(XOR_Y * np.log(p) + (1 - XOR_Y) * np.log(1 - p))
    assert first == pytest.approx(expect, rel=1e-4)
    assert any(not np.allclose(a, b) for a, b in zip(before, model.get_weights()))


def forward_with(weights, x):
    w1, b1, w2, b2 = weights
    return 1 / (1 + np.exp(-(np.tanh(x @ w1 + b1) @ w2 + b2)))


def test_fit_history_means_over_the_epoch_and_validation():
    model = mlp(activation="linear")
    model.compile(keras.optimizers.SGD(0.0), "mse", metrics=["mae"])
    x = np.random.RandomState(0).randn(20, 2).astype(np.float32)
    y = np.zeros(20, np.float32)
    history = model.fit(x, y, batch_size=6, epochs=2, verbose=0, validation_data=(x[:5], y[:5]))
    w1, b1, w2, b2 = model.get_weights()
    out = (np.tanh(x @ w1 + b1) @ w2 + b2)[:, 0]
    assert set(history.history) == {"loss", "mean_absolute_error", "val_loss",
                                    "val_mean_absolute_error"}
    np.testing.assert_allclose(history.history["loss"], [np.mean(out ** 2)] * 2, rtol=1e-5)
    np.testing.assert_allclose(history.history["val_loss"], [np.mean(out[:5] ** 2)] * 2,
                               rtol=1e-5)
    assert history.epoch == [0, 1] and model.history is history


def test_validation_split_takes_the_last_samples():
    model = mlp(activation="linear")
    model.compile(keras.optimizers.SGD(0.0), "mae")
    x = np.random.RandomState(0).randn(10, 2).astype(np.float32)
    y = np.arange(10, dtype=np.float32)
    history = model.fit(x, y, epochs=1, verbose=0, validation_split=0.2)
    out = model.predict(x)[:, 0]
    np.testing.assert_allclose(history.history["val_loss"][0], np.mean(np.abs(out - y)[8:]),
                               rtol=1e-5)


def test_categorical_and_sparse_losses_pick_their_accuracy():
    x = np.random.RandomState(0).randn(30, 4).astype(np.float32)
    labels = np.random.RandomState(1).randint(0, 3, 30)
    for loss, y in [("sparse_categorical_crossentropy", labels),
                    ("categorical_crossentropy", keras.utils.to_categorical(labels, 3))]:
        backend.clear_session()
        model = keras.Sequential([layers.Dense(3, activation="softmax", input_shape=(4,))])
        model.compile("sgd", loss, metrics=["acc"])
        loss_value, acc = model.evaluate(x, y, verbose=0)
        p = model.predict(x)
        np.testing.assert_allclose(loss_value, -np.mean(np.log(p[np.arange(30), labels])),
                                   rtol=1e-4)
        np.testing.assert_allclose(acc, np.mean(p.argmax(1) == labels), rtol=1e-6)


def test_batch_normalization_moving_averages_update_in_fit_only():
    model = keras.Sequential([layers.BatchNormalization(input_shape=(2,), momentum=0.5)])
    model.compile("sgd", "mse")
    x = np.full((8, 2), 4.0, np.float32)
    model.evaluate(x, x, verbose=0)
    np.testing.assert_array_equal(model.get_weights()[2], [0, 0])
    model.fit(x, x, batch_size=8, epochs=1, verbose=0, shuffle=False)
    np.testing.assert_allclose(model.get_weights()[2], [2, 2], rtol=1e-6)


def test_fit_before_compile_is_a_runtime_error():
    model = mlp()
    with pytest.raises(RuntimeError, match="You must compile your model before training"):
        model.fit(XOR_X, XOR_Y, verbose=0)
    with pytest.raises(RuntimeError, match="You must compile your model before training"):
        model.evaluate(XOR_X, XOR_Y, verbose=0)
    assert model.predict(XOR_X).shape == (4, 1)


def test_shape_errors_use_kerass_wording():
    model = keras.Sequential([layers.Dense(2, input_shape=(3,))])
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match=r"Error when checking input: expected dense_input to "
                                         r"have shape \(3,\) but got array with shape \(4,\)"):
        model.predict(np.zeros((5, 4)))
    with pytest.raises(ValueError, match=r"expected dense_input to have 2 dimensions, but got "
                                         r"array with shape \(5, 3, 1\)"):
        model.predict(np.zeros((5, 3, 1)))
    with pytest.raises(ValueError, match=r"Error when checking target: expected dense to have "
                                         r"shape \(2,\) but got array with shape \(1,\)"):
        model.fit(np.zeros((5, 3)), np.zeros(5), verbose=0)
    with pytest.raises(ValueError, match="Found 5 input samples and 4 target samples"):
        model.fit(np.zeros((5, 3)), np.zeros((4, 2)), verbose=0)


def test_compile_refuses_unknown_names():
    model = mlp()
    with pytest.raises(ValueError, match="Unknown optimizer: nadamx"):
        model.compile("nadamx", "mse")
    with pytest.raises(ValueError, match="Unknown loss function:msx"):
        model.compile("sgd", "msx")
    with pytest.raises(ValueError, match="Unknown metric function:accuracyy"):
        model.compile("sgd", "mse", metrics=["accuracyy"])
    with pytest.raises(ValueError, match="no loss to optimize"):
        model.compile("sgd")


def test_compile_takes_a_tw_train_optimizer():
    model = mlp(activation="linear")
    model.compile(tw.train.GradientDescentOptimizer(0.1), "mse")
    x = np.random.RandomState(0).randn(32, 2).astype(np.float32)
    y = x.sum(1)
    history = model.fit(x, y, epochs=20, verbose=0)
    assert history.history["loss"][-1] < 0.2 * history.history["loss"][0]


def test_fit_verbose_prints_the_epochs(capsys):
    model = mlp()
    model.compile("sgd", "mse", metrics=["acc"])
    model.fit(XOR_X, XOR_Y, epochs=2, verbose=1)
    out = capsys.readouterr().out
    assert "Train on 4 samples" in out and "Epoch 2/2" in out and "acc:" in out


def test_validation_freq_picks_the_validated_epochs():
    model = mlp()
    model.compile("sgd", "binary_crossentropy")
    every_second = model.fit(XOR_X, XOR_Y, epochs=4, validation_data=(XOR_X, XOR_Y),
                             validation_freq=2, verbose=0)
    assert len(every_second.history["loss"]) == 4 and len(every_second.history["val_loss"]) == 2
    listed = model.fit(XOR_X, XOR_Y, epochs=4, validation_split=0.5, validation_freq=[1, 4],
                       verbose=0)
    assert len(listed.history["val_loss"]) == 2
    np.testing.assert_allclose(listed.history["val_loss"][-1],
                               model.evaluate(XOR_X[2:], XOR_Y[2:], verbose=0), rtol=1e-6)
    with pytest.raises(ValueError, match="`validation_freq` can not be less than 1"):
        model.fit(XOR_X, XOR_Y, validation_freq=0, verbose=0)
    with pytest.raises(ValueError, match="`validation_freq` must be an Integer"):
        model.fit(XOR_X, XOR_Y, validation_freq=1.5, verbose=0)


def softmax_model():
    model = keras.Sequential([layers.Dense(3, activation="softmax", input_shape=(4,))])
    return model


def class_weighted_ce(model, x, labels, class_weight, sample_weight=1.0):
    kernel, bias = model.get_weights()
    z = x @ kernel + bias
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    ce = -np.log(p[np.arange(len(x)), labels])
    return np.mean(ce * np.array([class_weight[c] for c in labels]) * sample_weight)


CW = {0: 1.0, 1: 4.0, 2: 0.25}
CW_X = np.random.RandomState(2).rand(6, 4).astype(np.float32)
CW_LABELS = np.array([0, 1, 2, 2, 1, 0])


def test_class_weight_weights_sparse_targets_in_train_on_batch():
    model = softmax_model()
    model.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy",
                  metrics=["acc"])
    expect = class_weighted_ce(model, CW_X, CW_LABELS, CW)
    loss, _ = model.train_on_batch(CW_X, CW_LABELS, class_weight=CW)
    assert loss == pytest.approx(expect, rel=1e-5)
    # evaluation is never class-weighted
    unweighted = class_weighted_ce(model, CW_X, CW_LABELS, {0: 1.0, 1: 1.0, 2: 1.0})
    assert model.test_on_batch(CW_X, CW_LABELS)[0] == pytest.approx(unweighted, rel=1e-5)


def test_class_weight_in_fit_on_one_hot_targets_times_sample_weights():
    model = softmax_model()
    model.compile(keras.optimizers.SGD(0.1), "categorical_crossentropy")
    sample_weight = np.array([1.0, 2.0, 0.5, 1.0, 3.0, 0.0])
    expect = class_weighted_ce(model, CW_X, CW_LABELS, CW, sample_weight)
    one_hot = keras.utils.to_categorical(CW_LABELS, 3)
    history = model.fit(CW_X, one_hot, batch_size=6, epochs=1, verbose=0, class_weight=CW,
                        sample_weight=sample_weight)
    assert history.history["loss"][0] == pytest.approx(expect, rel=1e-5)


def test_class_weight_on_a_generator_weights_each_batch():
    model = softmax_model()
    model.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy")
    expect = class_weighted_ce(model, CW_X, CW_LABELS, CW)
    history = model.fit_generator((batch for batch in [(CW_X, CW_LABELS)]), steps_per_epoch=1,
                                  class_weight=CW, verbose=0)
    assert history.history["loss"][0] == pytest.approx(expect, rel=1e-5)


def test_class_weight_missing_a_class_is_an_error():
    model = softmax_model()
    model.compile("sgd", "sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match="`class_weight` must contain all classes"):
        model.fit(CW_X, CW_LABELS, class_weight={0: 1.0, 1: 1.0}, verbose=0)


def test_temporal_sample_weights_weight_each_timestep():
    model = keras.Sequential([layers.Dense(2, input_shape=(3, 4))])
    model.compile("sgd", "mse", sample_weight_mode="temporal")
    rng = np.random.RandomState(4)
    x, y = rng.rand(5, 3, 4).astype(np.float32), rng.rand(5, 3, 2).astype(np.float32)
    w = rng.rand(5, 3).astype(np.float32)
    kernel, bias = model.get_weights()
    per_step = (((x @ kernel + bias) - y) ** 2).mean(-1)
    np.testing.assert_allclose(model.evaluate(x, y, sample_weight=w, batch_size=5, verbose=0),
                               np.mean(w * per_step), rtol=1e-5)
    np.testing.assert_allclose(model.evaluate(x, y, batch_size=5, verbose=0), per_step.mean(),
                               rtol=1e-5)
    with pytest.raises(ValueError, match="you should pass a 2D sample_weight array"):
        model.evaluate(x, y, sample_weight=np.ones(5), verbose=0)


def test_timestep_weights_without_temporal_mode_are_refused():
    model = keras.Sequential([layers.Dense(2, input_shape=(3, 4))])
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match='specify sample_weight_mode="temporal"'):
        model.evaluate(np.zeros((5, 3, 4)), np.zeros((5, 3, 2)), sample_weight=np.ones((5, 3)),
                       verbose=0)
