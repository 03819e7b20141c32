"""TF's GraphDef message <-> the engine's graph: known bytes, round trips of every attr kind,
functions, and validation of malformed messages."""

from __future__ import annotations

import numpy as np
import pytest
from google.protobuf.message import DecodeError

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
from tensorweave.engine.graph.tensor_proto import TensorProto, parse_tensor, tensor_to_proto


def read(graph_def: GraphDef) -> engine.GraphDef:
    """`graph_def` after a trip through its bytes, in the engine's form."""
    return from_proto(GraphDef.FromString(graph_def.SerializeToString()))


def user_attrs(node: NodeDef) -> dict:
    return {k: v for k, v in node.attr.items() if k not in ("_output_types", "_output_shapes")}


def assert_same_value(a, b) -> None:
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, (list, tuple)) and a and isinstance(a[0], (list, tuple)):
        assert [tf.TensorShape(x) for x in a] == list(b)  # a list of int lists is shapes
    elif isinstance(a, FunctionDef):
        assert isinstance(b, FunctionDef) and a.name == b.name
        assert [n.name for n in a.nodes] == [n.name for n in b.nodes]
        for x, y in zip(a.nodes, b.nodes):
            assert x.input == y.input and x.op == y.op
            for key in x.attr:
                assert_same_value(x.attr[key], y.attr[key])
    elif isinstance(a, float):
        assert b == pytest.approx(a, rel=1e-7)  # a float attr is float32 on the wire
    else:
        assert a == b and type(a) is type(b) or (isinstance(a, tuple) and list(a) == b)


def test_a_node_has_the_bytes_tensorflow_writes() -> None:
    graph_def = to_proto(engine.GraphDef(node=[engine.NodeDef("c", "Const",
                                                              attr={"dtype": tf.float32})]))
    assert isinstance(graph_def, tf.GraphDef)
    node = (b"\x0a\x01c" + b"\x12\x05Const"
            + b"\x2a\x0b" + b"\x0a\x05dtype" + b"\x12\x02" + b"\x30\x01")
    assert graph_def.SerializeToString() == b"\x0a" + bytes([len(node)]) + node + b"\x22\x00"


def test_a_tensor_has_the_bytes_tensorflow_writes() -> None:
    # TensorProto { dtype: DT_INT32 tensor_shape { dim { size: 2 } } tensor_content: 1, 2 }
    expected = (b"\x08\x03" + b"\x12\x04\x12\x02\x08\x02"
                + b"\x22\x08" + np.array([1, 2], "<i4").tobytes())
    assert tensor_to_proto(np.array([1, 2], np.int32)).SerializeToString() == expected
    assert tf.make_tensor_proto(np.array([1, 2], np.int32)).SerializeToString() == expected


def test_every_attr_kind_round_trips() -> None:
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    v = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    y = tf.matmul(x, v, transpose_a=False) + tf.constant([1.0, 2.0])
    tf.concat([y, y], axis=1)
    tf.constant([b"a", b"b\x00\xff"], name="s")
    tf.constant(np.float16(1.5), name="h")
    tf.constant(np.array([True, False]), name="b")
    tf.constant(np.int64(-7), name="i64")
    tf.nn.leaky_relu(y, alpha=0.3)
    tf.nn.conv2d(tf.zeros([1, 4, 4, 1]), tf.zeros([2, 2, 1, 1]), [1, 1, 1, 1], "SAME")
    tf.cond(tf.reduce_sum(y) > 0, lambda: y * 2.0, lambda: y)
    tf.while_loop(lambda k, a: k < 3, lambda k, a: (k + 1, a * 2.0), [0, tf.constant(1.0)])
    tf.data.Dataset.from_tensor_slices(np.arange(4)).map(lambda a: a + 1).make_one_shot_iterator()
    graph_def = tf.get_default_graph()._engine_graph_def()
    parsed = read(tf.get_default_graph().as_graph_def())
    assert [n.name for n in parsed.node] == [n.name for n in graph_def.node]
    for a, b in zip(graph_def.node, parsed.node):
        assert (a.op, a.input, a.device) == (b.op, b.input, b.device)
        assert user_attrs(a).keys() == b.attr.keys()
        for key, value in user_attrs(a).items():
            assert_same_value(value, b.attr[key])
    strings = next(n for n in parsed.node if n.name == "s").attr["value"]
    assert strings.dtype == object and list(strings) == [b"a", b"b\x00\xff"]


