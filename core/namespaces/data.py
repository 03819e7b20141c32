"""``tw.data``: ``tf.compat.v1.data``'s datasets and iterators (see
`tensorweave.api.dataset_ops` and `tensorweave.api.iterator_ops`)."""

from types import SimpleNamespace

from tensorweave.api.csv_ops import CsvDataset
from tensorweave.api.dataset_ops import (
    AUTOTUNE,
    Dataset,
    TextLineDataset,
    TFRecordDataset,
    dense_to_sparse_batch,
)
from tensorweave.api.iterator_checkpoint import make_saveable_from_iterator
from tensorweave.api.iterator_ops import (
    Iterator,
    get_output_classes,
    get_output_shapes,
    get_output_types,
    make_initializable_iterator,
    make_one_shot_iterator,
)

experimental = SimpleNamespace(AUTOTUNE=AUTOTUNE, CsvDataset=CsvDataset,
                               dense_to_sparse_batch=dense_to_sparse_batch,
                               make_saveable_from_iterator=make_saveable_from_iterator,
                               unbatch=lambda: Dataset.unbatch)

__all__ = ["Dataset", "Iterator", "TFRecordDataset", "TextLineDataset", "experimental",
           "get_output_classes", "get_output_shapes", "get_output_types",
           "make_initializable_iterator", "make_one_shot_iterator"]
