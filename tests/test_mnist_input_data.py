"""``tensorweave.examples.tutorials.mnist.input_data`` on small IDX files written here: parsing,
scaling, one-hot labels, the validation split, batching across epochs, and bad files."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.examples.tutorials.mnist import input_data

RNG = np.random.default_rng(3)


def _write_idx(path, magic, array):
    header = np.array([magic, *array.shape], dtype=">u4").tobytes()
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


@pytest.fixture
def mnist_dir(tmp_path):
    images = {"train": RNG.integers(0, 256, (12, 28, 28)),
              "t10k": RNG.integers(0, 256, (5, 28, 28))}
    labels = {"train": RNG.integers(0, 10, 12), "t10k": RNG.integers(0, 10, 5)}
    for split in ("train", "t10k"):
        _write_idx(tmp_path / f"{split}-images-idx3-ubyte.gz", 2051, images[split])
        _write_idx(tmp_path / f"{split}-labels-idx1-ubyte.gz", 2049, labels[split])
    return tmp_path, images, labels


def test_read_data_sets_scales_flattens_and_splits(mnist_dir):
    path, images, labels = mnist_dir
    data = input_data.read_data_sets(str(path), one_hot=True, validation_size=4)
    assert (data.train.num_examples, data.validation.num_examples, data.test.num_examples) == \
        (8, 4, 5)
    np.testing.assert_allclose(data.validation.images,
                               images["train"][:4].reshape(4, 784) / 255.0, rtol=1e-6)
    assert data.test.images.dtype == np.float32 and data.test.images.shape == (5, 784)
    np.testing.assert_array_equal(data.test.labels, np.eye(10)[labels["t10k"]])
    assert data.test.labels.dtype == np.float64
    raw = input_data.read_data_sets(str(path), dtype=tf.uint8, reshape=False,
                                    validation_size=0)
    np.testing.assert_array_equal(raw.train.images[..., 0], images["train"])
    np.testing.assert_array_equal(raw.train.labels, labels["train"])
    assert raw.train.labels.dtype == np.uint8


def test_next_batch_covers_each_epoch_and_wraps(mnist_dir):
    path, images, _ = mnist_dir
    tf.set_random_seed(5)
    train = input_data.read_data_sets(str(path), validation_size=2).train
    expected = images["train"][2:].reshape(10, 784) / 255.0
    first = [train.next_batch(4)[0] for _ in range(2)]
    assert train.epochs_completed == 0
    wrapped, labels = train.next_batch(4)  # the 2 left of epoch 1, then 2 of epoch 2
    assert wrapped.shape == (4, 784) and labels.shape == (4,)
    assert train.epochs_completed == 1
    epoch1 = np.concatenate(first + [wrapped[:2]])
    # an epoch is a permutation of the training examples
    np.testing.assert_allclose(np.sort(epoch1, axis=0), np.sort(expected, axis=0), rtol=1e-6)
    in_order = input_data.DataSet(images["train"][:, :, :, None], np.arange(12), dtype=tf.uint8)
    np.testing.assert_array_equal(in_order.next_batch(5, shuffle=False)[1], np.arange(5))


def test_fake_data_and_errors(mnist_dir, tmp_path):
    fake = input_data.read_data_sets("unused", fake_data=True, one_hot=True)
    x, y = fake.train.next_batch(2, fake_data=True)
    assert np.array(x).shape == (2, 784) and y[0] == [1] + [0] * 9
    path, _, _ = mnist_dir
    with pytest.raises(ValueError, match="Validation size should be between 0 and 12"):
        input_data.read_data_sets(str(path), validation_size=13)
    with pytest.raises(TypeError, match="Invalid image dtype"):
        input_data.DataSet(np.zeros((1, 28, 28, 1)), np.zeros(1), dtype=tf.int32)
    bad = tmp_path / "bad.gz"
    _write_idx(bad, 1234, np.zeros((1, 2, 2)))
    with open(bad, "rb") as f, pytest.raises(ValueError, match="Invalid magic number 1234"):
        input_data.extract_images(f)
