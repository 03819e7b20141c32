"""Lookup tables (`tensorweave.api.lookup_ops`, kernels in `tensorweave.plugins.kernels.lookup`):
static tables against Python dicts, text-file initializers over real files, out-of-vocabulary
buckets against tensorweave's own ``string_to_hash_bucket_fast``, mutable tables, TF's errors,
and tables in a tf.data map, a MonitoredSession, a SavedModel and on a ps task."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorweave as tf

WORDS = ["emerson", "lake", "palmer"]
QUERY = ["lake", "king", "emerson", "crimson", "palmer", ""]


def vocab_file(tmp_path: Path, text: str, name: str = "vocab.txt") -> str:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return str(path)


def hash_buckets(keys: list[Any], num_buckets: int) -> np.ndarray:
    """tensorweave's own ``string_to_hash_bucket_fast`` of `keys` (as strings)."""
    with tf.Graph().as_default(), tf.Session() as sess:
        return sess.run(tf.string_to_hash_bucket_fast([str(k) for k in keys], num_buckets))


def run_initialized(*fetches: Any) -> Any:
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        return sess.run(list(fetches))


# -- static tables ---------------------------------------------------------------------------

def test_static_hash_table_matches_a_dict_for_any_key_shape() -> None:
    mapping = {"a": 3, "b": 7, "c": -2}
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(list(mapping), list(mapping.values()),
                                            value_dtype=tf.int64), -1)
    keys = np.array([["a", "zz"], ["c", "b"], ["", "a"]], dtype=object)
    out = table.lookup(tf.constant(keys))
    assert out.dtype == tf.int64 and out.shape.as_list() == [3, 2]
    got, size = run_initialized(out, table.size())
    expected = np.vectorize(lambda k: mapping.get(k, -1))(keys)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.int64 and size == 3
    assert table.key_dtype == tf.string and table.value_dtype == tf.int64
    assert table.name == "hash_table" and table.initializer.type == "LookupTableImportV2"
    assert table.initializer in tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS)


@pytest.mark.parametrize("key_dtype, value_dtype, keys, values, default", [
    (tf.int64, tf.string, [4, 9, -1], [b"four", b"nine", b"minus"], b"?"),
    (tf.int32, tf.float32, [1, 2], [0.5, -1.25], np.float32(np.nan)),
    (tf.string, tf.float64, [b"x", b"y"], [1e300, -2.0], 0.0),
    (tf.string, tf.bool, [b"t", b"f"], [True, False], False),
])
def test_static_tables_of_other_dtypes(key_dtype: Any, value_dtype: Any, keys: list[Any],
                                       values: list[Any], default: Any) -> None:
    table = tf.contrib.lookup.HashTable(
        tf.contrib.lookup.KeyValueTensorInitializer(keys, values, key_dtype, value_dtype),
        default)
    query = [keys[1], keys[0], (keys[0] + keys[1]) if key_dtype == tf.string else 12345]
    (got,) = run_initialized(table.lookup(tf.constant(query, key_dtype)))
    expected = np.array([values[1], values[0], default], dtype=value_dtype.np_type)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    assert table.init is table.initializer


def test_sparse_keys_give_a_sparse_result() -> None:
    table = tf.contrib.lookup.index_table_from_tensor(WORDS)
    keys = tf.SparseTensor([[0, 0], [1, 2]], tf.constant(["palmer", "nope"]), [2, 3])
    ids = table.lookup(keys)
    assert isinstance(ids, tf.SparseTensor)
    (value,) = run_initialized(ids)
    np.testing.assert_array_equal(value.values, [2, -1])
    np.testing.assert_array_equal(value.indices, [[0, 0], [1, 2]])
    np.testing.assert_array_equal(value.dense_shape, [2, 3])


