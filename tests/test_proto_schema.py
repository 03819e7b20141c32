"""The ``.proto`` text reader: classes whose bytes are TF's, names resolved as protoc does."""

import pytest
from google.protobuf import text_format

from tensorweave.engine.proto import framework, schema

# TF 2.21's GraphDef.SerializeToString(deterministic=True) of the graph built in test_tf_bytes
TF_BYTES = bytes.fromhex(
    "0a390a01611205436f6e73742a0b0a056474797065120230012a0b0a016c12060a041a0201022a130a0576616c"
    "7565120a420808012a04000040402202081b")


def _graph() -> framework.GraphDef:
    graph = framework.GraphDef()
    node = graph.node.add(name="a", op="Const")
    node.attr["value"].tensor.dtype = framework.DATA_TYPES["DT_FLOAT"]
    node.attr["value"].tensor.float_val.append(3.0)
    node.attr["dtype"].type = framework.DATA_TYPES["DT_FLOAT"]
    node.attr["l"].list.i.extend([1, 2])
    graph.versions.producer = 27
    return graph


def test_tf_bytes():
    assert _graph().SerializeToString(deterministic=True) == TF_BYTES
    assert framework.GraphDef.FromString(TF_BYTES) == _graph()


def test_text_format_round_trip():
    text = text_format.MessageToString(_graph())
    assert 'op: "Const"' in text and "type: DT_FLOAT" in text
    assert text_format.Parse(text, framework.GraphDef()) == _graph()


def test_data_types_and_refs():
    assert framework.DATA_TYPES["DT_STRING"] == 7
    assert framework.DATA_TYPES["DT_FLOAT_REF"] == 101
    assert framework.DATA_TYPES["DT_UINT64_REF"] == 123


def test_oneof_and_nested_resolution():
    attr = framework.AttrValue(i=3)
    attr.f = 1.5  # a oneof: setting one member clears the other
    assert attr.WhichOneof("value") == "f" and not attr.HasField("i")
    arg = framework.OpDef.ArgDef()
    arg.handle_data.add().shape.dim.add(size=-1)  # ResourceHandleProto.DtypeAndShape
    assert arg.handle_data[0].shape.dim[0].size == -1


def test_unknown_fields_survive():
    extra = bytes([0x2A, 0x02, 0x08, 0x05])  # GraphDef field 5 (debug_info), not described
    graph = framework.GraphDef.FromString(TF_BYTES + extra)
    assert graph.SerializeToString().endswith(extra)


@pytest.mark.parametrize("text, message", [
    ('syntax = "proto3"; package t1; message A { Missing m = 1; }', "unknown type 'Missing'"),
    ('syntax = "proto2"; package t2;', "only proto3"),
    ('syntax = "proto3"; package t3; message A { int32 x = ; }', "expected a number"),
    ('syntax = "proto3"; package t4; message A { int32 x = 1 }', "expected ;"),
])
def test_malformed_text_is_a_syntax_error(text, message):
    with pytest.raises(SyntaxError, match=message):
        schema.define(f"test/{abs(hash(text))}.proto", text)


def test_messages_of_a_later_file_name_earlier_ones():
    schema.define("test/later.proto", """
        syntax = "proto3";
        package t.later;
        message Holder { tensorflow.GraphDef graph = 1; map<string, int64> counts = 2; }
    """)
    holder = schema.message_class("t.later.Holder")(graph=_graph())
    holder.counts["x"] = 2
    assert schema.message_class("t.later.Holder").FromString(
        holder.SerializeToString()).graph.node[0].name == "a"
