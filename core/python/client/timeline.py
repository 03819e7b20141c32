"""Alias of ``tensorflow.python.client.timeline``: a traced step's stats as a Chrome trace.

Contract: ``Timeline(run_metadata.step_stats).generate_chrome_trace_format()`` is the JSON text
of `tensorweave.api.chrome_trace.to_chrome_trace` for that step. TF's `graph` argument is accepted
and unused. A transfer's flow arrow joins its ``_Send`` and ``_Recv`` by the edge they are named
after, as TF's timeline does from the stats alone; `partition_graphs` (tensorweave's own
argument: ``run_metadata.partition_graphs`` of a run with ``output_partition_graphs=True``)
names each arrow after its tensor instead.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tensorweave.api.chrome_trace import to_chrome_trace
from tensorweave.engine.client.config import RunMetadata


class Timeline:
    """One traced step, ready to be written as a Chrome trace."""

    def __init__(self, step_stats: Any, graph: Any = None,
                 partition_graphs: Sequence[Any] = ()) -> None:
        self._metadata = RunMetadata()
        self._metadata.step_stats.CopyFrom(step_stats)
        self._partition_graphs = list(partition_graphs)

    def generate_chrome_trace_format(self, show_dataflow: bool = True,
                                     show_memory: bool = False) -> str:
        """The trace as JSON text; `show_dataflow=False` leaves out the transfer arrows."""
        trace = to_chrome_trace(self._metadata, self._partition_graphs)
        if not show_dataflow:
            trace["traceEvents"] = [e for e in trace["traceEvents"] if e["ph"] not in "sf"]
        return json.dumps(trace)
