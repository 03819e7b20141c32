"""SavedModel and meta graph protos on the protobuf package: bytes and text equal TF's for a
representative message of each kind (``tests/data/meta_graph_proto``, made by TF 2.21), round
trips, oneofs, ``Any`` and malformed input."""

from __future__ import annotations

import json
import pathlib
import sys

import pytest
from google.protobuf import text_format
from google.protobuf.message import DecodeError

from tensorweave.engine.proto import framework
from tensorweave.formats.checkpoint_state_proto import CheckpointState
from tensorweave.formats.meta_graph_proto import (
    QueueRunnerDef,
    SaverDef,
    VariableDef,
    merge_text,
    to_text,
)
from tensorweave.formats.saved_model_proto import (
    AssetFileDef,
    CooSparse,
    MetaGraphDef,
    SavedModel,
    TensorInfo,
    asset_file_def_from_any,
)

DATA = pathlib.Path(__file__).parent / "data" / "meta_graph_proto"
sys.path.insert(0, str(DATA))
import messages  # noqa: E402  (the fixture's builder, shared with make_expected.py)

EXPECTED = json.loads((DATA / "expected.json").read_text())
CLASSES = {"SavedModel": SavedModel, "MetaGraphDef": MetaGraphDef, "SaverDef": SaverDef,
           "VariableDef": VariableDef, "QueueRunnerDef": QueueRunnerDef,
           "CheckpointState": CheckpointState, "AssetFileDef": AssetFileDef,
           "TensorInfo": TensorInfo}
BUILT = messages.build(CLASSES)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bytes_and_text_equal_tfs(name: str) -> None:
    message = BUILT[name]
    assert message.SerializeToString(deterministic=True).hex() == EXPECTED[name]["hex"]
    assert to_text(message) == EXPECTED[name]["text"]
    parsed = type(message).FromString(bytes.fromhex(EXPECTED[name]["hex"]))
    assert parsed == message
    assert merge_text(EXPECTED[name]["text"], type(message)()) == message


def test_the_meta_graph_holds_the_frameworks_graph_def_and_op_list() -> None:
    (meta, _) = BUILT["saved_model"].meta_graphs
    assert isinstance(meta.graph_def, framework.GraphDef)
    assert isinstance(meta.meta_info_def.stripped_op_list, framework.OpList)
    assert meta.graph_def.node[0].attr["dtype"].type == framework.DATA_TYPES["DT_FLOAT"]


def test_any_unpacks_to_an_asset_file_def_and_only_to_one() -> None:
    (meta, _) = BUILT["saved_model"].meta_graphs
    (packed,) = meta.collection_def["saved_model_assets"].any_list.value
    asset = asset_file_def_from_any(packed)
    assert (asset.filename, asset.tensor_info.name) == ("vocab.txt", "Const:0")
    assert "[type.googleapis.com/tensorflow.AssetFileDef] {" in to_text(meta)
    other = type(packed)()
    other.Pack(SaverDef())
    with pytest.raises(ValueError, match="got 'type.googleapis.com/tensorflow.SaverDef'"):
        asset_file_def_from_any(other)


def test_oneofs_keep_the_last_member_set() -> None:
    info = TensorInfo.FromString(b"\x0a\x03x:0" + b"\x22\x05\x0a\x03v:0")  # name, coo_sparse
    assert info.WhichOneof("encoding") == "coo_sparse" and info.name == ""
    assert info.coo_sparse == CooSparse(values_tensor_name="v:0")
    info = TensorInfo.FromString(b"\x22\x05\x0a\x03v:0" + b"\x0a\x03x:0")
    assert (info.WhichOneof("encoding"), info.name) == ("name", "x:0")
    assert not info.HasField("coo_sparse")
    with pytest.raises(ValueError, match='no "kind" field'):
        info.WhichOneof("kind")


def test_fields_tensorweave_does_not_describe_survive_a_round_trip() -> None:
    object_graph_def = b"\x3a\x04\x0a\x02\x08\x01"  # MetaGraphDef field 7, TF 2's object graph
    meta = MetaGraphDef.FromString(object_graph_def)
    assert meta.SerializeToString() == object_graph_def
    info = TensorInfo.FromString(b"\x2a\x04\x0a\x02\x12\x00")  # a TypeSpecProto's type_state
    assert info.SerializeToString() == b"\x2a\x04\x0a\x02\x12\x00"


def test_malformed_bytes_and_text_raise_protobufs_errors() -> None:
    with pytest.raises(DecodeError):
        SavedModel.FromString(b"\x12\x10abc")  # meta_graphs longer than the data
    with pytest.raises(DecodeError):
        TensorInfo.FromString(b"\x10\xff")  # dtype: a varint cut short
    # a field of the wrong wire type is kept as an unknown field, as protobuf (and so TF) does
    assert TensorInfo.FromString(b"\x12\x01a").SerializeToString() == b"\x12\x01a"
    with pytest.raises(text_format.ParseError, match="1:7"):
        merge_text("tags: serve", MetaGraphDef.MetaInfoDef())


def test_a_well_known_file_is_added_once_and_packs_across_the_pool() -> None:
    from google.protobuf import any_pb2

    from tensorweave.engine.proto import schema

    schema.add_file(any_pb2.DESCRIPTOR)  # again: no duplicate-symbol error
    packed = schema.message_class("google.protobuf.Any")()
    packed.Pack(framework.VersionDef(producer=3))
    assert packed.type_url == "type.googleapis.com/tensorflow.VersionDef"
    assert schema.pool().FindFileByName("google/protobuf/any.proto").package == "google.protobuf"
