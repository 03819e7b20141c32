"""TF's ``saved_model.proto`` as a protobuf class, with the meta graph messages a SavedModel
holds.

Contract: `SavedModel` (``saved_model_schema_version`` = 1, ``meta_graphs`` = 2) is a
``protobuf`` message class with TF's names and numbers (see
`tensorweave.formats.meta_graph_proto`, whose `MetaGraphDef`, `SignatureDef`, `TensorInfo`,
`CooSparse` and `AssetFileDef` are re-exported here), so ``saved_model.pb`` and
``saved_model.pbtxt`` are TF's bytes and text. TF's v1 builder also lists the assets in the
``saved_model_assets`` collection, an ``any_list`` of ``google.protobuf.Any`` each packing an
`AssetFileDef`; `asset_file_def_from_any` unpacks one.
"""

from __future__ import annotations

from google.protobuf import any_pb2

from tensorweave.engine.proto import schema
from tensorweave.formats.meta_graph_proto import (
    AssetFileDef,
    MetaGraphDef,
    SignatureDef,
    TensorInfo,
)

__all__ = ["AssetFileDef", "CooSparse", "MetaGraphDef", "SavedModel", "SignatureDef",
           "TensorInfo", "asset_file_def_from_any"]

schema.define("tensorweave/protobuf/saved_model.proto", """
syntax = "proto3";
package tensorflow;
message SavedModel {
  int64 saved_model_schema_version = 1;  // 1 for TF 1.x and 2.x SavedModels
  repeated MetaGraphDef meta_graphs = 2;  // one per tag set
}
""")

SavedModel = schema.message_class("tensorflow.SavedModel")
CooSparse = TensorInfo.CooSparse


def asset_file_def_from_any(packed: any_pb2.Any) -> AssetFileDef:
    """The `AssetFileDef` that `packed` holds (``ValueError`` for another type, which TF's
    loader cannot use either)."""
    asset = AssetFileDef()
    if not packed.Unpack(asset):
        raise ValueError(f"Expected an Any packing tensorflow.AssetFileDef, got "
                         f"{packed.type_url!r}")
    return asset
