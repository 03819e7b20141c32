"""The small top-level ops of api/misc_ops (and TensorProto bytes of framework/tensor_proto)."""

from __future__ import annotations

import gzip
import os
import time
import zlib
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.graph.tensor_proto import parse_tensor


def test_count_up_to_stops_at_the_limit() -> None:
    v = tf.Variable(0, name="counter")
    up = tf.count_up_to(v, 2)
    assert up.dtype == tf.int32 and up.op.type == "CountUpTo"
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert [sess.run(up), sess.run(up)] == [0, 1]
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
            sess.run(up)
        assert sess.run(v) == 2


def test_serialize_and_parse_tensor_round_trip_in_tf_layout() -> None:
    value = np.array([[1.5, -2.0]], np.float32)
    data = tf.serialize_tensor(tf.constant(value))
    back = tf.parse_tensor(data, tf.float32)
    words = tf.serialize_tensor(tf.constant([b"ab", b"c"]))
    with tf.Session() as sess:
        raw, parsed, raw_words = sess.run([data, back, words])
        np.testing.assert_array_equal(parsed, value)
        # TensorProto: dtype DT_FLOAT, shape {dim {size 1} dim {size 2}}, tensor_content
        assert raw == (b"\x08\x01\x12\x08\x12\x02\x08\x01\x12\x02\x08\x02\x22\x08"
                       + value.tobytes())
        assert list(parse_tensor(raw_words)) == [b"ab", b"c"]
        scalar = sess.run(tf.serialize_tensor(tf.constant(7, tf.int64)))
        assert scalar == b"\x08\x09\x12\x00\x22\x08" + np.int64(7).tobytes()
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Type mismatch between parsed tensor \(float32\) and dtype "
                                 r"\(int32\)"):
            sess.run(tf.parse_tensor(data, tf.int32))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse"):
            sess.run(tf.parse_tensor(b"\xff\xff", tf.float32))


def test_make_tensor_proto_and_make_ndarray() -> None:
    proto = tf.make_tensor_proto([[1, 2], [3, 4]])
    assert proto.dtype == tf.int32.as_datatype_enum
    assert [d.size for d in proto.tensor_shape.dim] == [2, 2]
    np.testing.assert_array_equal(tf.make_ndarray(proto), [[1, 2], [3, 4]])
    again = tf.TensorProto.FromString(proto.SerializeToString())
    assert again == proto
    scalar = tf.make_tensor_proto(1.0)
    assert scalar.dtype == tf.float32.as_datatype_enum and "float_val: 1\n" in str(scalar)
    filled = tf.make_tensor_proto(5, dtype=tf.int64, shape=[2, 3])
    np.testing.assert_array_equal(tf.make_ndarray(filled), np.full([2, 3], 5, np.int64))
    assert tf.make_ndarray(tf.make_tensor_proto(["a", b"b"])).tolist() == [b"a", b"b"]
    with pytest.raises(TypeError):
        tf.make_tensor_proto(1.5, dtype=tf.int32)
    with pytest.raises(ValueError, match="Too many elements"):
        tf.make_tensor_proto([1, 2, 3], shape=[2])


def test_matching_files_and_decode_compressed(tmp_path: Any) -> None:
    for name in ("b.txt", "a.txt", "c.csv"):
        (tmp_path / name).write_bytes(b"x")
    files = tf.matching_files(os.path.join(tmp_path, "*.txt"))
    both = tf.matching_files([os.path.join(tmp_path, "c*"), os.path.join(tmp_path, "a*")])
    payload = [zlib.compress(b"hello"), zlib.compress(b"")]
    inflated = tf.decode_compressed(payload, compression_type="ZLIB")
    unzipped = tf.decode_compressed(gzip.compress(b"gz"), compression_type="GZIP")
    with tf.Session() as sess:
        assert sess.run(files).tolist() == [os.path.join(tmp_path, n).encode()
                                            for n in ("a.txt", "b.txt")]
        assert sess.run(both).tolist() == [os.path.join(tmp_path, n).encode()
                                           for n in ("a.txt", "c.csv")]
        assert sess.run(inflated).tolist() == [b"hello", b""]
        assert sess.run(unzipped) == b"gz"
        with pytest.raises(tf.errors.NotFoundError):
            sess.run(tf.matching_files(os.path.join(tmp_path, "*.none")))
        with pytest.raises(tf.errors.DataLossError):
            sess.run(tf.decode_compressed(b"not zlib", "ZLIB"))
    with pytest.raises(ValueError, match="Unsupported compression_type"):
        tf.decode_compressed(b"", "BZ2")


def test_timestamp_guarantee_const_accumulate_n_and_clip_by_average_norm() -> None:
    stamp = tf.timestamp()
    assert stamp.dtype == tf.float64
    a = tf.constant([1.0, 2.0])
    total = tf.accumulate_n([a, a * 2.0, a * 3.0])
    assert tf.accumulate_n([a]) is a
    with pytest.raises(ValueError):
        tf.accumulate_n([a, tf.constant([1, 2])])
    with pytest.raises(ValueError):
        tf.accumulate_n([a, tf.constant([1.0, 2.0, 3.0])])
    with pytest.raises(TypeError, match="tensor_dtype is int32"):
        tf.accumulate_n([a], tensor_dtype=tf.int32)
    t = np.array([[3.0, 4.0], [0.0, 0.0]], np.float32)
    # l2norm 5 over 4 elements: average 1.25 > 0.5, scaled by 0.5 / 1.25
    clipped = tf.clip_by_average_norm(t, 0.5)
    kept = tf.clip_by_average_norm(t, 2.0)
    with tf.Session() as sess:
        before = time.time()
        first, second = sess.run(stamp), sess.run(stamp)
        assert before - 1 <= first <= second <= time.time() + 1
        assert sess.run(tf.guarantee_const(a)).tolist() == [1.0, 2.0]
        np.testing.assert_allclose(sess.run(total), [6.0, 12.0])
        np.testing.assert_allclose(sess.run(clipped), t * 0.4, rtol=1e-6)
        np.testing.assert_allclose(sess.run(kept), t, rtol=1e-6)


def test_scopes_and_eager_switches() -> None:
    with tf.op_scope([], "legacy") as scope:
        assert scope == "legacy/"
    with tf.variable_op_scope([], None, default_name="vs"):
        assert tf.get_variable("w", [1]).op.name == "vs/w"
    gate = tf.no_op()
    with tf.name_scope("outer"), tf.control_dependencies([gate]):
        with tf.init_scope():
            c = tf.constant(1.0, name="c")
    assert c.op.name == "outer/c" and c.op.control_inputs == []
    loop_made: list[Any] = []

    def body(i: Any) -> Any:
        with tf.init_scope():
            loop_made.append(tf.constant(2.0))
        return i + 1.0

    tf.while_loop(lambda i: i < 2.0, body, [tf.constant(0.0)])
    assert loop_made[0].graph is tf.get_default_graph()
    assert tf.executing_eagerly() is False
    tf.disable_eager_execution()
    with pytest.raises(ValueError, match="graphs in sessions only"):
        tf.enable_eager_execution()
    assert tf.disable_v2_behavior() is None  # TF1 behavior is the only one
    assert tf.compat.v1.disable_v2_behavior is tf.disable_v2_behavior
    with pytest.raises(ValueError, match="TF2 behavior"):
        tf.enable_v2_behavior()
