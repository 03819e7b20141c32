"""Gradient of the functional ``While`` op: the loop is run again to record what the backward
pass needs of each iteration, then a backward loop pulls the gradient through one iteration at
a time. It costs O(n) body evaluations for n iterations.

Contract:

- One backward step is built once, in a scratch graph: the body's forward ops (copied from its
  forward graph) on placeholders for the loop state, and ``tw.gradients`` of the body's floating
  results on placeholders for their incoming gradients. The ops that depend on those incoming
  gradients form the backward part; every other tensor the backward part reads (an activation,
  a shape, a mask) is *cut*.
- A cut tensor that depends only on loop-invariant values (captured tensors, and loop variables
  the body passes through unchanged) and on no stateful op is computed once, before the
  backward loop. Every other cut tensor is recorded: a second forward loop runs the forward
  part needed by the loop state and the cut, and appends each iteration's cut tensors,
  flattened, to one 1-D buffer per dtype, with their dynamic shapes (when not static) in an
  int64 buffer and each iteration's offsets into both in a third. Appending copies the buffer,
  so recording costs O(n^2) element copies (no body evaluation); memory is O(n) times the cut.
- The backward loop counts ``k = n-1 .. 0``, reads iteration k's cut tensors back (sliced and
  reshaped) and runs the backward part on them and on the carried gradients.
- Captured tensors (the op's inputs after the loop variables) receive the sum over all
  iterations. A resource variable's handle that the loop carries unchanged receives its
  variable's gradient (the variable's dtype and shape, from its ``VarHandleOp``): the sum over
  all iterations of the gradients of the body's reads, as ``ReadVariableOp`` gives a handle.
  Stateful ops of the body (an assign, a random op) run once more in the recording loop, so
  a random op draws new values there: differentiate such loops only where that is what is
  wanted (TF records them instead).
- Functions whose forward graph is not at hand (a function that came over the wire) have no
  gradient: `LookupError` naming the op.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from tensorweave.api import array_ops, math_ops
from tensorweave.api.control_flow_ops import identity, while_loop
from tensorweave.api.gradients import gradients
from tensorweave.api.op_copy import copy_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor
from tensorweave.engine.graph.func_graph import (
    RETVAL_OP,
    FuncGraph,
    FunctionDef,
    unique_function_name,
)
from tensorweave.engine.graph.graph import Operation, Tensor, get_default_graph
from tensorweave.engine.graph.graph_def import parse_input
from tensorweave.engine.graph.op_builder import apply
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


def _groups(recorded: list[Tensor]) -> dict[dtypes.DType, list[Tensor]]:
    """The recorded tensors per dtype, in buffer order: those of static shape first, so each
    iteration's static part is one block that a single slice reads back."""
    groups: dict[dtypes.DType, list[Tensor]] = {}
    for t in sorted(recorded, key=lambda t: not t.shape.is_fully_defined()):
        groups.setdefault(t.dtype, []).append(t)
    return groups


def _shape_record(t: Tensor) -> list[Tensor]:
    """What the shape buffer holds for `t`: nothing when static, else its shape, preceded by
    its rank when that is not static either."""
    if t.shape.is_fully_defined():
        return []
    shape = array_ops.shape(t, out_type=dtypes.int64)
    if t.shape.ndims is None:
        return [array_ops.reshape(math_ops.cast(array_ops.rank(t), dtypes.int64), [1]), shape]
    return [shape]


def _record(op: Operation, step: _Step, shapes: list[TensorShape]) -> tuple[Tensor, list[Tensor]]:
    """Run the loop again from the op's inputs, recording `step.recorded` every iteration;
    the iteration count and the buffers ``[offsets, shapes, values per dtype...]``."""
    cond = op.get_attr("cond")
    groups = _groups(step.recorded)
    n = len(step.state)

    def body(i: Tensor, *carried: Tensor) -> list[Tensor]:
        state, (offsets, shape_buf, *values) = list(carried[:n]), carried[n:]
        mapping = dict(zip(step.state, state))
        copy_ops(step.forward, mapping)
        now = [array_ops.size(shape_buf, out_type=dtypes.int64)]
        now += [array_ops.size(v, out_type=dtypes.int64) for v in values]
        ordered = [t for group in groups.values() for t in group]
        new_shapes = [shape_buf, *(s for t in ordered for s in _shape_record(mapping[t]))]
        new_values = [array_ops.concat([v, *(array_ops.reshape(mapping[t], [-1]) for t in group)],
                                       0) for v, group in zip(values, groups.values())]
        return [i + 1, *(mapping[t] for t in step.results),
                array_ops.concat([offsets, array_ops.stack(now)], 0),
                array_ops.concat(new_shapes, 0), *new_values]

    empty = [array_ops.zeros([0], dtype) for dtype in (dtypes.int64, dtypes.int64, *groups)]
    out = while_loop(lambda i, *carried: replay(op, cond, list(carried[:n]))[0], body,
                     [constant(0), *op.inputs, *empty],
                     shape_invariants=[TensorShape([]), *shapes,
                                       *(TensorShape([None]) for _ in empty)],
                     return_same_structure=True, name="record")
    return out[0], list(out[1 + n:])