def test_export_gives_every_entry() -> None:
    mapping = {10: 1.5, 20: 2.5}
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(list(mapping), list(mapping.values()), tf.int64,
                                            tf.float32), 0.0)
    keys, values = run_initialized(*table.export())
    assert dict(zip(keys.tolist(), values.tolist(), strict=True)) == mapping
    assert keys.dtype == np.int64 and values.dtype == np.float32


def test_index_to_string_tables_from_tensor() -> None:
    table = tf.contrib.lookup.index_to_string_table_from_tensor(WORDS, default_value="UNKNOWN")
    (got,) = run_initialized(table.lookup(tf.constant([1, 5, 0, -1], tf.int64)))
    assert got.tolist() == [b"lake", b"UNKNOWN", b"emerson", b"UNKNOWN"]
    ids = tf.contrib.lookup.string_to_index(tf.constant(["palmer", "x"]), WORDS)
    strs = tf.contrib.lookup.index_to_string(tf.constant([2], tf.int64), WORDS)
    got_ids, got_strs = run_initialized(ids, strs)
    assert got_ids.tolist() == [2, -1] and got_strs.tolist() == [b"palmer"]


# -- run-time errors ---------------------------------------------------------------------------

def test_an_uninitialized_table_fails_naming_the_node() -> None:
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["a"], np.array([1], np.int64)), -1)
    out = table.lookup(tf.constant(["a"]), name="find_it")
    with tf.Session() as sess:
        assert sess.run(table.size()) == 0
        with pytest.raises(tf.errors.FailedPreconditionError, match="Table not initialized.") \
                as info:
            sess.run(out)
        assert "find_it" in str(info.value)
        sess.run(table.initializer)
        assert sess.run(out).tolist() == [1]
        with pytest.raises(tf.errors.FailedPreconditionError, match="already initialized"):
            sess.run(table.initializer)


def test_duplicate_keys_with_different_values_fail_and_leave_it_uninitialized() -> None:
    same = tf.contrib.lookup.index_table_from_tensor(tf.constant(["a", "b"]))
    init = tf.contrib.lookup.KeyValueTensorInitializer(["a", "b", "a"], [0, 1, 0], tf.string,
                                                      tf.int64)
    equal = tf.contrib.lookup.HashTable(init, -1)
    bad = tf.contrib.lookup.index_table_from_tensor(tf.constant(["a", "b", "a"]))
    with tf.Session() as sess:
        sess.run([same.initializer, equal.initializer])
        assert sess.run(equal.lookup(tf.constant(["a", "b"]))).tolist() == [0, 1]
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="HashTable has different value for same key. Key a has 0 "
                                 "and trying to add value 2"):
            sess.run(bad.initializer)
        with pytest.raises(tf.errors.FailedPreconditionError, match="Table not initialized."):
            sess.run(bad.lookup(tf.constant(["a"])))


def test_fed_initializer_values_of_the_wrong_shape_fail() -> None:
    keys = tf.placeholder(tf.string, [None])
    values = tf.placeholder(tf.int64, [None])
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(keys, values), -1)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Expected shape \[2\] for value, got \[1\]"):
            sess.run(table.initializer, {keys: ["a", "b"], values: [1]})


def test_ops_of_the_wrong_kind_or_dtype_fail_at_run_time() -> None:
    static = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["a"], np.array([1], np.int64)), -1)
    mutable = tf.contrib.lookup.MutableHashTable(tf.string, tf.int64, -1)
    insert = tf.raw_ops.LookupTableInsertV2(table_handle=static.resource_handle,
                                            keys=tf.constant(["b"]),
                                            values=tf.constant([2], tf.int64))
    init = tf.raw_ops.InitializeTableV2(table_handle=mutable.resource_handle,
                                        keys=tf.constant(["b"]),
                                        values=tf.constant([2], tf.int64))
    wrong_key = tf.raw_ops.LookupTableFindV2(table_handle=mutable.resource_handle,
                                             keys=tf.constant([1], tf.int64),
                                             default_value=tf.constant(-1, tf.int64))
    wrong_default = tf.raw_ops.LookupTableFindV2(table_handle=mutable.resource_handle,
                                                 keys=tf.constant(["a"]),
                                                 default_value=tf.constant([-1, 2], tf.int64))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.UnimplementedError, match="Insert not supported"):
            sess.run(insert)
        with pytest.raises(tf.errors.InvalidArgumentError, match="is not initializable"):
            sess.run(init)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Key must be type string but got int64"):
            sess.run(wrong_key)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Expected shape \[\] for default value, got \[2\]"):
            sess.run(wrong_default)


