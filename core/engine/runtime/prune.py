"""Pruning: the subgraph a step needs, with its feeds and fetches made explicit.

Contract: `prune` returns a new `GraphDef` holding only the nodes that the fetches and targets
reach through data and control edges. Each fed tensor becomes an ``_Arg`` node (attr ``index`` =
its position in `feeds`), which cuts off the tensor's producer; each fetch gets a ``_Retval``
(``index`` = its position in `fetches`). The nodes named in `ran` already ran in this partial
run (see `tensorweave.engine.client.partial_run`): control edges on them are satisfied and
dropped, and they run again only where a data edge that no feed cuts still needs them. An
unknown name raises `NotFoundError`. Nodes keep their original relative order.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from tensorweave.engine import errors
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef, parse_input, tensor_input


def _checked(name: str, by_name: dict[str, NodeDef], what: str,
             is_tensor: bool = True) -> tuple[NodeDef, int]:
    node_name, index = parse_input(name)
    node = by_name.get(node_name)
    if node is None or is_tensor and not 0 <= index < len(node.output_types):
        raise errors.NotFoundError(None, None, f"{what} '{name}' does not exist in the graph.")
    return node, index


def prune(graph_def: GraphDef, feeds: Sequence[str], fetches: Sequence[str],
          targets: Sequence[str], ran: Collection[str] = ()) -> GraphDef:
    by_name = graph_def.by_name()
    fed: dict[tuple[str, int], str] = {}
    extra: list[NodeDef] = []
    for k, name in enumerate(feeds):
        node, index = _checked(name, by_name, "Feed tensor")
        arg = f"_arg_{node.name.replace('/', '_')}_{index}_{k}"
        fed[(node.name, index)] = arg
        extra.append(NodeDef(name=arg, op="_Arg", attr={
            "T": node.output_types[index], "index": k,
            "_output_types": [node.output_types[index]],
            "_output_shapes": [node.output_shapes[index]],
        }))

    def rewire(text: str) -> str:
        src, index = parse_input(text)
        arg = fed.get((src, index))
        return text if arg is None else tensor_input(arg, 0)

    for k, name in enumerate(fetches):
        node, index = _checked(name, by_name, "Fetch tensor")
        extra.append(NodeDef(name=f"_retval_{node.name.replace('/', '_')}_{index}_{k}",
                             op="_Retval", input=[rewire(tensor_input(node.name, index))],
                             attr={"T": node.output_types[index], "index": k,
                                   "_output_types": [], "_output_shapes": []}))
    roots = [n.name for n in extra if n.op == "_Retval"]
    for name in targets:
        node, _ = _checked(name, by_name, "Target node", is_tensor=False)
        roots.append(node.name)

    nodes = {n.name: n for n in extra} | by_name
    needed: set[str] = set()
    stack = list(roots)
    rewired: dict[str, NodeDef] = {}
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        node = nodes[name]
        if node.op != "_Arg":
            new_inputs = [rewire(t) if not t.startswith("^") else t for t in node.input
                          if t[1:] not in ran or not t.startswith("^")]
            if new_inputs != node.input:
                node = node.copy(input=new_inputs)
            rewired[name] = node
        for text in node.input:
            stack.append(parse_input(text)[0])
    ordered = [rewired.get(n.name, n) for n in extra if n.op == "_Arg" and n.name in needed]
    ordered += [rewired[n.name] for n in graph_def.node if n.name in needed]
    ordered += [rewired[n.name] for n in extra if n.op == "_Retval"]
    return GraphDef(node=ordered)
