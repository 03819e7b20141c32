"""tw.keras.losses: per-sample losses against numpy, logits behind Softmax/Sigmoid, get()."""

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.keras import losses
from tests.keras_support import fresh_graph, run  # noqa: F401 - the fixture

Y_TRUE = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], np.float32)
LOGITS = np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0]], np.float32)
PROBS = np.exp(LOGITS) / np.exp(LOGITS).sum(1, keepdims=True)


def test_regression_losses():
    pred = tw.constant(PROBS)
    np.testing.assert_allclose(run(losses.mse(Y_TRUE, pred)),
                               np.mean((PROBS - Y_TRUE) ** 2, -1), rtol=1e-6)
    np.testing.assert_allclose(run(losses.mean_absolute_error(Y_TRUE, pred)),
                               np.mean(np.abs(PROBS - Y_TRUE), -1), rtol=1e-6)


def test_categorical_crossentropy_from_probabilities_and_through_softmax():
    expect = -np.sum(Y_TRUE * np.log(PROBS), -1)
    from_probs = losses.categorical_crossentropy(Y_TRUE, tw.constant(PROBS))
    through_softmax = losses.categorical_crossentropy(Y_TRUE, tw.nn.softmax(LOGITS))
    np.testing.assert_allclose(run(from_probs), expect, rtol=1e-5)
    np.testing.assert_allclose(run(through_softmax), expect, rtol=1e-5)
    assert through_softmax.op.type != "Log"  # computed from the logits


def test_sparse_categorical_crossentropy_takes_class_ids():
    labels = np.array([1, 0], np.float32)
    expect = -np.log(PROBS[[0, 1], [1, 0]])
    np.testing.assert_allclose(run(losses.sparse_categorical_crossentropy(
        labels[:, None], tw.constant(PROBS))), expect, rtol=1e-5)
    np.testing.assert_allclose(run(losses.sparse_categorical_crossentropy(
        labels, tw.nn.softmax(LOGITS))), expect, rtol=1e-5)


def test_binary_crossentropy_clips_probabilities():
    y = np.array([[1.0], [0.0]], np.float32)
    p = np.array([[1.0], [0.25]], np.float32)
    out = run(losses.binary_crossentropy(y, tw.constant(p)))
    np.testing.assert_allclose(out, [-np.log(1 - 1e-7), -np.log(0.75)], rtol=1e-3, atol=1e-6)
    logits = np.array([[2.0], [-1.0]], np.float32)
    expect = -np.log(1 / (1 + np.exp(-2.0))), -np.log(1 - 1 / (1 + np.exp(1.0)))
    np.testing.assert_allclose(run(losses.binary_crossentropy(y, tw.sigmoid(logits))), expect,
                               rtol=1e-5)


def test_get():
    assert losses.get("mse") is losses.mean_squared_error
    assert losses.get(losses.hinge) is losses.hinge
    with pytest.raises(ValueError, match="Unknown loss function:nope"):
        losses.get("nope")