def test_tables_sharing_a_name_must_agree() -> None:
    a = tf.contrib.lookup.MutableHashTable(tf.string, tf.int64, -1, name="shared")
    b = tf.raw_ops.MutableHashTableV2(key_dtype=tf.string, value_dtype=tf.int32,
                                      shared_name="shared")
    with tf.Session() as sess:
        sess.run(a.insert(["k"], [4]))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Conflicting key/value dtypes string->int32 with "
                                 "string-int64 for table shared"):
            sess.run(b)
        again = tf.raw_ops.MutableHashTableV2(key_dtype=tf.string, value_dtype=tf.int64,
                                              shared_name="shared")
        find = tf.raw_ops.LookupTableFindV2(table_handle=again, keys=tf.constant(["k"]),
                                            default_value=tf.constant(-1, tf.int64))
        assert sess.run(find).tolist() == [4]


# -- construction errors ---------------------------------------------------------------------

def test_construction_errors_are_tfs() -> None:
    table = tf.contrib.lookup.index_table_from_tensor(WORDS)
    with pytest.raises(TypeError, match="Signature mismatch. Keys must be dtype"):
        table.lookup(tf.constant([1, 2], tf.int64))
    with pytest.raises(ValueError):
        tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer([1], [2]), [-1, -1])
    with pytest.raises(ValueError, match="Signature mismatch. Keys must be dtype"):
        tf.lookup.TextFileInitializer("f", tf.string, tf.lookup.TextFileIndex.LINE_NUMBER,
                                      tf.int64, 0)
    with pytest.raises(ValueError, match="Values must be dtype tf.string"):
        tf.lookup.TextFileInitializer("f", tf.string, 0, tf.int64,
                                      tf.lookup.TextFileIndex.WHOLE_LINE)
    with pytest.raises(ValueError, match="Invalid key index -3"):
        tf.lookup.TextFileInitializer("f", tf.string, -3, tf.int64, 0)
    with pytest.raises(ValueError, match="Invalid vocab_size 0"):
        tf.lookup.TextFileInitializer("f", tf.string, 0, tf.int64, 1, vocab_size=0)
    with pytest.raises(ValueError, match="Filename required"):
        tf.lookup.TextFileInitializer("", tf.string, 0, tf.int64, 1)
    with pytest.raises(ValueError, match="oov_buckets must be > 0"):
        tf.lookup.StaticVocabularyTable(None, 0)
    with pytest.raises(ValueError, match="vocabulary_file must be specified"):
        tf.contrib.lookup.index_table_from_file("")
    with pytest.raises(ValueError, match="num_oov_buckets must be greater or equal than 0"):
        tf.contrib.lookup.index_table_from_tensor(WORDS, num_oov_buckets=-1)
    with pytest.raises(ValueError, match="Expected non-integer"):
        tf.contrib.lookup.index_table_from_tensor([1, 2])
    with pytest.raises(TypeError, match="Invalid value dtype"):
        tf.lookup.StaticVocabularyTable(
            tf.lookup.KeyValueTensorInitializer(["a"], np.array([1], np.int32)), 1)
    with pytest.raises(TypeError, match="Must be unsigned integer"):
        tf.contrib.lookup.StrongHashSpec([1, "2"])
    with pytest.raises(TypeError):  # keys of an unsupported dtype
        tf.raw_ops.HashTableV2(key_dtype=tf.float32, value_dtype=tf.int64)
    with pytest.raises(ValueError):  # a rank-1 handle
        tf.raw_ops.LookupTableSizeV2(table_handle=tf.constant(["a", "b"]))


