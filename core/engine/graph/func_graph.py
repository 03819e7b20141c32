"""Function graphs: the sub-graphs that the functional control-flow ops (``If``, ``While``)
carry as attrs.

Contract: `build_func_graph` runs a Python function with a fresh `FuncGraph` as the default graph.
An op of that graph that uses a tensor of an enclosing graph *captures* it (`FuncGraph.capture`,
reached from `op_builder`): the outer tensor is recorded in `captures` and replaced by a
``Placeholder`` of the same dtype and shape, which becomes an extra input of the function (the
control-flow op feeds it). A tensor of a graph further out is first captured by the graphs in
between. A variable ref (a ``VariableV2`` output, as an assign inside a branch uses) is not fed:
the function gets its own ``VariableV2`` node naming the same shared variable, so an assign in a
branch reaches the variable itself, and only when the branch runs; the control-flow op is
colocated with the variable (`variables`). Control dependencies on outer ops become control
inputs of the control-flow op (`control_captures`).

`FunctionDef` is a function as plain data: `NodeDef`s where argument ``i`` is an ``_Arg`` node
(``index`` i) and result ``j`` a ``_FunctionRetval`` node (``index`` j), holding only the nodes the
results need. It compares by identity and keeps the `FuncGraph` it came from (never sent), which
gradients use.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Graph, Operation, Tensor
from tensorweave.engine.graph.graph_def import NodeDef, parse_input
from tensorweave.engine.tensor_shape import TensorShape, as_shape

RETVAL_OP = "_FunctionRetval"
_ids = itertools.count(1)


@attrs.frozen(eq=False)
class FunctionDef:
    """A function's nodes; see the module docstring."""

    name: str
    nodes: tuple[NodeDef, ...]
    graph: FuncGraph | None = attrs.field(default=None, repr=False)

    def _sorted(self, op: str) -> list[NodeDef]:
        return sorted((n for n in self.nodes if n.op == op), key=lambda n: n.attr["index"])

    @property
    def arg_types(self) -> list[dtypes.DType]:
        return [n.attr["T"] for n in self._sorted("_Arg")]

    @property
    def ret_types(self) -> list[dtypes.DType]:
        return [n.attr["T"] for n in self._sorted(RETVAL_OP)]

    @property
    def ret_shapes(self) -> list[TensorShape]:
        return [TensorShape(n.attr["_shape"]) for n in self._sorted(RETVAL_OP)]

    def is_stateful(self, ops: Any) -> bool:
        """True if a node of the function (or of a function it calls) is stateful."""
        for node in self.nodes:
            if node.op in ("_Arg", RETVAL_OP):
                continue
            op_def = ops.get(node.op)
            if op_def is None or op_def.stateful:
                return True
        return False


def check_function(fn: FunctionDef) -> None:
    """Raise `ValueError` unless `fn`'s args and results are numbered 0..n-1 and every input
    names a node of the function and an output it has."""
    by_name: dict[str, NodeDef] = {}
    for node in fn.nodes:
        if node.name in by_name:
            raise ValueError(f"function {fn.name} has two nodes named '{node.name}'")
        by_name[node.name] = node
    for op in ("_Arg", RETVAL_OP):
        indices = [n.attr.get("index") for n in fn.nodes if n.op == op]
        if sorted(i for i in indices if isinstance(i, int)) != list(range(len(indices))):
            raise ValueError(f"function {fn.name}: the {op} indices are not 0..n-1")
        for node in fn.nodes:
            if node.op == op and not isinstance(node.attr.get("T"), dtypes.DType):
                raise ValueError(f"function {fn.name}: node '{node.name}' has no dtype attr T")
    for node in fn.nodes:
        if node.op == RETVAL_OP and not isinstance(node.attr.get("_shape"), TensorShape):
            raise ValueError(f"function {fn.name}: node '{node.name}' has no _shape")
        for text in node.input:
            src, index = parse_input(text)
            producer = by_name.get(src)
            if producer is None or index >= len(producer.output_types):
                raise ValueError(f"function {fn.name}: node '{node.name}' has input '{text}', "
                                 "which is not an output of a node of the function")


