"""Gradient of the functional ``While`` op, as TF's ``while_v2``: when a loop's gradient is
first built, the forward ``While`` op itself is rewritten to record what the backward pass
needs of each iteration, so the loop runs once per step; a backward loop then pulls the
gradient through one iteration at a time. It costs n body evaluations for n iterations, and
O(1) per recorded tensor per iteration (no buffer is copied).

Contract:

- One backward step is built once per loop, in a scratch graph: the body's forward ops (copied
  from its forward graph) on placeholders for the loop state, and ``tw.gradients`` of the body's
  floating results on placeholders for their incoming gradients. The ops that depend on those
  incoming gradients form the backward part; every other tensor the backward part reads (an
  activation, a shape, a mask) is *cut*.
- A cut tensor that depends only on loop-invariant values (captured tensors, and loop variables
  the body passes through unchanged) and on no stateful op is computed once, before the
  backward loop. Every other cut tensor is recorded by the forward loop: the op is rewritten in
  place (`_rewrite`) to take, after its n inputs, a zero iteration count and one
  ``EmptyTensorList`` per recorded tensor (made before it in its graph), and to run a body that
  computes the original body's results and the recorded tensors from the same ops, counts the
  iteration and pushes each recorded tensor onto its list (``TensorListPushBack``). Its first n
  outputs are unchanged, so what already reads them still does; then come the count and the
  lists. Stateful body ops (an assign, a random op) thus run once per iteration, and the
  gradient is of the values the forward pass computed.
- The rewritten body's forward graph carries the `_Record` (`_RecordingGraph`), so a second
  gradient of the loop (or of a copy of it: an inner loop replayed by an outer loop's gradient)
  reads the same lists; the op is rewritten once.
- The backward loop counts ``k = n-1 .. 0`` and pops each list (``TensorListPopBack``), which
  gives iteration k's recorded tensors, and runs the backward part on them and on the carried
  gradients.
- Captured tensors (the op's inputs after the loop variables) receive the sum over all
  iterations. A resource variable's handle that the loop carries unchanged receives its
  variable's gradient (the variable's dtype and shape, from its ``VarHandleOp``): the sum over
  all iterations of the gradients of the body's reads, as ``ReadVariableOp`` gives a handle.
  The count and the lists get no gradient (the list ops are not differentiable here, so a
  gradient of the backward loop itself stops at what it pops).
- Functions whose forward graph is not at hand (a function that came over the wire) have no
  gradient: `LookupError` naming the op.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from tensorweave.api import array_ops
from tensorweave.api.control_flow_ops import identity, while_loop
from tensorweave.api.gradients import gradients
from tensorweave.api.op_copy import copy_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor
from tensorweave.engine.graph.func_graph import (
    RETVAL_OP,
    FuncGraph,
    FunctionDef,
    to_function_def,
    unique_function_name,
)
from tensorweave.engine.graph.graph import Graph, Operation, Tensor, get_default_graph
from tensorweave.engine.graph.graph_def import parse_input
from tensorweave.engine.graph.op_builder import apply, make_op
from tensorweave.engine.op_def import TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.control_flow_grad import args_and_results, forward_graph


def _needed(targets: Iterable[Tensor], stop: set[Tensor]) -> set[Operation]:
    """The ops `targets` depend on (data and control inputs), not looking past `stop`."""
    needed: set[Operation] = set()
    stack = [t.op for t in targets if t not in stop]
    while stack:
        node = stack.pop()
        if node not in needed:
            needed.add(node)
            stack.extend(t.op for t in node.inputs if t not in stop)
            stack.extend(node.control_inputs)
    return needed


def replay(op: Operation, fn: FunctionDef, args: list[Tensor]) -> list[Tensor]:
    """`fn`'s results on `args`, computed by copies of its forward graph's ops made in the
    default graph."""
    placeholders, results = args_and_results(fn, forward_graph(op, fn))
    mapping: dict[Tensor, Tensor] = dict(zip(placeholders, args))
    needed = _needed(results, set(mapping))
    copy_ops([n for n in forward_graph(op, fn).get_operations() if n in needed], mapping)
    return [mapping[t] for t in results]


def _passed_through(body: FunctionDef) -> set[int]:
    """The loop variables `body` returns unchanged."""
    args = {n.name: n.attr["index"] for n in body.nodes if n.op == "_Arg"}
    same = set()
    for node in body.nodes:
        if node.op == RETVAL_OP:
            src, index = parse_input(node.input[0])
            if index == 0 and args.get(src) == node.attr["index"]:
                same.add(node.attr["index"])
    return same


@attrs.frozen
class _Step:
    """One backward step of the loop, built in a scratch graph (see the module docstring)."""

    state: list[Tensor]  # placeholders for the loop state
    incoming: list[Tensor]  # placeholders for the gradients of the body's results `wrt`
    outgoing: list[Tensor]  # the gradients with respect to the state `wrt`
    results: list[Tensor]  # the body's results: the next state
    forward: list[Operation]  # the forward part, in graph order
    backward: list[Operation]  # the backward part, in graph order
    recorded: list[Tensor]  # cut tensors recorded per iteration
    invariant: list[Tensor]  # cut tensors computed once
    passed: set[int]  # loop variables the body passes through unchanged


def _build_step(op: Operation, wrt: list[int], shapes: list[TensorShape],
                grad_specs: dict[int, tuple[dtypes.DType, TensorShape]],
                passed: set[int]) -> _Step:
    body = op.get_attr("body")
    scratch = FuncGraph(unique_function_name("while_grad_step"), get_default_graph())
    state = [scratch.add_input(t.dtype, s, "state") for t, s in zip(op.inputs, shapes)]
    incoming = [scratch.add_input(*grad_specs[i], "grad") for i in wrt]
    with scratch.as_default():
        results = replay(op, body, state)
        pulled = gradients([results[i] for i in wrt], [state[i] for i in wrt],
                           grad_ys=incoming)
        outgoing = []
        for i, dy, g in zip(wrt, incoming, pulled):
            if g is None:  # zeros, from the backward side where the shape allows
                g = array_ops.zeros_like(dy if grad_specs[i][1].is_fully_defined()
                                         or state[i].dtype == dtypes.resource else state[i])
            outgoing.append(convert_to_tensor(g))  # sparse (a gather's) densified
    ops = scratch.get_operations()
    backward: set[Operation] = {t.op for t in incoming}
    for node in ops:  # graph order is topological
        if any(t.op in backward for t in node.inputs) or \
                any(c in backward for c in node.control_inputs):
            backward.add(node)
    cut = dict.fromkeys(t for node in ops if node in backward for t in node.inputs
                        if t.op not in backward)
    cut.update(dict.fromkeys(g for g in outgoing if g.op not in backward))
    invariant_ops = {state[j].op for j in passed}
    for node in ops:
        if node.type != "Placeholder" and not node.op_def.stateful and node not in backward \
                and all(t.op in invariant_ops for t in node.inputs) \
                and all(c in invariant_ops for c in node.control_inputs):
            invariant_ops.add(node)
    forward = _needed([*results, *cut], set(state))
    return _Step(state, incoming, outgoing, results,
                 forward=[n for n in ops if n in forward and n not in backward],
                 backward=[n for n in ops if n in backward and n.type != "Placeholder"],
                 recorded=[t for t in cut if t.op not in invariant_ops],
                 invariant=[t for t in cut if t.op in invariant_ops], passed=passed)


@attrs.frozen
class _Record:
    """What a forward loop rewritten to record its iterations records, and how: its first
    `loop_vars` inputs and outputs are the original loop's, then the iteration count, then one
    list per tensor of `step.recorded`."""

    step: _Step
    loop_vars: int
    wrt: list[int]  # the loop variables that get gradients
    grad_specs: dict[int, tuple[dtypes.DType, TensorShape]]  # their gradients' dtype and shape
    shapes: list[TensorShape]  # the original loop's output shapes


class _RecordingGraph(FuncGraph):
    """The forward graph of a loop body that records its iterations: it knows its `_Record`,
    so every loop running that body (the rewritten op, a copy of it) finds what it records."""

    def __init__(self, name: str, outer_graph: Graph, record: _Record) -> None:
        super().__init__(name, outer_graph)
        self.record = record


def _specs(op: Operation) -> tuple[dict[int, tuple[dtypes.DType, TensorShape]], set[int]]:
    """The gradient dtype and shape of each loop variable that gets one, and the variables
    the body passes through unchanged, of a loop not rewritten yet."""
    shapes = [t.shape for t in op.outputs]
    grad_specs = {i: (t.dtype, shapes[i]) for i, t in enumerate(op.inputs) if t.dtype.is_floating}
    passed = _passed_through(op.get_attr("body"))
    for i in passed:
        variable = _variable_of(op.inputs[i]) if op.inputs[i].dtype == dtypes.resource else None
        if variable is not None:
            grad_specs[i] = variable
    return grad_specs, passed


def _function(graph: FuncGraph, specs: list[tuple[dtypes.DType, TensorShape]],
              build: Callable[[list[Tensor]], list[Tensor]]) -> FunctionDef:
    """The function of `graph` (new and empty) taking `specs` and returning what `build`
    makes of its arguments."""
    graph.inputs = [graph.add_input(dtype, shape, "arg") for dtype, shape in specs]
    with graph.as_default():
        outputs = build(graph.inputs)
    return to_function_def(graph, graph.inputs, outputs)


def _rewrite(op: Operation, record: _Record) -> None:
    """Make `op` record its iterations (see the module docstring): new inputs (a zero count,
    an empty list per recorded tensor), made before it in its graph, and new outputs."""
    step, n, graph = record.step, record.loop_vars, op.graph
    ours = len(graph.get_operations())
    scope = op.name.rpartition("/")[0]
    with graph.as_default(), graph.control_dependencies(None), \
            graph.name_scope(f"{scope}/" if scope else ""):
        count = constant(0, name="iteration_count")
        unknown = constant(-1, name="element_shape")
        empty = [apply("EmptyTensorList", [unknown, unknown], {"element_dtype": t.dtype},
                       name="accumulator") for t in step.recorded]
    new_ops = graph.get_operations()[ours:]
    for node in new_ops:
        node._set_device(op.device)
    graph._move_before(op, new_ops)
    specs = [(t.dtype, s) for t, s in zip(op.inputs, record.shapes)]
    specs += [(dtypes.int32, TensorShape([]))] + [(dtypes.variant, TensorShape([]))] * len(empty)

    def body(args: list[Tensor]) -> list[Tensor]:
        mapping = dict(zip(step.state, args[:n]))
        copy_ops(step.forward, mapping)
        return [*(mapping[t] for t in step.results), args[n] + 1,
                *(apply("TensorListPushBack", [items, mapping[t]], {"element_dtype": t.dtype})
                  for items, t in zip(args[n + 1:], step.recorded))]

    body_fn = _function(_RecordingGraph(unique_function_name(f"{op.name}_body_recording"),
                                        graph, record), specs, body)
    cond_fn = _function(FuncGraph(unique_function_name(f"{op.name}_cond_recording"), graph),
                        specs, lambda args: replay(op, op.get_attr("cond"), args[:n])[:1])
    op._extend([count, *empty], {
        "T": [dtype for dtype, _ in specs], "cond": cond_fn, "body": body_fn,
        "output_shapes": [shape for _, shape in specs]}, [TensorSpec(*s) for s in specs[n:]])


def _recorded(op: Operation) -> _Record | None:
    """What `op` records, if it was rewritten to record (or is a copy of one that was)."""
    graph = op.get_attr("body").graph
    return graph.record if isinstance(graph, _RecordingGraph) else None


def _record(op: Operation) -> _Record:
    """Rewrite `op` (not rewritten yet) to record its iterations; what it records."""
    grad_specs, passed = _specs(op)
    wrt = sorted(grad_specs)
    shapes = [t.shape for t in op.outputs]
    record = _Record(_build_step(op, wrt, shapes, grad_specs, passed), len(op.inputs), wrt,
                     grad_specs, shapes)
    _rewrite(op, record)
    return record


def _shaped(grad: Tensor, shape: TensorShape) -> Tensor:
    """`grad` with its output's static shape, which the loop's invariant needs (a densified
    gather gradient comes back with only its rank known)."""
    if grad.shape.is_compatible_with(shape) and grad.shape != shape:
        grad = identity(grad)
        grad.set_shape(shape)
    return grad


def _variable_of(handle: Tensor) -> tuple[dtypes.DType, TensorShape] | None:
    """The dtype and shape of the resource variable `handle` names, when its op says."""
    if handle.op.type != "VarHandleOp":
        return None
    return handle.op.get_attr("dtype"), TensorShape(handle.op.get_attr("shape"))


def _while_grad(op: Operation, *grads: Tensor | None) -> list[Tensor | None]:
    record = _recorded(op)
    if all(grads[i] is None for i in (record.wrt if record else _specs(op)[0])):
        return [None] * len(op.inputs)
    record = record or _record(op)
    step, n, wrt, grad_specs = record.step, record.loop_vars, record.wrt, record.grad_specs
    inputs = list(op.inputs[:n])
    fixed: dict[Tensor, Tensor] = {step.state[j]: inputs[j] for j in step.passed}
    copy_ops([node for node in step.forward if node in _needed(step.invariant, set(fixed))],
             fixed)
    invariant = {t: fixed[t] for t in step.invariant}

    def back(k: Tensor, *carried: Tensor) -> list[Tensor]:
        g, lists = carried[:len(wrt)], carried[len(wrt):]
        mapping = dict(invariant)
        rest = []
        for items, t in zip(lists, step.recorded):
            popped = make_op("TensorListPopBack", [items, constant(-1)],
                             {"element_dtype": t.dtype}).outputs
            popped[1].set_shape(t.shape)
            rest.append(popped[0])
            mapping[t] = popped[1]
        mapping.update(zip(step.incoming, g))
        copy_ops(step.backward, mapping)
        return [k - 1, *(mapping[t] for t in step.outgoing), *rest]

    # a resource handle's zeros read its variable through the loop's input, the handle it
    # passes through unchanged, not its output (a later partial_run call would run the loop
    # again to make a handle, which it cannot feed)
    start = [_shaped(grads[i], grad_specs[i][1]) if grads[i] is not None
             else _zeros(inputs[i] if inputs[i].dtype == dtypes.resource else op.outputs[i],
                         grad_specs[i]) for i in wrt]
    lists = op.outputs[n + 1:]
    result = while_loop(lambda k, *carried: k >= 0, back, [op.outputs[n] - 1, *start, *lists],
                        shape_invariants=[TensorShape([]), *(grad_specs[i][1] for i in wrt),
                                          *(TensorShape([]) for _ in lists)],
                        return_same_structure=True, name="while_grad")
    out: list[Tensor | None] = [None] * len(op.inputs)
    for i, g in zip(wrt, result[1:]):
        out[i] = g
    return out


def _zeros(output: Tensor, spec: tuple[dtypes.DType, TensorShape]) -> Tensor:
    """The starting gradient of a loop output that got none (`output`: the output, or for a
    resource handle the handle itself)."""
    if output.dtype != dtypes.resource:
        return array_ops.zeros_like(output)
    dtype, shape = spec
    if shape.is_fully_defined():
        return array_ops.zeros(shape.as_list(), dtype)
    return array_ops.zeros_like(apply("ReadVariableOp", [output], {"dtype": dtype}))


def register_gradients(registry: Any) -> None:
    registry.add("While", _while_grad)
    registry.add("StatelessWhile", _while_grad)