# -- text files ------------------------------------------------------------------------------

def test_text_file_whole_line_to_line_number(tmp_path: Path) -> None:
    path = vocab_file(tmp_path, "emerson\r\nlake\npalmer")  # CRLF and no final newline
    init = tf.lookup.TextFileInitializer(path, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE,
                                         tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER)
    table = tf.lookup.StaticHashTable(init, -1)
    (got,) = run_initialized(table.lookup(tf.constant(QUERY)))
    expected = {w: i for i, w in enumerate(WORDS)}
    assert got.tolist() == [expected.get(q, -1) for q in QUERY]
    assert path.encode() in [c.op.attrs["value"].item()
                             for c in tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS)]


def test_text_file_columns_delimiter_and_vocab_size(tmp_path: Path) -> None:
    path = vocab_file(tmp_path, "a,10,1.5\nb,-20,2\nc,30,-0.25\nd,40,9\n")
    ints = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(path, tf.string, 0, tf.int64, 1, delimiter=","), 0)
    floats = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(path, tf.string, 0, tf.float32, 2, vocab_size=3,
                                      delimiter=","), -1.0)
    by_number = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(path, tf.int64, 1, tf.string,
                                      tf.lookup.TextFileIndex.WHOLE_LINE, delimiter=","), "")
    keys = tf.constant(["b", "d", "x", "a"])
    got_ints, got_floats, got_lines, sizes = run_initialized(
        ints.lookup(keys), floats.lookup(keys),
        by_number.lookup(tf.constant([30, 10, 5], tf.int64)), [floats.size(), ints.size()])
    assert got_ints.tolist() == [-20, 40, 0, 10]
    np.testing.assert_array_equal(got_floats, np.array([2.0, -1.0, -1.0, 1.5], np.float32))
    assert got_floats.dtype == np.float32
    assert got_lines.tolist() == [b"c,30,-0.25", b"a,10,1.5", b""]
    assert sizes == [3, 4]


def test_index_tables_from_file(tmp_path: Path) -> None:
    path = vocab_file(tmp_path, "\n".join(WORDS) + "\n")
    ids = tf.contrib.lookup.index_table_from_file(path, default_value=-5)
    names = tf.contrib.lookup.index_to_string_table_from_file(path, vocab_size=2)
    numbers = vocab_file(tmp_path, "7\n42\n", "numbers.txt")
    int_ids = tf.contrib.lookup.index_table_from_file(numbers, key_dtype=tf.int32)
    with pytest.raises(TypeError, match="Keys must be dtype tf.int64"):  # as TF: no cast
        int_ids.lookup(tf.constant([42], tf.int32))
    got_ids, got_names, got_ints = run_initialized(
        ids.lookup(tf.constant(QUERY)), names.lookup(tf.constant([0, 2], tf.int64)),
        int_ids.lookup(tf.constant([42, 7, 8], tf.int64)))
    assert got_ids.tolist() == [1, -5, 0, -5, 2, -5]
    assert got_names.tolist() == [b"emerson", b"UNK"]
    assert got_ints.tolist() == [1, 0, -1]


