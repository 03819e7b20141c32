"""``tw.strings``: the dense string ops under ``tf.compat.v1.strings``' names (``join``,
``length``, ``substr``, ``upper``, ``lower``, ``strip``, ``regex_replace``, ``regex_full_match``,
``to_number``, ``as_string``, ``reduce_join``, ``to_hash_bucket``, ``to_hash_bucket_fast``,
``to_hash_bucket_strong``, ``unsorted_segment_join``), ``format`` and ``split`` (a
``SparseTensor``, as in TF1), all from `tensorweave.api.string_ops`, and ``unicode_decode``,
``unicode_decode_with_offsets``, ``unicode_encode``, ``unicode_split`` and ``unicode_transcode``
from `tensorweave.api.unicode_ops`.
"""

from tensorweave.api.string_ops import (
    as_string,
    reduce_join,
    regex_full_match,
    regex_replace,
    substr,
    unsorted_segment_join,
)
from tensorweave.api.string_ops import string_format as format  # noqa: A004 - TF's name
from tensorweave.api.string_ops import string_join as join
from tensorweave.api.string_ops import string_length as length
from tensorweave.api.string_ops import string_lower as lower
from tensorweave.api.string_ops import string_strip as strip
from tensorweave.api.string_ops import string_to_hash_bucket as to_hash_bucket
from tensorweave.api.string_ops import string_to_hash_bucket_fast as to_hash_bucket_fast
from tensorweave.api.string_ops import string_to_hash_bucket_strong as to_hash_bucket_strong
from tensorweave.api.string_ops import string_to_number as to_number
from tensorweave.api.string_ops import string_upper as upper
from tensorweave.api.string_ops import strings_split as split
from tensorweave.api.unicode_ops import (
    unicode_decode,
    unicode_decode_with_offsets,
    unicode_encode,
    unicode_split,
    unicode_transcode,
)

__all__ = [
    "as_string", "format", "join", "length", "lower", "reduce_join", "regex_full_match",
    "regex_replace", "split", "strip", "substr", "to_hash_bucket", "to_hash_bucket_fast",
    "to_hash_bucket_strong",
    "to_number", "unicode_decode", "unicode_decode_with_offsets", "unicode_encode",
    "unicode_split", "unicode_transcode", "unsorted_segment_join", "upper",
]
