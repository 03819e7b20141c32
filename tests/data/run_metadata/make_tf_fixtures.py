"""A serialized ``RunMetadata`` made by TF's own classes, for ``tests/test_run_metadata.py``
(tensorweave must build the same bytes and read them back).

Usage, with a Python that has TensorFlow: ``python tests/data/run_metadata/make_tf_fixtures.py``.
Writes ``run_metadata.pb`` next to this script: step stats of two devices (timings, memory,
outputs, thread names), a cost graph node, a partition graph and a function graph.
"""

from __future__ import annotations

import pathlib

from tensorflow.core.framework import graph_pb2, types_pb2
from tensorflow.core.protobuf import config_pb2

HERE = pathlib.Path(__file__).parent


def run_metadata() -> config_pb2.RunMetadata:
    meta = config_pb2.RunMetadata()
    cpu = meta.step_stats.dev_stats.add(device="/job:localhost/replica:0/task:0/device:CPU:0")
    cpu.thread_names[7] = "inter-op 0"
    node = cpu.node_stats.add(node_name="a", all_start_micros=1_700_000_000_000_000,
                              op_start_rel_micros=1, op_end_rel_micros=5,
                              all_end_rel_micros=6, timeline_label="a = Mul(x, y)",
                              scheduled_micros=1_699_999_999_999_990, thread_id=7,
                              all_start_nanos=1_700_000_000_000_000_123)
    memory = node.memory.add(allocator_name="cpu", total_bytes=64, peak_bytes=64, live_bytes=0)
    memory.allocation_records.add(alloc_micros=3, alloc_bytes=64)
    memory.allocation_records.add(alloc_micros=4, alloc_bytes=-64)
    output = node.output.add(slot=0)
    output.tensor_description.dtype = types_pb2.DT_FLOAT
    output.tensor_description.shape.dim.add(size=3)
    output.tensor_description.allocation_description.requested_bytes = 12
    output.tensor_description.allocation_description.allocator_name = "cpu"
    output.tensor_description.allocation_description.ptr = 2**63 + 5
    node.memory_stats.temp_memory_size = 16
    node.memory_stats.persistent_tensor_alloc_ids.extend([1, 2])
    node.referenced_tensor.add(allocated_bytes=8, has_single_reference=True)
    gpu = meta.step_stats.dev_stats.add(device="/job:localhost/replica:0/task:0/device:GPU:0")
    gpu.node_stats.add(node_name="b", all_start_micros=2, all_end_rel_micros=0,
                       timeline_label="b = _Recv()", thread_id=4_294_967_295)
    cost = meta.cost_graph.node.add(name="a", device=cpu.device, id=3, compute_cost=9,
                                    is_final=True)
    cost.input_info.add(preceding_node=1, preceding_port=0)
    cost.output_info.add(size=12, alias_input_port=-1, dtype=types_pb2.DT_FLOAT)
    cost.control_input.extend([2])
    meta.cost_graph.cost.add(cost=1.5, dimension="flops")
    graph = graph_pb2.GraphDef()
    graph.node.add(name="a", op="Mul", input=["x", "y"], device=cpu.device)
    graph.versions.producer = 27
    meta.partition_graphs.append(graph)
    meta.function_graphs.add().pre_optimization_graph.CopyFrom(graph)
    return meta


def main() -> None:
    (HERE / "run_metadata.pb").write_bytes(run_metadata().SerializeToString())


if __name__ == "__main__":
    main()