@pytest.mark.parametrize("text, kwargs, error, message", [
    ("a\nb\n", {"vocab_size": 3}, tf.errors.InvalidArgumentError,
     r"Invalid vocab_size in .*vocab.txt: expected 3 but got 2"),
    ("a\n\nb\n", {}, tf.errors.InvalidArgumentError,
     r"Invalid content in .*vocab.txt: empty line found at position 3\."),
    ("", {}, tf.errors.OutOfRangeError, "is empty"),
    ("a\tx\nb\n", {"key_column_index": 0, "value_column_index": 1, "value_dtype": tf.string},
     tf.errors.InvalidArgumentError,
     r"Invalid number of columns in .*vocab.txt line 1 \(b\) : expected 1 got 1"),
    ("a\t1\nb\tx2\n", {"key_column_index": 0, "value_column_index": 1},
     tf.errors.InvalidArgumentError, r"Field x2 in line 1 is not a valid int64\."),
    ("a\nb\na\n", {}, tf.errors.FailedPreconditionError,
     "HashTable has different value for same key. Key a has 0 and trying to add value 2"),
])
def test_bad_text_files_fail_with_tfs_errors(tmp_path: Path, text: str, kwargs: dict[str, Any],
                                             error: type, message: str) -> None:
    path = vocab_file(tmp_path, text)
    value_dtype = kwargs.pop("value_dtype", tf.int64)
    init = tf.lookup.TextFileInitializer(
        path, tf.string, kwargs.pop("key_column_index", tf.lookup.TextFileIndex.WHOLE_LINE),
        value_dtype, kwargs.pop("value_column_index", tf.lookup.TextFileIndex.LINE_NUMBER),
        name="from_file", **kwargs)
    table = tf.lookup.StaticHashTable(init, -1 if value_dtype == tf.int64 else "")
    with tf.Session() as sess, pytest.raises(error, match=message) as info:
        sess.run(table.initializer)
    assert "from_file/InitializeTableFromTextFileV2" in str(info.value)


def test_a_missing_file_is_not_found_and_a_second_file_init_is_harmless(tmp_path: Path) -> None:
    missing = tf.contrib.lookup.index_table_from_file(str(tmp_path / "nope.txt"))
    path = vocab_file(tmp_path, "x\ny\n")
    table = tf.contrib.lookup.index_table_from_file(path)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError, match="nope.txt"):
            sess.run(missing.initializer)
        sess.run(table.initializer)
        sess.run(table.initializer)  # TF: a table filled from its file stays as it is
        assert sess.run(table.lookup(tf.constant(["y"]))).tolist() == [1]


# -- out-of-vocabulary buckets ---------------------------------------------------------------

def test_static_vocabulary_table_hashes_oov_keys_after_the_vocabulary(tmp_path: Path) -> None:
    path = vocab_file(tmp_path, "\n".join(WORDS) + "\n")
    table = tf.lookup.StaticVocabularyTable(
        tf.lookup.TextFileInitializer(path, tf.string, -2, tf.int64, -1), num_oov_buckets=5)
    ids, size = run_initialized(table.lookup(tf.constant(QUERY)), table.size())
    oov = [q for q in QUERY if q not in WORDS]
    buckets = dict(zip(oov, (hash_buckets(oov, 5) + 3).tolist(), strict=True))
    assert ids.tolist() == [WORDS.index(q) if q in WORDS else buckets[q] for q in QUERY]
    assert size == 8 and ids.dtype == np.int64


def test_integer_keys_hash_their_decimal_strings() -> None:
    table = tf.contrib.lookup.index_table_from_tensor(
        tf.constant([100, 200], tf.int64), num_oov_buckets=4, dtype=tf.int32)
    keys = [200, 7, 100, -13]
    (ids,) = run_initialized(table.lookup(tf.constant(keys, tf.int32)))
    buckets = hash_buckets([7, -13], 4) + 2
    assert ids.tolist() == [1, buckets[0], 0, buckets[1]]


def test_only_buckets_and_the_strong_hash() -> None:
    buckets_only = tf.lookup.StaticVocabularyTable(None, 6)
    strong = tf.contrib.lookup.IdTableWithHashBuckets(
        None, 6, hasher_spec=tf.contrib.lookup.StrongHashSpec([7, 11]))
    keys = tf.constant(["p", "q", "r"])
    expected_strong = tf.string_to_hash_bucket_strong(keys, 6, key=[7, 11])
    got, got_strong, want_strong = run_initialized(buckets_only.lookup(keys),
                                                   strong.lookup(keys), expected_strong)
    np.testing.assert_array_equal(got, hash_buckets(["p", "q", "r"], 6))
    np.testing.assert_array_equal(got_strong, want_strong)


