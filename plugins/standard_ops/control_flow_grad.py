"""Gradients of the functional control-flow ops.

Contract: the gradient of ``If`` is an ``If`` on the same predicate over two gradient
functions, one per branch: each takes the forward op's inputs and the gradients of its floating
outputs, recomputes its branch's forward pass and returns the gradient for every floating
input (zeros where the branch does not depend on it), so only the branch the forward pass took
is differentiated. The predicate and non-floating inputs get ``None``.

The gradient of ``While`` recomputes instead of storing per-iteration values: it counts the
iterations ``n`` with a copy of the loop, then for ``k = n-1 .. 0`` rebuilds the loop state
after ``k`` iterations (a nested loop from the inputs) and pulls the gradient back through one
body step there. That is O(n^2) body evaluations, with exact results. Captured tensors (the
op's inputs after the loop variables) receive the sum over all iterations.

Both recompute forward work, so a stateful op the gradient needs (an assign inside a loop body)
runs again in the backward pass. Functions whose forward graph is not at hand (a function that
came over the wire) have no gradient: `LookupError` naming the op.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops
from tensorweave.api.control_flow_ops import make_if, most_specific_compatible_shape, while_loop
from tensorweave.api.gradients import gradients
from tensorweave.framework.constant_op import constant
from tensorweave.framework.func_graph import (
    RETVAL_OP,
    FuncGraph,
    FunctionDef,
    to_function_def,
    unique_function_name,
)
from tensorweave.framework.graph import Operation, Tensor, get_default_graph
from tensorweave.framework.graph_def import parse_input
from tensorweave.tensor_shape import TensorShape


def _forward_graph(op: Operation, fn: FunctionDef) -> FuncGraph:
    if fn.graph is None:
        raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type}): "
                          f"its function {fn.name} has no forward graph in this process")
    return fn.graph


def _args_and_results(fn: FunctionDef, graph: FuncGraph) -> tuple[list[Tensor], list[Tensor]]:
    """The placeholders of `fn`'s arguments and the tensors it returns, in `graph`."""
    args = sorted((n for n in fn.nodes if n.op == "_Arg"), key=lambda n: n.attr["index"])
    rets = sorted((n for n in fn.nodes if n.op == RETVAL_OP), key=lambda n: n.attr["index"])
    placeholders = [graph.get_operation_by_name(n.name).outputs[0] for n in args]
    results = []
    for node in rets:
        src, index = parse_input(node.input[0])
        results.append(graph.get_operation_by_name(src).outputs[index])
    return placeholders, results


def _gradient_function(op: Operation, fn: FunctionDef, wrt: list[int], of: list[int],
                       ) -> FunctionDef:
    """A function of (`fn`'s arguments, gradients of its results `of`) returning the
    gradients of those results with respect to its arguments `wrt`. It is built in `fn`'s own
    forward graph, so it recomputes what it needs of the forward pass."""
    graph = _forward_graph(op, fn)
    args, results = _args_and_results(fn, graph)
    with graph.as_default():
        dys = [graph.add_input(results[j].dtype, results[j].shape, "grad_y") for j in of]
        grads = gradients([results[j] for j in of], [args[i] for i in wrt], grad_ys=dys)
        grads = [array_ops.zeros_like(args[i]) if g is None else g for i, g in zip(wrt, grads)]
    return to_function_def(graph, args + dys, grads, unique_function_name(f"{fn.name}_grad"))


def _if_grad(op: Operation, *grads: Tensor | None) -> list[Tensor | None]:
    inputs = list(op.inputs[1:])
    wrt = [i for i, t in enumerate(inputs) if t.dtype.is_floating]
    of = [j for j, g in enumerate(grads) if g is not None and op.outputs[j].dtype.is_floating]
    out: list[Tensor | None] = [None] * len(op.inputs)
    if not wrt or not of:
        return out
    then_fn = _gradient_function(op, op.get_attr("then_branch"), wrt, of)
    else_fn = _gradient_function(op, op.get_attr("else_branch"), wrt, of)
    shapes = [most_specific_compatible_shape(a, b)
              for a, b in zip(then_fn.ret_shapes, else_fn.ret_shapes)]
    results = make_if(op.inputs[0], inputs + [grads[j] for j in of], then_fn, else_fn, shapes,
                      [], name="If")
    for i, g in zip(wrt, results):
        out[1 + i] = g
    return out


