"""The records of TF1's ``cond_context`` and ``while_context`` collections, and their
``CondContextDef``/``WhileContextDef`` form in a meta graph (TF's ``CondContext.to_proto`` /
``from_proto``, registered with `register_proto_function` as TF's control_flow_ops does).

Contract: a `CondContext` names one branch of a conditional (its predicate, the element that
gates it, 1 for the true branch and 0 for the false one) and a `WhileContext` one loop (its
settings, the elements that gate it, the tensors that enter and leave it); each holds its
context's values by name and the external ones (outside tensors it uses) by name and element.
A context read from a TF meta graph (TF1's ``Switch``/``Merge`` control flow) names TF's
elements: ``cond/pred_id:0``, ``cond/switch_t:0``, ``while/LoopCond:0``, ``while/Exit:0``...
tensorweave's own `cond`/`while_loop` are functional ops (``If``/``While``), with no pivot and
no ``Enter``/``Exit`` in the outer graph, so their contexts say what that graph holds: the
pivots name the ``If``/``While`` op itself, a loop enters with the ``While`` op's loop-variable
inputs and leaves with its outputs, and the external values are the op's other inputs, each
mapped to itself (a function receives them as arguments, not through a ``Switch``/``Enter``).
No op of the outer graph is inside such a context, so TF, importing one, moves no op into a
context. Nested contexts are kept through a round trip; a context whose gate is not in the
exported graph (one built inside a function body) is left out, as TF leaves out what is not
under the export scope.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from tensorweave.engine.graph.graph import Graph, GraphKeys, Operation, Tensor, get_default_graph
from tensorweave.engine.graph.proto_functions import register_proto_function
from tensorweave.formats.control_flow_proto import (
    CondContextDef,
    ValuesDef,
    WhileContextDef,
)

__all__ = ["CondContext", "WhileContext"]

Element = Tensor | Operation


def _strip(name: str, scope: str | None) -> str:
    """`name` without the leading `scope` (TF's ``ops.strip_name_scope``)."""
    prefix = f"{scope}/" if scope else ""
    return name[len(prefix):] if prefix and name.startswith(prefix) else name


def _prepend(name: str, scope: str | None) -> str:
    """`name` under `scope` (TF's ``ops.prepend_name_scope``)."""
    return f"{scope}/{name}" if scope and name else name


def _element(graph: Graph, name: str, scope: str | None) -> Element:
    return graph.as_graph_element(_prepend(name, scope))


def _in_scope(name: str, scope: str | None) -> bool:
    return scope is None or name.startswith(scope)


def _outside(tensors: list[Tensor]) -> dict[str, Any]:
    """The values and external values of a functional op's context: the outside tensors it
    takes as inputs, each standing for itself."""
    return {"values": frozenset(t.name for t in tensors),
            "external_values": {t.name: t for t in tensors}}


def _values_to_proto(context: Any, scope: str | None) -> ValuesDef:
    out = ValuesDef(values=sorted(_strip(v, scope) for v in context.values))
    for key, element in context.external_values.items():
        out.external_values[_strip(key, scope)] = _strip(element.name, scope)
    return out


def _values_from_proto(proto: ValuesDef, graph: Graph, scope: str | None) -> dict[str, Any]:
    return {"values": frozenset(_prepend(v, scope) for v in proto.values),
            "external_values": {_prepend(k, scope): _element(graph, v, scope)
                                for k, v in proto.external_values.items()}}


def _nested_to_proto(nested: tuple[Any, ...], out: Any, scope: str | None) -> None:
    for context in nested:
        proto = context.to_proto(scope)
        if proto is not None:
            holder = out.add()
            field = holder.cond_ctxt if isinstance(context, CondContext) else holder.while_ctxt
            field.CopyFrom(proto)


def _nested_from_proto(protos: Any, scope: str | None) -> tuple[Any, ...]:
    out: list[Any] = []
    for holder in protos:
        kind = holder.WhichOneof("ctxt")
        if kind == "cond_ctxt":
            out.append(CondContext.from_proto(holder.cond_ctxt, scope))
        elif kind == "while_ctxt":
            out.append(WhileContext.from_proto(holder.while_ctxt, scope))
        else:
            raise ValueError("Error parsing MetaGraphDef: a ControlFlowContextDef holds "
                             "neither a cond_ctxt nor a while_ctxt")
    return tuple(out)


@attrs.frozen(eq=False)
class CondContext:
    """One branch of a `cond`, as TF1's ``cond_context`` collection holds it: its unique name
    (``cond/cond_text``), the predicate, the element that gates the branch (the ``If`` op of
    tensorweave's `cond`; TF1's ``switch_t``/``switch_f`` tensor), the branch (1 for true,
    0 for false), its values and nested contexts (see the module docstring)."""

    pred: Tensor
    branch: int
    name: str
    pivot: Element
    values: frozenset[str] = frozenset()
    external_values: Mapping[str, Element] = attrs.field(factory=dict)
    nested: tuple[Any, ...] = ()

    @property
    def graph(self) -> Graph:
        """The graph the context's ops are in (its gate's)."""
        return self.pivot.graph

    def to_proto(self, export_scope: str | None = None) -> CondContextDef | None:
        """The `CondContextDef` of this context, names without `export_scope`; ``None`` when
        the context is not under it."""
        if not _in_scope(self.name, export_scope):
            return None
        out = CondContextDef(context_name=_strip(self.name, export_scope),
                             pred_name=_strip(self.pred.name, export_scope),
                             pivot_name=_strip(self.pivot.name, export_scope),
                             branch=self.branch, values_def=_values_to_proto(self, export_scope))
        _nested_to_proto(self.nested, out.nested_contexts, export_scope)
        return out

    @staticmethod
    def from_proto(context_def: CondContextDef, import_scope: str | None = None) -> CondContext:
        """The context `context_def` describes, its names under `import_scope`, looked up in
        the default graph (`KeyError`/`ValueError` as `Graph.as_graph_element` raises)."""
        graph = get_default_graph()
        return CondContext(
            _element(graph, context_def.pred_name, import_scope), context_def.branch,
            _prepend(context_def.context_name, import_scope),
            _element(graph, context_def.pivot_name, import_scope),
            nested=_nested_from_proto(context_def.nested_contexts, import_scope),
            **_values_from_proto(context_def.values_def, graph, import_scope))


@attrs.frozen(eq=False)
class WhileContext:
    """One `while_loop`, as TF1's ``while_context`` collection holds it: its unique name
    (``while/while_context``), settings, the elements that gate it (the ``While`` op of
    tensorweave's `while_loop`; TF1's ``LoopCond``, ``Merge`` and ``Identity`` tensors), the
    tensors entering and leaving it, its values and nested contexts (see the module
    docstring)."""

    name: str
    parallel_iterations: int
    back_prop: bool
    swap_memory: bool
    maximum_iterations: Tensor | None
    pivot: Element
    pivot_for_pred: Element
    pivot_for_body: Element
    loop_enters: tuple[Element, ...] = ()
    loop_exits: tuple[Element, ...] = ()
    values: frozenset[str] = frozenset()
    external_values: Mapping[str, Element] = attrs.field(factory=dict)
    nested: tuple[Any, ...] = ()

    @property
    def graph(self) -> Graph:
        """The graph the context's ops are in (its gate's)."""
        return self.pivot.graph

    def to_proto(self, export_scope: str | None = None) -> WhileContextDef | None:
        """The `WhileContextDef` of this context, names without `export_scope`; ``None`` when
        the context is not under it."""
        if not _in_scope(self.name, export_scope):
            return None

        def strip(element: Element) -> str:
            return _strip(element.name, export_scope)

        out = WhileContextDef(
            context_name=_strip(self.name, export_scope),
            parallel_iterations=self.parallel_iterations, back_prop=self.back_prop,
            swap_memory=self.swap_memory, pivot_name=strip(self.pivot),
            pivot_for_pred_name=strip(self.pivot_for_pred),
            pivot_for_body_name=strip(self.pivot_for_body),
            loop_exit_names=[strip(t) for t in self.loop_exits],
            loop_enter_names=[strip(t) for t in self.loop_enters],
            values_def=_values_to_proto(self, export_scope))
        if self.maximum_iterations is not None:
            out.maximum_iterations_name = strip(self.maximum_iterations)
        _nested_to_proto(self.nested, out.nested_contexts, export_scope)
        return out

    @staticmethod
    def from_proto(context_def: WhileContextDef,
                   import_scope: str | None = None) -> WhileContext:
        """The context `context_def` describes, its names under `import_scope`, looked up in
        the default graph (`KeyError`/`ValueError` as `Graph.as_graph_element` raises)."""
        graph = get_default_graph()

        def element(name: str) -> Element:
            return _element(graph, name, import_scope)

        limit = context_def.maximum_iterations_name
        return WhileContext(
            _prepend(context_def.context_name, import_scope), context_def.parallel_iterations,
            context_def.back_prop, context_def.swap_memory, element(limit) if limit else None,
            element(context_def.pivot_name), element(context_def.pivot_for_pred_name),
            element(context_def.pivot_for_body_name),
            tuple(map(element, context_def.loop_enter_names)),
            tuple(map(element, context_def.loop_exit_names)),
            nested=_nested_from_proto(context_def.nested_contexts, import_scope),
            **_values_from_proto(context_def.values_def, graph, import_scope))


def cond_contexts(graph: Graph, pred: Tensor, op: Operation, branch_names: tuple[str, str],
                  inputs: list[Tensor]) -> None:
    """Add the two contexts (true branch, then false) of the functional conditional `op`
    (predicate `pred`, outer inputs `inputs`) to `graph`'s ``cond_context`` collection."""
    values = _outside([pred, *inputs])
    for branch, name in zip((1, 0), branch_names):
        graph.add_to_collection(GraphKeys.COND_CONTEXT,
                                CondContext(pred, branch, name, op, **values))


def while_context(graph: Graph, name: str, op: Operation, n: int, parallel_iterations: int,
                  back_prop: bool, swap_memory: bool,
                  maximum_iterations: Tensor | None) -> None:
    """Add the context of the functional loop `op` (its first `n` inputs and outputs are the
    loop variables, the others what its functions capture) to `graph`'s ``while_context``
    collection."""
    graph.add_to_collection(GraphKeys.WHILE_CONTEXT, WhileContext(
        name, parallel_iterations, back_prop, swap_memory, maximum_iterations, op, op, op,
        tuple(op.inputs[:n]), tuple(op.outputs[:n]), **_outside(list(op.inputs[n:]))))


register_proto_function(GraphKeys.COND_CONTEXT, proto_type=CondContextDef,
                        to_proto=CondContext.to_proto, from_proto=CondContext.from_proto)
register_proto_function(GraphKeys.WHILE_CONTEXT, proto_type=WhileContextDef,
                        to_proto=WhileContext.to_proto, from_proto=WhileContext.from_proto)
