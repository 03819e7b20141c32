"""``tw.io``: ``tf.compat.v1.io``'s TFRecord files (`tensorweave.tf_record`) and Example /
SequenceExample parsing (`tensorweave.api.parsing_ops`), and ``gfile`` (`tensorweave.gfile`)."""

from tensorweave import gfile
from tensorweave.api.parsing_ops import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    VarLenFeature,
    parse_example,
    parse_sequence_example,
    parse_single_example,
    parse_single_sequence_example,
)
from tensorweave.tf_record import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "TFRecordCompressionType",
           "TFRecordOptions", "TFRecordWriter", "VarLenFeature", "gfile", "parse_example",
           "parse_sequence_example", "parse_single_example", "parse_single_sequence_example",
           "tf_record_iterator"]
