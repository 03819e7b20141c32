"""TF's framework protos (graphs, nodes, attrs, tensors, functions, op defs) as protobuf classes.

Contract: the classes below are ``protobuf`` message classes (see `schema`) with TF's message
names, field names and numbers, in package ``tensorflow``, so their bytes and text are TF's:
``tw.GraphDef`` *is* `GraphDef`. The descriptions are written here in the project's own
``.proto`` text; field names and numbers are facts of TF's formats (``types``, ``tensor_shape``,
``resource_handle``, ``tensor``, ``attr_value``, ``node_def``, ``op_def``, ``function``,
``versions`` and ``graph``). Fields TF added later and tensorweave does not describe are kept
as unknown fields: they survive a parse and re-serialize unchanged.
"""

from __future__ import annotations

from tensorweave.engine.proto import schema

__all__ = ["DATA_TYPES", "AttrValue", "FunctionDef", "FunctionDefLibrary", "GradientDef",
           "GraphDef", "NameAttrList", "NodeDef", "OpDef", "OpList", "ResourceHandleProto",
           "TensorProto", "TensorShapeProto", "VariantTensorDataProto", "VersionDef"]

_BASE_TYPES = ("FLOAT", "DOUBLE", "INT32", "UINT8", "INT16", "INT8", "STRING", "COMPLEX64",
               "INT64", "BOOL", "QINT8", "QUINT8", "QINT32", "BFLOAT16", "QINT16", "QUINT16",
               "UINT16", "COMPLEX128", "HALF", "RESOURCE", "VARIANT", "UINT32", "UINT64")
_DATA_TYPE_VALUES = "\n".join(
    ["  DT_INVALID = 0;"]
    + [f"  DT_{name} = {number};" for number, name in enumerate(_BASE_TYPES, 1)]
    + [f"  DT_{name}_REF = {number + 100};" for number, name in enumerate(_BASE_TYPES, 1)])

schema.define("tensorweave/framework/types.proto", f"""
syntax = "proto3";
package tensorflow;
// A ref type is its value type + 100.
enum DataType {{
{_DATA_TYPE_VALUES}
}}
""")

schema.define("tensorweave/framework/tensor.proto", """
syntax = "proto3";
package tensorflow;
message TensorShapeProto {
  message Dim {
    int64 size = 1;  // -1: unknown
    string name = 2;
  }
  repeated Dim dim = 2;
  bool unknown_rank = 3;  // then dim is empty
}
message ResourceHandleProto {
  string device = 1;
  string container = 2;
  string name = 3;
  uint64 hash_code = 4;
  string maybe_type_name = 5;
  message DtypeAndShape {
    DataType dtype = 1;
    TensorShapeProto shape = 2;
  }
  repeated DtypeAndShape dtypes_and_shapes = 6;
}
message TensorProto {
  DataType dtype = 1;
  TensorShapeProto tensor_shape = 2;
  int32 version_number = 3;
  bytes tensor_content = 4;  // little-endian elements, row-major
  repeated int32 half_val = 13;  // float16 and bfloat16 as their bits
  repeated float float_val = 5;
  repeated double double_val = 6;
  repeated int32 int_val = 7;  // int32, int16, int8, uint8, uint16
  repeated bytes string_val = 8;
  repeated float scomplex_val = 9;  // real, imaginary, ...
  repeated int64 int64_val = 10;
  repeated bool bool_val = 11;
  repeated double dcomplex_val = 12;
  repeated ResourceHandleProto resource_handle_val = 14;
  repeated VariantTensorDataProto variant_val = 15;
  repeated uint32 uint32_val = 16;
  repeated uint64 uint64_val = 17;
}
message VariantTensorDataProto {
  string type_name = 1;
  bytes metadata = 2;
  repeated TensorProto tensors = 3;
}
""")

