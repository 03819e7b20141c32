"""TF's ``control_flow.proto`` as protobuf classes: the ``cond_context`` and ``while_context``
collections of a meta graph.

Contract: `ValuesDef`, `ControlFlowContextDef`, `CondContextDef` and `WhileContextDef` are
``protobuf`` message classes (see `tensorweave.engine.proto.schema`) with TF's message and field
names and numbers, so a ``CollectionDef.bytes_list`` item that TF wrote parses here and one
written here parses in TF. What the fields mean for tensorweave's functional control flow is
`tensorweave.api.control_flow_ops`'s to say.
"""

from __future__ import annotations

from tensorweave.engine.proto import schema

__all__ = ["CondContextDef", "ControlFlowContextDef", "ValuesDef", "WhileContextDef"]

schema.define("tensorweave/protobuf/control_flow.proto", """
syntax = "proto3";
package tensorflow;
message ValuesDef {
  repeated string values = 1;  // the tensors of the context, by name
  map<string, string> external_values = 2;  // a tensor from outside -> its name inside
}
message ControlFlowContextDef {
  oneof ctxt {
    CondContextDef cond_ctxt = 1;
    WhileContextDef while_ctxt = 2;
  }
}
message CondContextDef {
  string context_name = 1;
  string pred_name = 2;
  string pivot_name = 3;
  int32 branch = 4;
  ValuesDef values_def = 5;
  repeated ControlFlowContextDef nested_contexts = 6;
}
message WhileContextDef {
  string context_name = 1;
  int32 parallel_iterations = 2;
  bool back_prop = 3;
  bool swap_memory = 4;
  string pivot_name = 5;
  string pivot_for_pred_name = 6;
  string pivot_for_body_name = 7;
  repeated string loop_exit_names = 8;
  repeated string loop_enter_names = 10;
  ValuesDef values_def = 9;
  string maximum_iterations_name = 11;
  repeated ControlFlowContextDef nested_contexts = 12;
}
""")

ValuesDef = schema.message_class("tensorflow.ValuesDef")
ControlFlowContextDef = schema.message_class("tensorflow.ControlFlowContextDef")
CondContextDef = schema.message_class("tensorflow.CondContextDef")
WhileContextDef = schema.message_class("tensorflow.WhileContextDef")
