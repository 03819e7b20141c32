"""``tw.graph_util``: pruning a `GraphDef` to what some nodes need, and freezing variables.

Contract: `extract_sub_graph` keeps the nodes `dest_nodes` depend on (data and control inputs,
transitively), in the graph def's order; a destination that is not a node raises
`AssertionError` naming it (TF's ``"... is not in graph"``). `convert_variables_to_constants`
does that too, then replaces each kept ``VariableV2`` node (all of them, those named in
`variable_names_whitelist`, or all but `variable_names_blacklist`) by a ``Const`` holding the
variable's current value in `sess`, fetched in one run, under the same name; so importing the
result into a fresh graph computes the same outputs with no variables to initialize. Nodes that
read a frozen variable keep their inputs; nothing else changes. Variables read inside ``If`` or
``While`` branches are not frozen there (those branches keep their ``VariableV2`` nodes).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs
import numpy as np

from tensorweave.engine.graph.graph_def import GraphDef, NodeDef, parse_input
from tensorweave.engine.graph.graph_def_proto import GraphDef as ProtoGraphDef
from tensorweave.engine.graph.graph_def_proto import VersionDef
from tensorweave.engine.tensor_shape import TensorShape

__all__ = ["convert_variables_to_constants", "extract_sub_graph"]

_VARIABLE_OPS = frozenset({"VariableV2"})


def _like(graph_def: GraphDef, nodes: list[NodeDef]) -> ProtoGraphDef:
    versions = getattr(graph_def, "versions", None)
    return ProtoGraphDef(node=nodes, versions=attrs.evolve(versions) if versions else VersionDef(),
                         add_shapes=getattr(graph_def, "_add_shapes", False))


def extract_sub_graph(graph_def: GraphDef, dest_nodes: Sequence[str]) -> ProtoGraphDef:
    """The nodes `dest_nodes` need, as a new `GraphDef`."""
    if not hasattr(graph_def, "node"):
        raise TypeError("graph_def must be a graph_pb2.GraphDef proto.")
    if isinstance(dest_nodes, str):
        raise TypeError("dest_nodes must be a list.")
    by_name = {n.name: n for n in graph_def.node}
    for name in dest_nodes:
        assert name in by_name, f"{name} is not in graph"  # noqa: S101 - TF's error type
    keep: set[str] = set()
    stack = list(dest_nodes)
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        stack.extend(parse_input(t)[0] for t in by_name[name].input)
    return _like(graph_def, [n.copy() for n in graph_def.node if n.name in keep])


def _selected(nodes: Iterable[NodeDef], whitelist: Any, blacklist: Any) -> list[NodeDef]:
    allowed = None if whitelist is None else set(whitelist)
    banned = set(blacklist or ())
    return [n for n in nodes if n.op in _VARIABLE_OPS
            and (allowed is None or n.name in allowed) and n.name not in banned]


def convert_variables_to_constants(sess: Any, input_graph_def: GraphDef,
                                   output_node_names: Sequence[str],
                                   variable_names_whitelist: Sequence[str] | None = None,
                                   variable_names_blacklist: Sequence[str] | None = None
                                   ) -> ProtoGraphDef:
    """`input_graph_def` cut to `output_node_names`, with its variables frozen to constants."""
    sub = extract_sub_graph(input_graph_def, output_node_names)
    variables = _selected(sub.node, variable_names_whitelist, variable_names_blacklist)
    values = sess.run([f"{n.name}:0" for n in variables]) if variables else []
    frozen = {n.name: value for n, value in zip(variables, values)}
    out = []
    for node in sub.node:
        if node.name not in frozen:
            out.append(node)
            continue
        value = np.asarray(frozen[node.name], dtype=node.attr["dtype"].np_type)
        attr = {"dtype": node.attr["dtype"], "value": value}
        if "_output_types" in node.attr:  # keep the runtime's bookkeeping of Graph nodes
            attr["_output_types"] = node.attr["_output_types"]
            attr["_output_shapes"] = [TensorShape(value.shape)]
        out.append(NodeDef(name=node.name, op="Const", input=[], device=node.device, attr=attr))
    sub.node = out
    return sub
