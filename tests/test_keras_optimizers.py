"""tw.keras.optimizers: Keras's defaults and update rules against numpy, get()."""

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.keras import backend, optimizers
from tests.keras_support import fresh_graph  # noqa: F401 - the fixture


def two_steps(optimizer, start=1.0, grad=0.5):
    var = tw.Variable(np.array([start], np.float32))
    step = optimizer.apply_gradients([(tw.constant([grad]), var)])
    session = backend.get_session()
    values = []
    for _ in range(2):
        session.run(step)
        values.append(float(session.run(var)[0]))
    return values


def test_sgd_with_and_without_momentum():
    np.testing.assert_allclose(two_steps(optimizers.SGD()), [0.995, 0.99], rtol=1e-6)
    # v = 0.9 v - lr g; var += v
    np.testing.assert_allclose(two_steps(optimizers.SGD(0.1, momentum=0.9)),
                               [0.95, 0.95 - 0.095], rtol=1e-6)


def test_rmsprop_accumulator_starts_at_zero():
    rms1 = 0.1 * 0.25
    v1 = 1.0 - 0.001 * 0.5 / (np.sqrt(rms1) + 1e-7)
    rms2 = 0.9 * rms1 + 0.1 * 0.25
    v2 = v1 - 0.001 * 0.5 / (np.sqrt(rms2) + 1e-7)
    np.testing.assert_allclose(two_steps(optimizers.RMSprop()), [v1, v2], rtol=1e-6)


def test_adagrad_and_adam():
    a1 = 0.1 + 0.25
    v1 = 1.0 - 0.01 * 0.5 / (np.sqrt(a1) + 1e-7)
    v2 = v1 - 0.01 * 0.5 / (np.sqrt(a1 + 0.25) + 1e-7)
    np.testing.assert_allclose(two_steps(optimizers.Adagrad(learning_rate=0.01)), [v1, v2],
                               rtol=1e-6)
    # Adam's first steps move by about the learning rate
    np.testing.assert_allclose(two_steps(optimizers.Adam(lr=0.1)), [0.9, 0.8], rtol=1e-4)


def test_get():
    assert isinstance(optimizers.get("Adam"), optimizers.Adam)
    sgd = tw.train.GradientDescentOptimizer(0.1)
    assert optimizers.get(sgd) is sgd
    with pytest.raises(ValueError, match="Unknown optimizer: adamw"):
        optimizers.get("adamw")
    with pytest.raises(TypeError, match="Unexpected keyword argument"):
        optimizers.SGD(rate=0.1)
