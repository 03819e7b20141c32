"""Protobuf text format (``google.protobuf.text_format``) of GraphDefs: round trips of every attr
kind, a graph as TF writes it, errors naming the line; meta graphs and SavedModels as text."""

from __future__ import annotations

import math

import numpy as np
import pytest
from google.protobuf import text_format

import tensorweave as tf
from tensorweave.engine.graph import graph_def as engine
from tensorweave.engine.graph.func_graph import FunctionDef
from tensorweave.engine.graph.graph_def_proto import (
    GraphDef,
    NodeDef,
    VersionDef,
    from_proto,
    parse_text,
    to_proto,
)
from tensorweave.formats.meta_graph_proto import MetaGraphDef, merge_text, to_text
from tensorweave.formats.saved_model_proto import SavedModel

# -- GraphDef -----------------------------------------------------------------------------------


def build_graph_with_every_attr_kind() -> tuple[engine.GraphDef, GraphDef]:
    """A graph with every attr kind, in the engine's form and as a message."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    v = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    y = tf.matmul(x, v) + tf.constant([1.0, 2.0])
    tf.constant([b"a", b"b\x00\xff\"'\\"], name="s")
    tf.constant(np.float16(1.5), name="h")
    tf.constant(np.array([True, False]), name="b")
    tf.constant(np.int64(-7), name="i64")
    tf.constant(np.float64(0.1), name="f64")
    tf.nn.leaky_relu(y, alpha=0.3)
    tf.nn.conv2d(tf.zeros([1, 4, 4, 1]), tf.zeros([2, 2, 1, 1]), [1, 1, 1, 1], "SAME")
    tf.cond(tf.reduce_sum(y) > 0, lambda: y * 2.0, lambda: y)
    tf.while_loop(lambda k, a: k < 3, lambda k, a: (k + 1, a * 2.0), [0, tf.constant(1.0)])
    tf.data.Dataset.from_tensor_slices(np.arange(4)).map(lambda a: a + 1).make_one_shot_iterator()
    graph_def = tf.get_default_graph()._engine_graph_def()
    if_node = next(n for n in graph_def.node if n.op.endswith("If"))
    functions = [v for v in if_node.attr.values() if isinstance(v, FunctionDef)]
    assert len(functions) == 2  # then/else branches
    graph_def.node.append(engine.NodeDef(
        "every", "NoOp", input=["^x"], device="/job:w/task:0/cpu:0", attr={
            "i": -(1 << 62), "f": float("-inf"), "nan": float("nan"), "b": True, "s": "é\t\"",
            "raw": b"\x00\xff", "type": tf.string, "shape": tf.TensorShape(None),
            "dims": tf.TensorShape([None, 0, 5]), "tensor": np.array([[1, 2]], np.uint8),
            "none": None, "ints": [1, -2], "floats": [0.5, 1e-30], "strs": ["a", b"\xfe"],
            "bools": [False, True], "types": [tf.int32, tf.bool], "shapes": [[1, None], []],
            "tensors": [np.zeros([0], np.int16), np.array(["x"], object)], "funcs": functions,
            "empty": [], "dict": {"k": 3, "nested": {"s": "v"}}}))
    versions = VersionDef(producer=27, min_consumer=12, bad_consumers=[3, 4])
    return graph_def, to_proto(graph_def, add_shapes=True, versions=versions)


def test_every_attr_kind_round_trips_through_text() -> None:
    graph_def, proto = build_graph_with_every_attr_kind()
    text = str(proto)
    parsed = parse_text(text)
    assert isinstance(parsed, tf.GraphDef)
    assert parsed == proto
    assert str(parsed) == text
    every = from_proto(parsed).node[-1]
    assert every.attr["i"] == -(1 << 62) and math.isnan(every.attr["nan"])
    assert every.attr["s"] == "é\t\"" and every.attr["raw"] == b"\x00\xff"
    assert every.attr["types"] == [tf.int32, tf.bool] and every.attr["shape"].dims is None
    # (function names carry a process-wide counter: compare with the graph's own)
    assert [f.name for f in every.attr["funcs"]] == \
        [f.name for f in graph_def.node[-1].attr["funcs"]]
    assert all(isinstance(f, FunctionDef) and f.nodes for f in every.attr["funcs"])
    assert every.attr["dict"] == {"k": 3, "nested": {"s": "v"}}
    strings = next(n for n in from_proto(parsed).node if n.name == "s").attr["value"]
    assert list(strings) == [b"a", b"b\x00\xff\"'\\"]
    assert parse_text(text.encode()) == proto


def test_text_graph_imports_and_runs(tmp_path) -> None:
    a = tf.placeholder(tf.int32, [2], name="a")
    tf.add(a * 3, tf.constant([1, 2]), name="out")
    path = tf.train.write_graph(tf.get_default_graph(), str(tmp_path), "g.pbtxt")
    with tf.gfile.GFile(path) as f:
        graph_def = text_format.Parse(f.read(), tf.GraphDef())
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(graph_def, name="")
        with tf.Session(graph=graph) as sess:
            result = sess.run("out:0", {"a:0": [1, 2]})
    np.testing.assert_array_equal(result, np.array([4, 8], np.int32))
    assert result.dtype == np.int32


TF_WRITTEN = """node {
  name: "x"
  op: "Placeholder"
  attr {
    key: "dtype"
    value {
      type: DT_FLOAT
    }
  }
  attr {
    key: "shape"
    value {
      shape {
        unknown_rank: true
      }
    }
  }
}
node {
  name: "c"
  op: "Const"
  attr {
    key: "dtype"
    value {
      type: DT_FLOAT
    }
  }
  attr {
    key: "value"
    value {
      tensor {
        dtype: DT_FLOAT
        tensor_shape {
          dim {
            size: 3
          }
        }
        float_val: 2.5
      }
    }
  }
}
node {
  name: "y"
  op: "Mul"
  input: "x"
  input: "c"
  attr {
    key: "T"
    value {
      type: DT_FLOAT
    }
  }
}
versions {
  producer: 27
}
"""


def test_a_graph_as_tensorflow_writes_it_reads_and_runs() -> None:
    graph_def = parse_text(TF_WRITTEN)
    assert graph_def.versions.producer == 27
    assert text_format.MessageToString(graph_def) == TF_WRITTEN  # map keys sorted, as TF
    nodes = from_proto(graph_def).node
    assert nodes[0].attr["shape"] == tf.TensorShape(None)
    value = nodes[1].attr["value"]
    np.testing.assert_array_equal(value, np.full(3, 2.5, np.float32))  # the last value repeats
    assert value.dtype == np.float32
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(graph_def, name="")
        with tf.Session(graph=graph) as sess:
            result = sess.run("y:0", {"x:0": [1.0, 2.0, 4.0]})
    np.testing.assert_array_equal(result, np.array([2.5, 5.0, 10.0], np.float32))


def test_merge_appends_to_a_message() -> None:
    graph_def = GraphDef(node=[NodeDef(name="old", op="NoOp")])
    assert text_format.Merge('node { name: "new" op: "NoOp" }', graph_def) is graph_def
    assert [n.name for n in graph_def.node] == ["old", "new"]
    with pytest.raises(text_format.ParseError, match="should not have multiple"):
        text_format.Parse("versions { producer: 3 producer: 4 }", GraphDef())


def test_malformed_graph_text_raises() -> None:
    with pytest.raises(text_format.ParseError, match='^3:5 : Message type "tensorflow.NodeDef" '
                                                     'has no field named "nmae"'):
        parse_text('node {\n  name: "a"\n    nmae: "b"\n}\n')
    with pytest.raises(text_format.ParseError, match="has no value named DT_FOO"):
        parse_text('node { name: "a" op: "C" attr { key: "t" value { type: DT_FOO } } }')
    bad_type = parse_text('node { name: "a" op: "C" attr { key: "t" value { type: 99 } } }')
    with pytest.raises(ValueError, match="unsupported DataType 99"):  # valid text, bad graph
        from_proto(bad_type)
    with pytest.raises(ValueError, match="has no op"):
        from_proto(parse_text('node { name: "a" }'))


# -- meta graphs and SavedModels --------------------------------------------------------------


def test_meta_graph_written_as_text_imports(tmp_path) -> None:
    v = tf.Variable([1.0, 2.0], name="v")
    tf.Variable(3, name="step", trainable=False)
    out = tf.multiply(v, 2.0, name="out")
    tf.add_to_collection("outs", out)
    tf.add_to_collection("ints", 4)
    tf.add_to_collection("floats", 0.25)
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(v.assign([5.0, 6.0]))
        ckpt = saver.save(sess, str(tmp_path / "model"), write_meta_graph=False)
    path = str(tmp_path / "model.meta.pbtxt")
    meta = saver.export_meta_graph(path, as_text=True)
    with open(path, "rb") as f:
        text = f.read()
    assert text.startswith(b"meta_info_def {")
    parsed = merge_text(text, MetaGraphDef())
    assert parsed == meta
    with tf.Graph().as_default():
        restorer = tf.train.import_meta_graph(path)
        assert restorer._max_to_keep == 2
        assert [x.op.name for x in tf.trainable_variables()] == ["v"]
        assert [x.op.name for x in tf.global_variables()] == ["v", "step"]
        assert tf.get_collection("ints") == [4] and tf.get_collection("floats") == [0.25]
        with tf.Session() as sess:
            restorer.restore(sess, ckpt)
            result = sess.run(tf.get_collection("outs")[0])
    np.testing.assert_array_equal(result, np.array([10.0, 12.0], np.float32))
    assert result.dtype == np.float32


def test_malformed_text_meta_graph_raises_naming_the_line(tmp_path) -> None:
    path = tmp_path / "bad.meta"
    path.write_text("meta_info_def {\n  tags: serve\n}\n")
    with pytest.raises(ValueError, match=r"Cannot parse file .*bad\.meta.*2:9 : .*Expected "
                                         "string"):
        tf.train.import_meta_graph(str(path))


def test_saved_model_written_as_text_loads(tmp_path) -> None:
    x = tf.placeholder(tf.float32, [None], name="x")
    w = tf.Variable(2.0, name="w")
    y = tf.identity(x * w, name="y")
    export_dir = str(tmp_path / "model")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(w.assign(4.0))
        builder = tf.saved_model.Builder(export_dir)
        signature = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y})
        builder.add_meta_graph_and_variables(sess, ["serve"],
                                             signature_def_map={"serving_default": signature})
        builder.save(as_text=True)
    assert tf.gfile.Exists(f"{export_dir}/saved_model.pbtxt")
    assert not tf.gfile.Exists(f"{export_dir}/saved_model.pb")
    with open(f"{export_dir}/saved_model.pbtxt", "rb") as f:
        text = f.read()
    model = merge_text(text, SavedModel())
    assert to_text(model).encode() == text
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        sig = meta.signature_def["serving_default"]
        assert sig.inputs["x"].dtype == 1  # DT_FLOAT
        assert tf.saved_model.utils.tensor_shape(sig.inputs["x"].tensor_shape).as_list() == [None]
        result = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: [1.0, 2.5]})
    np.testing.assert_array_equal(result, np.array([4.0, 10.0], np.float32))
    assert result.dtype == np.float32
