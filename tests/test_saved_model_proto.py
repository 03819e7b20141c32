"""SavedModel protos: bytes checked field by field against TF's saved_model.proto and
meta_graph.proto numbers, round trips, text format and malformed input."""

from __future__ import annotations

import pytest

import tensorweave as tf
from tensorweave.engine.proto import wire as wire
from tensorweave.formats.meta_graph_proto import MetaInfoDef
from tensorweave.formats.saved_model_proto import (
    AssetFileDef,
    CooSparse,
    MetaGraphDef,
    SavedModel,
    SignatureDef,
    TensorInfo,
)


def fields(data: bytes) -> list[tuple[int, int, object]]:
    return [(n, wt, bytes(raw) if wt == wire.BYTES else raw) for n, wt, raw in wire.fields(data)]


def test_tensor_info_bytes_follow_tfs_field_numbers() -> None:
    info = TensorInfo(name="x:0", dtype=tf.float32, tensor_shape=tf.TensorShape([2, 3]))
    # name = 1 (string), dtype = 2 (DT_FLOAT = 1), tensor_shape = 3 { dim = 2 { size = 1 } }
    expected = (b"\x0a\x03x:0" + b"\x10\x01"
                + b"\x1a\x08" + b"\x12\x02\x08\x02" + b"\x12\x02\x08\x03")
    assert info.SerializeToString() == expected
    assert TensorInfo.FromString(expected) == info


def test_signature_def_maps_are_key_1_value_2_entries() -> None:
    sig = SignatureDef(inputs={"b": TensorInfo(name="b:0", dtype=tf.int64),
                               "a": TensorInfo(name="a:0", dtype=tf.string)},
                       outputs={"y": TensorInfo(name="y:0", dtype=tf.float64)},
                       method_name="tensorflow/serving/predict")
    top = fields(sig.SerializeToString())
    assert [n for n, _, _ in top] == [1, 1, 2, 3]
    entries = [dict((n, raw) for n, _, raw in fields(raw)) for n, _, raw in top[:2]]
    assert [e[1] for e in entries] == [b"a", b"b"]  # sorted by key, as protobuf's deterministic
    a = dict((n, raw) for n, _, raw in fields(entries[0][2]))
    assert a == {1: b"a:0", 2: 7}  # DT_STRING = 7
    y = dict((n, raw) for n, _, raw in fields(dict((n, r) for n, _, r in fields(top[2][2]))[2]))
    assert y == {1: b"y:0", 2: 2}  # DT_DOUBLE = 2
    assert top[3] == (3, wire.BYTES, b"tensorflow/serving/predict")


def test_saved_model_bytes_hold_version_meta_graphs_tags_and_signatures() -> None:
    meta = MetaGraphDef(meta_info_def=MetaInfoDef(tags=["serve", "gpu"]),
                        signature_def={"serving_default": SignatureDef(method_name="m")},
                        asset_file_def=[AssetFileDef(TensorInfo(name="p:0"), "vocab.txt")])
    data = SavedModel(saved_model_schema_version=1, meta_graphs=[meta, MetaGraphDef()])
    top = fields(data.SerializeToString())
    assert top[0] == (1, wire.VARINT, 1)
    assert [n for n, _, _ in top[1:]] == [2, 2]
    meta_fields = fields(top[1][2])
    numbers = [n for n, _, _ in meta_fields]
    assert numbers[0] == 1 and numbers[-2:] == [5, 6]
    info = fields(meta_fields[0][2])
    assert [(n, raw) for n, _, raw in info if n == 4] == [(4, b"serve"), (4, b"gpu")]
    signature = dict((n, raw) for n, _, raw in fields(meta_fields[-2][2]))
    assert signature[1] == b"serving_default"
    assert fields(signature[2]) == [(3, wire.BYTES, b"m")]
    asset = dict((n, raw) for n, _, raw in fields(meta_fields[-1][2]))
    assert asset == {1: b"\x0a\x03p:0", 2: b"vocab.txt"}


def test_saved_model_round_trips() -> None:
    sparse = TensorInfo(dtype=tf.float32, tensor_shape=tf.TensorShape([None, 4]),
                        coo_sparse=CooSparse("v:0", "i:0", "s:0"))
    scalar = TensorInfo(name="s:0", dtype=tf.int32, tensor_shape=tf.TensorShape([]))
    unknown = TensorInfo(name="u:0", dtype=tf.bool, tensor_shape=tf.TensorShape(None))
    meta = MetaGraphDef(
        meta_info_def=MetaInfoDef(tags=["train"]),
        signature_def={"k": SignatureDef({"sp": sparse, "s": scalar}, {"u": unknown}, "m")},
        asset_file_def=[AssetFileDef(TensorInfo(name="p:0"), "a.txt")])
    model = SavedModel(saved_model_schema_version=1, meta_graphs=[meta])
    parsed = SavedModel.FromString(model.SerializeToString())
    assert parsed.saved_model_schema_version == 1
    [back] = parsed.meta_graphs
    assert back.meta_info_def.tags == ["train"]
    assert back.signature_def == meta.signature_def
    assert back.signature_def["k"].inputs["s"].tensor_shape.as_list() == []
    assert back.signature_def["k"].outputs["u"].tensor_shape.dims is None
    assert back.asset_file_def == meta.asset_file_def
    assert sparse.WhichOneof("encoding") == "coo_sparse"
    again = MetaGraphDef()
    assert again.ParseFromString(meta.SerializeToString()) > 0
    assert again.signature_def == meta.signature_def


def test_text_format_prints_maps_and_enums() -> None:
    sig = SignatureDef({"x": TensorInfo(name="x:0", dtype=tf.float32,
                                        tensor_shape=tf.TensorShape([None]))}, {}, "m")
    assert str(sig) == ('inputs {\n  key: "x"\n  value {\n    name: "x:0"\n    dtype: DT_FLOAT\n'
                        '    tensor_shape {\n      dim {\n        size: -1\n      }\n    }\n'
                        '  }\n}\nmethod_name: "m"\n')
    text = str(SavedModel(saved_model_schema_version=1,
                          meta_graphs=[MetaGraphDef(MetaInfoDef(tags=["serve"]))]))
    assert text.startswith("saved_model_schema_version: 1\nmeta_graphs {\n  meta_info_def {\n")
    assert '    tags: "serve"\n' in text


def test_tensor_info_oneof_last_member_wins() -> None:
    name_first = b"\x0a\x03x:0" + b"\x22\x05\x0a\x03v:0"
    info = TensorInfo.FromString(name_first)
    assert (info.name, info.coo_sparse) == ("", CooSparse(values_tensor_name="v:0"))
    info = TensorInfo.FromString(b"\x22\x05\x0a\x03v:0" + b"\x0a\x03x:0")
    assert (info.WhichOneof("encoding"), info.name) == ("name", "x:0")
    with pytest.raises(ValueError, match='no "kind" field'):
        info.WhichOneof("kind")


def test_malformed_bytes_raise_value_error_naming_the_field() -> None:
    with pytest.raises(ValueError, match="TensorInfo.dtype"):
        TensorInfo.FromString(b"\x12\x01a")  # dtype as a length-delimited field
    with pytest.raises(ValueError, match="unsupported DataType 99"):
        TensorInfo.FromString(b"\x10\x63")
    with pytest.raises(ValueError, match="Error parsing SavedModel: SavedModel"):
        SavedModel.FromString(b"\x12\x10abc")  # meta_graphs longer than the data
    with pytest.raises(ValueError, match="has no TensorFlow DataType"):
        TensorInfo(name="x:0", dtype=tf.DType("qint8", int)).SerializeToString()
