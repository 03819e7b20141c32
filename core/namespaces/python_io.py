"""``tw.python_io``: ``tf.compat.v1.python_io``, TFRecord files from Python
(`tensorweave.formats.tf_record`)."""

from tensorweave.formats.tf_record import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]
