"""Alias of ``tensorflow.python.data.ops.dataset_ops``: re-exports ``tf.data.Dataset``."""

from tensorweave.api.dataset_ops import AUTOTUNE, Dataset
