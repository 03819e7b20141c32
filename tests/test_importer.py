"""tf.import_graph_def: names, input_map, return_elements, devices, control inputs, functions,
and the checks done before anything is built."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef


def small_graph() -> tf.GraphDef:
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.constant([[1.0], [2.0]], name="w")
        with tf.device("/cpu:0"):
            y = tf.matmul(x, w, name="y")
        with tf.control_dependencies([y]):
            tf.no_op(name="after")
        tf.identity(y * 2.0, name="out")
    return tf.GraphDef.FromString(g.as_graph_def().SerializeToString())


def test_import_prefixes_names_and_runs_with_the_same_result() -> None:
    graph_def = small_graph()
    x, out, after = tf.import_graph_def(graph_def, return_elements=["x:0", "out:0", "after"])
    assert isinstance(out, tf.Tensor) and isinstance(after, tf.Operation)
    assert out.name == "import/out:0" and out.dtype == tf.float32
    assert out.shape.as_list() == [None, 1]
    g = tf.get_default_graph()
    device = next(n.device for n in graph_def.node if n.name == "y")
    assert device and g.get_operation_by_name("import/y").device == device
    assert [op.name for op in after.control_inputs] == ["import/y"]
    again = tf.import_graph_def(graph_def, return_elements=["out:0"])[0]
    assert again.name == "import_1/out:0"
    with tf.Session() as sess:
        value = sess.run(out, {x: [[1.0, 1.0], [0.5, 0.0]]})
    np.testing.assert_allclose(value, [[6.0], [1.0]])
    assert value.dtype == np.float32


def test_input_map_replaces_an_input_and_name_sets_the_scope() -> None:
    graph_def = small_graph()
    feed = tf.constant([[3.0, 0.0]])
    assert tf.import_graph_def(graph_def, input_map={"x": feed}, name="m") is None
    out = tf.get_default_graph().get_tensor_by_name("m/out:0")
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(out), [[6.0]])
    with pytest.raises(ValueError, match="incompatible|type"):
        tf.import_graph_def(graph_def, input_map={"x:0": tf.constant([[1, 2]])})


def test_empty_name_keeps_names_and_refuses_duplicates() -> None:
    graph_def = small_graph()
    tf.import_graph_def(graph_def, name="")
    assert tf.get_default_graph().get_operation_by_name("out").type == "Identity"
    with pytest.raises(ValueError, match="Duplicate|already"):
        tf.import_graph_def(graph_def, name="")
    with pytest.raises(ValueError, match="non-empty `name`"):
        tf.import_graph_def(graph_def, input_map={"x:0": tf.constant([[1.0, 2.0]])}, name="")


@pytest.mark.parametrize("nodes, kwargs, match", [
    ([NodeDef("a", "NoSuchOp")], {}, "NoSuchOp"),
    ([NodeDef("a", "NoOp", input=["b"])], {}, "Unknown input node 'b'"),
    ([NodeDef("a", "Identity", input=["b"]), NodeDef("b", "Identity", input=["a"])], {},
     "cycle"),
    ([NodeDef("a", "NoOp"), NodeDef("a", "NoOp")], {}, "Duplicate node name"),
    ([NodeDef("bad name", "NoOp")], {}, "not valid"),
    ([NodeDef("a", "NoOp", attr={"bogus": 1})], {}, "attr 'bogus' not in Op"),
    ([NodeDef("a", "NoOp")], {"input_map": {"zz:0": None}}, "not found in graph_def"),
    ([NodeDef("a", "NoOp")], {"return_elements": ["b:0"]}, "return_element 'b:0'"),
])
def test_bad_graphs_raise_value_error_before_building(nodes, kwargs, match) -> None:
    if "input_map" in kwargs:
        kwargs = {"input_map": {"zz:0": tf.constant(1.0)}}
    before = len(tf.get_default_graph().get_operations())
    with pytest.raises(ValueError, match=match):
        tf.import_graph_def(GraphDef(node=nodes), **kwargs)
    assert len(tf.get_default_graph().get_operations()) == before


def test_producer_op_list_drops_unknown_attrs_holding_their_default() -> None:
    graph_def = GraphDef(node=[NodeDef("a", "NoOp", attr={"newer": 0})])
    with pytest.raises(ValueError, match="newer"):
        tf.import_graph_def(graph_def)
    op = tf.import_graph_def(graph_def, return_elements=["a"],
                             producer_op_list={"NoOp": {"newer": 0}})[0]
    assert "newer" not in op.attrs


def test_colocation_groups_are_renamed_with_the_prefix() -> None:
    with tf.Graph().as_default() as g:
        v = tf.Variable(1.0, name="v")
        tf.identity(v, name="r")
    graph_def = g.as_graph_def()
    assign = tf.import_graph_def(graph_def, return_elements=["v/Assign"], name="p")[0]
    assert assign.get_attr("_class") == ["loc:@p/v"]


def test_functional_control_flow_and_list_inputs_import() -> None:
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [], name="x")
        c = tf.cond(x > 0, lambda: x * 2.0, lambda: x - 1.0, name="c")
        _, w = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + x), [0, x])
        tf.identity(tf.add_n([c, w, x]), name="total")
        tf.identity(tf.concat([tf.stack([x, c]), tf.stack([w])], axis=0), name="cat")
    graph_def = tf.GraphDef.FromString(g.as_graph_def().SerializeToString())
    x2, total, cat = tf.import_graph_def(graph_def, return_elements=["x:0", "total:0", "cat:0"])
    with tf.Session() as sess:
        for value in (2.0, -1.0):
            c_ref = value * 2.0 if value > 0 else value - 1.0
            w_ref = value * 4.0
            got = sess.run([total, cat], {x2: value})
            assert got[0] == pytest.approx(c_ref + w_ref + value)
            np.testing.assert_allclose(got[1], [value, c_ref, w_ref])
