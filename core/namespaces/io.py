"""``tw.io``: ``tf.compat.v1.io``'s TFRecord files (`tensorweave.formats.tf_record`) and Example /
SequenceExample parsing (`tensorweave.api.parsing_ops`), and ``gfile`` (`tensorweave.gfile`)."""

from tensorweave.api.csv_ops import decode_csv
from tensorweave.api.image_io_ops import *  # noqa: F403
from tensorweave.api.image_io_ops import __all__ as _image_io_all
from tensorweave.api.parsing_ops import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    SparseFeature,
    VarLenFeature,
    decode_json_example,
    parse_example,
    parse_sequence_example,
    parse_single_example,
    parse_single_sequence_example,
)
from tensorweave.api.sparse_ops_extra import (
    deserialize_many_sparse,
    serialize_many_sparse,
    serialize_sparse,
)
from tensorweave.formats.tf_record import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)
from tensorweave.platform import gfile

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "SparseFeature", "TFRecordCompressionType",
           "TFRecordOptions", "TFRecordWriter", "VarLenFeature", "decode_csv",
           "decode_json_example", "gfile",
           "parse_example", "parse_sequence_example", "parse_single_example",
           "parse_single_sequence_example", "tf_record_iterator"]
__all__ += _image_io_all
__all__ += ["deserialize_many_sparse", "serialize_many_sparse", "serialize_sparse"]