# -- mutable tables --------------------------------------------------------------------------

def test_mutable_table_insert_remove_export_against_a_dict() -> None:
    table = tf.contrib.lookup.MutableHashTable(tf.int64, tf.float32, default_value=-1.0)
    keys = tf.placeholder(tf.int64, [None])
    values = tf.placeholder(tf.float32, [None])
    insert, remove = table.insert(keys, values), table.remove(keys)
    query = tf.constant([[1, 2], [3, 4]], tf.int64)
    found, size, (exported_keys, exported_values) = table.lookup(query), table.size(), \
        table.export()
    assert found.shape.as_list() == [2, 2]
    reference: dict[int, float] = {}
    with tf.Session() as sess:
        for op, ks, vs in [(insert, [1, 2, 3], [0.5, 1.5, 2.5]), (insert, [2, 9], [7.0, 8.0]),
                           (remove, [3, 100], None)]:
            if vs is None:
                sess.run(op, {keys: ks})
                for k in ks:
                    reference.pop(k, None)
            else:
                sess.run(op, {keys: ks, values: vs})
                reference.update(zip(ks, vs, strict=True))
        got, n, ek, ev = sess.run([found, size, exported_keys, exported_values])
    expected = np.vectorize(lambda k: reference.get(k, -1.0))([[1, 2], [3, 4]])
    np.testing.assert_array_equal(got, expected.astype(np.float32))
    assert got.dtype == np.float32 and n == len(reference)
    assert dict(zip(ek.tolist(), ev.tolist(), strict=True)) == reference


def test_mutable_table_of_vectors() -> None:
    table = tf.contrib.lookup.MutableHashTable(tf.string, tf.int64, default_value=[0, -1])
    insert = table.insert(["a", "b"], np.array([[1, 2], [3, 4]], np.int64))
    found = table.lookup(["b", "c", "a"])
    bad = table.insert(["a"], np.array([1, 2], np.int64))
    assert found.shape.as_list() == [3, 2]
    assert table.resource_handle.op.type == "MutableHashTableOfTensorsV2"
    with tf.Session() as sess:
        sess.run(insert)
        np.testing.assert_array_equal(sess.run(found), [[3, 4], [0, -1], [1, 2]])
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Expected shape \[1,2\] for value, got \[2\]"):
            sess.run(bad)
        keys, values = sess.run(table.export())
    assert keys.tolist() == [b"a", b"b"] and values.tolist() == [[1, 2], [3, 4]]


def test_import_replaces_a_mutable_tables_content() -> None:
    table = tf.contrib.lookup.MutableHashTable(tf.string, tf.string, "")
    imported = tf.raw_ops.LookupTableImportV2(table_handle=table.resource_handle,
                                              keys=tf.constant(["x"]), values=tf.constant(["y"]))
    with tf.Session() as sess:
        sess.run(table.insert(["a", "b"], ["1", "2"]))
        sess.run(imported)
        assert sess.run(table.lookup(["a", "x"])).tolist() == [b"", b"y"]
        assert sess.run(table.size()) == 1


# -- tables in the runtime -------------------------------------------------------------------

def test_a_table_in_a_dataset_map(tmp_path: Path) -> None:
    path = vocab_file(tmp_path, "\n".join(WORDS) + "\n")
    table = tf.contrib.lookup.index_table_from_file(path, num_oov_buckets=1)
    dataset = tf.data.Dataset.from_tensor_slices(["palmer", "x", "lake"]).map(table.lookup)
    element = dataset.make_initializable_iterator()
    with tf.Session() as sess:
        sess.run([tf.tables_initializer(), element.initializer])
        got = [sess.run(element.get_next()) for _ in range(3)]
    assert got == [2, 3, 1]


