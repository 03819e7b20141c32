"""tw.train.write_graph: text and binary GraphDef files."""

from __future__ import annotations

import pytest

import tensorweave as tf


def test_write_graph_writes_text_and_binary(tmp_path) -> None:
    tf.constant([1.0, 2.0], name="c")
    graph = tf.get_default_graph()
    text_path = tf.train.write_graph(graph, str(tmp_path / "new"), "g.pbtxt")
    assert text_path == str(tmp_path / "new" / "g.pbtxt")
    text = (tmp_path / "new" / "g.pbtxt").read_text()
    assert text.startswith('node {\n  name: "c"\n  op: "Const"\n') and "DT_FLOAT" in text
    bin_path = tf.train.write_graph(graph.as_graph_def(), str(tmp_path), "g.pb", as_text=False)
    parsed = tf.GraphDef.FromString(open(bin_path, "rb").read())
    assert [n.name for n in parsed.node] == ["c"]
    assert tf.make_ndarray(parsed.node[0].attr["value"].tensor).tolist() == [1.0, 2.0]
    with pytest.raises(TypeError):
        tf.train.write_graph(42, str(tmp_path), "x")