def _grouped(op: Operation, inputs: list[Tensor]) -> list[Any]:
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


def _replay(op: Operation, fn: FunctionDef, args: list[Tensor]) -> list[Tensor]:
    """`fn`'s results on `args`, computed by copies of its forward graph's ops made in the
    default graph."""
    graph = get_default_graph()
    forward = _forward_graph(op, fn)
    placeholders, results = _args_and_results(fn, forward)
    mapping: dict[Tensor, Tensor] = dict(zip(placeholders, args))
    copied: dict[Operation, Operation] = {}
    needed: set[Operation] = set()
    stack = [t.op for t in results if t not in mapping]
    while stack:
        node = stack.pop()
        if node not in needed:
            needed.add(node)
            stack.extend(t.op for t in node.inputs if t not in mapping)
            stack.extend(node.control_inputs)
    for node in forward.get_operations():
        if node not in needed:
            continue
        attrs = {k: v for k, v in node.attrs.items() if k != "_class"}
        with graph.control_dependencies([copied[c] for c in node.control_inputs]):
            new = graph.create_op(node.type, _grouped(node, [mapping[t] for t in node.inputs]),
                                  attrs, node.name.rsplit("/", 1)[-1])
        copied[node] = new
        mapping.update(zip(node.outputs, new.outputs))
    return [mapping[t] for t in results]


def _while_grad(op: Operation, *grads: Tensor | None) -> list[Tensor | None]:
    inputs = list(op.inputs)
    wrt = [i for i, t in enumerate(inputs) if t.dtype.is_floating]
    if not wrt or all(grads[i] is None for i in wrt):
        return [None] * len(inputs)
    cond_fn, body_fn = op.get_attr("cond"), op.get_attr("body")
    shapes = [t.shape for t in op.outputs]

    def run_body(state: list[Tensor]) -> list[Tensor]:
        return _replay(op, body_fn, list(state))

    def steps(i: Tensor, *state: Tensor) -> Any:
        return _replay(op, cond_fn, list(state))[0]

    counted = while_loop(steps, lambda i, *state: [i + 1, *run_body(list(state))],
                         [constant(0), *inputs],
                         shape_invariants=[TensorShape([]), *shapes], return_same_structure=True)
    count = counted[0]

    def state_after(k: Tensor) -> list[Tensor]:
        if not inputs:
            return []
        out = while_loop(lambda j, *state: j < k,
                         lambda j, *state: [j + 1, *run_body(list(state))],
                         [constant(0), *inputs], shape_invariants=[TensorShape([]), *shapes],
                         return_same_structure=True)
        return list(out[1:])

    def back(k: Tensor, *g: Tensor) -> list[Tensor]:
        state = state_after(k)
        outs = run_body(state)
        pulled = gradients([outs[i] for i in wrt], [state[i] for i in wrt], grad_ys=list(g))
        pulled = [array_ops.zeros_like(state[i]) if p is None else p
                  for i, p in zip(wrt, pulled)]
        return [k - 1, *pulled]

    start = [grads[i] if grads[i] is not None else array_ops.zeros_like(op.outputs[i])
             for i in wrt]
    result = while_loop(lambda k, *g: k >= 0, back, [count - 1, *start],
                        shape_invariants=[TensorShape([]), *(shapes[i] for i in wrt)],
                        return_same_structure=True)
    out: list[Tensor | None] = [None] * len(inputs)
    for i, g in zip(wrt, result[1:]):
        out[i] = g
    return out


def register(registry: Any) -> None:
    registry.add("If", _if_grad)
    registry.add("StatelessIf", _if_grad)
    registry.add("While", _while_grad)
    registry.add("StatelessWhile", _while_grad)

