"""MNIST for the TF1 tutorials: ``read_data_sets`` and the in-memory `DataSet` it returns.

Contract (TF 1.x ``tensorflow.examples.tutorials.mnist.input_data``): `read_data_sets(train_dir)`
reads the four gzipped IDX files (``train-images-idx3-ubyte.gz`` ...) from `train_dir`, fetching
the missing ones from `source_url` first. It returns ``Datasets(train, validation, test)``: the
first `validation_size` training examples form the validation set. Images are flattened to 784
columns when `reshape`, and ``float32`` images are scaled to [0, 1] (``uint8`` keeps the raw
bytes); labels are ``uint8`` class ids, or ``float64`` one-hot rows with `one_hot`.
`DataSet.next_batch` walks the examples in order, reshuffling (numpy's global RNG, seeded from
the graph-level seed as TF does) at the start of the first epoch and at each epoch boundary; a
batch that crosses the boundary is the rest of the old epoch followed by the start of the new.
``fake_data`` sets hold no examples and return batches of constant images.
"""

from __future__ import annotations

import collections
import gzip
import os
import urllib.request
from typing import Any

import numpy as np

from tensorweave.api.random_ops import get_seed
from tensorweave.engine import dtypes

__all__ = ["DataSet", "Datasets", "dense_to_one_hot", "extract_images", "extract_labels",
           "read_data_sets"]

DEFAULT_SOURCE_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"
_TRAIN_IMAGES = "train-images-idx3-ubyte.gz"
_TRAIN_LABELS = "train-labels-idx1-ubyte.gz"
_TEST_IMAGES = "t10k-images-idx3-ubyte.gz"
_TEST_LABELS = "t10k-labels-idx1-ubyte.gz"
_IMAGES_MAGIC = 2051
_LABELS_MAGIC = 2049

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


def _read_u32(stream: Any) -> int:
    return int(np.frombuffer(stream.read(4), dtype=">u4")[0])


def extract_images(f: Any) -> np.ndarray:
    """The images of a gzipped IDX3 file object as ``uint8 [index, y, x, 1]``."""
    print("Extracting", f.name)
    with gzip.GzipFile(fileobj=f) as stream:
        magic = _read_u32(stream)
        if magic != _IMAGES_MAGIC:
            raise ValueError(f"Invalid magic number {magic} in MNIST image file: {f.name}")
        count, rows, cols = (_read_u32(stream) for _ in range(3))
        data = np.frombuffer(stream.read(rows * cols * count), dtype=np.uint8)
        return data.reshape(count, rows, cols, 1)


def dense_to_one_hot(labels_dense: np.ndarray, num_classes: int) -> np.ndarray:
    """Class ids as ``float64`` one-hot rows."""
    one_hot = np.zeros((labels_dense.shape[0], num_classes))
    one_hot[np.arange(labels_dense.shape[0]), labels_dense.ravel()] = 1
    return one_hot


def extract_labels(f: Any, one_hot: bool = False, num_classes: int = 10) -> np.ndarray:
    """The labels of a gzipped IDX1 file object: ``uint8 [index]``, or one-hot rows."""
    print("Extracting", f.name)
    with gzip.GzipFile(fileobj=f) as stream:
        magic = _read_u32(stream)
        if magic != _LABELS_MAGIC:
            raise ValueError(f"Invalid magic number {magic} in MNIST label file: {f.name}")
        count = _read_u32(stream)
        labels = np.frombuffer(stream.read(count), dtype=np.uint8)
        return dense_to_one_hot(labels, num_classes) if one_hot else labels


