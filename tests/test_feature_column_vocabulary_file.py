"""``categorical_column_with_vocabulary_file`` (`tensorweave.api.feature_column_categorical`):
ids from a vocabulary file through a lookup table, OOV buckets, default values, integer
vocabularies, TF's constructor errors, and a `DNNClassifier` training on such a column."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.api.feature_column_base import LazyBuilder
from tests.canned_support import BINARY, COLOR, COLORS, X, closed_writer_cache  # noqa: F401

fc = tf.feature_column


def write(tmp_path: Path, lines: list[Any], name: str = "vocab.txt") -> str:
    path = tmp_path / name
    path.write_text("".join(f"{line}\n" for line in lines))
    return str(path)


def ids_of(column: Any, values: Any) -> tf.SparseTensorValue:
    sparse = column._get_sparse_tensors(LazyBuilder({column.key: tf.constant(values)})).id_tensor
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        return sess.run(sparse)


def hash_buckets(keys: list[str], num_buckets: int) -> np.ndarray:
    with tf.Graph().as_default(), tf.Session() as sess:
        return sess.run(tf.string_to_hash_bucket_fast(keys, num_buckets))


def test_ids_are_line_numbers_and_missing_entries_are_dropped(tmp_path: Path) -> None:
    column = fc.categorical_column_with_vocabulary_file("color", write(tmp_path, COLORS))
    assert column._num_buckets == 3 and column.name == "color"
    assert column._parse_example_spec == {"color": tf.VarLenFeature(tf.string)}
    got = ids_of(column, [["blue", "red"], ["pink", ""]])
    np.testing.assert_array_equal(got.indices, [[0, 0], [0, 1], [1, 0]])
    np.testing.assert_array_equal(got.values, [2, 0, -1])
    assert got.values.dtype == np.int64


def test_oov_buckets_and_default_value(tmp_path: Path) -> None:
    path = write(tmp_path, COLORS)
    bucketed = fc.categorical_column_with_vocabulary_file("color", path, num_oov_buckets=4)
    defaulted = fc.categorical_column_with_vocabulary_file("color", path, vocabulary_size=2,
                                                           default_value=9)
    assert bucketed._num_buckets == 7 and defaulted._num_buckets == 2
    values = ["green", "pink", "teal", "blue"]
    got = ids_of(bucketed, values)
    oov = hash_buckets(["pink", "teal"], 4) + 3
    np.testing.assert_array_equal(got.values, [1, oov[0], oov[1], 2])
    # only the first vocabulary_size lines are the vocabulary
    np.testing.assert_array_equal(ids_of(defaulted, values).values, [1, 9, 9, 9])


def test_integer_vocabulary(tmp_path: Path) -> None:
    column = fc.categorical_column_with_vocabulary_file(
        "code", write(tmp_path, [30, 10, 20]), dtype=tf.int32)
    got = ids_of(column, np.array([[10, -1], [20, 77]], np.int32))
    np.testing.assert_array_equal(got.values, [1, 2, -1])
    with pytest.raises(ValueError, match="Column dtype and SparseTensors dtype must be "
                                         "compatible"):
        ids_of(column, ["10"])


def test_constructor_errors_are_tfs(tmp_path: Path) -> None:
    path = write(tmp_path, COLORS)
    make = fc.categorical_column_with_vocabulary_file
    with pytest.raises(ValueError, match="Missing vocabulary_file in color"):
        make("color", "")
    with pytest.raises(ValueError, match="vocabulary_file in color does not exist"):
        make("color", str(tmp_path / "nope.txt"))
    with pytest.raises(ValueError, match="Invalid vocabulary_size in color"):
        make("color", path, vocabulary_size=0)
    with pytest.raises(ValueError, match="Can't specify both num_oov_buckets and default_value"):
        make("color", path, num_oov_buckets=2, default_value=0)
    with pytest.raises(ValueError, match="Invalid num_oov_buckets -1 in color"):
        make("color", path, num_oov_buckets=-1)
    with pytest.raises(ValueError, match="dtype must be string or integer"):
        make("color", path, dtype=tf.float32)


def test_a_vocabulary_longer_than_its_file_fails_at_run_time(tmp_path: Path) -> None:
    column = fc.categorical_column_with_vocabulary_file("color", write(tmp_path, COLORS),
                                                        vocabulary_size=5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid vocab_size"):
        ids_of(column, ["red"])


def test_dnn_classifier_trains_on_a_vocabulary_file_column(tmp_path: Path) -> None:
    color = fc.categorical_column_with_vocabulary_file(
        "color", write(tmp_path, COLORS), num_oov_buckets=1)
    columns = [fc.numeric_column("x"), fc.embedding_column(color, 2)]
    est = tf.estimator.DNNClassifier(
        [6], columns, model_dir=str(tmp_path / "model"),
        config=tf.estimator.RunConfig(log_step_count_steps=None, tf_random_seed=7),
        optimizer=tf.train.AdagradOptimizer(0.3))
    features = {"x": X, "color": COLOR}
    est.train(tf.estimator.inputs.numpy_input_fn(features, BINARY, batch_size=32,
                                                 num_epochs=None, shuffle=True), steps=60)
    metrics = est.evaluate(tf.estimator.inputs.numpy_input_fn(
        features, BINARY, batch_size=32, num_epochs=1, shuffle=False))
    assert metrics["accuracy"] > 0.9
    embedding = est.get_variable_value(
        "dnn/input_from_feature_columns/input_layer/color_embedding/embedding_weights")
    assert embedding.shape == (4, 2)  # three words and one OOV bucket
