"""`import_graph_def`: a `GraphDef`'s nodes as ops of the default graph (``tf.import_graph_def``).

Contract: every node of `graph_def` becomes an op named ``<name>/<node name>`` (``name``
defaults to ``"import"``, made unique like any name scope, inside the current scope; ``""``
keeps the node names, which must then be free). Ops are created through `Graph.create_op` in
dependency order, so attrs, dtypes and shapes are checked and inferred as for any op; the
nodes' ``_output_types``/``_output_shapes`` are not trusted. Devices are kept (merged over the
current device scope), ``loc:@`` colocation groups are renamed with the prefix, and control
inputs are restored.

`input_map` maps ``"node:i"`` (or ``"node"`` for output 0, ``"^node"`` for a control input) to a
`Tensor` (an `Operation` for ``^`` keys) of the graph that replaces that input wherever the
graph def uses it. `return_elements` names tensors (``"node:i"``) and operations (``"node"``) of
`graph_def`, returned in order as the imported objects; without it the result is ``None``.

Everything that can be checked without building is checked first, raising `ValueError` (TF's
importer raises it for all of these): a node name that is invalid or repeated, an op type not
registered (also inside function attrs; the message names it), an attr the op does not have,
an input that names no node, a dependency cycle, an `input_map` key that names no input of the
graph, a return element not in the graph. A failure while building (an inconsistent dtype or
shape) is also a `ValueError`, and leaves the ops built before it in the graph.

`producer_op_list` (TF's ``OpList`` message, or a mapping ``{op type: {attr: default}}``)
drops attrs the op does not know when they hold the producer's default, as TF does for graphs
from a newer producer; without one, the attrs TF 2.x added are dropped as
`tf_added_attrs` says (hints whatever their value, the others at TF's default), so graphs
written by TF 2.x import. `op_dict` is accepted and unused, as in TF 1.x.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from tensorweave.engine.graph import graph_def_proto, tf_added_attrs
from tensorweave.engine.graph.func_graph import FunctionDef
from tensorweave.engine.graph.graph import Graph, Operation, Tensor, get_default_graph
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef, parse_input, topological_order
from tensorweave.engine.graph.graph_def_proto import INTERNAL_ATTRS
from tensorweave.engine.op_def import OpDef
from tensorweave.engine.plugin_manager import get_registries

__all__ = ["import_graph_def"]

_VALID_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")


def _tensor_key(name: str) -> str:
    if name.startswith("^"):
        return name
    src, index = parse_input(name)
    return f"{src}:{index}"


def _check_registered(node: NodeDef, ops: Any, where: str = "") -> OpDef:
    op_def = ops.get(node.op)
    if op_def is None:
        raise ValueError(f"Op type not registered '{node.op}' in the loaded plugins (node "
                         f"'{node.name}'{where}): no op named {node.op} in defined operations.")
    for value in node.attr.values():
        for fn in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(fn, FunctionDef):
                for inner in fn.nodes:
                    _check_registered(inner, ops, f" of function '{fn.name}'")
    return op_def


_NO_DEFAULT = object()


def _producer_defaults(op_list: Any) -> Mapping[str, Mapping[str, Any]]:
    """``{op type: {attr: default}}`` of an ``OpList`` message (a mapping is that already)."""
    if op_list is None or isinstance(op_list, Mapping):
        return op_list or {}
    return {op.name: {a.name: graph_def_proto.attr_from_proto(a.default_value, _no_functions)
                      for a in op.attr if a.HasField("default_value")}
            for op in op_list.op}


def _no_functions(name: str) -> Any:
    raise ValueError(f"producer_op_list: a default names function '{name}'")


def _clean_attrs(node: NodeDef, op_def: OpDef,
                 producer_defaults: Mapping[str, Any]) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for key, value in node.attr.items():
        if key in INTERNAL_ATTRS:
            continue
        if not key.startswith("_") and key not in op_def.attrs:
            if key in tf_added_attrs.HINTS.get(node.op, ()):
                continue
            default = producer_defaults.get(
                key, tf_added_attrs.DEFAULTS.get(node.op, {}).get(key, _NO_DEFAULT))
            if default is not _NO_DEFAULT and default == value:
                continue
            known = "" if default is _NO_DEFAULT else \
                f": tensorweave runs it only with its default {default!r}, not {value!r}"
            raise ValueError(f"NodeDef mentions attr '{key}' not in Op '{node.op}' (node "
                             f"'{node.name}'){known}")
        attrs[key] = value
    return attrs


def _group_inputs(node: NodeDef, op_def: OpDef, attrs: Mapping[str, Any],
                  data: list[Any]) -> list[Any]:
    """The flat data inputs grouped as `Graph.create_op` takes them (a list per list arg).

    `OpDef` does not record TF's ``number_attr``/``type_list_attr``; a list's length comes from
    its type attr when that is a list (``Tin``, ``Tcomponents``), else from TF's naming of number
    attrs (``N``, or ``N<first word>``: ``sparse_keys`` -> ``Nsparse``); one list may be
    left over and takes the rest."""
    args = op_def.args
    counts: list[int | None] = []
    for arg in args:
        if not arg.is_list:
            counts.append(1)
            continue
        count = None
        type_value = attrs.get(arg.type_attr) if arg.type_attr else None
        if isinstance(type_value, (list, tuple)):
            count = len(type_value)
        else:
            for key in (f"N{arg.name.split('_')[0]}", "N"):
                if isinstance(attrs.get(key), int):
                    count = attrs[key]
                    break
        counts.append(count)
    unknown = [i for i, c in enumerate(counts) if c is None]
    if len(unknown) > 1:
        raise ValueError(f"Node '{node.name}' ({node.op}): cannot tell how its "
                         f"{len(data)} inputs divide among its list inputs")
    if unknown:
        counts[unknown[0]] = len(data) - sum(c for c in counts if c is not None)
    if any(c < 0 for c in counts) or sum(counts) != len(data):
        raise ValueError(f"Node '{node.name}' ({node.op}) has {len(data)} inputs, but its op "
                         f"takes {sum(c for c in counts if c is not None)}")
    grouped, pos = [], 0
    for arg, count in zip(args, counts):
        grouped.append(data[pos:pos + count] if arg.is_list else data[pos])
        pos += count
    return grouped


def _check_graph(nodes: Sequence[NodeDef], input_map: Mapping[str, Any],
                 return_elements: Sequence[str]) -> dict[str, NodeDef]:
    by_name: dict[str, NodeDef] = {}
    for node in nodes:
        if not _VALID_NAME.match(node.name):
            raise ValueError(f"Node name '{node.name}' is not valid")
        if node.name in by_name:
            raise ValueError(f"Duplicate node name in graph_def: '{node.name}'")
        by_name[node.name] = node
    for node in nodes:
        seen_control = False
        for text in node.input:
            src, _ = parse_input(text)
            if src not in by_name:
                raise ValueError(f"Node '{node.name}': Unknown input node '{text}'")
            if text.startswith("^"):
                seen_control = True
            elif seen_control:
                raise ValueError(f"Node '{node.name}': Control dependencies must come after "
                                 "regular dependencies")
    used = {_tensor_key(t) for n in nodes for t in n.input}
    missing = sorted(k for k in input_map if k not in used)
    if missing:
        raise ValueError(f"Attempted to map inputs that were not found in graph_def: {missing}")
    for element in return_elements:
        if parse_input(element)[0] not in by_name or element.startswith("^"):
            raise ValueError(f"Requested return_element {element!r} not found in graph_def.")
    return by_name


def _normalize_input_map(input_map: Mapping[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in (input_map or {}).items():
        if not isinstance(key, str):
            raise TypeError(f"input_map keys must be strings, got {key!r}")
        if key.startswith("^"):
            value = value.op if isinstance(value, Tensor) else value
            if not isinstance(value, Operation):
                raise TypeError(f"input_map[{key!r}] must be an Operation, got {value!r}")
        elif not isinstance(value, Tensor):
            value = getattr(value, "_as_graph_element", lambda v=value: v)()
            if not isinstance(value, Tensor):
                raise TypeError(f"input_map values must be Tensors, got {value!r} for {key!r}")
        out[_tensor_key(key)] = value
    return out


def _rename_class(value: Any, prefix: str, names: Mapping[str, NodeDef]) -> Any:
    if not isinstance(value, (list, tuple)):
        return value
    return [f"loc:@{prefix}{g[5:]}" if isinstance(g, str) and g.startswith("loc:@")
            and g[5:] in names else g for g in value]


def import_graph_def(graph_def: GraphDef, input_map: Mapping[str, Any] | None = None,
                     return_elements: Sequence[str] | None = None, name: str | None = None,
                     op_dict: Any = None,  # noqa: ARG001 - deprecated and unused in TF 1.x
                     producer_op_list: Any = None
                     ) -> list[Tensor | Operation] | None:
    """Import `graph_def` into the default graph; see the module docstring."""
    if isinstance(graph_def, graph_def_proto.GraphDef):
        graph_def = graph_def_proto.from_proto(graph_def)
    elif not isinstance(graph_def, GraphDef):
        raise TypeError(f"graph_def must be a GraphDef, got {type(graph_def).__name__}")
    mapping = _normalize_input_map(input_map)
    if mapping and name == "":
        raise ValueError("tf.import_graph_def() requires a non-empty `name` if `input_map` is "
                         "used.")
    elements = list(return_elements or [])
    if not all(isinstance(e, str) for e in elements):
        raise TypeError(f"return_elements must be a list of strings, got {elements!r}")
    nodes = list(graph_def.node)
    by_name = _check_graph(nodes, mapping, elements)
    ops = get_registries().ops
    op_defs = {n.name: _check_registered(n, ops) for n in nodes}
    order = topological_order(GraphDef(node=nodes))
    if order is None:
        raise ValueError("graph_def has a dependency cycle: it cannot be imported")
    defaults = _producer_defaults(producer_op_list)
    attrs = {n.name: _clean_attrs(n, op_defs[n.name], defaults.get(n.op, {})) for n in nodes}

    graph = get_default_graph()
    for value in mapping.values():
        if value.graph is not graph:
            raise ValueError(f"input_map value {value.name} is not an element of the default "
                             "graph")
    created: dict[str, Operation] = {}
    scope = graph.name_scope(name if name is not None else "import") if name != "" else \
        contextlib.nullcontext("")
    with graph.as_default(), scope as prefix:
        for node in order:
            created[node.name] = _import_node(graph, node, op_defs[node.name],
                                              attrs[node.name], prefix, mapping, created,
                                              by_name)
    if return_elements is None:
        return None
    out: list[Tensor | Operation] = []
    for element in elements:
        op = created[parse_input(element)[0]]
        if ":" not in element:
            out.append(op)
            continue
        index = parse_input(element)[1]
        if index >= len(op.outputs):
            raise ValueError(f"Requested return_element {element!r} not found in graph_def: "
                             f"the node has {len(op.outputs)} outputs.")
        out.append(op.outputs[index])
    return out


def _import_node(graph: Graph, node: NodeDef, op_def: OpDef, attrs: dict[str, Any], prefix: str,
                 mapping: Mapping[str, Any], created: Mapping[str, Operation],
                 by_name: Mapping[str, NodeDef]) -> Operation:
    data: list[Any] = []
    control: list[Operation] = []
    for text in node.input:
        src, index = parse_input(text)
        mapped = mapping.get(_tensor_key(text))
        if index < 0:
            control.append(mapped if mapped is not None else created[src])
        elif mapped is not None:
            data.append(mapped)
        elif index < len(created[src].outputs):
            data.append(created[src].outputs[index])
        else:
            raise ValueError(f"Node '{node.name}' has input '{text}', but '{src}' has "
                             f"{len(created[src].outputs)} outputs")
    if "_class" in attrs:
        attrs["_class"] = _rename_class(attrs["_class"], prefix, by_name)
    inputs = _group_inputs(node, op_def, attrs, data)
    device = graph.device(node.device) if node.device else contextlib.nullcontext()
    try:
        with device, graph.control_dependencies(None):
            op = graph.create_op(node.op, inputs, attrs, name=f"{prefix}{node.name}/")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Cannot import node '{node.name}' ({node.op}): {exc}") from None
    for dep in control:
        op._add_control_input(dep)
    return op
