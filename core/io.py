"""``tw.io``: ``tf.compat.v1.io``'s TFRecord files (`tensorweave.tf_record`) and Example
parsing (`tensorweave.api.parsing_ops`)."""

from tensorweave.api.parsing_ops import (
    FixedLenFeature,
    VarLenFeature,
    parse_example,
    parse_single_example,
)
from tensorweave.tf_record import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)

__all__ = ["FixedLenFeature", "TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter",
           "VarLenFeature", "parse_example", "parse_single_example", "tf_record_iterator"]
