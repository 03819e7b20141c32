"""``tw.estimator.inputs.numpy_input_fn``: batches, epochs, shuffling, structure and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import errors
from tensorweave.estimator.inputs import numpy_input_fn


def drain(tensors: Any) -> list[Any]:
    out = []
    with tf.Session() as sess:
        while True:
            try:
                out.append(sess.run(tensors))
            except errors.OutOfRangeError:
                return out


def test_dict_features_and_array_labels_in_ordered_batches() -> None:
    x = {"age": np.arange(5, dtype=np.float32), "height": np.arange(10, 15, dtype=np.int64)}
    y = np.arange(-5, 0, dtype=np.int32)
    features, labels = numpy_input_fn(x, y, batch_size=2, shuffle=False)()
    assert set(features) == {"age", "height"}
    assert features["height"].dtype == tf.int64 and labels.dtype == tf.int32
    batches = drain((features, labels))
    assert [b[1].tolist() for b in batches] == [[-5, -4], [-3, -2], [-1]]
    assert batches[1][0]["height"].tolist() == [12, 13]
    assert batches[2][0]["age"].dtype == np.float32


def test_array_features_without_labels_and_epochs() -> None:
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    features = numpy_input_fn(x, batch_size=3, num_epochs=2, shuffle=False)()
    assert isinstance(features, tf.Tensor)
    batches = drain(features)
    assert len(batches) == 2
    np.testing.assert_array_equal(batches[1], x)


def test_dict_labels_and_shuffling_keeps_rows_together() -> None:
    x = {"a": np.arange(20, dtype=np.float32)}
    y = {"b": np.arange(20, dtype=np.float32) * 10}
    features, labels = numpy_input_fn(x, y, batch_size=20, shuffle=True)()
    [(f, lab)] = drain((features, labels))
    assert sorted(f["a"].tolist()) == list(range(20))
    assert f["a"].tolist() != list(range(20))  # shuffled (20! orders; never identity here)
    np.testing.assert_array_equal(lab["b"], f["a"] * 10)


def test_errors_as_tf() -> None:
    x = {"a": np.zeros(3)}
    with pytest.raises(ValueError, match="shuffle must be provided and explicitly set as "
                                         "boolean"):
        numpy_input_fn(x)
    with pytest.raises(ValueError, match="Length of tensors in x and y is mismatched"):
        numpy_input_fn(x, np.zeros(4), shuffle=False)()
    with pytest.raises(ValueError, match="1 duplicate keys are found in both x and y"):
        numpy_input_fn(x, {"a": np.zeros(3)}, shuffle=False)()
    with pytest.raises(ValueError, match="x cannot be an empty dict"):
        numpy_input_fn({}, shuffle=False)()
    with pytest.raises(ValueError, match="y cannot be empty dict, use None instead."):
        numpy_input_fn(x, {}, shuffle=False)()
    with pytest.raises(TypeError, match="x must be a dict or array; got list"):
        numpy_input_fn([1, 2], shuffle=False)()