def test_function_attrs_go_through_the_library() -> None:
    x = tf.constant(2.0)
    out = tf.cond(x > 1.0, lambda: x * 3.0, lambda: x, name="c")
    proto = tf.get_default_graph().as_graph_def()
    graph_def = tf.get_default_graph()._engine_graph_def()
    text = str(proto)
    assert "library {" in text and "signature {" in text
    cond = next(n for n in proto.node if n.name == out.op.name)
    assert cond.attr["then_branch"].func.name in {f.signature.name for f in proto.library.function}
    parsed = read(proto)
    node = next(n for n in parsed.node if n.name == out.op.name)
    branch = node.attr["then_branch"]
    assert isinstance(branch, FunctionDef)
    original = next(n for n in graph_def.node if n.name == out.op.name).attr["then_branch"]
    assert [(n.name, n.op, n.input) for n in branch.nodes] == \
        [(n.name, n.op, n.input) for n in original.nodes]
    assert {"_FunctionRetval", "Mul"} <= {n.op for n in branch.nodes}
    assert branch.ret_types == original.ret_types


def test_shapes_are_written_only_with_add_shapes() -> None:
    tf.placeholder(tf.float32, [2, None], name="p")
    graph = tf.get_default_graph()
    plain = graph.as_graph_def()
    assert "_output_shapes" not in plain.node[0].attr
    assert "_output_types" not in plain.node[0].attr
    shaped = graph.as_graph_def(add_shapes=True)
    assert [d.size for d in shaped.node[0].attr["_output_shapes"].list.shape[0].dim] == [2, -1]
    assert "_output_types" not in shaped.node[0].attr
    again = read(shaped)  # a read node keeps them
    assert again.node[0].attr["_output_shapes"] == [tf.TensorShape([2, None])]
    assert "_output_shapes" in to_proto(again).node[0].attr


def test_from_version_gives_only_newer_ops() -> None:
    graph = tf.get_default_graph()
    tf.constant(1.0, name="old")
    version = graph.version
    tf.constant(2.0, name="new")
    assert [n.name for n in graph.as_graph_def(from_version=version).node] == ["new"]


def test_parse_from_string_replaces_content_and_text_format() -> None:
    source = GraphDef(node=[NodeDef(name="a", op="NoOp", input=["^b"], device="/cpu:0")],
                      versions=VersionDef(producer=27, min_consumer=12))
    target = tf.GraphDef(node=[NodeDef(name="old", op="NoOp")])
    target.ParseFromString(source.SerializeToString())
    assert [n.name for n in target.node] == ["a"] and target.node[0].input == ["^b"]
    assert target.versions == VersionDef(producer=27, min_consumer=12)
    assert str(target) == ('node {\n  name: "a"\n  op: "NoOp"\n  input: "^b"\n'
                           '  device: "/cpu:0"\n}\nversions {\n  producer: 27\n'
                           '  min_consumer: 12\n}\n')
    assert parse_text(str(target)) == source


def tensor(dtype: int, dims: tuple[int, ...] | None = (), **values) -> bytes:
    proto = TensorProto(dtype=dtype, **values)
    for d in dims or ():
        proto.tensor_shape.dim.add(size=d)
    return proto.SerializeToString()