def test_table_ops_follow_the_table_to_its_device() -> None:
    with tf.device("/cpu:1"):
        table = tf.contrib.lookup.index_table_from_tensor(WORDS)
    with tf.device("/cpu:0"):
        ids = table.lookup(tf.constant(["lake"]))
    meta = tf.RunMetadata()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(tf.tables_initializer())
        assert sess.run(ids, options=tf.RunOptions(output_partition_graphs=True),
                        run_metadata=meta).tolist() == [1]
    devices = {n.op: n.device for g in meta.partition_graphs for n in g.node}
    assert devices["LookupTableFindV2"].endswith("CPU:1")


def test_monitored_session_initializes_tables(tmp_path: Path) -> None:
    path = vocab_file(tmp_path, "\n".join(WORDS) + "\n")
    ids = tf.contrib.lookup.index_table_from_file(path).lookup(tf.constant(["palmer"]))
    tf.train.get_or_create_global_step()
    with tf.train.MonitoredSession() as sess:
        assert sess.run(ids).tolist() == [2]


def test_a_saved_model_fills_its_tables_from_its_assets(tmp_path: Path) -> None:
    source = vocab_file(tmp_path, "\n".join(WORDS) + "\n", "words.txt")
    export_dir = str(tmp_path / "model")
    with tf.Graph().as_default():
        keys = tf.placeholder(tf.string, [None], name="keys")
        ids = tf.contrib.lookup.index_table_from_file(source).lookup(keys)
        tf.identity(ids, name="ids")
        with tf.Session() as sess:
            builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
            builder.add_meta_graph_and_variables(
                sess, ["serve"], main_op=tf.saved_model.main_op.main_op(),
                assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS))
            builder.save()
    os.remove(source)  # loading must use the SavedModel's copy
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.saved_model.loader.load(sess, ["serve"], export_dir)
        got = sess.run("ids:0", {"keys:0": ["lake", "zz", "emerson"]})
    assert got.tolist() == [1, -1, 0]
    shutil.rmtree(export_dir)


def test_a_table_on_the_ps_task_serves_the_worker(tmp_path: Path) -> None:
    from tensorweave.train.local_cluster import LocalCluster

    path = vocab_file(tmp_path, "\n".join(WORDS) + "\n")
    with LocalCluster({"ps": 1, "worker": 1}) as cluster, tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            table = tf.contrib.lookup.index_table_from_file(path, num_oov_buckets=2)
        with tf.device("/job:worker/task:0"):
            keys = tf.placeholder(tf.string, [None])
            ids = table.lookup(keys) + 0
        meta = tf.RunMetadata()
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(tf.tables_initializer())
            got = sess.run(ids, {keys: ["palmer", "lake", "xyz"]},
                           options=tf.RunOptions(output_partition_graphs=True),
                           run_metadata=meta)
    assert got.tolist()[:2] == [2, 1]
    assert got[2] == 3 + hash_buckets(["xyz"], 2)[0]
    devices = {n.op: n.device for g in meta.partition_graphs for n in g.node}
    assert devices["LookupTableFindV2"].startswith("/job:ps")


# -- checkpoints -------------------------------------------------------------------------------

