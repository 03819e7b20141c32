"""The protobuf messages of summaries and event files (TF's ``summary`` and ``event`` protos).

Contract: `Summary` (with ``Summary.Value``, ``Summary.Image``, ``Summary.Audio``),
`HistogramProto`, `SummaryMetadata`, `SummaryDescription`, `Event`, `LogMessage`, `SessionLog`
and `TaggedRunMetadata` are protobuf message classes (see `tensorweave.engine.proto.schema`)
with TF's message names, field names and numbers in package ``tensorflow``, so their bytes and
text are TF's and they behave as TF's classes do: ``Summary.Value``'s kinds and ``Event``'s
payloads are oneofs (``HasField``/``WhichOneof`` tell which is set; a set ``simple_value`` of
0.0 is written), ``Event.summary`` is a `Summary` message while ``graph_def`` and
``meta_graph_def`` hold a serialized ``GraphDef`` / ``MetaGraphDef``, ``HistogramProto``'s
repeated doubles are packed, and ``FromString`` of malformed bytes raises protobuf's
``DecodeError``. Fields TF added after 1.x that are not described here are kept as unknown
fields.
"""

from __future__ import annotations

from tensorweave.engine.proto import schema
from tensorweave.engine.proto.framework import TensorProto

__all__ = ["Event", "HistogramProto", "LogMessage", "SessionLog", "Summary",
           "SummaryDescription", "SummaryMetadata", "TaggedRunMetadata", "TensorProto"]

schema.define("tensorweave/formats/summary.proto", """
syntax = "proto3";
package tensorflow;
message SummaryDescription {
  string type_hint = 1;
}
message HistogramProto {
  double min = 1;
  double max = 2;
  double num = 3;
  double sum = 4;
  double sum_squares = 5;
  repeated double bucket_limit = 6 [packed = true];  // the right edge of each bucket
  repeated double bucket = 7 [packed = true];  // the count of each bucket
}
enum DataClass {
  DATA_CLASS_UNKNOWN = 0;
  DATA_CLASS_SCALAR = 1;
  DATA_CLASS_TENSOR = 2;
  DATA_CLASS_BLOB_SEQUENCE = 3;
}
message SummaryMetadata {
  message PluginData {
    string plugin_name = 1;
    bytes content = 2;
  }
  PluginData plugin_data = 1;
  string display_name = 2;
  string summary_description = 3;
  DataClass data_class = 4;
}
message Summary {
  message Image {
    int32 height = 1;
    int32 width = 2;
    int32 colorspace = 3;  // the channels: 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA
    bytes encoded_image_string = 4;
  }
  message Audio {
    float sample_rate = 1;
    int64 num_channels = 2;
    int64 length_frames = 3;
    bytes encoded_audio_string = 4;
    string content_type = 5;
  }
  message Value {
    string node_name = 7;
    string tag = 1;
    SummaryMetadata metadata = 9;
    oneof value {
      float simple_value = 2;
      bytes obsolete_old_style_histogram = 3;
      Image image = 4;
      HistogramProto histo = 5;
      Audio audio = 6;
      TensorProto tensor = 8;
    }
  }
  repeated Value value = 1;
}
""")

schema.define("tensorweave/formats/event.proto", """
syntax = "proto3";
package tensorflow;
message LogMessage {
  enum Level {
    UNKNOWN = 0;
    DEBUGGING = 10;
    INFO = 20;
    WARN = 30;
    ERROR = 40;
    FATAL = 50;
  }
  Level level = 1;
  string message = 2;
}
message SessionLog {
  enum SessionStatus {
    STATUS_UNSPECIFIED = 0;
    START = 1;
    STOP = 2;
    CHECKPOINT = 3;
  }
  SessionStatus status = 1;
  string checkpoint_path = 2;
  string msg = 3;
}
message TaggedRunMetadata {
  string tag = 1;
  bytes run_metadata = 2;  // a serialized RunMetadata
}
message Event {
  double wall_time = 1;
  int64 step = 2;
  oneof what {
    string file_version = 3;
    bytes graph_def = 4;  // a serialized GraphDef
    Summary summary = 5;
    LogMessage log_message = 6;
    SessionLog session_log = 7;
    TaggedRunMetadata tagged_run_metadata = 8;
    bytes meta_graph_def = 9;  // a serialized MetaGraphDef
  }
}
""")

SummaryDescription = schema.message_class("tensorflow.SummaryDescription")
HistogramProto = schema.message_class("tensorflow.HistogramProto")
SummaryMetadata = schema.message_class("tensorflow.SummaryMetadata")
Summary = schema.message_class("tensorflow.Summary")
LogMessage = schema.message_class("tensorflow.LogMessage")
SessionLog = schema.message_class("tensorflow.SessionLog")
TaggedRunMetadata = schema.message_class("tensorflow.TaggedRunMetadata")
Event = schema.message_class("tensorflow.Event")