def test_typed_values_fill_the_shape_with_the_last_value() -> None:
    out = parse_tensor(tensor(1, (2, 2), float_val=[1.5, 2.5]))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[1.5, 2.5], [2.5, 2.5]])
    zeros = parse_tensor(tensor(9, (3,)))
    assert zeros.dtype == np.int64 and zeros.tolist() == [0, 0, 0]
    half = parse_tensor(tensor(19, half_val=[int(np.float16(0.5).view(np.uint16))]))
    assert half.dtype == np.float16 and half.item() == 0.5


@pytest.mark.parametrize("data, match", [
    (tensor(3, (2,), tensor_content=b"\x00" * 7), "7 bytes for 2"),
    (tensor(3, (1,), int_val=[1, 2]), "2 values for 1"),
    (tensor(14), "unsupported DataType 14"),
    (tensor(1, (-1,)), "not fully defined"),
    (tensor(1, (-2,)), "size -2"),
    (tensor(0, (1,)), "no dtype"),
    (tensor(1, (1 << 40,), float_val=[1.0]), "expand"),
    (tensor(3, float_val=[1.0]), "float_val"),
    (b"\x0a\x05ab", "Malformed TensorProto"),
])
def test_malformed_tensors_raise_value_error(data, match) -> None:
    with pytest.raises(ValueError, match=match):
        parse_tensor(data)


def node(name: str = "a", op: str = "X", **attrs: tf.AttrValue) -> GraphDef:
    graph_def = GraphDef()
    added = graph_def.node.add(name=name, op=op)
    for key, value in attrs.items():
        added.attr[key].CopyFrom(value)
    return graph_def


def unknown_rank_dims() -> tf.AttrValue:
    value = tf.AttrValue()
    value.shape.unknown_rank = True
    value.shape.dim.add(size=1)
    return value


@pytest.mark.parametrize("graph_def, match", [
    (node(name=""), "no name"),
    (node(op=""), "no op"),
    (node(op="If", f=tf.AttrValue(func=tf.NameAttrList(name="missing"))),
     "not in the library"),
    (node(s=unknown_rank_dims()), "unknown rank"),
    (node(l=tf.AttrValue(list=tf.AttrValue.ListValue(i=[1], b=[True]))), "more than one kind"),
    (node(p=tf.AttrValue(placeholder="T")), "placeholder"),
    (node(t=tf.AttrValue(type=14)), "DataType 14"),
])
def test_malformed_graph_defs_raise_value_error(graph_def, match) -> None:
    with pytest.raises(ValueError, match=match):
        from_proto(graph_def)
    with pytest.raises(ValueError, match=match), tf.Graph().as_default():
        tf.import_graph_def(graph_def)


@pytest.mark.parametrize("data", [b"\x0a\x05ab", b"\x0a", b"\x0a\x03\x0a\x01\xff"])
def test_bytes_that_are_no_graph_def_raise_decode_error(data) -> None:
    with pytest.raises(DecodeError):
        tf.GraphDef.FromString(data)


def test_unknown_fields_are_kept_and_ref_types_read_as_their_base() -> None:
    graph_def = node(op="Identity", T=tf.AttrValue(type=101))
    data = graph_def.SerializeToString()[:-0 or None] + b"\x48\x01"  # field 9: not described
    parsed = tf.GraphDef.FromString(data)
    assert parsed.SerializeToString().endswith(b"\x48\x01")
    assert from_proto(parsed).node[0].attr == {"T": tf.float32}


def test_non_graph_values_are_rejected() -> None:
    with pytest.raises(TypeError):
        from_proto(b"not a message")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no AttrValue form"):
        to_proto(engine.GraphDef(node=[engine.NodeDef("a", "X", attr={"bad": object()})]))
    with pytest.raises(ValueError, match="one kind"):
        to_proto(engine.GraphDef(node=[engine.NodeDef("a", "X", attr={"bad": [1, "a"]})]))