def test_a_mutable_table_is_saved_and_restored_by_a_default_saver(tmp_path: Path) -> None:
    from tests.checkpoint_support import read_checkpoint

    with tf.Graph().as_default():
        table = tf.contrib.lookup.MutableHashTable(tf.string, tf.int64, -1, name="words")
        vectors = tf.contrib.lookup.MutableHashTable(tf.int64, tf.float32, [0.0, 0.0],
                                                     name="vecs")
        fill = [table.insert(["a", "b"], np.array([1, 2], np.int64)),
                vectors.insert(np.array([7], np.int64), np.float32([[1.5, 2.5]]))]
        change = [table.remove(["a"]), table.insert(["c"], np.array([3], np.int64)),
                  vectors.insert(np.array([7, 8], np.int64), np.zeros([2, 2], np.float32))]
        query = [table.lookup(["a", "b", "c"]), vectors.lookup(np.array([7, 8], np.int64))]
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(fill)
            path = saver.save(sess, str(tmp_path / "tables"))
            sess.run(change)
            assert sess.run(query[0]).tolist() == [-1, 2, 3]
            saver.restore(sess, path)
            words, vecs = sess.run(query)
    assert words.tolist() == [1, 2, -1]
    np.testing.assert_array_equal(vecs, np.float32([[1.5, 2.5], [0.0, 0.0]]))
    saved = read_checkpoint(path)
    assert sorted(saved) == ["vecs-keys", "vecs-values", "words-keys", "words-values"]
    assert dict(zip(saved["words-keys"].tolist(), saved["words-values"].tolist())) == \
        {b"a": 1, b"b": 2}
    assert saved["vecs-values"].shape == (1, 2) and saved["vecs-values"].dtype == np.float32


def test_a_mutable_table_restores_into_a_fresh_graph(tmp_path: Path) -> None:
    def build() -> tuple[Any, Any]:
        with tf.name_scope("scope"):
            table = tf.contrib.lookup.MutableHashTable(tf.int64, tf.string, "?")
        return table, tf.train.Saver()

    with tf.Graph().as_default():
        table, saver = build()
        with tf.Session() as sess:
            sess.run(table.insert(np.array([3, 1], np.int64), ["three", "one"]))
            path = saver.save(sess, str(tmp_path / "m"))
    assert tf.train.list_variables(path) == [("scope/MutableHashTable-keys", [2]),
                                             ("scope/MutableHashTable-values", [2])]
    with tf.Graph().as_default():
        table, saver = build()
        with tf.Session() as sess:
            saver.restore(sess, path)
            got = sess.run([table.lookup(np.array([1, 2, 3], np.int64)), table.size()])
    assert got[0].tolist() == [b"one", b"?", b"three"] and got[1] == 2


def test_unsaved_tables_and_mismatched_checkpoints(tmp_path: Path) -> None:
    from tests.checkpoint_support import write_checkpoint

    with tf.Graph().as_default():
        tf.contrib.lookup.MutableHashTable(tf.string, tf.int64, -1, checkpoint=False)
        tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], [1]), -1)
        assert tf.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS) == []
        with pytest.raises(ValueError, match="No variables to save"):
            tf.train.Saver()
    bad = str(tmp_path / "bad")
    write_checkpoint(bad, {"t-keys": np.array([b"a"], dtype=object),
                           "t-values": np.array([1, 2], np.int64)})
    with tf.Graph().as_default():
        tf.contrib.lookup.MutableHashTable(tf.string, tf.int64, -1, name="t")
        saver = tf.train.Saver()
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError):
            saver.restore(sess, bad)


def test_a_monitored_training_session_checkpoints_a_table(tmp_path: Path) -> None:
    def build() -> tuple[Any, Any, Any]:
        step = tf.train.get_or_create_global_step()
        table = tf.contrib.lookup.MutableHashTable(tf.int64, tf.int64, -1)
        with tf.control_dependencies([table.insert(tf.reshape(step, [1]),
                                                   tf.reshape(step * 10, [1]))]):
            train = tf.assign_add(step, 1)
        return train, table.lookup(np.array([0, 2, 3], np.int64)), table.size()

    with tf.Graph().as_default():
        train, _, _ = build()
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                               save_summaries_steps=None) as sess:
            for _ in range(3):
                sess.run(train)
    with tf.Graph().as_default():
        _, found, size = build()
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                               save_checkpoint_secs=None,
                                               save_summaries_steps=None) as sess:
            got, n = sess.run([found, size])
    assert got.tolist() == [0, 20, -1] and n == 3