class DataSet:
    """Images and labels held in memory, served in (re)shuffled mini-batches."""

    def __init__(self, images: Any, labels: Any, fake_data: bool = False, one_hot: bool = False,
                 dtype: Any = dtypes.float32, reshape: bool = True,
                 seed: int | None = None) -> None:
        seed1, seed2 = get_seed(seed)
        # TF seeds numpy's global generator here, so shuffles follow tf.set_random_seed.
        np.random.seed(seed1 if seed is None else seed2)
        dtype = dtypes.as_dtype(dtype).base_dtype
        if dtype not in (dtypes.uint8, dtypes.float32):
            raise TypeError(f"Invalid image dtype {dtype!r}, expected uint8 or float32")
        if fake_data:
            self._num_examples = 10000
            self.one_hot = one_hot
        else:
            if images.shape[0] != labels.shape[0]:
                raise ValueError(f"images.shape: {images.shape} labels.shape: {labels.shape}")
            self._num_examples = images.shape[0]
            if reshape:
                if images.shape[3] != 1:
                    raise ValueError(f"images must have one channel, got shape {images.shape}")
                images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
            if dtype == dtypes.float32:
                images = images.astype(np.float32) * np.float32(1.0 / 255.0)
        self._images = images
        self._labels = labels
        self._epochs_completed = 0
        self._index_in_epoch = 0

    @property
    def images(self) -> np.ndarray:
        return self._images

    @property
    def labels(self) -> np.ndarray:
        return self._labels

    @property
    def num_examples(self) -> int:
        return self._num_examples

    @property
    def epochs_completed(self) -> int:
        return self._epochs_completed

    def _shuffle(self) -> None:
        order = np.arange(self._num_examples)
        np.random.shuffle(order)
        self._images = self._images[order]
        self._labels = self._labels[order]

    def next_batch(self, batch_size: int, fake_data: bool = False,
                   shuffle: bool = True) -> tuple[Any, Any]:
        """The next `batch_size` examples as ``(images, labels)``."""
        if fake_data:
            image = [1] * 784
            label = [1] + [0] * 9 if self.one_hot else 0
            return [image] * batch_size, [label] * batch_size
        start = self._index_in_epoch
        if shuffle and self._epochs_completed == 0 and start == 0:
            self._shuffle()
        if start + batch_size <= self._num_examples:
            self._index_in_epoch = start + batch_size
            return (self._images[start:self._index_in_epoch],
                    self._labels[start:self._index_in_epoch])
        self._epochs_completed += 1
        rest_images = self._images[start:]
        rest_labels = self._labels[start:]
        if shuffle:
            self._shuffle()
        self._index_in_epoch = batch_size - rest_images.shape[0]
        end = self._index_in_epoch
        return (np.concatenate([rest_images, self._images[:end]], axis=0),
                np.concatenate([rest_labels, self._labels[:end]], axis=0))


def _maybe_download(filename: str, work_directory: str, source_url: str) -> str:
    os.makedirs(work_directory, exist_ok=True)
    path = os.path.join(work_directory, filename)
    if not os.path.exists(path):
        partial = path + ".part"
        urllib.request.urlretrieve(source_url + filename, partial)
        os.replace(partial, path)
        print("Successfully downloaded", filename, os.path.getsize(path), "bytes.")
    return path


def read_data_sets(train_dir: str, fake_data: bool = False, one_hot: bool = False,
                   dtype: Any = dtypes.float32, reshape: bool = True,
                   validation_size: int = 5000, seed: int | None = None,
                   source_url: str = DEFAULT_SOURCE_URL) -> Datasets:
    """MNIST's train/validation/test `DataSet`s from `train_dir` (see the module docstring)."""
    if fake_data:
        def fake() -> DataSet:
            return DataSet([], [], fake_data=True, one_hot=one_hot, dtype=dtype, seed=seed)

        return Datasets(train=fake(), validation=fake(), test=fake())
    source_url = source_url or DEFAULT_SOURCE_URL
    arrays = []
    for name, extract in ((_TRAIN_IMAGES, extract_images), (_TRAIN_LABELS, extract_labels),
                          (_TEST_IMAGES, extract_images), (_TEST_LABELS, extract_labels)):
        with open(_maybe_download(name, train_dir, source_url), "rb") as f:
            arrays.append(extract(f) if extract is extract_images else extract(f, one_hot))
    train_images, train_labels, test_images, test_labels = arrays
    if not 0 <= validation_size <= len(train_images):
        raise ValueError(f"Validation size should be between 0 and {len(train_images)}. "
                         f"Received: {validation_size}.")
    options = dict(dtype=dtype, reshape=reshape, seed=seed)
    return Datasets(
        train=DataSet(train_images[validation_size:], train_labels[validation_size:], **options),
        validation=DataSet(train_images[:validation_size], train_labels[:validation_size],
                           **options),
        test=DataSet(test_images, test_labels, **options))