@pytest.mark.parametrize("np_type, code, field", [
    (np.uint16, 17, "int_val"), (np.uint32, 22, "uint32_val"), (np.uint64, 23, "uint64_val"),
])
def test_wide_unsigned_tensors_use_tensorflow_codes_and_fields(np_type, code, field) -> None:
    top = np.iinfo(np_type).max
    scalar = tensor_to_proto(np.array(top, np_type))
    assert scalar.dtype == code and list(getattr(scalar, field)) == [int(top)]
    for value in (np.array(top, np_type), np.array([0, top, 1], np_type),
                  np.array([[top]], np_type)):
        out = parse_tensor(tensor_to_proto(value).SerializeToString())
        assert out.dtype == np_type and out.shape == value.shape
        np.testing.assert_array_equal(out, value)


def test_uint64_values_past_int64_parse_exactly_and_out_of_range_values_are_refused() -> None:
    assert parse_tensor(tensor(23, (2,), uint64_val=[2**63, 2**64 - 1])).tolist() == \
        [2**63, 2**64 - 1]
    with pytest.raises(ValueError, match="out of range for uint16"):
        parse_tensor(tensor(17, int_val=[65536]))
    with pytest.raises(ValueError, match="uint32 has uint64_val"):
        parse_tensor(tensor(22, uint64_val=[1]))
def test_a_uint64_graph_round_trips_as_text_and_bytes() -> None:
    with tf.Graph().as_default() as graph:
        tf.constant(2**64 - 1, tf.uint64, name="c")
        tf.placeholder(tf.uint16, name="p")
    graph_def = graph.as_graph_def()
    text = str(graph_def)
    assert "type: DT_UINT64" in text and "uint64_val: 18446744073709551615" in text
    assert "type: DT_UINT16" in text
    with tf.Graph().as_default():
        c, p = tf.import_graph_def(GraphDef.FromString(graph_def.SerializeToString()),
                                   return_elements=["c:0", "p:0"], name="")
        assert c.dtype == tf.uint64 and p.dtype == tf.uint16
        with tf.Session() as sess:
            value = sess.run(c)
    assert value.dtype == np.uint64 and int(value) == 2**64 - 1


def test_tf_framework_pb2_paths_name_the_same_classes() -> None:
    from tensorweave.core.framework import attr_value_pb2, graph_pb2, node_def_pb2, types_pb2

    assert graph_pb2.GraphDef is tf.GraphDef and node_def_pb2.NodeDef is tf.NodeDef
    assert attr_value_pb2.AttrValue is tf.AttrValue
    assert types_pb2.DT_FLOAT == tf.float32.as_datatype_enum == 1
    assert types_pb2.DataType.Name(101) == "DT_FLOAT_REF"
    assert types_pb2.DataType.Value("DT_STRING") == 7
    graph_def = graph_pb2.GraphDef()
    node = graph_def.node.add(name="c", op="Const")
    node.attr["dtype"].type = types_pb2.DT_INT32
    node.attr["value"].tensor.CopyFrom(tf.make_tensor_proto([3, 4]))
    with tf.Graph().as_default():
        (c,) = tf.import_graph_def(graph_def, return_elements=["c:0"], name="")
        with tf.Session() as sess:
            assert sess.run(c).tolist() == [3, 4]


def test_an_op_list_gives_the_producer_defaults_to_drop() -> None:
    graph_def = GraphDef()
    node = graph_def.node.add(name="c", op="Const")
    node.attr["dtype"].type = tf.float32.as_datatype_enum
    node.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(1.5))
    node.attr["newer_attr"].i = 7  # an attr tensorweave's Const lacks
    with pytest.raises(ValueError, match="newer_attr"), tf.Graph().as_default():
        tf.import_graph_def(graph_def)
    from tensorweave.core.framework import op_def_pb2

    op_list = op_def_pb2.OpList()
    const = op_list.op.add(name="Const")
    const.attr.add(name="newer_attr", type="int").default_value.i = 7
    with tf.Graph().as_default():
        (c,) = tf.import_graph_def(graph_def, return_elements=["c:0"], producer_op_list=op_list)
        with tf.Session() as sess:
            assert sess.run(c) == 1.5
