"""GraphDef and NodeDef: the graph as plain data, as the pipeline and the wire see it.

Contract: a `NodeDef` has TF's field names (`name`, `op`, `input`, `device`, `attr`). Inputs are
``"node"`` (output 0), ``"node:i"`` or ``"^node"`` (control). ``attr["_output_types"]`` and
``attr["_output_shapes"]`` record each output's dtype and static shape, so the runtime never needs
the Python `Graph`. `topological_order` sorts the nodes of a graph for the passes that rewrite it.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import attrs


@attrs.define
class NodeDef:
    """One node: TF's NodeDef fields."""

    name: str
    op: str
    input: list[str] = attrs.field(factory=list)
    device: str = ""
    attr: dict[str, Any] = attrs.field(factory=dict)

    def copy(self, **changes: Any) -> NodeDef:
        fields = {"name": self.name, "op": self.op, "input": list(self.input),
                  "device": self.device, "attr": dict(self.attr)}
        fields.update(changes)
        return NodeDef(**fields)

    @property
    def output_types(self) -> list[Any]:
        return self.attr.get("_output_types", [])

    @property
    def output_shapes(self) -> list[Any]:
        return self.attr.get("_output_shapes", [])


@attrs.define
class GraphDef:
    """A list of nodes (TF's ``GraphDef.node``)."""

    node: list[NodeDef] = attrs.field(factory=list)

    def by_name(self) -> dict[str, NodeDef]:
        return {n.name: n for n in self.node}


def parse_input(text: str) -> tuple[str, int]:
    """``"a:1"`` -> ("a", 1); ``"a"`` -> ("a", 0); ``"^a"`` -> ("a", -1) for a control edge."""
    if text.startswith("^"):
        return text[1:], -1
    name, sep, index = text.rpartition(":")
    if sep and index.isdigit():
        return name, int(index)
    return text, 0


def tensor_input(name: str, index: int) -> str:
    """The input string for output `index` of node `name` (``-1``: control edge)."""
    if index < 0:
        return f"^{name}"
    return name if index == 0 else f"{name}:{index}"


def topological_order(graph_def: GraphDef) -> list[NodeDef] | None:
    """The nodes with every node after its data and control inputs; ``None`` for a cycle.

    Ties keep the graph's own order, so an already sorted graph comes back in its order.
    """
    position = {n.name: i for i, n in enumerate(graph_def.node)}
    pending = [0] * len(graph_def.node)
    consumers: list[list[int]] = [[] for _ in graph_def.node]
    for i, node in enumerate(graph_def.node):
        for text in node.input:
            src = position.get(parse_input(text)[0])
            if src is not None:
                consumers[src].append(i)
                pending[i] += 1
    ready = deque(i for i, p in enumerate(pending) if p == 0)
    order = []
    while ready:
        i = ready.popleft()
        order.append(graph_def.node[i])
        for j in consumers[i]:
            pending[j] -= 1
            if pending[j] == 0:
                ready.append(j)
    return order if len(order) == len(graph_def.node) else None
