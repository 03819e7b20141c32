"""tw.keras.utils.to_categorical."""

import numpy as np

from tensorweave.keras.utils import Sequence, normalize, to_categorical


def test_to_categorical():
    out = to_categorical([0, 2, 1])
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.eye(3)[[0, 2, 1]])
    assert to_categorical(np.array([[1], [0]]), num_classes=4).shape == (2, 4)
    assert to_categorical(np.zeros((2, 3), int), 2).shape == (2, 3, 2)


def test_normalize_matches_numpy():
    x = np.array([[3.0, 4.0], [0.0, 0.0], [1.0, -1.0]])
    np.testing.assert_allclose(normalize(x), [[0.6, 0.8], [0.0, 0.0],
                                              [2 ** -0.5, -(2 ** -0.5)]])
    np.testing.assert_allclose(normalize(x, axis=0, order=1), x / np.abs(x).sum(0))


def test_sequence_iterates_its_items():
    class Squares(Sequence):
        def __len__(self):
            return 3

        def __getitem__(self, index):
            return index * index

    assert list(Squares()) == [0, 1, 4]