def _slice(buffer: Tensor, begin: Any, size: Any) -> Tensor:
    """``buffer[begin:begin + size]``, for int64 tensors or Python ints."""
    begin, size = (array_ops.reshape(convert_to_tensor(x, dtypes.int64), [1])
                   for x in (begin, size))
    return array_ops.slice(buffer, begin, size)


def _read_back(step: _Step, k: Tensor, buffers: list[Tensor]) -> dict[Tensor, Tensor]:
    """Iteration `k`'s recorded tensors, from `_record`'s buffers."""
    offsets, shape_buf, *values = buffers
    groups = _groups(step.recorded)
    starts = _slice(offsets, math_ops.cast(k, dtypes.int64) * (1 + len(groups)),
                    1 + len(groups))
    at = starts[0]
    out = {}
    for g, (buffer, group) in enumerate(zip(values, groups.values())):
        static = [t for t in group if t.shape.is_fully_defined()]
        sizes = [t.shape.num_elements() for t in static]
        begin: Any = starts[1 + g]
        if static:
            block = _slice(buffer, begin, sum(sizes))
            parts = array_ops.split(block, sizes) if len(static) > 1 else [block]
            out.update((t, array_ops.reshape(p, t.shape.as_list())) for t, p in zip(static, parts))
            begin = begin + sum(sizes)
        for t in group[len(static):]:
            rank: Any = t.shape.ndims
            if rank is None:
                rank = _slice(shape_buf, at, 1)[0]
                at = at + 1
            shape = _slice(shape_buf, at, math_ops.cast(rank, dtypes.int64))
            at = at + rank
            size = math_ops.reduce_prod(shape)
            value = array_ops.reshape(_slice(buffer, begin, size), shape)
            value.set_shape(t.shape)
            out[t] = value
            begin = begin + size
    return out


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
    inputs = list(op.inputs)
    shapes = [t.shape for t in op.outputs]
    grad_specs = {i: (t.dtype, shapes[i]) for i, t in enumerate(inputs) if t.dtype.is_floating}
    passed = _passed_through(op.get_attr("body"))
    for i in passed:
        variable = _variable_of(inputs[i]) if inputs[i].dtype == dtypes.resource else None
        if variable is not None:
            grad_specs[i] = variable
    wrt = sorted(grad_specs)
    if all(grads[i] is None for i in wrt):
        return [None] * len(inputs)
    step = _build_step(op, wrt, shapes, grad_specs, passed)
    count, buffers = _record(op, step, shapes)
    fixed: dict[Tensor, Tensor] = {step.state[j]: inputs[j] for j in step.passed}
    copy_ops([n for n in step.forward if n in _needed(step.invariant, set(fixed))], fixed)
    invariant = {t: fixed[t] for t in step.invariant}

    def back(k: Tensor, *g: Tensor) -> list[Tensor]:
        mapping = _read_back(step, k, buffers)
        mapping.update(invariant)
        mapping.update(zip(step.incoming, g))
        copy_ops(step.backward, mapping)
        return [k - 1, *(mapping[t] for t in step.outgoing)]

    # a resource handle's zeros read its variable through the loop's input, the handle it
    # passes through unchanged, not its output: nothing then waits on the forward loop (a
    # later partial_run call would run it again)
    start = [_shaped(grads[i], grad_specs[i][1]) if grads[i] is not None
             else _zeros(inputs[i] if inputs[i].dtype == dtypes.resource else op.outputs[i],
                         grad_specs[i]) for i in wrt]
    result = while_loop(lambda k, *g: k >= 0, back, [count - 1, *start],
                        shape_invariants=[TensorShape([]), *(grad_specs[i][1] for i in wrt)],
                        return_same_structure=True, name="while_grad")
    out: list[Tensor | None] = [None] * len(inputs)
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
