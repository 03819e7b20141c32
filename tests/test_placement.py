"""Placement: requested and partial device specs, colocation, kernels, errors and logging."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.device_spec import DeviceSpec
from tensorweave.engine.graph.graph_def import GraphDef
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.runtime.device import Device, TaskSpec
from tensorweave.engine.runtime.placement import place
from tensorweave.engine.runtime.prune import prune

TASK = "/job:localhost/replica:0/task:0"
CPU0, CPU1 = f"{TASK}/device:CPU:0", f"{TASK}/device:CPU:1"
TWO_CPUS = tf.ConfigProto(device_count={"CPU": 2})


def placed(fetches: list[object], feed_dict: dict[object, object] | None = None,
           config: tf.ConfigProto = TWO_CPUS) -> tuple[list[object], dict[str, str]]:
    """The fetched values and the device of every node that ran."""
    metadata = tf.RunMetadata()
    with tf.Session(config=config) as s:
        values = s.run(fetches, feed_dict, options=tf.RunOptions(output_partition_graphs=True),
                       run_metadata=metadata)
    return values, {n.name: n.device for g in metadata.partition_graphs for n in g.node}


def test_explicit_cpu1_and_unrequested_nodes_on_cpu0() -> None:
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:1"):
        a = tf.multiply(x, 2.0, name="a")
    b = tf.add(a, 1.0, name="b")
    (value,), devices = placed([b], {x: [1.0, 2.0]})
    np.testing.assert_array_equal(value, np.array([3.0, 5.0], np.float32))
    assert (devices["a"], devices["b"]) == (CPU1, CPU0)


def test_partial_specs_merge_with_enclosing_scopes() -> None:
    with tf.device("/job:localhost/replica:0"):
        with tf.device("/device:CPU:1"):
            inner_type = tf.constant(1.0, name="inner_type")
    with tf.device("/cpu:1"):
        with tf.device("/job:localhost"):
            keeps_outer_type = tf.constant(2.0, name="keeps_outer_type")
        with tf.device(None):
            cleared = tf.constant(3.0, name="cleared")
    with tf.device("/job:localhost/task:0"):
        task_only = tf.constant(4.0, name="task_only")
    assert inner_type.op.device == "/job:localhost/replica:0/device:CPU:1"
    _, devices = placed([inner_type, keeps_outer_type, cleared, task_only])
    assert devices["inner_type"] == devices["keeps_outer_type"] == CPU1
    assert devices["cleared"] == devices["task_only"] == CPU0


def test_colocate_with_follows_the_op_and_ignores_outer_scopes() -> None:
    x = tf.placeholder(tf.float32, [], name="x")
    with tf.device("/cpu:1"):
        a = tf.identity(x, name="a")
    with tf.device("/cpu:0"), tf.colocate_with(a):
        b = tf.identity(x, name="b")
    assert b.op.get_attr("_class") == ["loc:@a"]
    (value,), devices = placed([b], {x: 2.0})
    assert value == np.float32(2.0)
    assert devices["b"] == CPU1


def test_a_variable_is_placed_with_its_assigns_and_read() -> None:
    with tf.device("/cpu:1"):
        v = tf.Variable(1.0, name="v")
    bump = tf.assign_add(v, 1.0, name="bump")
    doubled = v * 2.0
    options = tf.RunOptions(output_partition_graphs=True)
    devices: dict[str, str] = {}
    with tf.Session(config=TWO_CPUS) as s:
        for fetch, expected in ((v.initializer, None), (bump, 2.0), (doubled, 4.0)):
            metadata = tf.RunMetadata()
            value = s.run(fetch, options=options, run_metadata=metadata)
            assert value == (None if expected is None else np.float32(expected))
            devices.update((n.name, n.device) for g in metadata.partition_graphs for n in g.node)
    for name in ("v", "v/Assign", "v/read", "bump"):
        assert devices[name] == CPU1, name
    assert devices[doubled.op.name] == CPU0


def test_a_variable_stays_on_one_device_across_signatures() -> None:
    w = tf.Variable(5.0, name="w")
    with tf.device("/cpu:1"):
        bump = tf.assign_add(w, 1.0, name="bump")
    with tf.Session(config=TWO_CPUS) as s:
        s.run(w.initializer)
        assert s.run(bump) == np.float32(6.0)


def test_the_whole_graph_is_placed_once_so_signatures_agree() -> None:
    w = tf.Variable(5.0, name="w")
    with tf.colocate_with(w), tf.device("/cpu:1"):
        pinned = tf.constant(2.0, name="pinned")  # pulls w's whole group to CPU:1
    pinned.op._set_device("/device:CPU:1")
    total = pinned + w
    with tf.Session(config=TWO_CPUS) as s:
        s.run(w.initializer)  # this signature alone holds nothing that asks for CPU:1
        assert s.run(total) == np.float32(7.0)


def test_an_unsatisfiable_request_names_node_request_and_devices() -> None:
    with tf.device("/cpu:5"):
        bad = tf.constant(1.0, name="bad")
    with tf.Session(config=TWO_CPUS) as s:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            s.run(bad)
    message = str(info.value)
    for part in ("bad", "CPU:5", CPU0, CPU1, "allow_soft_placement"):
        assert part in message
    assert info.value.op.name == "bad"


def test_soft_placement_relaxes_an_unsatisfiable_request() -> None:
    x = tf.placeholder(tf.float32, [], name="x")
    with tf.device("/cpu:5"):
        relaxed = tf.multiply(x, 3.0, name="relaxed")
    config = tf.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=True)
    (value,), devices = placed([relaxed], {x: 1.0}, config=config)
    assert value == np.float32(3.0)
    assert devices["relaxed"] == CPU0


def test_conflicting_colocation_needs_soft_placement() -> None:
    x = tf.placeholder(tf.float32, [], name="x")
    with tf.device("/cpu:1"):
        a = tf.identity(x, name="a")
    with tf.colocate_with(a), tf.device("/cpu:0"):
        b = tf.identity(a, name="b")
    with pytest.raises(tf.errors.InvalidArgumentError, match="colocate"):
        placed([b], {x: 1.0})
    config = tf.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=True)
    (value,), devices = placed([b], {x: 1.0}, config=config)
    assert value == np.float32(1.0) and devices["a"] == devices["b"]


def _with_fake_accelerator(graph_def: GraphDef, soft: bool) -> dict[str, str]:
    """Place on a CPU and a device type no plugin has kernels for (but the runtime's own)."""
    task = TaskSpec()
    devices = [Device.create(task, "CPU", 0, np), Device.create(task, "FAKE", 0, np)]
    reg = get_registries()
    out = place(graph_def, devices, DeviceSpec(job="localhost", replica=0, task=0), reg.ops,
                reg.kernels, allow_soft_placement=soft)
    return {n.name: n.device for n in out.node}


def test_a_node_goes_only_where_a_kernel_exists() -> None:
    with tf.device("/device:FAKE:0"):
        m = tf.multiply(tf.constant(1.0, name="c"), 2.0, name="m")
    graph_def = prune(tf.get_default_graph()._engine_graph_def(), [], [m.name], [])
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        _with_fake_accelerator(graph_def, soft=False)
    assert "No kernel for op" in str(info.value)
    assert "FAKE:0" in str(info.value)
    devices = _with_fake_accelerator(graph_def, soft=True)
    assert devices["m"] == f"{TASK}/device:CPU:0"
    assert devices["_retval_m_0_0"] == devices["m"]


def test_log_device_placement_prints_each_node(capsys: pytest.CaptureFixture[str]) -> None:
    x = tf.placeholder(tf.float32, [], name="x")
    with tf.device("/cpu:1"):
        a = tf.add(x, 1.0, name="a")
    config = tf.ConfigProto(device_count={"CPU": 2}, log_device_placement=True)
    with tf.Session(config=config) as s:
        s.run(a, {x: 1.0})
    err = capsys.readouterr().err
    assert f"a: (AddV2): {CPU1}" in err
    assert f"{a.op.inputs[1].op.name}: (Const): {CPU1}" in err


def test_a_device_type_the_task_lacks_is_reported_as_a_missing_device() -> None:
    x = tf.placeholder(tf.float32, [2, 2], name="x")
    with tf.device("/gpu:0"):
        a = tf.matmul(x, x, name="a")
    feed = {x: np.ones([2, 2], np.float32)}
    with tf.Session(config=tf.ConfigProto(device_count={"GPU": 0})) as s, \
            pytest.raises(tf.errors.InvalidArgumentError) as info:
        s.run(a, feed)
    assert "no device matches" in str(info.value) and "No kernel" not in str(info.value)
    soft = tf.ConfigProto(device_count={"GPU": 0}, allow_soft_placement=True)
    values, devices = placed([a], feed, config=soft)
    np.testing.assert_array_equal(values[0], np.full([2, 2], 2.0, np.float32))
    assert devices["a"] == CPU0
