"""``tw.feature_column``: ``tf.compat.v1.feature_column`` (TF 1.15): the numeric, bucketized,
categorical (hash bucket, vocabulary list, vocabulary file, identity, weighted), indicator and
embedding columns, ``crossed_column`` and ``input_layer``, ``linear_model`` and
``make_parse_example_spec``. The shared-embedding and sequence columns are not provided.
"""

from tensorweave.api.feature_column_categorical import (
    categorical_column_with_hash_bucket,
    categorical_column_with_identity,
    categorical_column_with_vocabulary_file,
    categorical_column_with_vocabulary_list,
    weighted_categorical_column,
)
from tensorweave.api.feature_column_crossed import crossed_column
from tensorweave.api.feature_column_dense import (
    bucketized_column,
    indicator_column,
    numeric_column,
)
from tensorweave.api.feature_column_embedding import embedding_column
from tensorweave.api.feature_column_lib import input_layer, linear_model, make_parse_example_spec

__all__ = [
    "bucketized_column", "categorical_column_with_hash_bucket",
    "categorical_column_with_identity", "categorical_column_with_vocabulary_file",
    "categorical_column_with_vocabulary_list",
    "crossed_column", "embedding_column", "indicator_column", "input_layer", "linear_model",
    "make_parse_example_spec", "numeric_column", "weighted_categorical_column",
]
