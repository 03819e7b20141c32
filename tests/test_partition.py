"""The default partitioner: one partition per device, Send/Recv pairs, dedup, control edges."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

import tensorweave as tf
from tensorweave.engine.device_spec import DeviceSpec
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef, parse_input
from tensorweave.engine.kernel import KernelContext
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.runtime.device import Device, TaskSpec
from tensorweave.engine.runtime.internal_ops import transfer_key
from tensorweave.engine.runtime.placement import place
from tensorweave.engine.runtime.prune import prune
from tensorweave.plugins.partitioner import partition

TASK = "/job:localhost/replica:0/task:0"
CPU = [f"{TASK}/device:CPU:{i}" for i in range(3)]
DEVICES = [Device.create(TaskSpec(), "CPU", i, np) for i in range(3)]
INCARNATIONS = {d.name: d.incarnation for d in DEVICES}


def partitions(fetches: Sequence[tf.Tensor], feeds: Sequence[tf.Tensor] = (),
               targets: Sequence[str] = ()) -> dict[str, GraphDef]:
    """The default graph pruned, placed on three CPUs and partitioned."""
    reg = get_registries()
    graph_def = prune(tf.get_default_graph()._engine_graph_def(), [t.name for t in feeds],
                      [t.name for t in fetches], list(targets))
    placed = place(graph_def, DEVICES, DeviceSpec(job="localhost", replica=0, task=0), reg.ops,
                   reg.kernels)
    return partition(placed, INCARNATIONS)


def of_op(parts: dict[str, GraphDef], op: str) -> list[tuple[str, NodeDef]]:
    return [(device, n) for device, g in parts.items() for n in g.node if n.op == op]


def key_of(node: NodeDef) -> str:
    ctx = KernelContext(node.name, node.op, node.attr, None, np, [], [])
    return transfer_key(ctx)


def test_the_hook_provides_the_default_partitioner() -> None:
    assert get_registries().partitioner is partition


def test_one_partition_per_device_with_every_node_on_its_device() -> None:
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:1"):
        a = tf.multiply(x, 2.0, name="a")
    with tf.device("/cpu:2"):
        b = tf.add(a, 1.0, name="b")
    parts = partitions([b], [x])
    assert sorted(parts) == CPU[1:]
    for device, graph_def in parts.items():
        assert {n.device for n in graph_def.node} == {device}
        names = {n.name for n in graph_def.node}
        for node in graph_def.node:  # every input resolves inside its own partition
            assert all(parse_input(t)[0] in names for t in node.input)


def test_crossing_edges_get_send_recv_with_tf_rendezvous_keys() -> None:
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:1"):
        a = tf.multiply(x, 2.0, name="a")
    with tf.device("/cpu:0"):
        b = tf.add(a, 1.0, name="b")
    parts = partitions([b], [x])
    sends, recvs = of_op(parts, "_Send"), of_op(parts, "_Recv")
    send = next(n for d, n in sends if n.attr["tensor_name"] == "a:0")
    recv = next(n for d, n in recvs if n.attr["tensor_name"] == "a:0")
    assert (send.device, recv.device) == (CPU[1], CPU[0])
    assert send.input == ["a"]
    assert parts[CPU[0]].by_name()["b"].input[0] == recv.name
    key = key_of(send)
    assert key == key_of(recv)
    incarnation = f"{INCARNATIONS[CPU[1]]:016x}"
    assert key == f"{CPU[1]};{incarnation};{CPU[0]};a:0;0:0"
    assert re.fullmatch(r"[^;]+;[0-9a-f]{16};[^;]+;[^;]+;0:0", key)
    assert recv.attr["tensor_type"] == tf.float32 and send.attr["T"] == tf.float32


def test_one_recv_per_tensor_per_destination() -> None:
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:1"):
        a = tf.multiply(x, 2.0, name="a")
    with tf.device("/cpu:0"):
        b1, b2, b3 = a + 1.0, a * a, a - 1.0
    with tf.device("/cpu:2"):
        c1, c2 = a + 2.0, a * 3.0
    parts = partitions([b1, b2, b3, c1, c2], [x])
    recvs_of_a = [(d, n) for d, n in of_op(parts, "_Recv") if n.attr["tensor_name"] == "a:0"]
    assert sorted(d for d, _ in recvs_of_a) == [CPU[0], CPU[2]]
    sends_of_a = [n for _, n in of_op(parts, "_Send") if n.attr["tensor_name"] == "a:0"]
    assert sorted(n.attr["recv_device"] for n in sends_of_a) == [CPU[0], CPU[2]]
    assert len({key_of(n) for n in sends_of_a}) == 2


def test_a_crossing_control_edge_becomes_a_send_recv_pair() -> None:
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:1"):
        first = tf.multiply(x, 2.0, name="first")
    with tf.device("/cpu:0"), tf.control_dependencies([first.op]):
        after = tf.identity(x, name="after")
    parts = partitions([after], [x])
    after_node = parts[CPU[0]].by_name()["after"]
    controls = [t[1:] for t in after_node.input if t.startswith("^")]
    assert len(controls) == 1
    recv = parts[CPU[0]].by_name()[controls[0]]
    assert recv.op == "_Recv"
    send = next(n for _, n in of_op(parts, "_Send") if key_of(n) == key_of(recv))
    # The send carries a dummy that runs only after `first`.
    dummy = parts[CPU[1]].by_name()[parse_input(send.input[0])[0]]
    assert f"^{first.op.name}" in dummy.input


def test_a_control_edge_orders_work_across_devices_at_run_time() -> None:
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:1"):
        v = tf.Variable(0.0)
        bump = tf.assign_add(v, 1.0, name="bump")
    with tf.device("/cpu:0"), tf.control_dependencies([bump]):
        after = tf.identity(x, name="after")  # ready at once but for the control edge
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as s:
        s.run(v.initializer)
        for _ in range(5):
            metadata = tf.RunMetadata()
            s.run(after, {x: [1.0, 2.0]}, options=options, run_metadata=metadata)
            stats = {ns.node_name: ns for ds in metadata.step_stats.dev_stats
                     for ns in ds.node_stats}
            bump_end = stats["bump"].all_start_micros + stats["bump"].all_end_rel_micros
            assert stats["after"].all_start_micros >= bump_end - 1  # whole-microsecond clocks
        assert s.run(v) == np.float32(5.0)


def test_a_tf1_script_on_two_cpus_gives_tf_results_and_shows_its_transfers() -> None:
    x = tf.placeholder(tf.float32, [2, 2], name="x")
    with tf.device("/cpu:0"):
        w = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="w")
        h = tf.matmul(x, w, name="h")
    with tf.device("/cpu:1"):
        y = tf.add(h * h, 1.0, name="y")
    metadata = tf.RunMetadata()
    feed = np.array([[1.0, 0.0], [0.5, -1.0]], np.float32)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as s:
        got = s.run(y, {x: feed}, options=tf.RunOptions(output_partition_graphs=True),
                    run_metadata=metadata)
    h_np = feed @ np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    np.testing.assert_allclose(got, h_np * h_np + 1.0, rtol=1e-6)
    assert got.dtype == np.float32
    assert sorted({n.device for g in metadata.partition_graphs for n in g.node}) == CPU[:2]
    sends = [n for g in metadata.partition_graphs for n in g.node if n.op == "_Send"]
    recvs = [n for g in metadata.partition_graphs for n in g.node if n.op == "_Recv"]
    assert {n.attr["tensor_name"].s for n in sends} == {n.attr["tensor_name"].s for n in recvs}
    assert b"h:0" in {n.attr["tensor_name"].s for n in sends}
