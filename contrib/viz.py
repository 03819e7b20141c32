"""Graphviz DOT export of a graph or of its partitions.

Contract: `to_dot(source)` takes a `Graph`, a `GraphDef`, or the partitions of a step (a list of
`GraphDef`s, as ``RunMetadata.partition_graphs``, or the partitioner's ``{device: GraphDef}``;
``GraphDef`` messages or the engine's) and returns DOT text. Each node is a box labelled with its
name and op, filled with its device's colour (a colour fixed by the device name, so the same
device looks the same in every export; white for no device). Data edges are solid (labelled
``:i`` for output i > 0), control edges dashed. Partitions are drawn one cluster per partition,
labelled with its device, and each ``_Send`` is joined to its ``_Recv`` by a dotted edge
labelled with the tensor.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from tensorweave.api.transfer_pairs import transfer_pairs
from tensorweave.engine.graph.graph import Graph
from tensorweave.engine.graph.graph_def import GraphDef, parse_input
from tensorweave.engine.graph.graph_def_proto import GraphDef as GraphDefMessage
from tensorweave.engine.proto.run_metadata import engine_graph_def

PALETTE = (
    "#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
    "#bc80bd", "#ccebc5", "#ffed6f", "#a6cee3", "#b2df8a", "#fdbf6f", "#cab2d6", "#f4cae4",
)


def device_color(device: str) -> str:
    """The fill colour of `device`'s nodes: the same for the same name in every process."""
    if not device:
        return "#ffffff"
    digest = hashlib.blake2b(device.encode(), digest_size=8).digest()
    return PALETTE[int.from_bytes(digest, "big") % len(PALETTE)]


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _partitions(source: Any) -> tuple[list[GraphDef], bool]:
    if isinstance(source, Graph):
        source = source.as_graph_def()
    if isinstance(source, (GraphDef, GraphDefMessage)):
        return [engine_graph_def(source)], False
    if isinstance(source, Mapping):
        source = list(source.values())
    if isinstance(source, Sequence) and all(isinstance(g, (GraphDef, GraphDefMessage))
                                            for g in source):
        return [engine_graph_def(g) for g in source], True
    raise TypeError(f"to_dot expects a Graph, a GraphDef or a list of partition GraphDefs, "
                    f"got {type(source).__name__}")


def to_dot(source: Graph | GraphDef | Sequence[GraphDef] | Mapping[str, GraphDef]) -> str:
    """DOT text for `source`; see the module docstring."""
    graphs, clustered = _partitions(source)

    def node_id(k: int, name: str) -> str:
        return _quote(f"{k}/{name}" if clustered else name)

    lines = ["digraph tensorweave {",
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=8];']
    for k, graph_def in enumerate(graphs):
        indent = "  "
        if clustered:
            devices = sorted({n.device for n in graph_def.node})
            lines.append(f"  subgraph cluster_{k} {{")
            lines.append(f"    label={_quote(', '.join(devices) or f'partition {k}')};")
            indent = "    "
        for node in graph_def.node:
            label = _quote(f"{node.name}\n{node.op}").replace("\n", "\\n")
            lines.append(f"{indent}{node_id(k, node.name)} [label={label}, "
                         f'fillcolor="{device_color(node.device)}"];')
        if clustered:
            lines.append("  }")
    for k, graph_def in enumerate(graphs):
        names = {n.name for n in graph_def.node}
        for node in graph_def.node:
            for text in node.input:
                src, index = parse_input(text)
                if src not in names:
                    continue
                attrs = ' [style=dashed]' if index < 0 else \
                    f' [label=":{index}"]' if index > 0 else ""
                lines.append(f"  {node_id(k, src)} -> {node_id(k, node.name)}{attrs};")
    if clustered:
        for (ks, send), (kr, recv) in transfer_pairs(graphs):
            lines.append(f"  {node_id(ks, send.name)} -> {node_id(kr, recv.name)} "
                         f"[style=dotted, label={_quote(send.attr['tensor_name'])}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
