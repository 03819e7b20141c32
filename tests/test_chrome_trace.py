"""`tensorweave.api.chrome_trace`: RunMetadata as Chrome trace-event JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import tensorweave as tf
from tensorweave.api.chrome_trace import to_chrome_trace, write_chrome_trace

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"


def traced_two_device_step(partition_graphs: bool = True) -> tf.RunMetadata:
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device("/cpu:1"):
        a = tf.multiply(x, 2.0, name="a")
    with tf.device("/cpu:0"):
        b = tf.add(a, 1.0, name="b")
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                            output_partition_graphs=partition_graphs)
    metadata = tf.RunMetadata()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as s:
        s.run(b, {x: [1.0, 2.0, 3.0]}, options=options, run_metadata=metadata)
    return metadata


def _by_phase(trace: dict[str, Any], ph: str) -> list[dict[str, Any]]:
    return [e for e in trace["traceEvents"] if e["ph"] == ph]


def test_one_process_per_device_and_one_complete_event_per_node() -> None:
    metadata = traced_two_device_step()
    trace = to_chrome_trace(metadata)
    processes = {e["pid"]: e["args"]["name"] for e in _by_phase(trace, "M")
                 if e["name"] == "process_name"}
    assert sorted(processes.values()) == [CPU0, CPU1]
    complete = _by_phase(trace, "X")
    expected = {(ds.device, ns.node_name) for ds in metadata.step_stats.dev_stats
                for ns in ds.node_stats}
    assert {(processes[e["pid"]], e["args"]["name"]) for e in complete} == expected
    mul = next(e for e in complete if e["args"]["name"] == "a")
    assert (mul["name"], mul["cat"], processes[mul["pid"]]) == ("Mul", "Op", CPU1)
    assert min(e["ts"] for e in complete) == 0
    assert all(isinstance(e["ts"], int) and e["dur"] >= 0 for e in complete)


def test_timestamps_are_the_node_stats_in_microseconds() -> None:
    metadata = traced_two_device_step()
    stats = {ns.node_name: ns for ds in metadata.step_stats.dev_stats for ns in ds.node_stats}
    origin = min(ns.all_start_micros for ns in stats.values())
    for event in _by_phase(to_chrome_trace(metadata), "X"):
        ns = stats[event["args"]["name"]]
        assert event["ts"] == ns.all_start_micros - origin
        assert event["dur"] == ns.all_end_rel_micros


def test_threads_are_numbered_per_process_and_named() -> None:
    trace = to_chrome_trace(traced_two_device_step())
    named = {(e["pid"], e["tid"]) for e in _by_phase(trace, "M") if e["name"] == "thread_name"}
    assert {(e["pid"], e["tid"]) for e in _by_phase(trace, "X")} <= named


def test_a_flow_joins_each_send_to_its_recv() -> None:
    metadata = traced_two_device_step()
    trace = to_chrome_trace(metadata)
    nodes = {n.name: n for g in metadata.partition_graphs for n in g.node}
    complete = _by_phase(trace, "X")
    starts, ends = _by_phase(trace, "s"), _by_phase(trace, "f")
    sends = [e for e in complete if e["name"] == "_Send"]
    assert len(starts) == len(ends) == len(sends) >= 1
    for start in starts:
        end = next(e for e in ends if e["id"] == start["id"])
        assert (start["cat"], start["name"]) == (end["cat"], end["name"])
        assert end["bp"] == "e"
        send = next(e for e in sends if (e["pid"], e["tid"], e["ts"]) ==
                    (start["pid"], start["tid"], start["ts"]))
        recv = next(e for e in complete if e["name"] == "_Recv" and e["pid"] == end["pid"]
                    and e["ts"] <= end["ts"] <= e["ts"] + e["dur"])
        assert send["pid"] != recv["pid"]
        for event in (send, recv):
            assert nodes[event["args"]["name"]].attr["tensor_name"].s == start["name"].encode()
    assert len({e["id"] for e in starts}) == len(starts)


def test_partition_graphs_can_be_passed_separately() -> None:
    with_graphs = traced_two_device_step()
    graphs = list(with_graphs.partition_graphs)
    del with_graphs.partition_graphs[:]
    assert _by_phase(to_chrome_trace(with_graphs, graphs), "s")


def test_without_partition_graphs_transfers_pair_by_their_edge() -> None:
    # TF's timeline.Timeline(run_metadata.step_stats) needs nothing but the stats.
    from tensorweave.python.client import timeline

    metadata = traced_two_device_step(partition_graphs=False)
    trace = to_chrome_trace(metadata)
    starts, ends = _by_phase(trace, "s"), _by_phase(trace, "f")
    assert len(starts) == len(ends) == 1 and starts[0]["name"] == ends[0]["name"]
    assert starts[0]["pid"] != ends[0]["pid"]
    assert json.loads(timeline.Timeline(metadata.step_stats).generate_chrome_trace_format())


def test_untraced_metadata_is_refused() -> None:
    with pytest.raises(ValueError, match="FULL_TRACE"):
        to_chrome_trace(tf.RunMetadata())


def test_write_chrome_trace_writes_loadable_json(tmp_path: Path) -> None:
    metadata = traced_two_device_step()
    path = tmp_path / "step.json"
    write_chrome_trace(metadata, path)
    assert json.loads(path.read_text()) == json.loads(json.dumps(to_chrome_trace(metadata)))
