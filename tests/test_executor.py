"""The executor: plans, inter-op parallelism, async recvs, and how errors end a step."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import errors
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.proto.run_metadata import op_of
from tensorweave.engine.runtime.device import Device, TaskSpec
from tensorweave.engine.runtime.executor import Executor, ExecutorPlan, StepContext
from tensorweave.engine.runtime.rendezvous import Rendezvous
from tensorweave.engine.tensor_shape import TensorShape

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"
N = 700  # a MatMul of two N x N float32 matrices takes milliseconds


def _intervals(metadata: tf.RunMetadata, op: str) -> list[tuple[int, int]]:
    return [(ns.all_start_micros, ns.all_start_micros + ns.all_end_rel_micros)
            for ds in metadata.step_stats.dev_stats for ns in ds.node_stats if op_of(ns) == op]


def _two_matmuls(threads: int, steps: int) -> list[list[tuple[int, int]]]:
    a = tf.placeholder(tf.float32, [N, N])
    b = tf.placeholder(tf.float32, [N, N])
    first, second = tf.matmul(a, a), tf.matmul(b, b)
    feed = {a: np.ones((N, N), np.float32), b: np.full((N, N), 2.0, np.float32)}
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    out = []
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=threads)) as s:
        for _ in range(steps):
            metadata = tf.RunMetadata()
            x, y = s.run([first, second], feed, options=options, run_metadata=metadata)
            assert x[0, 0] == np.float32(N) and y[0, 0] == np.float32(4 * N)
            out.append(_intervals(metadata, "MatMul"))
    return out


def _overlap(intervals: list[tuple[int, int]]) -> bool:
    (s1, e1), (s2, e2) = intervals
    return s1 < e2 and s2 < e1


def test_two_independent_expensive_ops_overlap_on_the_inter_op_pool() -> None:
    runs = _two_matmuls(threads=2, steps=5)
    assert all(len(r) == 2 for r in runs)
    # Threads may be descheduled on a loaded machine; one overlapping step proves the point.
    assert any(_overlap(r) for r in runs)


def test_one_inter_op_thread_runs_them_one_after_the_other() -> None:
    runs = _two_matmuls(threads=1, steps=3)
    assert not any(_overlap(r) for r in runs)


def test_step_stats_hold_each_node_once_with_its_thread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSORWEAVE_FUSION", "0")  # each of the user's nodes runs as itself
    x = tf.placeholder(tf.float32, [3])
    y = (x + 1.0) * 2.0
    metadata = tf.RunMetadata()
    with tf.Session() as s:
        s.run(y, {x: [1.0, 2.0, 3.0]},
              options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
              run_metadata=metadata)
    (dev,) = metadata.step_stats.dev_stats
    assert dev.device == CPU0
    ops = sorted(op_of(ns) for ns in dev.node_stats)
    assert ops == sorted(["_Arg", "Const", "Const", "AddV2", "Mul", "_Retval"])
    for ns in dev.node_stats:
        assert ns.all_end_rel_micros >= 0 and ns.thread_id > 0
        assert ns.timeline_label.startswith(f"{ns.node_name} = {op_of(ns)}(")
    (mul,) = [ns for ns in dev.node_stats if op_of(ns) == "Mul"]
    add = next(ns.node_name for ns in dev.node_stats if op_of(ns) == "AddV2")
    assert mul.timeline_label.startswith(f"{mul.node_name} = Mul({add}, ")  # TF's label


def test_the_first_error_is_raised_with_node_op_and_device() -> None:
    x = tf.placeholder(tf.float32, None, name="x")
    y = tf.placeholder(tf.float32, None, name="y")
    bad = tf.multiply(x, y, name="bad")
    with tf.Session() as s:
        with pytest.raises(errors.InvalidArgumentError) as info:
            s.run(bad + 1.0, {x: [1.0, 2.0], y: [1.0, 2.0, 3.0]})
        assert info.value.op is bad.op and info.value.node_def == bad.op.node_def
        assert f"[[node bad (op: Mul) on device {CPU0} (defined at {__file__}:" \
            in info.value.message
        np.testing.assert_array_equal(s.run(bad, {x: [1.0, 2.0], y: [3.0, 4.0]}),
                                      np.array([3.0, 8.0], np.float32))


@pytest.mark.parametrize("failing, waiting", [("/cpu:1", "/cpu:0"), ("/cpu:0", "/cpu:1")])
def test_a_failure_in_one_partition_ends_a_peer_waiting_on_its_recv(
        failing: str, waiting: str) -> None:
    x = tf.placeholder(tf.float32, None, name="x")
    y = tf.placeholder(tf.float32, None, name="y")
    with tf.device(failing):
        bad = tf.multiply(x, y, name="bad")
    with tf.device(waiting):
        out = tf.add(bad, tf.identity(x), name="out")
    config = tf.ConfigProto(device_count={"CPU": 2}, operation_timeout_in_ms=30_000)
    with tf.Session(config=config) as s:
        start = time.monotonic()
        with pytest.raises(errors.InvalidArgumentError, match="node bad"):
            s.run(out, {x: [1.0, 2.0], y: [1.0, 2.0, 3.0]})
        assert time.monotonic() - start < 5.0  # the timeout is 30 s: nobody waited for it
        np.testing.assert_array_equal(s.run(out, {x: [1.0, 2.0], y: [2.0, 2.0]}),
                                      np.array([3.0, 6.0], np.float32))


def _node(name: str, op: str, inputs: list[str], out: list[Any], **attr: Any) -> NodeDef:
    return NodeDef(name=name, op=op, input=inputs, device=CPU0, attr={
        **attr, "_output_types": out, "_output_shapes": [TensorShape([2])] * len(out)})


def _run(graph_def: GraphDef, args: dict[int, Any],
         rendezvous: Rendezvous) -> tuple[list[BaseException | None], dict[int, Any]]:
    device = Device.create(TaskSpec(), "CPU", 0, np)
    plan = ExecutorPlan.build(graph_def, device, get_registries())
    done: list[BaseException | None] = []
    retvals: dict[int, Any] = {}
    Executor(plan, None).run_async(StepContext(1, rendezvous, args, retvals), done.append)
    return done, retvals


def test_a_kernel_error_aborts_the_rendezvous_and_calls_done_once() -> None:
    f32 = tf.float32
    graph_def = GraphDef(node=[
        _node("a", "_Arg", [], [f32], T=f32, index=0),
        _node("b", "_Arg", [], [f32], T=f32, index=1),
        _node("bad", "Mul", ["a", "b"], [f32], T=f32),
        _node("ret", "_Retval", ["bad"], [], T=f32, index=0),
    ])
    rendezvous = Rendezvous(1)
    done, retvals = _run(graph_def, {0: np.ones(2, np.float32), 1: np.ones(3, np.float32)},
                         rendezvous)
    assert len(done) == 1 and isinstance(done[0], errors.InvalidArgumentError)
    assert rendezvous.status is done[0]
    assert retvals == {}


def test_a_recv_waits_for_its_send_and_then_the_step_finishes() -> None:
    f32 = tf.float32
    transfer = {"tensor_name": "t:0", "send_device": CPU1, "send_device_incarnation": 1,
                "recv_device": CPU0, "client_terminated": False}
    graph_def = GraphDef(node=[
        _node("recv", "_Recv", [], [f32], tensor_type=f32, **transfer),
        _node("double", "AddV2", ["recv", "recv"], [f32], T=f32),
        _node("ret", "_Retval", ["double"], [], T=f32, index=0),
    ])
    rendezvous = Rendezvous(1)
    done, retvals = _run(graph_def, {}, rendezvous)
    assert done == []  # parked on the recv, no thread blocked
    rendezvous.send(f"{CPU1};{1:016x};{CPU0};t:0;0:0", np.array([1.0, 2.0], np.float32))
    assert done == [None]
    np.testing.assert_array_equal(retvals[0], np.array([2.0, 4.0], np.float32))


def test_a_missing_kernel_is_reported_when_the_plan_is_built() -> None:
    f32 = tf.float32
    graph_def = GraphDef(node=[_node("c", "Const", [], [f32], dtype=f32,
                                     value=np.ones(2, np.float32))])
    fake = Device.create(TaskSpec(), "FAKE", 0, np)
    with pytest.raises(errors.NotFoundError) as info:
        ExecutorPlan.build(graph_def, fake, get_registries())
    for part in ("Const", "FAKE", fake.name, "CPU"):
        assert part in info.value.message


def test_a_cycle_is_refused() -> None:
    f32 = tf.float32
    graph_def = GraphDef(node=[_node("a", "Identity", ["b"], [f32], T=f32),
                               _node("b", "Identity", ["a"], [f32], T=f32)])
    with pytest.raises(errors.InvalidArgumentError, match="cycle"):
        ExecutorPlan.build(graph_def, Device.create(TaskSpec(), "CPU", 0, np), get_registries())
