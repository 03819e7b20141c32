"""tf.decode_csv and tf.data.experimental.CsvDataset: values, dtypes, defaults, quoting,
select_cols and TF's error types."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import errors


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def test_decode_csv_columns_dtypes_and_defaults():
    records = tf.constant([["1.5,2,a,7"], [",,,"]])
    cols = tf.decode_csv(records, [[0.0], [5], [""], tf.constant([9], tf.int64)])
    assert [c.dtype for c in cols] == [tf.float32, tf.int32, tf.string, tf.int64]
    assert all(c.shape.as_list() == [2, 1] for c in cols)
    f, i, s, j = run(cols)
    np.testing.assert_array_equal(f, np.array([[1.5], [0.0]], np.float32))
    np.testing.assert_array_equal(i, np.array([[2], [5]], np.int32))
    assert s.tolist() == [[b"a"], [b""]]
    assert j.dtype == np.int64 and j.tolist() == [[7], [9]]


def test_decode_csv_quotes_delim_and_na_value():
    line = tf.constant('"x;y";"say ""hi""";NA;3')
    a, b, c, d = tf.io.decode_csv(line, [[""], [""], [1.25], [0]], field_delim=";",
                                  na_value="NA")
    assert run([a, b, c, d]) == [b"x;y", b'say "hi"', np.float32(1.25), 3]
    plain = tf.decode_csv('"q",r', [[""], [""]], use_quote_delim=False)
    assert run(plain) == [b'"q"', b"r"]


def test_decode_csv_select_cols():
    cols = tf.decode_csv(tf.constant(["0,1,2,3,4"]), [[0.0], [0]], select_cols=[1, 3])
    assert [v.tolist() for v in run(cols)] == [[1.0], [3]]
    with pytest.raises(ValueError, match="do not match"):
        tf.decode_csv("1,2", [[0]], select_cols=[0, 1])
    with pytest.raises(ValueError, match="strictly increasing"):
        tf.decode_csv("1,2", [[0], [0]], select_cols=[1, 0])
    with pytest.raises(ValueError, match="negative"):
        tf.decode_csv("1,2", [[0]], select_cols=[-1])


@pytest.mark.parametrize("record, defaults, message", [
    ("1,2,3", lambda: [[0], [0]], "Expect 2 fields but have 3 in record 0"),
    ("1,", lambda: [[0], tf.constant([], tf.int32)], "Field 1 is required but missing in record 0"),
    ("1,x", lambda: [[0], [0]], "Field 1 in record 0 is not a valid int32: x"),
    ("1.5", lambda: [tf.constant([0.0], tf.float64)], None),
    ('"ab"c,1', lambda: [[""], [0]], "Quoted field has to end with quote"),
    ('a"b,1', lambda: [[""], [0]], "Unquoted fields cannot have quotes"),
    ("3000000000", lambda: [[0]], "not a valid int32"),
])
def test_decode_csv_bad_records_fail_at_run_time(record, defaults, message):
    cols = tf.decode_csv(record, defaults())
    if message is None:
        assert run(cols) == [1.5]
        return
    with pytest.raises(errors.InvalidArgumentError, match=message):
        run(cols)


def test_decode_csv_bad_defaults_fail_at_construction():
    with pytest.raises(ValueError):
        tf.decode_csv("1", [[[0]]])  # a rank-2 default
    with pytest.raises(ValueError):
        tf.decode_csv("1", [[0, 1]])  # two defaults for one column
    with pytest.raises(TypeError):
        tf.decode_csv("1", [[True]])  # bool is not a CSV column type


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_csv_dataset_header_types_and_select_cols(tmp_path):
    files = [_write(tmp_path, "a.csv", "h1,h2,h3\n1,2.5,x\n3,,y\n"),
             _write(tmp_path, "b.csv", "h1,h2,h3\n5,6,z\n")]
    ds = tf.data.experimental.CsvDataset(files, [tf.int32, [0.5], [""]], header=True)
    assert ds.output_types == (tf.int32, tf.float32, tf.string)
    assert ds.output_shapes == (tf.TensorShape([]),) * 3
    got = run(ds.batch(5).make_one_shot_iterator().get_next())
    assert got[0].tolist() == [1, 3, 5]
    np.testing.assert_array_equal(got[1], np.array([2.5, 0.5, 6.0], np.float32))
    assert got[2].tolist() == [b"x", b"y", b"z"]
    sel = tf.data.experimental.CsvDataset(files, [[""]], header=True, select_cols=[2])
    assert run(sel.batch(5).make_one_shot_iterator().get_next())[0].tolist() == [b"x", b"y",
                                                                                 b"z"]


def test_csv_dataset_required_column_and_fed_filenames(tmp_path):
    path = _write(tmp_path, "c.csv", "1,\n")
    names = tf.placeholder(tf.string, [None])
    it = tf.data.experimental.CsvDataset(names, [tf.int64, tf.int64]) \
        .make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {names: [path]})
        with pytest.raises(errors.InvalidArgumentError, match="required but missing"):
            sess.run(nxt)
