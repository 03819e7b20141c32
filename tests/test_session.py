"""Session: fetch structures, feeds, errors, callables and lifecycle."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors


@pytest.fixture
def sess():
    with tf.Session() as s:
        yield s


def test_seed_graph_prints_squares(sess):
    x = tf.placeholder(tf.float32, shape=[])
    S = tf.Variable(0.0)
    w, b = tf.Variable(2.0), tf.Variable(1.0)
    update = tf.assign_add(S, w * x + b)
    sess.run(tf.global_variables_initializer())
    assert [sess.run(update, {x: i}) for i in range(5)] == [1, 4, 9, 16, 25]


def test_nested_fetch_structures(sess):
    a = tf.constant(1.0, name="a")
    b = tf.constant([2, 3], name="b")
    Pair = collections.namedtuple("Pair", "x y")
    out = sess.run({"list": [a, (b, a)], "pair": Pair(a, b), "op": a.op, "name": "b:0"})
    assert out["list"][0] == 1.0 and isinstance(out["list"][1], tuple)
    np.testing.assert_array_equal(out["list"][1][0], [2, 3])
    assert isinstance(out["pair"], Pair) and out["pair"].x == 1.0
    assert out["op"] is None
    np.testing.assert_array_equal(out["name"], [2, 3])
    assert sess.run("a") is None  # an op name fetches the op


def test_scalars_come_back_as_numpy_scalars(sess):
    value = sess.run(tf.constant(2.5))
    assert isinstance(value, np.float32) and value == 2.5
    array = sess.run(tf.constant([1, 2]))
    assert isinstance(array, np.ndarray) and array.dtype == np.int32


def test_fetched_arrays_are_private_copies(sess):
    c = tf.constant([1.0, 2.0])
    first = sess.run(c)
    first[0] = 99.0
    np.testing.assert_array_equal(sess.run(c), [1.0, 2.0])


def test_feeds_convert_to_the_tensor_dtype_and_check_shapes(sess):
    x = tf.placeholder(tf.int32, [None, 2])
    y = tf.identity(x)
    out = sess.run(y, {x: [[1, 2], [3, 4]]})
    assert out.dtype == np.int32
    with pytest.raises(ValueError, match=r"Cannot feed value of shape \(3,\)"):
        sess.run(y, {x: [1, 2, 3]})
    with pytest.raises(TypeError, match="cannot be a tf.Tensor"):
        sess.run(y, {x: tf.constant([[1, 2]])})


def test_any_tensor_is_feedable_and_feeding_cuts_its_producer(sess):
    x = tf.placeholder(tf.float32, [])
    double = x * 2.0
    out = double + 1.0
    assert sess.run(out, {double: 10.0}) == 11.0  # x is never needed
    assert sess.run(double, {double: 5.0}) == 5.0


def test_feed_keys_may_be_names(sess):
    x = tf.placeholder(tf.float32, [], name="x")
    assert sess.run(x * 3.0, {"x:0": 2.0}) == 6.0


@pytest.mark.parametrize("key", ["x", "nope:0", 3])
def test_a_feed_key_that_is_no_tensor_is_a_type_error(sess, key):
    x = tf.placeholder(tf.float32, [], name="x")
    with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor"):
        sess.run(x, {key: 1.0})


def test_a_python_int_that_does_not_fit_the_feed_dtype_is_a_type_error(sess):
    small = tf.placeholder(tf.int32, [], name="small")
    unsigned = tf.placeholder(tf.uint8, [], name="unsigned")
    with pytest.raises(TypeError, match="larger type"):
        sess.run(small, {small: 2**40})
    with pytest.raises(TypeError, match="larger type"):
        sess.run(unsigned, {unsigned: -1})
    assert sess.run(small, {small: 2**31 - 1}) == 2**31 - 1


def test_missing_feed_unknown_fetch_and_uninitialized_variable(sess):
    x = tf.placeholder(tf.float32, [2], name="needs_feed")
    with pytest.raises(errors.InvalidArgumentError, match="must feed a value.*needs_feed"):
        sess.run(x + 1.0)
    with pytest.raises(ValueError, match="cannot be interpreted"):
        sess.run("nope:0")
    with pytest.raises(TypeError):
        sess.run(None)
    v = tf.Variable([1.0, 2.0], name="v")
    with pytest.raises(errors.FailedPreconditionError, match="uninitialized value v"):
        sess.run(v)
    # the session still works after all of that
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_runtime_error_names_node_op_and_device(sess):
    x = tf.placeholder(tf.float32, [None])
    y = tf.placeholder(tf.float32, [None])
    z = tf.add(x, y, name="bad_add")
    with pytest.raises(errors.InvalidArgumentError) as info:
        sess.run(z, {x: [1.0, 2.0], y: [1.0, 2.0, 3.0]})
    message = str(info.value)
    assert "bad_add" in message and "AddV2" in message and "CPU:0" in message
    assert info.value.node_def == "bad_add" and info.value.op == "AddV2"
    np.testing.assert_array_equal(sess.run(z, {x: [1.0], y: [2.0]}), [3.0])


def test_ops_added_after_a_run_work(sess):
    a = tf.constant(1.0)
    assert sess.run(a + 1.0) == 2.0
    b = a * 5.0
    assert sess.run(b) == 5.0


def test_make_callable(sess):
    x = tf.placeholder(tf.float32, [])
    y = tf.placeholder(tf.float32, [])
    f = sess.make_callable([x + y, x * y], [x, y])
    assert f(2.0, 3.0) == [5.0, 6.0]
    with pytest.raises(ValueError, match="Expected 2 feed values"):
        f(1.0)
    g = sess.make_callable(tf.constant(7))
    assert g() == 7


def test_eval_and_run_use_the_default_session():
    c = tf.constant(4.0)
    v = tf.Variable(1.0)
    with pytest.raises(ValueError, match="No default session"):
        c.eval()
    with tf.Session() as s:
        assert tf.get_default_session() is s
        v.initializer.run()
        assert c.eval() == 4.0 and v.eval() == 1.0
    assert tf.get_default_session() is None


def test_interactive_session():
    c = tf.constant(3)
    s = tf.InteractiveSession()
    try:
        assert c.eval() == 3
    finally:
        s.close()
    assert tf.get_default_session() is None


def test_closed_session_refuses_to_run():
    s = tf.Session()
    c = tf.constant(1.0)
    s.close()
    s.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        s.run(c)


def test_list_devices_with_device_count():
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3})) as s:
        names = [d.name for d in s.list_devices()]
    assert names == [f"/job:localhost/replica:0/task:0/device:CPU:{i}" for i in range(3)]


def test_sessions_have_separate_variables():
    v = tf.Variable(1.0)
    inc = tf.assign_add(v, 1.0)
    with tf.Session() as s1, tf.Session() as s2:
        s1.run(v.initializer)
        s2.run(v.initializer)
        s1.run(inc)
        assert (s1.run(v), s2.run(v)) == (2.0, 1.0)


def test_run_metadata_and_step_stats(sess):
    x = tf.constant([1.0, 2.0]) * 3.0
    meta = tf.RunMetadata()
    opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)
    sess.run(x, options=opts, run_metadata=meta)
    ops = {n.op for g in meta.partition_graphs for n in g.node}
    assert {"Mul", "_Retval"} <= ops or {"Const", "_Retval"} <= ops
    stats = meta.step_stats.dev_stats
    assert stats and stats[0].device.endswith("CPU:0")
    for node in stats[0].node_stats:
        assert node.all_end_rel_micros >= 0 and node.thread_id > 0
