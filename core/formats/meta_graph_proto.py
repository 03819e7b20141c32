"""TF's meta graph protos as protobuf classes: ``meta_graph``, ``saver``, ``variable`` and
``queue_runner`` (and ``error.Code``, which a ``QueueRunnerDef`` lists).

Contract: `MetaGraphDef` (with `MetaInfoDef`, `CollectionDef`, `TensorInfo`, `SignatureDef`,
`AssetFileDef`), `SaverDef`, `VariableDef`, `SaveSliceInfoDef` and `QueueRunnerDef` are
``protobuf`` message classes (see `tensorweave.engine.proto.schema`) with TF's message, field
and enum names and numbers, described here in the project's own ``.proto`` text, so their bytes
and text are TF's. ``MetaGraphDef.graph_def`` is the framework's `GraphDef` and
``MetaInfoDef.stripped_op_list`` its `OpList`; ``any_info`` and ``CollectionDef.any_list`` hold
protobuf's own ``google.protobuf.Any``. What tensorweave does not describe (``MetaGraphDef``'s
``object_graph_def`` = 7, a ``TypeSpecProto``'s ``type_state`` = 2) is kept as unknown fields, so
it survives a parse and re-serialize unchanged. `to_text` and `merge_text` are protobuf's
``text_format`` over tensorweave's pool, so an ``Any`` packing one of these messages is written
and read expanded, as TF writes it.
"""

from __future__ import annotations

from google.protobuf import any_pb2, text_format
from google.protobuf.message import Message

from tensorweave.engine.proto import framework as framework  # defines what the text names
from tensorweave.engine.proto import schema

__all__ = ["CHECKPOINT_V2", "AssetFileDef", "CollectionDef", "MetaGraphDef", "MetaInfoDef",
           "QueueRunnerDef", "SaveSliceInfoDef", "SaverDef", "SignatureDef", "TensorInfo",
           "VariableDef", "merge_text", "to_text"]

schema.add_file(any_pb2.DESCRIPTOR)

schema.define("tensorweave/protobuf/error_codes.proto", """
syntax = "proto3";
package tensorflow.error;
enum Code {
  OK = 0;
  CANCELLED = 1;
  UNKNOWN = 2;
  INVALID_ARGUMENT = 3;
  DEADLINE_EXCEEDED = 4;
  NOT_FOUND = 5;
  ALREADY_EXISTS = 6;
  PERMISSION_DENIED = 7;
  UNAUTHENTICATED = 16;
  RESOURCE_EXHAUSTED = 8;
  FAILED_PRECONDITION = 9;
  ABORTED = 10;
  OUT_OF_RANGE = 11;
  UNIMPLEMENTED = 12;
  INTERNAL = 13;
  UNAVAILABLE = 14;
  DATA_LOSS = 15;
  DO_NOT_USE_RESERVED_FOR_FUTURE_EXPANSION_USE_DEFAULT_IN_SWITCH_INSTEAD_ = 20;
}
""")

schema.define("tensorweave/protobuf/saver.proto", """
syntax = "proto3";
package tensorflow;
message SaverDef {
  string filename_tensor_name = 1;  // fed with the checkpoint path
  string save_tensor_name = 2;  // run to save; it holds the path written
  string restore_op_name = 3;
  int32 max_to_keep = 4;
  bool sharded = 5;
  float keep_checkpoint_every_n_hours = 6;
  enum CheckpointFormatVersion {
    LEGACY = 0;
    V1 = 1;
    V2 = 2;
  }
  CheckpointFormatVersion version = 7;
}
""")

schema.define("tensorweave/framework/variable.proto", """
syntax = "proto3";
package tensorflow;
// enum values share their package's scope, hence the prefixes
enum VariableSynchronization {
  VARIABLE_SYNCHRONIZATION_AUTO = 0;
  VARIABLE_SYNCHRONIZATION_NONE = 1;
  VARIABLE_SYNCHRONIZATION_ON_WRITE = 2;
  VARIABLE_SYNCHRONIZATION_ON_READ = 3;
}
enum VariableAggregation {
  VARIABLE_AGGREGATION_NONE = 0;
  VARIABLE_AGGREGATION_SUM = 1;
  VARIABLE_AGGREGATION_MEAN = 2;
  VARIABLE_AGGREGATION_ONLY_FIRST_REPLICA = 3;
}
message VariableDef {
  string variable_name = 1;
  string initial_value_name = 6;
  string initializer_name = 2;
  string snapshot_name = 3;
  SaveSliceInfoDef save_slice_info_def = 4;  // a shard of a partitioned variable
  bool is_resource = 5;
  bool trainable = 7;
  VariableSynchronization synchronization = 8;
  VariableAggregation aggregation = 9;
}
message SaveSliceInfoDef {
  string full_name = 1;
  repeated int64 full_shape = 2;
  repeated int64 var_offset = 3;
  repeated int64 var_shape = 4;
}
""")

