"""tw.keras.utils.to_categorical."""

import numpy as np

from tensorweave.keras.utils import to_categorical


def test_to_categorical():
    out = to_categorical([0, 2, 1])
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.eye(3)[[0, 2, 1]])
    assert to_categorical(np.array([[1], [0]]), num_classes=4).shape == (2, 4)
    assert to_categorical(np.zeros((2, 3), int), 2).shape == (2, 3, 2)
