"""tw.graph_util: extract_sub_graph and freezing a trained model into constants."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf


def trained_model(sess: tf.Session) -> dict:
    rng = np.random.RandomState(0)
    data = rng.randn(32, 3).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    hidden = tf.layers.dense(x, 4, activation=tf.nn.relu, name="hidden")
    out = tf.identity(tf.layers.dense(hidden, 1, name="head"), name="out")
    loss = tf.reduce_mean(tf.square(out - 1.0))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    sess.run(tf.global_variables_initializer())
    for _ in range(5):
        sess.run(train, {x: data})
    return {"x": x, "out": out, "data": data}


def test_extract_sub_graph_keeps_data_and_control_dependencies() -> None:
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.control_dependencies([b]):
        c = tf.identity(a, name="c")
    tf.constant(3.0, name="unused")
    sub = tf.graph_util.extract_sub_graph(tf.get_default_graph().as_graph_def(), [c.op.name])
    assert [n.name for n in sub.node] == ["a", "b", "c"]
    assert isinstance(sub, tf.GraphDef)
    with pytest.raises(AssertionError, match="missing is not in graph"):
        tf.graph_util.extract_sub_graph(sub, ["missing"])
    with pytest.raises(TypeError):
        tf.graph_util.extract_sub_graph(sub, "c")


def test_frozen_graph_imported_into_a_fresh_graph_gives_the_same_outputs() -> None:
    with tf.Session() as sess:
        m = trained_model(sess)
        expected = sess.run(m["out"], {m["x"]: m["data"]})
        frozen = tf.compat.v1.graph_util.convert_variables_to_constants(
            sess, sess.graph.as_graph_def(), ["out"])
    assert not [n for n in frozen.node if n.op == "VariableV2"]
    assert {"hidden/kernel", "head/bias"} <= {n.name for n in frozen.node if n.op == "Const"}
    assert not [n for n in frozen.node if "Gradient" in n.name]  # training ops are cut
    data = frozen.SerializeToString()
    with tf.Graph().as_default():
        graph_def = tf.GraphDef()
        graph_def.ParseFromString(data)
        x, out = tf.import_graph_def(graph_def, return_elements=["x:0", "out:0"], name="")
        assert not tf.global_variables()
        with tf.Session() as sess:
            got = sess.run(out, {x: m["data"]})
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_whitelist_and_blacklist_choose_the_variables_to_freeze() -> None:
    with tf.Session() as sess:
        trained_model(sess)
        graph_def = sess.graph.as_graph_def()
        only = tf.graph_util.convert_variables_to_constants(
            sess, graph_def, ["out"], variable_names_whitelist=["head/kernel"])
        but = tf.graph_util.convert_variables_to_constants(
            sess, graph_def, ["out"], variable_names_blacklist=["head/kernel"])
        kernel = sess.run("head/kernel:0")
    ops = {n.name: n.op for n in only.node}
    assert ops["head/kernel"] == "Const" and ops["hidden/kernel"] == "VariableV2"
    head = next(n for n in only.node if n.name == "head/kernel")
    value = tf.make_ndarray(head.attr["value"].tensor)
    np.testing.assert_array_equal(value, kernel)
    assert value.dtype == np.float32 and value.shape == (4, 1)
    ops = {n.name: n.op for n in but.node}
    assert ops["head/kernel"] == "VariableV2" and ops["hidden/kernel"] == "Const"


def test_resource_variables_freeze_into_constants() -> None:
    with tf.Session() as sess:
        table = tf.get_variable("table", initializer=np.arange(6, dtype=np.float32)
                                .reshape(3, 2), use_resource=True)
        w = tf.get_variable("w", initializer=np.float32(2.0), use_resource=True)
        ids = tf.placeholder(tf.int32, [None], name="ids")
        tf.identity(tf.gather(table, ids) * w, name="out")
        sess.run(tf.global_variables_initializer())
        sess.run(w.assign(3.0))
        frozen = tf.compat.v1.graph_util.convert_variables_to_constants(
            sess, sess.graph.as_graph_def(), ["out"])
    types = {n.op for n in frozen.node}
    assert not types & {"VarHandleOp", "ReadVariableOp", "ResourceGather"}
    assert {"GatherV2", "Identity"} <= types
    with tf.Graph().as_default():
        ids, out = tf.import_graph_def(tf.GraphDef.FromString(frozen.SerializeToString()),
                                       return_elements=["ids:0", "out:0"], name="")
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(out, {ids: [2, 0]}), [[12, 15], [0, 3]])
