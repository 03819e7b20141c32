"""``tf.train.Example`` and its messages (TF's ``feature.proto`` and ``example.proto``).

Contract: `BytesList`, `FloatList`, `Int64List`, `Feature`, `Features`, `FeatureList`,
`FeatureLists`, `Example` and `SequenceExample` are protobuf message classes (see
`tensorweave.engine.proto.schema`) with TF's field names and numbers, so their bytes, their
text format and their Python API are those of the classes TF generates: ``FromString`` of
malformed bytes raises ``google.protobuf.message.DecodeError``; ``SerializeToString`` writes
map entries in the order of protobuf's map (``deterministic=True`` sorts them by key).
"""

from __future__ import annotations

from tensorweave.engine.proto import schema

__all__ = ["BytesList", "Example", "Feature", "FeatureList", "FeatureLists", "Features",
           "FloatList", "Int64List", "SequenceExample"]

schema.define("tensorweave/formats/example.proto", """
syntax = "proto3";
package tensorflow;
message BytesList {
  repeated bytes value = 1;
}
message FloatList {
  repeated float value = 1 [packed = true];
}
message Int64List {
  repeated int64 value = 1 [packed = true];
}
message Feature {
  oneof kind {
    BytesList bytes_list = 1;
    FloatList float_list = 2;
    Int64List int64_list = 3;
  }
}
message Features {
  map<string, Feature> feature = 1;
}
message FeatureList {
  repeated Feature feature = 1;
}
message FeatureLists {
  map<string, FeatureList> feature_list = 1;
}
message Example {
  Features features = 1;
}
message SequenceExample {
  Features context = 1;
  FeatureLists feature_lists = 2;
}
""")

BytesList = schema.message_class("tensorflow.BytesList")
FloatList = schema.message_class("tensorflow.FloatList")
Int64List = schema.message_class("tensorflow.Int64List")
Feature = schema.message_class("tensorflow.Feature")
Features = schema.message_class("tensorflow.Features")
FeatureList = schema.message_class("tensorflow.FeatureList")
FeatureLists = schema.message_class("tensorflow.FeatureLists")
Example = schema.message_class("tensorflow.Example")
SequenceExample = schema.message_class("tensorflow.SequenceExample")
