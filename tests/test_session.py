"""Session: fetch structures, feeds, errors, callables and lifecycle."""

from __future__ import annotations

import collections
import gc
import threading
import weakref

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import errors


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
    assert info.value.op.name == "bad_add" and info.value.op.type == "AddV2"
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


def test_a_repeated_signature_keeps_its_checks_errors_and_results(sess):
    # the second run of a signature takes its resolved step; it must check, fail and answer as
    # the first did
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.placeholder(tf.float32, [None], name="y")
    z = tf.add(x * 2.0, y, name="sum")
    for _ in range(3):
        np.testing.assert_array_equal(sess.run(z, {x: [1.0], y: [2.0]}), [4.0])
    with pytest.raises(errors.InvalidArgumentError) as info:
        sess.run(z, {x: [1.0, 2.0], y: [1.0, 2.0, 3.0]})
    assert info.value.op.name == "sum" and "AddV2" in str(info.value)
    with pytest.raises(ValueError, match="Cannot feed value of shape"):
        sess.run(z, {x: [[1.0]], y: [2.0]})
    assert sess.run({"z": z}, {x: [3.0], y: [0.5]}) == {"z": np.float32(6.5)}
    # a feed key that names a tensor fed already: its later value counts, as in `_feeds`
    np.testing.assert_array_equal(sess.run(z, {x: [1.0], y: [0.0], "y:0": [5.0]}), [7.0])
    np.testing.assert_array_equal(sess.run(z, {x: [1.0], y: [0.0], "y:0": [6.0]}), [8.0])


def test_a_repeated_signature_sees_the_graph_grow(sess):
    v = tf.Variable(1.0)
    sess.run(v.initializer)
    bump = tf.assign_add(v, 1.0)
    assert [sess.run(bump) for _ in range(3)] == [2.0, 3.0, 4.0]
    double = tf.assign(v, v * 2.0)  # new ops: the graph's next version
    assert sess.run(double) == 8.0
    assert [sess.run(bump) for _ in range(2)] == [9.0, 10.0]


def test_a_grown_graph_lets_the_steps_of_its_old_version_go(sess):
    x = tf.placeholder(tf.float32, [])
    y = x + 1.0
    for _ in range(2):
        assert sess.run(y, {x: 1.0}) == 2.0
    (call,) = [c for c in sess._calls.values() if c is not None]
    old = weakref.ref(call.compiled)
    del call
    assert sess.run(x * 3.0, {x: 1.0}) == 3.0  # new ops: the graph's next version
    gc.collect()
    assert old() is None  # (a large graph's partitions would stay alive otherwise)
    assert sess.run(y, {x: 2.0}) == 3.0


def test_a_callable_keeps_its_checks_and_errors(sess):
    x = tf.placeholder(tf.float32, [None])
    y = tf.placeholder(tf.float32, [None])
    f = sess.make_callable(tf.add(x, y, name="callable_sum"), [x, y])
    for _ in range(3):
        np.testing.assert_array_equal(f([1.0], [2.0]), [3.0])
    with pytest.raises(errors.InvalidArgumentError) as info:
        f([1.0, 2.0], [1.0, 2.0, 3.0])
    assert info.value.op.name == "callable_sum"
    with pytest.raises(TypeError, match="cannot be a tf.Tensor"):
        f(x, [1.0])
    tf.constant(0.0)  # the graph grows: the callable still runs
    np.testing.assert_array_equal(f([1.0], [1.0]), [2.0])
    sess.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        f([1.0], [1.0])


def test_runs_of_one_signature_from_many_threads_keep_their_own_values(sess):
    x = tf.placeholder(tf.float32, [2])
    y = x * 3.0 + 1.0
    failures = []

    def work(k):
        for i in range(200):
            value = np.array([k, i], np.float32)
            got = sess.run(y, {x: value})
            if not np.array_equal(got, value * np.float32(3.0) + np.float32(1.0)):
                failures.append((k, i, got))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


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


def test_interactive_session_over_the_global_graph_is_no_graph_context():
    # As TF 1.15: an open InteractiveSession leaves reset_default_graph usable.
    first = tf.InteractiveSession()
    second = tf.InteractiveSession()
    try:
        assert tf.constant(2.0).eval() == 2.0
        old = tf.get_default_graph()
        tf.reset_default_graph()
        assert tf.get_default_graph() is not old
        first.close()  # interactive sessions close in any order
        assert tf.get_default_session() is second
    finally:
        second.close()
    assert tf.get_default_session() is None


def test_interactive_session_of_an_explicit_graph_is_its_graph_context():
    graph = tf.Graph()
    s = tf.InteractiveSession(graph=graph)
    try:
        assert tf.get_default_graph() is graph
        with pytest.raises(AssertionError, match="to clear nested graphs"):
            tf.reset_default_graph()
    finally:
        s.close()
    assert tf.get_default_graph() is not graph
    tf.reset_default_graph()


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


# -- per-step fast paths (cached fetch mappers and feed targets, GC paused to compile) --------


@pytest.fixture(params=[256, 0], ids=["cached", "uncached"])
def cache_entries(request, monkeypatch):
    from tensorweave.engine.client import session as session_module

    monkeypatch.setattr(session_module, "CACHE_ENTRIES", request.param)
    return request.param


