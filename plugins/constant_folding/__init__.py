"""The ``constant_folding`` plugin: evaluate constant-only subgraphs before placement.

Contract: a node is foldable when its op has an `OpDef`, is not stateful (random ops, variables,
``_Arg``...), is not a placeholder nor a file read (`READS_FILES`), every input (data and control)
comes from a foldable node, and no output is statically known to exceed `MAX_CONSTANT_BYTES`.
Foldable nodes are evaluated once, in topological order, with the registered CPU kernels on a
throwaway CPU device; a node whose kernel is missing, needs the step, fails, or returns another
dtype or shape than declared is left alone (its error surfaces at run time), and so are its
consumers. Each evaluated output that a non-folded node consumes becomes a new ``Const`` on the
node's requested device, unless its value exceeds `MAX_CONSTANT_BYTES`, named as TF's grappler
names it, so that step stats and errors name the nodes of the graph: a node of one output that
is removed takes its place under its own name; otherwise (several outputs, or the node stays)
the constant is ``ConstantFolding/<node>-folded`` (``-folded-<i>`` for output i of several).
Folded nodes nothing needs any more are removed, with the control edges they sent (they had no
effect to order); nodes in `PassContext.protected` are always kept. A graph where nothing but
Consts would fold is returned as is, found before it is sorted. Runs after ``cse``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.engine.graph.graph_def import (
    GraphDef,
    NodeDef,
    parse_input,
    tensor_input,
    topological_order,
)
from tensorweave.engine.graph.string_array import string_nbytes
from tensorweave.engine.plugin_manager import hookimpl
from tensorweave.engine.runtime.host_eval import evaluate_on_host
from tensorweave.engine.runtime.passes import Pass, PassContext
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.cse import ORDER as CSE_ORDER

ORDER = CSE_ORDER + 10
MAX_CONSTANT_BYTES = 10 * 2**20
# A file's contents and a directory's listing may change between runs, and a server's file
# root is checked by the kernels in a step, not on the throwaway device folding runs them on.
READS_FILES = frozenset({"ReadFile", "MatchingFiles"})
NEVER_FOLDED = frozenset({"Placeholder", "PlaceholderWithDefault", "_Arg"}) | READS_FILES


def _statically_small(node: NodeDef, limit: int) -> bool:
    for dtype, shape in zip(node.output_types, node.output_shapes):
        shape = TensorShape(shape)
        # (a string's size is known only once evaluated: its value is checked then)
        if shape.is_fully_defined() and not dtype.is_string \
                and shape.num_elements() * dtype.itemsize > limit:
            return False
    return True


def _may_fold(node: NodeDef, ops: Any, limit: int) -> bool:
    """Whether `node` folds once its inputs do."""
    op_def = ops.get(node.op)
    return not (op_def is None or op_def.stateful or node.op in NEVER_FOLDED
                or not _statically_small(node, limit))


def _foldable(order: list[NodeDef], ctx: PassContext, limit: int) -> set[str]:
    ops = ctx.registries.ops
    foldable: set[str] = set()
    for node in order:
        if _may_fold(node, ops, limit) and all(parse_input(t)[0] in foldable
                                               for t in node.input):
            foldable.add(node.name)
    return foldable


def _anything_to_fold(graph_def: GraphDef, ctx: PassContext, limit: int) -> bool:
    """Whether some node besides a Const folds, found without sorting the graph: in
    topological order the first such node reads only Consts that fold."""
    ops = ctx.registries.ops
    consts = {n.name: n for n in graph_def.node if n.op == "Const"}
    for node in graph_def.node:
        if node.op == "Const":
            continue
        sources = [parse_input(t)[0] for t in node.input]
        if all(s in consts for s in sources) and _may_fold(node, ops, limit) \
                and all(_may_fold(consts[s], ops, limit) for s in sources):
            return True
    return False


def _const_node(name: str, source: NodeDef, value: np.ndarray, dtype: Any) -> NodeDef:
    value = np.array(value, order="C")  # a private copy: it may alias a kernel's input
    value.flags.writeable = False
    attr = {"value": value, "dtype": dtype, "_output_types": [dtype],
            "_output_shapes": [TensorShape(value.shape)]}
    if "_class" in source.attr:
        attr["_class"] = source.attr["_class"]
    return NodeDef(name=name, op="Const", device=source.device, attr=attr)


def _evaluate_all(order: list[NodeDef], foldable: set[str],
                  kernels: Any) -> dict[str, list[np.ndarray]]:
    """The outputs of every foldable node that could be evaluated, by node name."""
    values: dict[str, list[np.ndarray]] = {}
    for node in order:
        if node.name not in foldable:
            continue
        if node.op == "Const":  # what its kernel returns on a CPU, without the call
            values[node.name] = [np.asarray(node.attr["value"])]
            continue
        inputs = []
        for text in node.input:
            src, index = parse_input(text)
            if src not in values:
                break
            if index >= 0:
                inputs.append(values[src][index])
        else:
            result = evaluate_on_host(node.name, node.op, node.attr, node.output_types,
                                      node.output_shapes, inputs, kernels)
            if result is not None:
                values[node.name] = result
    return values


def _replace_reads(graph_def: GraphDef, values: dict[str, list[np.ndarray]],
                   limit: int) -> tuple[dict[str, NodeDef], dict[tuple[str, int], NodeDef]]:
    """Every node that was not evaluated, reading new ``Const``s instead of evaluated outputs
    (by name), and those ``Const``s (by the output they replace)."""
    by_name = graph_def.by_name()
    names = set(by_name)
    consts: dict[tuple[str, int], NodeDef] = {}

    def replacement(src: str, index: int) -> str | None:
        node, value = by_name[src], values[src][index]
        size = string_nbytes(value) if value.dtype.kind == "O" else value.nbytes
        if node.op == "Const" or size > limit:
            return None
        const = consts.get((src, index))
        if const is None:
            several = len(node.output_types) > 1
            name = base = f"ConstantFolding/{src}-folded" + (f"-{index}" if several else "")
            k = 1
            while name in names:
                name, k = f"{base}_{k}", k + 1
            names.add(name)
            const = consts[(src, index)] = _const_node(name, node, value,
                                                       node.output_types[index])
        return const.name

    rewritten: dict[str, NodeDef] = {}
    for node in graph_def.node:
        if node.name in values:
            continue
        inputs = []
        for text in node.input:
            src, index = parse_input(text)
            new = replacement(src, index) if index >= 0 and src in values else None
            inputs.append(text if new is None else tensor_input(new, 0))
        rewritten[node.name] = node.copy(input=inputs) if inputs != node.input else node
    return rewritten, consts


def fold_constants(graph_def: GraphDef, ctx: PassContext,
                   max_constant_bytes: int = MAX_CONSTANT_BYTES) -> GraphDef:
    """Replace constant-only subgraphs by ``Const`` nodes; see the module docstring."""
    if not _anything_to_fold(graph_def, ctx, max_constant_bytes):
        return graph_def
    order = topological_order(graph_def)
    if order is None:
        return graph_def
    by_name = graph_def.by_name()
    foldable = _foldable(order, ctx, max_constant_bytes)
    if all(by_name[n].op == "Const" for n in foldable):
        return graph_def
    values = _evaluate_all(order, foldable, ctx.registries.kernels)
    rewritten, consts = _replace_reads(graph_def, values, max_constant_bytes)

    # Evaluated nodes stay only where something kept still reads their data (or is protected).
    keep = set(rewritten) | {n for n in ctx.protected if n in values}
    stack = list(keep)
    while stack:
        name = stack.pop()
        for text in rewritten.get(name, by_name[name]).input:
            src, index = parse_input(text)
            if index >= 0 and src in values and src not in keep:
                keep.add(src)
                stack.append(src)
    if not consts and len(keep) == len(by_name):
        return graph_def
    # A removed node of one output is replaced in place, under its own name (TF's grappler).
    in_place = {const.name: src for (src, _), const in consts.items()
                if src not in keep and len(by_name[src].output_types) == 1}
    by_source: dict[str, list[NodeDef]] = {}
    for (src, _), const in consts.items():
        if const.name in in_place:
            const = const.copy(name=src)
        by_source.setdefault(src, []).append(const)
    out: list[NodeDef] = []
    for node in graph_def.node:
        out.extend(by_source.get(node.name, ()))
        if node.name in keep:
            node = rewritten.get(node.name, node)
            inputs = [_renamed(t, in_place) for t in node.input
                      if not t.startswith("^") or t[1:] in keep]
            out.append(node.copy(input=inputs) if inputs != node.input else node)
    return GraphDef(node=out)


def _renamed(text: str, names: dict[str, str]) -> str:
    src, index = parse_input(text)
    return tensor_input(names[src], index) if src in names else text


@hookimpl
def tensorweave_graph_passes() -> list[Pass]:
    return [Pass("constant_folding", "pre_placement", ORDER, fold_constants)]
