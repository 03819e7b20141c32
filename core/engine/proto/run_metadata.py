"""TF's ``RunMetadata`` and the protos it holds (step stats, cost graph) as protobuf classes.

Contract: `RunMetadata`, `StepStats`, `DeviceStepStats`, `NodeExecStats`,
`AllocatorMemoryUsed`, `AllocationRecord`, `NodeOutput`, `MemoryStats`,
`AllocationDescription`, `TensorDescription` and `CostGraphDef` are protobuf message classes
(see `schema`) with TF's message names, field names and numbers (``step_stats``,
``cost_graph``, ``tensor_description``, ``allocation_description`` and ``RunMetadata`` of
``config``), so their bytes and text are TF's and ``FileWriter.add_run_metadata`` writes what
TensorBoard reads. ``RunMetadata.partition_graphs`` holds framework `GraphDef` messages.

One field is tensorweave's own: ``RunMetadata.pass_records = 1000`` (far from TF's numbers),
a `PassRecord` (package ``tensorweave``) per graph pass the step's compile ran: its name, phase
and node counts before and after. TF has no such field; a TF reader keeps it as an unknown field.

A node's op type is not a field of TF's ``NodeExecStats``: `op_of` reads it from the timeline
label (``"name = Op(input, ...)"``), as TF's timeline does.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from tensorweave.engine.graph import graph_def_proto
from tensorweave.engine.proto import schema
from tensorweave.engine.proto.framework import GraphDef

__all__ = ["AllocationDescription", "AllocationRecord", "AllocatorMemoryUsed", "CostGraphDef",
           "DeviceStepStats", "MemoryStats", "NodeExecStats", "NodeOutput", "PassRecord",
           "RunMetadata", "StepStats", "TensorDescription", "engine_graph_def",
           "fill_run_metadata", "op_of"]

schema.define("tensorweave/engine/allocation_description.proto", """
syntax = "proto3";
package tensorflow;
message AllocationDescription {
  int64 requested_bytes = 1;
  int64 allocated_bytes = 2;
  string allocator_name = 3;
  int64 allocation_id = 4;
  bool has_single_reference = 5;
  uint64 ptr = 6;
}
message TensorDescription {
  DataType dtype = 1;
  TensorShapeProto shape = 2;
  AllocationDescription allocation_description = 4;
}
""")

schema.define("tensorweave/engine/step_stats.proto", """
syntax = "proto3";
package tensorflow;
message AllocationRecord {
  int64 alloc_micros = 1;
  int64 alloc_bytes = 2;  // negative: a deallocation
}
message AllocatorMemoryUsed {
  string allocator_name = 1;
  int64 total_bytes = 2;
  int64 peak_bytes = 3;
  int64 live_bytes = 4;
  repeated AllocationRecord allocation_records = 6;
  int64 allocator_bytes_in_use = 5;
}
message NodeOutput {
  int32 slot = 1;
  TensorDescription tensor_description = 3;
}
message MemoryStats {
  int64 temp_memory_size = 1;
  int64 persistent_memory_size = 3;
  repeated int64 persistent_tensor_alloc_ids = 5;
  int64 device_temp_memory_size = 2;
  int64 device_persistent_memory_size = 4;
  repeated int64 device_persistent_tensor_alloc_ids = 6;
}
message NodeExecStats {
  string node_name = 1;
  int64 all_start_micros = 2;
  int64 op_start_rel_micros = 3;
  int64 op_end_rel_micros = 4;
  int64 all_end_rel_micros = 5;
  repeated AllocatorMemoryUsed memory = 6;
  repeated NodeOutput output = 7;
  string timeline_label = 8;  // "name = Op(input, ...)"
  int64 scheduled_micros = 9;
  uint32 thread_id = 10;
  repeated AllocationDescription referenced_tensor = 11;
  MemoryStats memory_stats = 12;
  int64 all_start_nanos = 13;
  int64 op_start_rel_nanos = 14;
  int64 op_end_rel_nanos = 15;
  int64 all_end_rel_nanos = 16;
  int64 scheduled_nanos = 17;
}
message DeviceStepStats {
  string device = 1;
  repeated NodeExecStats node_stats = 2;
  map<uint32, string> thread_names = 3;
}
message StepStats {
  repeated DeviceStepStats dev_stats = 1;
}
""")

schema.define("tensorweave/engine/cost_graph.proto", """
syntax = "proto3";
package tensorflow;
message CostGraphDef {
  message Node {
    string name = 1;
    string device = 2;
    int32 id = 3;
    message InputInfo {
      int32 preceding_node = 1;
      int32 preceding_port = 2;
    }
    repeated InputInfo input_info = 4;
    message OutputInfo {
      int64 size = 1;
      int64 alias_input_port = 2;
      TensorShapeProto shape = 3;
      DataType dtype = 4;
    }
    repeated OutputInfo output_info = 5;
    int64 temporary_memory_size = 6;
    int64 persistent_memory_size = 12;
    int64 host_temp_memory_size = 10;
    int64 device_temp_memory_size = 11;
    int64 device_persistent_memory_size = 16;
    int64 compute_cost = 9;
    int64 compute_time = 14;
    int64 memory_time = 15;
    bool is_final = 7;
    repeated int32 control_input = 8;
    bool inaccurate = 17;
  }
  repeated Node node = 1;
  message AggregatedCost {
    float cost = 1;
    string dimension = 2;
  }
  repeated AggregatedCost cost = 2;
}
""")

schema.define("tensorweave/engine/pass_record.proto", """
syntax = "proto3";
package tensorweave;
message PassRecord {
  string name = 1;
  string phase = 2;
  int64 nodes_before = 3;
  int64 nodes_after = 4;
}
""")

schema.define("tensorweave/engine/run_metadata.proto", """
syntax = "proto3";
package tensorflow;
message RunMetadata {
  StepStats step_stats = 1;
  CostGraphDef cost_graph = 2;
  repeated GraphDef partition_graphs = 3;
  message FunctionGraphs {
    repeated GraphDef partition_graphs = 1;
    GraphDef pre_optimization_graph = 2;
    GraphDef post_optimization_graph = 3;
  }
  repeated FunctionGraphs function_graphs = 4;
  repeated tensorweave.PassRecord pass_records = 1000;  // tensorweave's own
}
""")

AllocationDescription = schema.message_class("tensorflow.AllocationDescription")
TensorDescription = schema.message_class("tensorflow.TensorDescription")
AllocationRecord = schema.message_class("tensorflow.AllocationRecord")
AllocatorMemoryUsed = schema.message_class("tensorflow.AllocatorMemoryUsed")
NodeOutput = schema.message_class("tensorflow.NodeOutput")
MemoryStats = schema.message_class("tensorflow.MemoryStats")
NodeExecStats = schema.message_class("tensorflow.NodeExecStats")
DeviceStepStats = schema.message_class("tensorflow.DeviceStepStats")
StepStats = schema.message_class("tensorflow.StepStats")
CostGraphDef = schema.message_class("tensorflow.CostGraphDef")
PassRecord = schema.message_class("tensorweave.PassRecord")
RunMetadata = schema.message_class("tensorflow.RunMetadata")


def fill_run_metadata(run_metadata: Any, stats: Mapping[str, Iterable[Any]],
                      partitions: Iterable[Any], records: Iterable[Any]) -> None:
    """Replace `run_metadata`'s contents with one step's, in place (as TF's ``Session.run``
    parses its result into the caller's message): `stats` maps each device to the executor's
    node records (``node_name``, ``all_start_micros``, ``all_end_rel_micros``, ``thread_id``,
    ``timeline_label``), `partitions` are the engine's partition GraphDefs and `records` the
    compile's pass records (``name``, ``phase``, ``nodes_before``, ``nodes_after``)."""
    run_metadata.Clear()
    for device, nodes in stats.items():
        dev_stats = run_metadata.step_stats.dev_stats.add(device=device)
        for node in nodes:
            # The executor runs a node in one go: its op span is the whole of its span.
            dev_stats.node_stats.add(
                node_name=node.node_name, all_start_micros=node.all_start_micros,
                op_end_rel_micros=node.all_end_rel_micros,
                all_end_rel_micros=node.all_end_rel_micros, timeline_label=node.timeline_label,
                thread_id=node.thread_id & 0xFFFFFFFF)  # uint32 in TF's proto
    for graph_def in partitions:
        run_metadata.partition_graphs.append(_partition_message(graph_def))
    for record in records:
        run_metadata.pass_records.add(name=record.name, phase=record.phase,
                                      nodes_before=record.nodes_before,
                                      nodes_after=record.nodes_after)


# A compiled step's partitions are built once and never change, and every run of the step with
# output_partition_graphs hands out the same objects: each is written as a message once.
_PARTITION_MESSAGES: dict[int, tuple[weakref.ref[Any], GraphDef]] = {}


def _partition_message(graph_def: Any) -> GraphDef:
    """`graph_def_proto.to_proto(graph_def)`, cached while the engine's `graph_def` lives."""
    key = id(graph_def)
    cached = _PARTITION_MESSAGES.get(key)
    if cached is not None and cached[0]() is graph_def:
        return cached[1]
    message = graph_def_proto.to_proto(graph_def)
    if message is not graph_def:  # a message is copied as it is by append
        _PARTITION_MESSAGES[key] = (
            weakref.ref(graph_def, lambda _, key=key: _PARTITION_MESSAGES.pop(key, None)),
            message)
    return message


def op_of(node_stats: Any) -> str:
    """The op type in `node_stats`'s timeline label (``"name = Op(...)"``); "" without one."""
    _, found, rest = node_stats.timeline_label.partition(" = ")
    return rest.partition("(")[0] if found else ""


def engine_graph_def(graph_def: Any) -> Any:
    """The engine's form of `graph_def`: a ``GraphDef`` message read by
    `graph_def_proto.from_proto`, an engine GraphDef as it is."""
    if isinstance(graph_def, GraphDef):
        return graph_def_proto.from_proto(graph_def)
    return graph_def
