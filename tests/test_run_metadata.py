"""`tensorweave.engine.proto.run_metadata`: RunMetadata and StepStats as protobuf messages,
against bytes made by TF's own classes (``tests/data/run_metadata/make_tf_fixtures.py``), and
how ``Session.run`` fills them."""

from __future__ import annotations

import pathlib

import tensorweave as tf
from tensorweave.engine.graph.graph_def import GraphDef as EngineGraphDef
from tensorweave.engine.graph.graph_def import NodeDef as EngineNodeDef
from tensorweave.engine.proto.framework import DATA_TYPES, GraphDef
from tensorweave.engine.proto.run_metadata import (
    NodeExecStats,
    RunMetadata,
    engine_graph_def,
    fill_run_metadata,
    op_of,
)
from tensorweave.engine.runtime.executor import NodeStats
from tensorweave.engine.runtime.passes import PassRecord

TF_BYTES = (pathlib.Path(__file__).parent / "data" / "run_metadata" / "run_metadata.pb"
            ).read_bytes()
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"


def run_metadata() -> RunMetadata:
    """The RunMetadata the fixture script builds with TF's classes, built the same way."""
    meta = RunMetadata()
    cpu = meta.step_stats.dev_stats.add(device=CPU0)
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
    output.tensor_description.dtype = DATA_TYPES["DT_FLOAT"]
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
    cost.output_info.add(size=12, alias_input_port=-1, dtype=DATA_TYPES["DT_FLOAT"])
    cost.control_input.extend([2])
    meta.cost_graph.cost.add(cost=1.5, dimension="flops")
    graph = GraphDef()
    graph.node.add(name="a", op="Mul", input=["x", "y"], device=cpu.device)
    graph.versions.producer = 27
    meta.partition_graphs.append(graph)
    meta.function_graphs.add().pre_optimization_graph.CopyFrom(graph)
    return meta


def test_bytes_are_tfs_and_parse_back() -> None:
    assert run_metadata().SerializeToString() == TF_BYTES
    parsed = RunMetadata.FromString(TF_BYTES)
    assert parsed == run_metadata()
    assert parsed.step_stats.dev_stats[1].node_stats[0].thread_id == 2**32 - 1
    assert parsed.partition_graphs[0].node[0].input == ["x", "y"]


def test_pass_records_are_field_1000_and_tf_bytes_stay_tfs_without_them() -> None:
    meta = RunMetadata.FromString(TF_BYTES)
    meta.pass_records.add(name="cse", phase="pre_placement", nodes_before=5, nodes_after=4)
    data = meta.SerializeToString()
    assert data.startswith(TF_BYTES)  # appended after TF's fields: a TF reader skips it
    assert data[len(TF_BYTES):len(TF_BYTES) + 2] == b"\xc2\x3e"  # key of field 1000, bytes
    assert RunMetadata.FromString(data).pass_records[0].nodes_after == 4


def test_fill_replaces_the_contents_in_place() -> None:
    meta = RunMetadata.FromString(TF_BYTES)
    stats = {CPU0: [NodeStats("n", "AddV2", 10, 2, 2**40 + 7, "n = AddV2(x, y)")]}
    partition = EngineGraphDef(node=[EngineNodeDef("n", "AddV2", ["x", "y"], CPU0)])
    fill_run_metadata(meta, stats, [partition], [PassRecord("cse", "pre_placement", 3, 2)])
    ((device, (node,)),) = [(d.device, d.node_stats) for d in meta.step_stats.dev_stats]
    assert device == CPU0 and not meta.HasField("cost_graph") and not meta.function_graphs
    assert (node.node_name, node.all_start_micros, node.op_end_rel_micros,
            node.all_end_rel_micros) == ("n", 10, 2, 2)
    assert node.thread_id == 7 and op_of(node) == "AddV2"  # TF's thread ids are uint32
    assert [n.name for n in meta.partition_graphs[0].node] == ["n"]
    assert [(r.name, r.nodes_before, r.nodes_after) for r in meta.pass_records] == [
        ("cse", 3, 2)]


def test_op_of_reads_the_timeline_label() -> None:
    assert op_of(NodeExecStats(timeline_label="x/y = MatMul(a, b)")) == "MatMul"
    assert op_of(NodeExecStats(timeline_label="c = Const()")) == "Const"
    assert op_of(NodeExecStats(node_name="unlabelled")) == ""


def test_engine_graph_def_reads_messages_and_keeps_engine_graphs() -> None:
    engine = EngineGraphDef(node=[EngineNodeDef("c", "NoOp", ["^b"], CPU0)])
    message = GraphDef()
    message.node.add(name="c", op="NoOp", input=["^b"], device=CPU0)
    back = engine_graph_def(message)
    assert [(n.name, n.op, n.input, n.device) for n in back.node] == [("c", "NoOp", ["^b"], CPU0)]
    assert engine_graph_def(engine) is engine


def test_session_run_fills_the_callers_message() -> None:
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.multiply(x, 2.0, name="y")
    meta = RunMetadata.FromString(TF_BYTES)  # stale contents, as from an earlier step
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)
    with tf.Session() as sess:
        sess.run(y, {x: [1.0, 2.0]}, options=options, run_metadata=meta)
        assert isinstance(meta, tf.RunMetadata) and not meta.HasField("cost_graph")
        assert {ns.node_name for d in meta.step_stats.dev_stats for ns in d.node_stats} >= {"y"}
        assert "y" in {n.name for g in meta.partition_graphs for n in g.node}
        sess.run(y, {x: [1.0, 2.0]}, run_metadata=meta)  # untraced: the stats are cleared
        assert not meta.HasField("step_stats") and not meta.partition_graphs


def test_tf_pb2_paths_name_the_same_classes() -> None:
    from tensorweave.core.framework import (
        allocation_description_pb2,
        cost_graph_pb2,
        step_stats_pb2,
        tensor_description_pb2,
    )
    from tensorweave.core.protobuf import config_pb2
    from tensorweave.engine.proto import run_metadata as module

    assert config_pb2.RunMetadata is RunMetadata is tf.RunMetadata
    assert (step_stats_pb2.StepStats, step_stats_pb2.NodeExecStats) == (
        module.StepStats, NodeExecStats)
    assert cost_graph_pb2.CostGraphDef is module.CostGraphDef
    assert tensor_description_pb2.TensorDescription is module.TensorDescription
    assert allocation_description_pb2.AllocationDescription is module.AllocationDescription


def test_a_partition_is_written_once_and_each_run_gets_its_own_copy() -> None:
    from tensorweave.engine.proto import run_metadata as module

    partition = EngineGraphDef(node=[EngineNodeDef("n", "NoOp", [], CPU0)])
    first, second = RunMetadata(), RunMetadata()
    fill_run_metadata(first, {}, [partition], [])
    cached = module._PARTITION_MESSAGES[id(partition)][1]
    first.partition_graphs[0].node[0].name = "changed"  # the caller's copy, not the cache's
    fill_run_metadata(second, {}, [partition], [])
    assert module._PARTITION_MESSAGES[id(partition)][1] is cached
    assert [n.name for n in second.partition_graphs[0].node] == ["n"]
    key = id(partition)
    del partition
    assert key not in module._PARTITION_MESSAGES  # forgotten with the partition