def _is_ref(tensor: Tensor) -> bool:
    return tensor.op.op_def.ref_output


class FuncGraph(Graph):
    """The graph of one function while it is built; see the module docstring."""

    def __init__(self, name: str, outer_graph: Graph) -> None:
        super().__init__()
        self.name = name
        self.outer_graph = outer_graph
        self.seed = outer_graph.seed
        # a snapshot, as TF's FuncGraph takes: lookups work inside, additions stay inside
        self._collections = {k: list(v) for k, v in outer_graph._collections.items()}
        self.inputs: list[Tensor] = []  # the placeholders of the explicit arguments
        self.captures: dict[Tensor, Tensor] = {}  # outer-graph tensor -> its placeholder
        self.control_captures: list[Operation] = []  # outer-graph ops the function waits for
        self.variables: list[Operation] = []  # VariableV2 ops (any enclosing graph) it uses
        # the name scope of the outermost graph that this graph's name scopes are under
        self.root_scope = outermost_name_scope(outer_graph)

    def encloses(self, graph: Graph) -> bool:
        """True if `graph` is this graph or one it is nested in."""
        g: Graph | None = self
        while isinstance(g, FuncGraph):
            if g is graph:
                return True
            g = g.outer_graph
        return g is graph

    def add_input(self, dtype: dtypes.DType, shape: Any, name: str) -> Tensor:
        with self.as_default(), self.control_dependencies(None):
            placeholder = self.create_op("Placeholder", [], {"dtype": dtype,
                                                             "shape": as_shape(shape)}, name)
        return placeholder.outputs[0]

    def capture(self, tensor: Tensor) -> Tensor:
        """The tensor of this graph standing for `tensor` (see the module docstring)."""
        if tensor.graph is self:
            return tensor
        inner = self.captures.get(tensor)
        if inner is not None:
            return inner
        if not self.encloses(tensor.graph):
            raise ValueError(f"Tensor {tensor.name} must be from the same graph as the ops of "
                             f"function {self.name} or a graph enclosing it.")
        if _is_ref(tensor):
            return self._shared_variable(tensor)
        outer = tensor
        if tensor.graph is not self.outer_graph:
            outer = self.outer_graph.capture(tensor)
        inner = self.add_input(tensor.dtype, tensor.shape, "capture")
        inner._handle = tensor._handle  # a captured resource handle still knows its variable
        self.captures[outer] = inner
        if outer is not tensor:
            self.captures[tensor] = inner
        return inner

    def _shared_variable(self, ref: Tensor) -> Tensor:
        var = ref.op
        self._note_variable(var)
        attrs_ = {k: var.attrs[k] for k in ("shape", "dtype", "container")}
        attrs_["shared_name"] = var.attrs.get("shared_name") or var.name
        with self.as_default(), self.control_dependencies(None):
            inner = self.create_op("VariableV2", [], attrs_, var.name.rsplit("/", 1)[-1])
        self.captures[ref] = inner.outputs[0]
        return inner.outputs[0]

    def _note_variable(self, var: Operation) -> None:
        g: Graph | None = self
        while isinstance(g, FuncGraph):
            if var not in g.variables:
                g.variables.append(var)
            g = g.outer_graph

    def outer_inputs(self) -> list[Tensor]:
        """The outer tensors fed to the captured placeholders, in capture order (one per
        placeholder)."""
        seen: dict[Tensor, Tensor] = {}
        for outer, inner in self.captures.items():
            if outer.graph is self.outer_graph and inner.op.type == "Placeholder":
                seen.setdefault(inner, outer)
        return list(seen.values())

    def _current_control_inputs(self) -> list[Operation]:
        ops = super()._current_control_inputs()
        mine = []
        for op in ops:
            if op.graph is self:
                mine.append(op)
            elif self.encloses(op.graph):
                self._add_control_capture(op)
            else:
                raise ValueError(f"Control input {op.name} is not in function {self.name} or "
                                 "a graph enclosing it.")
        return mine

    def _add_control_capture(self, op: Operation) -> None:
        if op.graph is self.outer_graph:
            if op not in self.control_captures:
                self.control_captures.append(op)
        else:
            self.outer_graph._add_control_capture(op)


