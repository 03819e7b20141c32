"""`RunMetadata` as a Chrome trace (the JSON that Perfetto and chrome://tracing open).

Contract: `to_chrome_trace(run_metadata)` needs the step stats of a traced run
(``RunOptions(trace_level=FULL_TRACE)``) and, to draw transfers, its partition graphs
(``output_partition_graphs=True``, or passed as `partition_graphs`: ``GraphDef`` messages or
the engine's GraphDefs). It returns ``{"traceEvents": [...], "displayTimeUnit": "ms"}`` with one
process per device (named after it), one thread per executor thread, a complete event
(``"ph": "X"``, named after the op that TF's timeline reads from the timeline label, ``args``
holding node and op) per executed node with ``ts``/``dur`` in microseconds from the step's first
node, and a flow (``"ph": "s"`` on the ``_Send``, ``"ph": "f"`` on its ``_Recv``, sharing an
``id``) per transfer whose two ends both ran. Without partition graphs the transfers are paired
from the stats alone, as TF's timeline pairs them: a ``_send_<edge>`` with the ``_recv_<edge>``
of the same edge (named after the edge). `write_chrome_trace` writes the same as a file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from tensorweave.api.transfer_pairs import transfer_pairs
from tensorweave.engine.graph.graph_def import GraphDef
from tensorweave.engine.proto.run_metadata import engine_graph_def, op_of

_Slice = tuple[int, int, int, int]  # pid, tid, ts, dur


def to_chrome_trace(run_metadata: Any,
                    partition_graphs: Sequence[Any] | None = None) -> dict[str, Any]:
    """The trace-event JSON object of one traced step; see the module docstring."""
    graphs = [engine_graph_def(g) for g in (run_metadata.partition_graphs
                                              if partition_graphs is None else partition_graphs)]
    dev_stats = run_metadata.step_stats.dev_stats
    starts = [ns.all_start_micros for ds in dev_stats for ns in ds.node_stats]
    if not starts:
        raise ValueError("RunMetadata holds no step stats; run the step with "
                         "RunOptions(trace_level=RunOptions.FULL_TRACE)")
    origin = min(starts)
    events: list[dict[str, Any]] = []
    slices: dict[tuple[str, str], _Slice] = {}
    for pid, ds in enumerate(dev_stats):
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                       "args": {"name": ds.device}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
                       "args": {"sort_index": pid}})
        tids: dict[int, int] = {}
        for ns in ds.node_stats:
            tid = tids.get(ns.thread_id)
            if tid is None:
                tid = tids[ns.thread_id] = len(tids)
                events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                               "args": {"name": f"thread {ns.thread_id}"}})
            ts = ns.all_start_micros - origin
            op = op_of(ns)
            events.append({"ph": "X", "cat": "Op", "name": op, "pid": pid, "tid": tid,
                           "ts": ts, "dur": ns.all_end_rel_micros,
                           "args": {"name": ns.node_name, "op": op}})
            slices[(ds.device, ns.node_name)] = (pid, tid, ts, ns.all_end_rel_micros)
    for flow_id, (name, send, recv) in enumerate(_transfers(graphs, dev_stats)):
        start, end = slices.get(send), slices.get(recv)
        if start is None or end is None:
            continue
        events.append({"ph": "s", "cat": "DataFlow", "name": name, "id": flow_id,
                       "pid": start[0], "tid": start[1], "ts": start[2]})
        # The arrow ends inside the recv's slice: when the value came, or as the recv began.
        arrival = min(max(start[2] + start[3], end[2]), end[2] + end[3])
        events.append({"ph": "f", "bp": "e", "cat": "DataFlow", "name": name, "id": flow_id,
                       "pid": end[0], "tid": end[1], "ts": arrival})
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def _transfers(graphs: list[GraphDef],
               dev_stats: Any) -> list[tuple[str, tuple[str, str], tuple[str, str]]]:
    """(tensor or edge name, (device, send node), (device, recv node)) of each transfer: from
    the partition graphs when there are some, else by the edge the nodes are named after."""
    if graphs:
        return [(send.attr["tensor_name"], (send.device, send.name), (recv.device, recv.name))
                for (_, send), (_, recv) in transfer_pairs(graphs)]
    sends, recvs = {}, {}
    for ds in dev_stats:
        for ns in ds.node_stats:
            for op, prefix, ends in (("_Send", "_send_", sends), ("_Recv", "_recv_", recvs)):
                if op_of(ns) == op and ns.node_name.startswith(prefix):
                    ends[ns.node_name[len(prefix):]] = (ds.device, ns.node_name)
    return [(edge, sends[edge], recvs[edge]) for edge in sends if edge in recvs]


def write_chrome_trace(run_metadata: Any, path: str | os.PathLike[str],
                       partition_graphs: Sequence[Any] | None = None) -> None:
    """Write `to_chrome_trace(run_metadata)` as JSON to `path`."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(to_chrome_trace(run_metadata, partition_graphs), f)
