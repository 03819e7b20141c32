"""tw.keras.metrics: accuracies against numpy and the choice behind "accuracy"."""

import numpy as np
import pytest

from tensorweave.keras import losses, metrics
from tests.keras_support import fresh_graph, run  # noqa: F401 - the fixture


def test_accuracies():
    probs = np.array([[0.2, 0.7, 0.1], [0.6, 0.3, 0.1]], np.float32)
    onehot = np.array([[0, 1, 0], [0, 0, 1]], np.float32)
    np.testing.assert_array_equal(run(metrics.categorical_accuracy(onehot, probs)), [1, 0])
    ids = np.array([[1], [0]], np.float32)
    out = run(metrics.sparse_categorical_accuracy(ids, probs))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [1, 1])
    y = np.array([[1.0, 0.0], [0.0, 0.0]], np.float32)
    p = np.array([[0.9, 0.6], [0.4, 0.5]], np.float32)
    np.testing.assert_array_equal(run(metrics.binary_accuracy(y, p)), [0.5, 1.0])


def test_resolve_picks_the_accuracy_from_the_loss_and_output():
    assert metrics.resolve("accuracy", losses.mse, [None, 1]) == ("acc", metrics.binary_accuracy)
    assert metrics.resolve("acc", losses.binary_crossentropy, [None, 3])[1] is \
        metrics.binary_accuracy
    assert metrics.resolve("acc", losses.sparse_categorical_crossentropy, [None, 3])[1] is \
        metrics.sparse_categorical_accuracy
    assert metrics.resolve("acc", losses.categorical_crossentropy, [None, 3])[1] is \
        metrics.categorical_accuracy
    assert metrics.resolve("mae", losses.mse, [None, 1]) == (
        "mean_absolute_error", losses.mean_absolute_error)
    with pytest.raises(ValueError, match="Unknown metric function:f1"):
        metrics.get("f1")
