"""The protobuf messages of TF's TensorBundle index (``tensor_bundle``, ``tensor_slice`` protos).

Contract: `BundleHeaderProto`, `BundleEntryProto` and `TensorSliceProto` are protobuf message
classes (see `tensorweave.engine.proto.schema`) with TF's field names and numbers, so their
bytes are TF's; `TensorShapeProto` and `VersionDef` are the framework's. ``dtype`` is TF's
``DataType`` number (an open enum: numbers tensorweave has no dtype for read back unchanged).
"""

from __future__ import annotations

from tensorweave.engine.proto import schema
from tensorweave.engine.proto.framework import TensorShapeProto, VersionDef

__all__ = ["BundleEntryProto", "BundleHeaderProto", "TensorShapeProto", "TensorSliceProto",
           "VersionDef"]

schema.define("tensorweave/formats/tensor_bundle.proto", """
syntax = "proto3";
package tensorflow;
message TensorSliceProto {
  message Extent {
    int64 start = 1;
    oneof has_length {
      int64 length = 2;  // in a oneof, so a length of 0 is still set; unset: to the end
    }
  }
  repeated Extent extent = 1;
}
message BundleHeaderProto {
  int32 num_shards = 1;
  enum Endianness {
    LITTLE = 0;
    BIG = 1;
  }
  Endianness endianness = 2;
  VersionDef version = 3;
}
message BundleEntryProto {
  DataType dtype = 1;
  TensorShapeProto shape = 2;
  int32 shard_id = 3;
  int64 offset = 4;
  int64 size = 5;
  fixed32 crc32c = 6;  // masked crc32c of the tensor's bytes
  repeated TensorSliceProto slices = 7;
}
""")

TensorSliceProto = schema.message_class("tensorflow.TensorSliceProto")
BundleHeaderProto = schema.message_class("tensorflow.BundleHeaderProto")
BundleEntryProto = schema.message_class("tensorflow.BundleEntryProto")
