"""``tw.graph_util``: pruning a `GraphDef` to what some nodes need, and freezing variables.

Contract: `extract_sub_graph` keeps the nodes `dest_nodes` depend on (data and control inputs,
transitively), in the graph def's order; a destination that is not a node raises
`AssertionError` naming it (TF's ``"... is not in graph"``). `convert_variables_to_constants`
does that too, then replaces each kept ``VariableV2`` node (all of them, those named in
`variable_names_whitelist`, or all but `variable_names_blacklist`) by a ``Const`` holding the
variable's current value in `sess`, fetched in one run, under the same name; so importing the
result into a fresh graph computes the same outputs with no variables to initialize. Nodes that
read a frozen variable keep their inputs; nothing else changes. A resource variable's
``VarHandleOp`` is frozen the same way (its value read through ``<name>/Read/ReadVariableOp``,
which `ResourceVariable` and TF make; a `ValueError` names a handle without one), and the ops
reading its handle become what they compute: ``ReadVariableOp`` an ``Identity``,
``ResourceGather`` a ``GatherV2`` (with a ``<name>/axis`` constant), as TF does. Variables read
inside ``If`` or ``While`` branches are not frozen there (those branches keep their
``VariableV2`` nodes).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph_def import parse_input
from tensorweave.engine.graph.graph_def_proto import GraphDef, NodeDef, to_proto
from tensorweave.engine.graph.tensor_proto import shape_to_proto, tensor_to_proto

__all__ = ["convert_variables_to_constants", "extract_sub_graph"]

_VARIABLE_OPS = frozenset({"VariableV2", "VarHandleOp"})


def extract_sub_graph(graph_def: GraphDef, dest_nodes: Sequence[str]) -> GraphDef:
    """The nodes `dest_nodes` need, as a new `GraphDef` (with `graph_def`'s versions and
    library)."""
    if not hasattr(graph_def, "node"):
        raise TypeError("graph_def must be a graph_pb2.GraphDef proto.")
    if isinstance(dest_nodes, str):
        raise TypeError("dest_nodes must be a list.")
    graph_def = to_proto(graph_def)
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
    out = GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    out.node.extend(n for n in graph_def.node if n.name in keep)
    return out


def _selected(nodes: Iterable[NodeDef], whitelist: Any, blacklist: Any) -> list[NodeDef]:
    allowed = None if whitelist is None else set(whitelist)
    banned = set(blacklist or ())
    return [n for n in nodes if n.op in _VARIABLE_OPS
            and (allowed is None or n.name in allowed) and n.name not in banned]


def convert_variables_to_constants(sess: Any, input_graph_def: GraphDef,
                                   output_node_names: Sequence[str],
                                   variable_names_whitelist: Sequence[str] | None = None,
                                   variable_names_blacklist: Sequence[str] | None = None
                                   ) -> GraphDef:
    """`input_graph_def` cut to `output_node_names`, with its variables frozen to constants."""
    sub = extract_sub_graph(input_graph_def, output_node_names)
    variables = _selected(sub.node, variable_names_whitelist, variable_names_blacklist)
    values = sess.run([_value_of(sess, n) for n in variables]) if variables else []
    frozen = {n.name: value for n, value in zip(variables, values)}
    handles = {n.name for n in variables if n.op == "VarHandleOp"}
    out = []
    for node in sub.node:
        if node.name not in frozen:
            out.extend(_reading_frozen(node, handles))
            continue
        dtype = dtypes.as_dtype(node.attr["dtype"].type)
        value = np.asarray(frozen[node.name], dtype=dtype.np_type)
        const = NodeDef(name=node.name, op="Const", device=node.device)
        const.attr["dtype"].type = node.attr["dtype"].type
        tensor_to_proto(value, proto=const.attr["value"].tensor)
        if "_output_shapes" in node.attr:
            shape_to_proto(value.shape, const.attr["_output_shapes"].list.shape.add())
        out.append(const)
    del sub.node[:]
    sub.node.extend(out)
    return sub


def _value_of(sess: Any, node: NodeDef) -> str:
    """The tensor holding the variable `node`'s value in `sess`'s graph."""
    if node.op != "VarHandleOp":
        return f"{node.name}:0"
    read = f"{node.name}/Read/ReadVariableOp"
    try:
        sess.graph.get_operation_by_name(read)
    except KeyError:
        raise ValueError(f"Cannot freeze the resource variable {node.name}: its graph has no "
                         f"{read} to read its value") from None
    return f"{read}:0"


def _reading_frozen(node: NodeDef, handles: set[str]) -> list[NodeDef]:
    """`node`, or what it becomes when it reads a frozen resource variable."""
    data = [t for t in node.input if not t.startswith("^")]
    if not data or parse_input(data[0])[0] not in handles:
        return [node]
    dtype = node.attr["dtype"]
    if node.op == "ReadVariableOp":
        identity = NodeDef(name=node.name, op="Identity", input=node.input, device=node.device)
        identity.attr["T"].CopyFrom(dtype)
        return [identity]
    if node.op == "ResourceGather":
        axis = NodeDef(name=f"{node.name}/axis", op="Const", device=node.device)
        axis.attr["dtype"].type = dtypes.int32.as_datatype_enum
        tensor_to_proto(np.array(0, np.int32), proto=axis.attr["value"].tensor)
        gather = NodeDef(name=node.name, op="GatherV2", device=node.device,
                         input=[*node.input[:2], axis.name, *node.input[2:]])
        gather.attr["Tparams"].CopyFrom(dtype)
        gather.attr["Tindices"].CopyFrom(node.attr["Tindices"])
        gather.attr["Taxis"].type = dtypes.int32.as_datatype_enum
        gather.attr["batch_dims"].i = node.attr["batch_dims"].i if "batch_dims" in node.attr \
            else 0
        return [axis, gather]
    raise ValueError(f"Cannot freeze the resource variable {data[0]}: node {node.name} "
                     f"({node.op}) uses its handle")