def test_fetch_structures_are_rebuilt_alike_with_or_without_the_cache(cache_entries):
    Pair = collections.namedtuple("Pair", "x y")
    a = tf.constant(np.float32(1.5), name="a")
    b = tf.constant(np.arange(3, dtype=np.int32), name="b")
    with tf.Session() as s:
        for _ in range(3):
            got = s.run({"a": a, "pair": Pair(a, [b, "b:0"]), "t": (b,)})
            assert got["a"] == 1.5 and type(got["a"]) is np.float32
            assert type(got["pair"]) is Pair and type(got["pair"].y) is list
            np.testing.assert_array_equal(got["pair"].y[1], [0, 1, 2])
            assert type(got["t"]) is tuple
        fetches = [a]
        assert s.run(fetches) == [1.5]
        fetches.append(b)  # the same list object with new contents: a new structure
        assert len(s.run(fetches)) == 2
        assert len(s._mappers) == (3 if cache_entries else 0)


def test_cached_feeds_convert_and_check_as_uncached_ones(cache_entries):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = x * 2.0
    with tf.Session() as s:
        for _ in range(2):
            out = s.run(y, {x: [[1, 2]]})  # converted from a list of ints
            assert out.dtype == np.float32
            np.testing.assert_array_equal(out, [[2.0, 4.0]])
            np.testing.assert_array_equal(s.run(y, {"x:0": np.ones((3, 2), np.float64)}),
                                          np.full((3, 2), 2.0, np.float32))
            with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2, 3\)"):
                s.run(y, {x: np.zeros((2, 3), np.float32)})
            with pytest.raises(TypeError, match="cannot be a tf.Tensor"):
                s.run(y, {x: y})
        step = s.make_callable(y, [x])
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2,\)"):
            step(np.zeros(2, np.float32))
        np.testing.assert_array_equal(step(np.ones((1, 2), np.float32)), [[2.0, 2.0]])


def test_python_floats_feed_scalars_only(cache_entries):
    half = tf.placeholder(tf.float16, [], name="half")
    vector = tf.placeholder(tf.float32, [None], name="vector")
    with tf.Session() as s:
        for _ in range(2):  # uncached, then cached
            out = s.run(half, {half: 1.0 / 3.0})
            assert out.dtype == np.float16 and out == np.float16(1.0 / 3.0)
            with pytest.raises(ValueError, match=r"Cannot feed value of shape \(\)"):
                s.run(vector, {vector: 2.0})


def test_only_compiling_runs_pause_the_garbage_collector(monkeypatch):
    from tensorweave.engine.client import session as session_module

    pauses = []

    class Recorder:
        def __enter__(self):
            pauses.append(gc.isenabled())

        def __exit__(self, *exc):
            pass

    monkeypatch.setattr(session_module, "_gc_pause", Recorder())
    monkeypatch.setattr(session_module, "PAUSE_GC_TO_COMPILE", True)
    monkeypatch.setattr(session_module, "CACHE_ENTRIES", 256)
    x = tf.placeholder(tf.float32, [], name="x")
    y = x + 1.0
    with tf.Session() as s:
        assert s.run(y, {x: 1.0}) == 2.0  # new graph: compiles
        assert s.run(y, {x: 2.0}) == 3.0  # cached signature
        assert s.run([y, y], {x: 3.0}) == [4.0, 4.0]  # same fetched tensors: no new signature
        z = y * 2.0  # a new op: compiles again
        assert s.run(z, {x: 1.0}) == 4.0
        monkeypatch.setattr(session_module, "PAUSE_GC_TO_COMPILE", False)
        w = z - 1.0
        assert s.run(w, {x: 1.0}) == 3.0
    assert len(pauses) == 2


def test_gc_pause_nests_and_keeps_a_disabled_collector_disabled():
    from tensorweave.engine.client.session import _GcPause

    pause = _GcPause()
    assert gc.isenabled()
    with pause:
        with pause:
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with pause:
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_graph_def_property_is_the_graphs():
    tf.constant(1.0, name="c")
    with tf.Session() as sess:
        assert [n.name for n in sess.graph_def.node] == ["c"]


def test_graph_options_are_accepted_with_tfs_fields():
    # session_test.testOptimizerOptions / config_pb2.GraphOptions
    from tensorweave.core.protobuf import config_pb2

    options = config_pb2.GraphOptions(optimizer_options=config_pb2.OptimizerOptions(
        opt_level=config_pb2.OptimizerOptions.L0), build_cost_model=1)
    config = tf.ConfigProto(graph_options=options)
    assert config_pb2.ConfigProto is tf.ConfigProto and tf.GraphOptions is config_pb2.GraphOptions
    assert config.graph_options.optimizer_options.opt_level == -1
    with tf.Session(config=config) as sess:
        assert sess.run(tf.constant(2.0) * 3.0) == 6.0


def test_a_pause_that_piled_up_objects_ends_by_collecting_them(monkeypatch):
    from tensorweave.engine.client import session as session_module

    monkeypatch.setattr(session_module, "COLLECT_AFTER_PAUSE", 1000)
    pause = session_module._GcPause()
    gc.collect()  # (so no full collection comes on its own meanwhile)
    before = gc.get_stats()[2]["collections"]
    with pause:
        kept = [[] for _ in range(100)]
    assert gc.get_stats()[2]["collections"] == before  # too few to be worth it
    with pause:
        kept += [[] for _ in range(2000)]
    assert gc.get_stats()[2]["collections"] == before + 1
    assert gc.get_count()[0] < 1000
