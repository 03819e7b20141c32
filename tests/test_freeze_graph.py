"""`tensorweave.python.tools.freeze_graph`: a graph file (binary or text) or a meta graph plus a
real checkpoint frozen into a `GraphDef` that computes the same outputs with no variables."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.python.tools import freeze_graph as fg

W = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
X = np.array([[1.0, 0.5, -1.0]], np.float32)


def _model(tmp_path, as_text: bool) -> tuple[str, str, str]:
    """Graph file, checkpoint and meta graph of ``y = x @ w + b`` after one "training" step."""
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        with tf.device("/cpu:0"):
            w = tf.get_variable("w", [3, 2])
        b = tf.get_variable("b", initializer=np.float32([0.5, -0.5]))
        tf.get_variable("unused", initializer=np.float32(1))
        tf.identity(tf.matmul(x, w) + b, name="y")
        graph_path = tf.train.write_graph(graph, str(tmp_path), "g.pbtxt" if as_text else "g.pb",
                                          as_text=as_text)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w.load(W, sess)
            ckpt = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"))
    return graph_path, ckpt, ckpt + ".meta"


def _run_frozen(graph_def) -> np.ndarray:
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(graph_def, name="")
        assert not [op for op in graph.get_operations() if op.type == "VariableV2"]
        with tf.Session() as sess:
            return sess.run("y:0", {"x:0": X})


@pytest.mark.parametrize("as_text", [False, True])
def test_freeze_graph_file(tmp_path, as_text: bool) -> None:
    graph_path, ckpt, _ = _model(tmp_path, as_text)
    out = str(tmp_path / "frozen.pb")
    frozen = fg.freeze_graph(graph_path, "", not as_text, ckpt, "y", "save/restore_all",
                             "save/Const:0", out, True, "")
    names = {n.name: n for n in frozen.node}
    assert names["w"].op == "Const" and names["b"].op == "Const" and "unused" not in names
    assert all(n.device == "" for n in frozen.node)
    expected = X @ W + np.float32([0.5, -0.5])
    np.testing.assert_allclose(_run_frozen(frozen), expected, rtol=1e-6)
    with open(out, "rb") as f:
        np.testing.assert_allclose(_run_frozen(tf.GraphDef.FromString(f.read())), expected,
                                   rtol=1e-6)


def test_freeze_meta_graph_and_lists(tmp_path) -> None:
    _, ckpt, meta = _model(tmp_path, False)
    frozen = fg.freeze_graph(None, None, True, ckpt, "y", None, None, None, False, None,
                             variable_names_blacklist="b", input_meta_graph=meta)
    ops = {n.name: n.op for n in frozen.node}
    assert ops["w"] == "Const" and ops["b"] == "VariableV2"
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(meta)
        with tf.Session() as sess:
            saver.restore(sess, ckpt)
            graph_def = tf.get_default_graph().as_graph_def()
            frozen = fg.freeze_graph_with_def_protos(
                graph_def, None, ckpt, "y", None, None, None, False, None,
                variable_names_whitelist="w")
    assert {n.name: n.op for n in frozen.node}["b"] == "VariableV2"


def test_errors(tmp_path) -> None:
    graph_path, ckpt, _ = _model(tmp_path, False)
    with pytest.raises(ValueError, match="Input checkpoint '.*nope' doesn't exist!"):
        fg.freeze_graph(graph_path, "", True, str(tmp_path / "nope"), "y", "", "", "", True, "")
    with pytest.raises(ValueError, match="supply the name of a node to --output_node_names"):
        fg.freeze_graph(graph_path, "", True, ckpt, "", "", "", "", True, "")
    with pytest.raises(OSError, match="Input graph file .* does not exist!"):
        fg.freeze_graph(str(tmp_path / "missing.pb"), "", True, ckpt, "y", "", "", "", True, "")
    frozen = fg.freeze_graph(graph_path, "", True, ckpt, "y", "", "", "", True, "")
    with pytest.raises(ValueError, match="You cannot freeze a graph twice"):
        fg.freeze_graph_with_def_protos(frozen, None, ckpt, "y", None, None, None, True, None)
    with pytest.raises(AssertionError, match="nope is not in graph"):
        fg.freeze_graph(graph_path, "", True, ckpt, "nope", "", "", "", True, "")


def test_initializer_nodes_set_variables_missing_from_the_checkpoint(tmp_path) -> None:
    _, ckpt, _ = _model(tmp_path, False)
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.get_variable("w", [3, 2])
        c = tf.get_variable("c", initializer=np.float32(10))
        tf.identity(tf.matmul(x, w) * c, name="y")
    frozen = fg.freeze_graph_with_def_protos(graph.as_graph_def(), None, ckpt, "y", None, None,
                                             None, False, "c/Assign")
    np.testing.assert_allclose(_run_frozen(frozen), X @ W * 10, rtol=1e-6)
