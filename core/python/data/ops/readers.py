"""Alias of ``tensorflow.python.data.ops.readers``: re-exports the file datasets of ``tf.data``."""

from tensorweave.api.csv_ops import CsvDataset
from tensorweave.api.dataset_ops import TextLineDataset, TFRecordDataset