schema.define("tensorweave/protobuf/queue_runner.proto", """
syntax = "proto3";
package tensorflow;
message QueueRunnerDef {
  string queue_name = 1;
  repeated string enqueue_op_name = 2;
  string close_op_name = 3;
  string cancel_op_name = 4;
  repeated error.Code queue_closed_exception_types = 5;
}
""")

schema.define("tensorweave/protobuf/meta_graph.proto", """
syntax = "proto3";
package tensorflow;
message MetaGraphDef {
  message MetaInfoDef {
    string meta_graph_version = 1;
    OpList stripped_op_list = 2;  // the OpDefs of the ops the graph uses
    google.protobuf.Any any_info = 3;
    repeated string tags = 4;
    string tensorflow_version = 5;
    string tensorflow_git_version = 6;
    bool stripped_default_attrs = 7;
    map<string, string> function_aliases = 8;
  }
  MetaInfoDef meta_info_def = 1;
  GraphDef graph_def = 2;
  SaverDef saver_def = 3;
  map<string, CollectionDef> collection_def = 4;
  map<string, SignatureDef> signature_def = 5;
  repeated AssetFileDef asset_file_def = 6;
  // object_graph_def = 7 (TF 2's SavedObjectGraph): not described, kept as an unknown field
}
message CollectionDef {
  message NodeList {
    repeated string value = 1;
  }
  message BytesList {
    repeated bytes value = 1;
  }
  message Int64List {
    repeated int64 value = 1 [packed = true];
  }
  message FloatList {
    repeated float value = 1 [packed = true];
  }
  message AnyList {
    repeated google.protobuf.Any value = 1;
  }
  oneof kind {
    NodeList node_list = 1;
    BytesList bytes_list = 2;
    Int64List int64_list = 3;
    FloatList float_list = 4;
    AnyList any_list = 5;
  }
}
// the parts of TF's struct.proto a TensorInfo names; type_state = 2 (a StructuredValue) is
// not described, kept as an unknown field
message TypeSpecProto {
  enum TypeSpecClass {
    UNKNOWN = 0;
    SPARSE_TENSOR_SPEC = 1;
    INDEXED_SLICES_SPEC = 2;
    RAGGED_TENSOR_SPEC = 3;
    TENSOR_ARRAY_SPEC = 4;
    DATA_DATASET_SPEC = 5;
    DATA_ITERATOR_SPEC = 6;
    OPTIONAL_SPEC = 7;
    PER_REPLICA_SPEC = 8;
    VARIABLE_SPEC = 9;
    ROW_PARTITION_SPEC = 10;
    REGISTERED_TYPE_SPEC = 12;
    EXTENSION_TYPE_SPEC = 13;
  }
  TypeSpecClass type_spec_class = 1;
  string type_spec_class_name = 3;
  int32 num_flat_components = 4;
}
message TensorInfo {
  message CooSparse {
    string values_tensor_name = 1;
    string indices_tensor_name = 2;
    string dense_shape_tensor_name = 3;
  }
  message CompositeTensor {
    TypeSpecProto type_spec = 1;
    repeated TensorInfo components = 2;
  }
  oneof encoding {
    string name = 1;  // "op:N"
    CooSparse coo_sparse = 4;
    CompositeTensor composite_tensor = 5;
  }
  DataType dtype = 2;
  TensorShapeProto tensor_shape = 3;
}
message SignatureDef {
  map<string, TensorInfo> inputs = 1;
  map<string, TensorInfo> outputs = 2;
  string method_name = 3;
  map<string, TensorProto> defaults = 4;
}
message AssetFileDef {
  TensorInfo tensor_info = 1;  // the tensor fed with the asset's path at load time
  string filename = 2;  // under the SavedModel's assets/
}
""")

SaverDef = schema.message_class("tensorflow.SaverDef")
VariableDef = schema.message_class("tensorflow.VariableDef")
SaveSliceInfoDef = schema.message_class("tensorflow.SaveSliceInfoDef")
QueueRunnerDef = schema.message_class("tensorflow.QueueRunnerDef")
MetaGraphDef = schema.message_class("tensorflow.MetaGraphDef")
MetaInfoDef = MetaGraphDef.MetaInfoDef
CollectionDef = schema.message_class("tensorflow.CollectionDef")
TensorInfo = schema.message_class("tensorflow.TensorInfo")
SignatureDef = schema.message_class("tensorflow.SignatureDef")
AssetFileDef = schema.message_class("tensorflow.AssetFileDef")
CHECKPOINT_V2: int = SaverDef.V2


def to_text(message: Message) -> str:
    """`message` in protobuf's text format, an ``Any`` of a known message expanded (TF's)."""
    return text_format.MessageToString(message, descriptor_pool=schema.pool())


def merge_text(text: str | bytes, message: Message) -> Message:
    """Merge `text` (protobuf's text format) into `message` and return it; raises
    ``text_format.ParseError`` as protobuf does."""
    return text_format.Merge(text, message, descriptor_pool=schema.pool())
