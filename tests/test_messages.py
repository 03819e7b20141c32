"""Runtime records to wire values and back, and the validation of what comes in."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.client.config import GPUOptions
from tensorweave.engine.distributed import messages
from tensorweave.engine.graph.graph_def import NodeDef
from tensorweave.engine.runtime.device import DeviceAttributes
from tensorweave.engine.runtime.executor import NodeStats
from tensorweave.engine.runtime.passes import PassRecord
from tensorweave.plugins.grpc import wire


def over_the_wire(value: object) -> object:
    return wire.decode(wire.encode(value).frame()).body


def graph() -> list[NodeDef]:
    const = NodeDef("c", "Const", [], "/job:a/replica:0/task:0/device:CPU:0", {
        "value": np.arange(6, dtype=np.int16).reshape(2, 3), "dtype": tf.int16,
        "_class": ["loc:@c"], "_output_types": [tf.int16],
        "_output_shapes": [tf.TensorShape([2, 3])]})
    ident = NodeDef("i", "Identity", ["c", "^c"], "", {
        "T": tf.int16, "_output_types": [tf.int16], "_output_shapes": [tf.TensorShape(None)]})
    return [const, ident]


def test_a_graph_round_trips_with_its_constants_as_tensors() -> None:
    nodes = messages.graph_from_wire(over_the_wire(messages.graph_to_wire(graph())), "test")
    assert [(n.name, n.op, n.input, n.device) for n in nodes] == [
        ("c", "Const", [], "/job:a/replica:0/task:0/device:CPU:0"), ("i", "Identity",
                                                                     ["c", "^c"], "")]
    value = nodes[0].attr["value"]
    assert value.dtype == np.int16 and value.shape == (2, 3)
    np.testing.assert_array_equal(value, np.arange(6).reshape(2, 3))
    assert nodes[0].attr["_class"] == ["loc:@c"]
    assert nodes[1].output_shapes[0].dims is None


@pytest.mark.parametrize("wire_graph, message", [
    ("nodes", "must be a list of nodes"),
    ([["a", "NoOp", [], ""]], "must be \\[name, op, inputs, device, attrs\\]"),
    ([["", "NoOp", [], "", {}]], "malformed name"),
    ([["a", "NoOp", [1], "", {}]], "inputs' must be a list of strings"),
    ([["a", "NoOp", [], "", {"_output_types": ["float"], "_output_shapes": [None]}]],
     "_output_types"),
    ([["a", "NoOp", [], "", {}], ["a", "NoOp", [], "", {}]], "two nodes named 'a'"),
    ([["a", "NoOp", ["ghost"], "", {}]], "input 'ghost'"),
    ([["a", "NoOp", [], "", {}], ["b", "NoOp", ["a:0"], "", {}]], "input 'a:0'"),
])
def test_malformed_graphs_are_refused(wire_graph: object, message: str) -> None:
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        messages.graph_from_wire(wire_graph, "RegisterGraphRequest")


def test_extend_may_refer_to_nodes_the_session_already_has() -> None:
    known = {n.name: n for n in graph()}
    (node,) = messages.graph_from_wire([["j", "Identity", ["i"], "", {}]], "Extend", known)
    assert node.input == ["i"]


def test_config_round_trips_and_is_type_checked() -> None:
    config = tf.ConfigProto(allow_soft_placement=True, operation_timeout_in_ms=250,
                            device_count={"CPU": 2},
                            gpu_options=GPUOptions(allow_growth=True,
                                                   per_process_gpu_memory_fraction=0.5),
                            device_filters=["/job:ps", "/job:worker/task:1"],
                            graph_options=tf.GraphOptions(build_cost_model=3))
    back = messages.config_from_wire(over_the_wire(messages.config_to_wire(config)), "Create")
    assert back == config and back.timeout_seconds == 0.25
    assert messages.config_from_wire({"future_field": 1}, "Create") == tf.ConfigProto()
    for bad, field in (({"allow_soft_placement": "yes"}, "allow_soft_placement"),
                       ({"device_count": {"CPU": "2"}}, "device_count"),
                       ({"gpu_options": 3}, "config"),
                       ({"device_filters": ["/job:ps", 3]}, "device_filters")):
        with pytest.raises(tf.errors.InvalidArgumentError, match=field):
            messages.config_from_wire(bad, "Create")


def test_records_round_trip() -> None:
    devices = [DeviceAttributes("/job:a/replica:0/task:0/device:CPU:0", "CPU", 1 << 62)]
    stats = {"d": [NodeStats("n", "Add", 10, 2, 77, "n = Add()")]}
    records = [PassRecord("cse", "pre_placement", 9, 7)]
    wire_devices = over_the_wire(messages.devices_to_wire(devices))
    assert messages.devices_from_wire(wire_devices, "m") == devices
    assert messages.stats_from_wire(over_the_wire(messages.stats_to_wire(stats)), "m") == stats
    wire_records = over_the_wire(messages.records_to_wire(records))
    assert messages.records_from_wire(wire_records, "m") == records
    with pytest.raises(tf.errors.InvalidArgumentError, match="devices"):
        messages.devices_from_wire([["d", "CPU", "1"]], "m")
    with pytest.raises(tf.errors.InvalidArgumentError, match="stats"):
        messages.stats_from_wire({"d": [["n", "Add", 1]]}, "m")


def test_errors_travel_as_code_and_message() -> None:
    error = messages.error_from_wire(over_the_wire(messages.error_to_wire(
        tf.errors.ResourceExhaustedError(None, None, "out of memory on ps"))), "m")
    assert type(error) is tf.errors.ResourceExhaustedError
    assert error.message == "out of memory on ps"
    internal = messages.error_from_wire(messages.error_to_wire(KeyError("k")), "m")
    assert type(internal) is tf.errors.InternalError and "KeyError" in internal.message


def test_fields_checks_presence_and_types() -> None:
    assert messages.fields({"a": 1, "b": 2}, "M", a=int, b=float) == [1, 2.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="'a' is missing"):
        messages.fields({}, "M", a=int)
    with pytest.raises(tf.errors.InvalidArgumentError, match="'a' must be an integer"):
        messages.fields({"a": True}, "M", a=int)
    for bad in (-1.0, float("nan"), "1"):
        with pytest.raises(tf.errors.InvalidArgumentError, match="'timeout'"):
            messages.optional_float({"timeout": bad}, "M", "timeout")
    assert messages.optional_float({}, "M", "timeout") is None


def test_wide_unsigned_constants_and_tensors_cross_the_wire_exactly() -> None:
    values = {np.uint16: np.array([0, 65535], np.uint16),
              np.uint32: np.array([0, 2**32 - 1], np.uint32),
              np.uint64: np.array([0, 2**63, 2**64 - 1], np.uint64)}
    nodes = [NodeDef(f"c{i}", "Const", [], "", {
        "value": value, "dtype": tf.as_dtype(np_type), "_output_types": [tf.as_dtype(np_type)],
        "_output_shapes": [tf.TensorShape(value.shape)]})
        for i, (np_type, value) in enumerate(values.items())]
    back = messages.graph_from_wire(over_the_wire(messages.graph_to_wire(nodes)), "test")
    for node, (np_type, value) in zip(back, values.items()):
        assert node.attr["dtype"] == tf.as_dtype(np_type)
        assert node.attr["value"].dtype == np_type
        assert node.attr["value"].tolist() == value.tolist()
    tensors = over_the_wire({"t": values[np.uint64], "s": values[np.uint32][1]})
    assert tensors["t"].dtype == np.uint64 and tensors["t"].tolist() == [0, 2**63, 2**64 - 1]
    assert tensors["s"].dtype == np.uint32 and int(tensors["s"]) == 2**32 - 1
