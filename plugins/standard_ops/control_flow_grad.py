"""Gradients of the functional ``If`` and ``Case`` ops (``While``'s is in `while_grad`).

Contract: the gradient of ``If`` is an ``If`` on the same predicate over two gradient
functions, one per branch: each takes the forward op's inputs and the gradients of its floating
outputs, recomputes its branch's forward pass and returns the gradient for every floating
input (zeros where the branch does not depend on it), so only the branch the forward pass took
is differentiated. The predicate and non-floating inputs get ``None``. The gradient of
``Case`` is, as TF's ``_CaseGrad``, a ``Case`` (named ``gradient``, each output through an
``Identity``) on the same branch index over one such gradient function per branch, so an index
out of range differentiates the last branch, as the forward pass ran it.

Functions whose forward graph is not at hand (a function that came over the wire) have no
gradient: `LookupError` naming the op.
"""

from __future__ import annotations

import functools
from typing import Any

from tensorweave.api import array_ops
from tensorweave.api.control_flow_ops import (
    identity,
    make_case,
    make_if,
    most_specific_compatible_shape,
)
from tensorweave.api.gradients import gradients
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.func_graph import (
    RETVAL_OP,
    FuncGraph,
    FunctionDef,
    to_function_def,
    unique_function_name,
)
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.graph_def import parse_input


def forward_graph(op: Operation, fn: FunctionDef) -> FuncGraph:
    if fn.graph is None:
        raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type}): "
                          f"its function {fn.name} has no forward graph in this process")
    return fn.graph


def args_and_results(fn: FunctionDef, graph: FuncGraph) -> tuple[list[Tensor], list[Tensor]]:
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
    graph = forward_graph(op, fn)
    args, results = args_and_results(fn, graph)
    with graph.as_default():
        dys = [graph.add_input(results[j].dtype, results[j].shape, "grad_y") for j in of]
        grads = gradients([results[j] for j in of], [args[i] for i in wrt], grad_ys=dys)
        # A function returns tensors: sparse gradients (a gather's) leave it densified.
        grads = [_zeros_for(args[i]) if g is None else convert_to_tensor(g)
                 for i, g in zip(wrt, grads)]
    return to_function_def(graph, args + dys, grads, unique_function_name(f"{fn.name}_grad"))


def _zeros_for(arg: Tensor) -> Tensor:
    """A zero gradient of `arg`; a resource handle's is its variable's shape."""
    if arg.dtype != dtypes.resource:
        return array_ops.zeros_like(arg)
    spec = arg._handle
    if spec is None or not spec.shape.is_fully_defined():
        raise LookupError(f"No gradient for the resource variable {arg.name} in a branch: its "
                          "shape is not fully defined")
    return array_ops.zeros(spec.shape.as_list(), spec.dtype)


def _branches(op: Operation) -> list[FunctionDef]:
    if op.type in _CASE:
        return list(op.get_attr("branches"))
    return [op.get_attr("then_branch"), op.get_attr("else_branch")]


def _branch_grad(op: Operation, *grads: Tensor | None) -> list[Tensor | None]:
    inputs = list(op.inputs[1:])
    # a resource variable captured by a branch gets its gradient through its handle
    wrt = [i for i, t in enumerate(inputs) if t.dtype.is_floating or t.dtype == dtypes.resource]
    of = [j for j, g in enumerate(grads) if g is not None and op.outputs[j].dtype.is_floating]
    out: list[Tensor | None] = [None] * len(op.inputs)
    if not wrt or not of:
        return out
    functions = [_gradient_function(op, fn, wrt, of) for fn in _branches(op)]
    shapes = [functools.reduce(most_specific_compatible_shape, shapes)
              for shapes in zip(*(fn.ret_shapes for fn in functions))]
    grad_inputs = inputs + [grads[j] for j in of]
    if op.type in _CASE:
        results = [identity(t) for t in make_case(op.inputs[0], grad_inputs, functions, shapes,
                                                  [], name="gradient")]
    else:
        results = make_if(op.inputs[0], grad_inputs, *functions, shapes, [], name="If")
    for i, g in zip(wrt, results):
        out[1 + i] = g
    return out


_CASE = ("Case", "StatelessCase")


def register_gradients(registry: Any) -> None:
    for op_type in ("If", "StatelessIf", *_CASE):
        registry.add(op_type, _branch_grad)
