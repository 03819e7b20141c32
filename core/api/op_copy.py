"""Copies of a graph's ops: the loop gradient replays a body's forward ops, a tape's jacobian
replays a backward pass per output element.

Contract: `copy_ops(ops, mapping)` creates, in the default graph and in the order given, one op
per op of `ops` with its type and attrs (but ``_class``: a copy is colocated by its inputs),
each input looked up in `mapping` (a tensor it does not hold is used as it is, so a function
graph captures it), and adds each original output -> copy to `mapping`. Control inputs on ops
not copied are dropped. A copy's outputs keep the static shapes of the originals, which may know
more (a shape read from a recorded buffer is not a constant).
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine.graph.graph import Operation, Tensor, get_default_graph

__all__ = ["copy_ops", "grouped_inputs"]


def grouped_inputs(op: Operation, inputs: list[Tensor]) -> list[Any]:
    """`inputs` (flat) grouped as `Graph.create_op` takes them: one list per list argument,
    which holds the rest (or ``N`` each when the op has several)."""
    args = op.op_def.args
    lists = sum(a.is_list for a in args)
    each = len(inputs) - (len(args) - lists) if lists == 1 else op.attrs.get("N", 0)
    grouped: list[Any] = []
    position = 0
    for arg in args:
        if arg.is_list:
            grouped.append(inputs[position:position + each])
            position += each
        else:
            grouped.append(inputs[position])
            position += 1
    return grouped


def copy_ops(ops: list[Operation], mapping: dict[Tensor, Tensor]) -> None:
    """Copy `ops` into the default graph (see the module docstring)."""
    graph = get_default_graph()
    copied: dict[Operation, Operation] = {}
    for node in ops:
        attrs_ = {k: v for k, v in node.attrs.items() if k != "_class"}
        control = [copied[c] for c in node.control_inputs if c in copied]
        inputs = [mapping.get(t, t) for t in node.inputs]
        with graph.control_dependencies(control):
            new = graph.create_op(node.type, grouped_inputs(node, inputs), attrs_,
                                  node.name.rsplit("/", 1)[-1])
        copied[node] = new
        for old, out in zip(node.outputs, new.outputs):
            out.set_shape(old.shape)
            mapping[old] = out