schema.define("tensorweave/framework/graph.proto", """
syntax = "proto3";
package tensorflow;
message AttrValue {
  message ListValue {
    repeated bytes s = 2;
    repeated int64 i = 3;
    repeated float f = 4;
    repeated bool b = 5;
    repeated DataType type = 6;
    repeated TensorShapeProto shape = 7;
    repeated TensorProto tensor = 8;
    repeated NameAttrList func = 9;
  }
  oneof value {
    bytes s = 2;
    int64 i = 3;
    float f = 4;
    bool b = 5;
    DataType type = 6;
    TensorShapeProto shape = 7;
    TensorProto tensor = 8;
    ListValue list = 1;
    NameAttrList func = 10;
    string placeholder = 9;
  }
}
message NameAttrList {
  string name = 1;
  map<string, AttrValue> attr = 2;
}
message NodeDef {
  string name = 1;
  string op = 2;
  repeated string input = 3;  // "node", "node:N" or "^node" (a control input)
  string device = 4;
  map<string, AttrValue> attr = 5;
  message ExperimentalDebugInfo {
    repeated string original_node_names = 1;
    repeated string original_func_names = 2;
  }
  ExperimentalDebugInfo experimental_debug_info = 6;
}
message OpDeprecation {
  int32 version = 1;
  string explanation = 2;
}
message OpDef {
  string name = 1;
  message ArgDef {
    string name = 1;
    string description = 2;
    DataType type = 3;
    string type_attr = 4;
    string number_attr = 5;
    string type_list_attr = 6;
    repeated ResourceHandleProto.DtypeAndShape handle_data = 7;
    bool is_ref = 16;
  }
  repeated ArgDef input_arg = 2;
  repeated ArgDef output_arg = 3;
  repeated string control_output = 20;
  message AttrDef {
    string name = 1;
    string type = 2;
    AttrValue default_value = 3;
    string description = 4;
    bool has_minimum = 5;
    int64 minimum = 6;
    AttrValue allowed_values = 7;
  }
  repeated AttrDef attr = 4;
  OpDeprecation deprecation = 8;
  string summary = 5;
  string description = 6;
  bool is_commutative = 18;
  bool is_aggregate = 16;
  bool is_stateful = 17;
  bool allows_uninitialized_input = 19;
  bool is_distributed_communication = 21;
}
message OpList {
  repeated OpDef op = 1;
}
message FunctionDef {
  OpDef signature = 1;
  map<string, AttrValue> attr = 5;
  message ArgAttrs {
    map<string, AttrValue> attr = 1;
  }
  map<uint32, ArgAttrs> arg_attr = 7;
  map<uint32, uint32> resource_arg_unique_id = 8;
  repeated NodeDef node_def = 3;
  map<string, string> ret = 4;
  map<string, string> control_ret = 6;
}
message GradientDef {
  string function_name = 1;
  string gradient_func = 2;
}
message FunctionDefLibrary {
  repeated FunctionDef function = 1;
  repeated GradientDef gradient = 2;
}
message VersionDef {
  int32 producer = 1;
  int32 min_consumer = 2;
  repeated int32 bad_consumers = 3;
}
message GraphDef {
  repeated NodeDef node = 1;
  VersionDef versions = 4;
  int32 version = 3;  // deprecated in TF: versions.producer
  FunctionDefLibrary library = 2;
}
""")

DATA_TYPES: dict[str, int] = schema.enum_values("tensorflow.DataType")
TensorShapeProto = schema.message_class("tensorflow.TensorShapeProto")
ResourceHandleProto = schema.message_class("tensorflow.ResourceHandleProto")
TensorProto = schema.message_class("tensorflow.TensorProto")
VariantTensorDataProto = schema.message_class("tensorflow.VariantTensorDataProto")
AttrValue = schema.message_class("tensorflow.AttrValue")
NameAttrList = schema.message_class("tensorflow.NameAttrList")
NodeDef = schema.message_class("tensorflow.NodeDef")
OpDef = schema.message_class("tensorflow.OpDef")
OpList = schema.message_class("tensorflow.OpList")
FunctionDef = schema.message_class("tensorflow.FunctionDef")
GradientDef = schema.message_class("tensorflow.GradientDef")
FunctionDefLibrary = schema.message_class("tensorflow.FunctionDefLibrary")
VersionDef = schema.message_class("tensorflow.VersionDef")
GraphDef = schema.message_class("tensorflow.GraphDef")