def outermost_graph(graph: Graph) -> Graph:
    """The graph `graph` is nested in through any number of function graphs (`graph` itself if
    it is no function's): where state that outlives one call of a function belongs (variables
    and their initializers), as TF's ``init_scope`` lifts it."""
    while isinstance(graph, FuncGraph):
        graph = graph.outer_graph
    return graph


def outermost_name_scope(graph: Graph) -> str:
    """`graph`'s current name scope as a scope of its `outermost_graph` (where a variable made
    in a function is named, as TF's ``init_scope`` names it)."""
    scope = graph.get_name_scope()
    if not isinstance(graph, FuncGraph):
        return scope
    return "/".join(s for s in (graph.root_scope, scope) if s)


def unique_function_name(prefix: str) -> str:
    return f"{prefix}_{next(_ids)}"


def build_func_graph(name: str, fn: Callable[..., Any], arg_specs: Sequence[tuple[Any, Any]],
                     outer_graph: Graph, *, outer_names: bool = False,
                     ) -> tuple[FuncGraph, Any]:
    """A `FuncGraph` with one placeholder per ``(dtype, shape)`` of `arg_specs` and what `fn`
    returned when called on them (with the graph as the default graph).

    With `outer_names`, the ops `fn` builds are named as if built in `outer_graph` where it
    stands: under its current name scope and unique among its names (and those of every
    function built so), as TF1 names the ops of a ``cond`` branch or a loop body
    (``cond/truediv``, ``cond/truediv_1`` in the other branch), so an error inside names the
    op as the user knows it. Ops added to the graph later (its gradients) are unique within
    it only."""
    graph = FuncGraph(name, outer_graph)
    if outer_names:
        graph._name_stack = outer_graph._name_stack
        graph._names_in_use = outer_graph._names_in_use
        graph.root_scope = getattr(outer_graph, "root_scope", "")
    graph.inputs = [graph.add_input(dtypes.as_dtype(d), s, "arg") for d, s in arg_specs]
    with graph.as_default():
        result = fn(*graph.inputs)
    graph._names_in_use = dict(graph._names_in_use)
    return graph, result


def to_function_def(graph: FuncGraph, inputs: Sequence[Tensor], outputs: Sequence[Tensor],
                    name: str | None = None) -> FunctionDef:
    """`graph` as a `FunctionDef` taking `inputs` (placeholders of `graph`) and returning
    `outputs` (tensors of `graph`); only the nodes the outputs need are kept."""
    arg_index = {t.op: i for i, t in enumerate(inputs)}
    needed: set[Operation] = set()
    stack = [t.op for t in outputs]
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        if op not in arg_index:
            stack.extend(t.op for t in op.inputs)
            stack.extend(op.control_inputs)
    nodes: list[NodeDef] = []
    for op in graph.get_operations():
        if op in arg_index:
            t = op.outputs[0]
            nodes.append(NodeDef(name=op.name, op="_Arg", attr={
                "T": t.dtype, "index": arg_index[op], "_shape": t.shape,
                "_output_types": [t.dtype], "_output_shapes": [t.shape]}))
        elif op in needed:
            nodes.append(op._engine_node_def.copy(device=""))
    for j, t in enumerate(outputs):
        nodes.append(NodeDef(name=f"_retval_{j}", op=RETVAL_OP, input=[t._as_node_input()],
                             attr={"T": t.dtype, "index": j, "_shape": t.shape,
                                   "_output_types": [], "_output_shapes": []}))
    if any(t.graph is not graph for t in [*inputs, *outputs]):
        raise ValueError(f"function {graph.name}: an input or output is not of its graph")
    return FunctionDef(name or graph.name, tuple(nodes), graph)
