"""Structure ops (``group``, ``no_op``, ``identity``, ``tuple``) and functional control flow
(``cond``, ``case``, ``switch_case``, ``while_loop``), as in ``tf.compat.v1``.

Contract for control flow: the branches, condition and body are Python functions called once,
each building a `FuncGraph` (see `tensorweave.engine.graph.func_graph`); the result is one ``If``
or ``While`` op (``StatelessIf``/``StatelessWhile`` when nothing inside is stateful) carrying
them as `FunctionDef` attrs, as TF's control flow v2 builds. Tensors the functions use from
outside become the op's extra inputs; only the branch taken runs, with its stateful ops.
``switch_case`` is one ``Case`` op over a list of branch functions, as TF builds it.
Signatures, defaults and construction errors follow ``tf.compat.v1``. As TF1, each `cond`
adds a `CondContext` per branch to the ``cond_context`` collection and each `while_loop` a
`WhileContext` to ``while_context``, which a meta graph carries as TF's context defs (see
`tensorweave.api.control_flow_contexts`); the ops themselves are the functional ones.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from tensorweave.api import math_ops
from tensorweave.api.control_flow_contexts import (
    CondContext,
    WhileContext,
    cond_contexts,
    while_context,
)
from tensorweave.api.logging_ops import Assert
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor
from tensorweave.engine.graph.func_graph import (
    FuncGraph,
    FunctionDef,
    build_func_graph,
    to_function_def,
    unique_function_name,
)
from tensorweave.engine.graph.graph import Graph, Operation, Tensor, get_default_graph
from tensorweave.engine.graph.op_builder import apply, make_op
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.tensor_shape import TensorShape, as_shape

__all__ = ["CondContext", "WhileContext", "case", "cond", "group", "identity", "no_op",
           "switch_case", "tuple", "while_loop"]

_tuple = tuple


def no_op(name: str | None = None) -> Operation:
    return make_op("NoOp", [], name=name)


def identity(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    return apply("Identity", [input], name=name)


def _ops_of(inputs: Any) -> list[Operation]:
    out = []
    for x in inputs:
        if hasattr(x, "_as_graph_element"):
            x = x._as_graph_element()
        if isinstance(x, (list, _tuple)):
            out.extend(_ops_of(x))
            continue
        op = x.op if isinstance(x, Tensor) else x
        if not isinstance(op, Operation):
            raise TypeError(f"Expected a Tensor or Operation, got {x!r}")
        out.append(op)
    return out


def group(*inputs: Any, name: str | None = None) -> Operation:
    """A ``NoOp`` that runs every op of `inputs` (nested lists included), built as TF builds
    it: in a ``group_deps`` name scope, with one ``NoOp`` per device of the inputs on that
    device (in device order), or, when all are on one device, the returned ``NoOp`` itself
    there with a control input on each."""
    ops = _ops_of(inputs)
    default = get_default_graph()
    graph = ops[0].graph if ops and not default.encloses(ops[0].graph) else default
    with graph.as_default(), graph.name_scope(name or "group_deps") as scope:
        if not ops:
            return no_op(name=scope)
        by_device: dict[str, list[Operation]] = {}
        for op in ops:
            by_device.setdefault(op.device, []).append(op)
        if len(by_device) == 1:
            ((device, deps),) = by_device.items()
            return _group_on(graph, device, deps, scope)
        per_device = [_group_on(graph, device, by_device[device], None)
                      for device in sorted(by_device)]
        with graph.control_dependencies(per_device):
            return no_op(name=scope)


def _group_on(graph: Graph, device: str, deps: list[Operation], name: str | None) -> Operation:
    with graph.control_dependencies(deps), graph.device(device):
        return no_op(name=name)


def tuple(tensors: Any, name: str | None = None, control_inputs: Any = None) -> list[Any]:  # noqa: A001
    """Tensors with the same values that are available only after all of them are computed."""
    with name_scope(name, "tuple", tensors):
        gate = group(*[t for t in tensors if t is not None], *(control_inputs or ()))
        out = []
        for t in tensors:
            if t is None:
                out.append(None)
                continue
            with get_default_graph().control_dependencies([gate]):
                out.append(identity(t))
        return out


# -- functional control flow: cond, case, while_loop ---------------------------------------------


def _flatten(structure: Any) -> list[Any]:
    """The leaves of a nest of lists, tuples, namedtuples and dicts (dicts by sorted key)."""
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in _flatten(structure[k])]
    if isinstance(structure, (list, _tuple)):
        return [leaf for item in structure for leaf in _flatten(item)]
    return [structure]


def _pack_as(structure: Any, flat: list[Any], *, rebuild_flows: bool = True) -> Any:
    """`flat`'s leaves in the shape of `structure` (inverse of `_flatten`); a TensorArray leaf
    of `structure` is rebuilt around `flat`'s flow unless `rebuild_flows` is off, when `flat`'s
    leaf replaces it as any other."""
    leaves = iter(flat)

    def pack(s: Any) -> Any:
        if isinstance(s, dict):
            packed = {k: pack(s[k]) for k in sorted(s)}
            return type(s)((k, packed[k]) for k in s)
        if isinstance(s, list):
            return [pack(item) for item in s]
        if isinstance(s, _tuple):
            items = [pack(item) for item in s]
            return type(s)(*items) if hasattr(s, "_fields") else _tuple(items)
        leaf = next(leaves)
        return s._with_flow(leaf) if rebuild_flows and hasattr(s, "_with_flow") else leaf

    return pack(structure)


def _flow_of(value: Any) -> Any:
    """What a value travels through control flow as: a composite's (a `TensorArray`'s) flow
    tensor, which `_pack_as` turns back into the composite; else the value itself."""
    return value.flow if hasattr(value, "_with_flow") else value


def _same_structure(a: Any, b: Any) -> bool:
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and sorted(a) == sorted(b)
                and all(_same_structure(a[k], b[k]) for k in a))
    seq_a, seq_b = isinstance(a, (list, _tuple)), isinstance(b, (list, _tuple))
    if seq_a != seq_b:
        return False
    if not seq_a:
        return True
    return len(a) == len(b) and all(_same_structure(x, y) for x, y in zip(a, b))


def _scope_graph(values: Any) -> Graph:
    """The graph new ops go to: the default graph, unless the values belong to another graph
    that does not enclose it."""
    default = get_default_graph()
    for v in values:
        if isinstance(v, Tensor) and not default.encloses(v.graph):
            return v.graph
    return default


def most_specific_compatible_shape(a: TensorShape, b: TensorShape) -> TensorShape:
    """The most specific shape both `a` and `b` are compatible with (TF's
    ``TensorShape.most_specific_compatible_shape``)."""
    if a.dims is None or b.dims is None or len(a.dims) != len(b.dims):
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.dims, b.dims)])


def _check_pred(pred: Tensor, what: str) -> None:
    if pred.dtype != dtypes.bool_:
        raise TypeError(f"{what} must be a bool tensor, got {pred.dtype.name} ({pred.name})")
    if pred.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {pred.shape.ndims} for {what} "
                         f"({pred.name}).")


def _as_outputs(graph: FuncGraph, values: list[Any], signal: bool) -> list[Tensor]:
    """`values` as tensors of `graph`: outer tensors captured, Python values made constants,
    an `Operation` a bool constant (`signal`) that runs after it (TF1 returns the branch
    pivot)."""
    out = []
    with graph.as_default():
        for v in values:
            if isinstance(v, Operation):
                with graph.control_dependencies([v]):
                    v = constant(signal)
            out.append(graph.capture(convert_to_tensor(_flow_of(v))))
    return out


def _captured_by(graphs: list[FuncGraph]) -> list[Tensor]:
    """Every outer tensor any of `graphs` captured, once each, in capture order."""
    return list(dict.fromkeys(t for g in graphs for t in g.outer_inputs()))


def _functions_of(graphs: list[tuple[FuncGraph, list[Tensor]]], leading: int,
                  captured: list[Tensor]) -> list[FunctionDef]:
    """One `FunctionDef` per ``(graph, outputs)``, all taking the same arguments: each graph's
    first `leading` inputs, then the `captured` tensors (captured anew where unused)."""
    functions = []
    for g, outputs in graphs:
        args = g.inputs[:leading] + [g.capture(t) for t in captured]
        functions.append(to_function_def(g, args, outputs, unique_function_name(g.name)))
    return functions


def _control_op(graph: Graph, op_type: str, inputs: list[Any], attrs: dict[str, Any],
                bodies: list[FuncGraph], name: str) -> Operation:
    """Create `op_type` in `graph`, after the outer ops its functions wait for and colocated
    with the variables they assign."""
    control = list(dict.fromkeys(op for g in bodies for op in g.control_captures))
    variables = dict.fromkeys(v for g in bodies for v in g.variables if v.graph is graph)
    if variables:
        attrs["_class"] = sorted({grp for v in variables for grp in v.colocation_groups()})
    with graph.as_default(), graph.control_dependencies(control):
        return graph.create_op(op_type, inputs, attrs, name)


def make_if(pred: Tensor, inputs: list[Tensor], then_fn: FunctionDef, else_fn: FunctionDef,
            output_shapes: list[TensorShape], bodies: list[FuncGraph],
            name: str = "If") -> list[Tensor]:
    """An ``If`` (``StatelessIf`` when neither branch is stateful) over two functions that
    take `inputs` and return the same types; its outputs."""
    ops = get_registries().ops
    stateful = then_fn.is_stateful(ops) or else_fn.is_stateful(ops)
    graph = get_default_graph()
    op = _control_op(graph, "If" if stateful else "StatelessIf", [pred, list(inputs)], {
        "Tin": [t.dtype for t in inputs], "Tout": then_fn.ret_types,
        "then_branch": then_fn, "else_branch": else_fn, "output_shapes": output_shapes,
    }, bodies, name)
    return op.outputs


def cond(pred: Any, true_fn: Callable[[], Any] | None = None,
         false_fn: Callable[[], Any] | None = None, strict: bool = False,
         name: str | None = None, fn1: Callable[[], Any] | None = None,
         fn2: Callable[[], Any] | None = None) -> Any:
    """``true_fn()`` if `pred` is true else ``false_fn()``, as one ``If`` op (TF's control flow
    v2): each branch runs only when taken; tensors the branches use from outside become the
    op's inputs. Both must return the same nested structure and dtypes; a singleton list or
    tuple is unpacked unless `strict`. Output shapes are the most specific shapes compatible
    with both branches."""
    if fn1 is not None:
        if true_fn is not None:
            raise TypeError("cond(): true_fn and fn1 may not be set simultaneously.")
        true_fn = fn1
    if fn2 is not None:
        if false_fn is not None:
            raise TypeError("cond(): false_fn and fn2 may not be set simultaneously.")
        false_fn = fn2
    if true_fn is None:
        raise TypeError("cond(): true_fn argument required")
    if false_fn is None:
        raise TypeError("cond(): false_fn argument required")
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    if isinstance(pred, bool):  # (TF1 graph mode: a numpy bool becomes a constant)
        raise TypeError("pred must not be a Python bool")
    graph = _scope_graph([pred])
    with graph.as_default(), graph.name_scope(name or "cond") as scope:
        pred = convert_to_tensor(pred)
        _check_pred(pred, "cond's pred")
        results = []
        for label, fn in (("true", true_fn), ("false", false_fn)):
            fg, result = build_func_graph(f"{scope}{label}", fn, [], graph,
                                          outer_names=True)
            if not strict and isinstance(result, (list, _tuple)) and len(result) == 1:
                result = result[0]
            results.append((fg, result))
        (g_t, r_t), (g_f, r_f) = results
        if not _same_structure(r_t, r_f):
            raise ValueError("Incompatible return values of true_fn and false_fn: The two "
                             f"structures don't have the same nested structure ({r_t!r} and "
                             f"{r_f!r}).")
        flat_t = _as_outputs(g_t, _flatten(r_t), True)
        flat_f = _as_outputs(g_f, _flatten(r_f), False)
        if not flat_t:
            raise ValueError("true_fn and false_fn must return at least one result.")
        for x, y in zip(flat_t, flat_f):
            if x.dtype != y.dtype:
                raise TypeError("Outputs of true_fn and false_fn must have the same type: "
                                f"{x.dtype.name}, {y.dtype.name}")
        inputs = _captured_by([g_t, g_f])
        then_fn, else_fn = _functions_of([(g_t, flat_t), (g_f, flat_f)], 0, inputs)
        shapes = [most_specific_compatible_shape(x.shape, y.shape) for x, y in zip(flat_t, flat_f)]
        outputs = make_if(pred, inputs, then_fn, else_fn, shapes, [g_t, g_f])
        cond_contexts(graph, pred, outputs[0].op,
                      (graph.unique_name("cond_text"), graph.unique_name("cond_text")), inputs)
        return _pack_as(r_t, outputs)


def case(pred_fn_pairs: Any, default: Callable[[], Any] | None = None, exclusive: bool = False,
         strict: bool = False, name: str = "case") -> Any:
    """The result of the fn of the first true predicate of `pred_fn_pairs` (a list of
    ``(pred, fn)`` pairs, or a dict), else of `default`, as nested `cond`s. Without `default`
    the last pair's fn serves as it, and a run where no predicate is true fails with
    `InvalidArgumentError` ("Input error: None of conditions evaluated as True"); with
    `exclusive`, so does a run where more than one is, as TF's ``Assert``s check."""
    if not isinstance(pred_fn_pairs, (list, _tuple, dict)):
        raise TypeError("fns must be a list, tuple, or dict")
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else \
        list(pred_fn_pairs)
    for pair in pairs:
        if not isinstance(pair, _tuple) or len(pair) != 2:
            raise TypeError("Each entry in pred_fn_pairs must be a 2-tuple")
        pred, fn = pair
        if not isinstance(pred, Tensor):
            raise TypeError(f"pred must be Tensor: {pred!r}")
        if pred.dtype != dtypes.bool_:
            raise TypeError(f"pred must be Tensor of type bool: {pred.name}")
        if not callable(fn):
            raise TypeError(f"fn for pred {pred.name} must be callable.")
    if default is not None and not callable(default):
        raise TypeError("default must be callable.")
    if default is None and not pairs:
        raise ValueError("case() needs at least one (pred, fn) pair or a default.")
    preds = [p for p, _ in pairs]
    graph = _scope_graph(preds)
    with graph.as_default(), graph.name_scope(name):
        checks = []
        if exclusive and len(preds) > 1:
            checks.append(_assert_at_most_one_true(preds))
        if default is None:
            default = pairs.pop()[1]
            stacked = _stack(preds)
            checks.append(Assert(math_ops.reduce_any(stacked), [
                "Input error: None of conditions evaluated as True:", stacked],
                summarize=len(preds)))
        fn = default
        for pred, action in reversed(pairs):
            fn = functools.partial(cond, pred, action, fn, strict)
        result = fn()
        if not checks:
            return result
        with graph.control_dependencies(checks):
            return _pack_as(result, [identity(t) for t in _flatten(result)])


def make_case(branch_index: Tensor, inputs: list[Tensor], branches: list[FunctionDef],
              output_shapes: list[TensorShape], bodies: list[FuncGraph],
              name: str = "Case") -> list[Tensor]:
    """A ``Case`` (``StatelessCase`` when no branch is stateful) over functions that take
    `inputs` and return the same types; its outputs."""
    ops = get_registries().ops
    stateful = any(fn.is_stateful(ops) for fn in branches)
    op = _control_op(get_default_graph(), "Case" if stateful else "StatelessCase",
                     [branch_index, list(inputs)], {
                         "Tin": [t.dtype for t in inputs], "Tout": branches[0].ret_types,
                         "branches": list(branches), "output_shapes": output_shapes,
                     }, bodies, name)
    return op.outputs


def switch_case(branch_index: Any, branch_fns: Any, default: Callable[[], Any] | None = None,
                name: str | None = "switch_case") -> Any:
    """The result of the branch whose key is `branch_index` (an int32 scalar tensor), else of
    `default`, else of the highest-keyed branch. `branch_fns` is a dict of int keys, a list of
    ``(int, fn)`` pairs, or a list of fns keyed by position; the keys must be ``0..n-1``. As
    TF's, it is one ``Case`` op (``<name>/indexed_case``) whose ``branches`` are the fns (then
    `default`), each followed by an ``Identity``; only the chosen branch runs, and an index
    out of range runs the last one. Every branch must return the same structure and dtypes
    (`TypeError`); output shapes are the most specific ones compatible with all."""
    if not isinstance(branch_index, Tensor):
        raise TypeError(f"'branch_index' must be a Tensor, got {type(branch_index)}")
    if not branch_index.dtype.is_integer:
        raise TypeError(f"'branch_index' must be an integer Tensor, got {branch_index.dtype}")
    if not branch_fns:
        raise ValueError("Must provide at least one item in 'branch_fns'")
    if not isinstance(branch_fns, (list, _tuple, dict)):
        raise TypeError("'branch_fns' must be a list, tuple, or dict")
    pairs = list(branch_fns.items()) if isinstance(branch_fns, dict) else list(branch_fns)
    if all(callable(fn) for fn in pairs):
        pairs = list(enumerate(pairs))
    for pair in pairs:
        if not isinstance(pair, _tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'branch_fns' must be a 2-tuple. Received {pair}.")
        key, fn = pair
        if not isinstance(key, int):
            raise TypeError(f"key must be a Python `int`, got {type(key)}")
        if not callable(fn):
            raise TypeError(f"fn for key {key} must be callable.")
    keys = sorted(key for key, _ in pairs)
    if keys != list(range(len(keys))):
        raise ValueError(f"branch indices (keys) must form contiguous range of [0 to "
                         f"{len(keys)}) but found {{{','.join(map(str, keys))}}}")
    actions = [fn for _, fn in sorted(pairs, key=lambda p: p[0])]
    if default is not None:
        if not callable(default):
            raise TypeError("default must be callable.")
        actions.append(default)
    graph = _scope_graph([branch_index])
    with graph.as_default(), graph.name_scope(name or "case"), \
            graph.name_scope("indexed_case") as scope:
        built = [build_func_graph(f"{scope}branch{b}", fn, [], graph, outer_names=True)
                 for b, fn in enumerate(actions)]
        flats = [_as_outputs(g, _flatten(result), True) for g, result in built]
        first = built[0][1]
        for b, (_, result) in enumerate(built[1:], 1):
            _check_same_outputs(first, flats[0], b, result, flats[b])
        inputs = _captured_by([g for g, _ in built])
        branches = _functions_of([(g, flat) for (g, _), flat in zip(built, flats)], 0, inputs)
        shapes = [functools.reduce(most_specific_compatible_shape, [f[j].shape for f in flats])
                  for j in range(len(flats[0]))]
        outputs = make_case(branch_index, inputs, branches, shapes, [g for g, _ in built], scope)
        return _pack_as(first, [identity(t) for t in outputs])


def _check_same_outputs(first: Any, first_flat: list[Tensor], b: int, other: Any,
                        other_flat: list[Tensor]) -> None:
    """TF's `TypeError` unless branch `b` returns what branch 0 does: structure and dtypes."""
    detail = None
    if not _same_structure(first, other):
        detail = "The two structures don't have the same nested structure."
    else:
        for x, y in zip(first_flat, other_flat):
            if x.dtype != y.dtype:
                detail = f"{x} and {y} have different types"
                break
    if detail is not None:
        raise TypeError(
            f"branches[0] and branches[{b}] arguments to tf.switch_case must have the same "
            "number, type, and overall structure of return values.\n\n"
            f"branches[0] output: {first}\nbranches[{b}] output: {other}\n\n"
            f"Error details:\n{detail}")


def _stack(preds: list[Tensor]) -> Tensor:
    return apply("Pack", [list(preds)], {"axis": 0}, name="preds_c")


def _assert_at_most_one_true(preds: list[Tensor]) -> Operation:
    stacked = _stack(preds)
    count = math_ops.reduce_sum(math_ops.cast(stacked, dtypes.int32))
    names = ", ".join(p.name for p in preds)
    return Assert(math_ops.less_equal(count, 1), [
        f"Input error: exclusive=True: more than 1 conditions ({names}) evaluated as True:",
        stacked], summarize=len(preds))


def _shape_less_than_or_equal(shape: TensorShape, invariant: TensorShape) -> bool:
    if invariant.dims is None:
        return True
    if shape.dims is None or len(shape.dims) != len(invariant.dims):
        return False
    return all(b is None or a == b for a, b in zip(shape.dims, invariant.dims))


def while_loop(cond: Callable[..., Any], body: Callable[..., Any], loop_vars: Any,
               shape_invariants: Any = None, parallel_iterations: int = 10,
               back_prop: bool = True, swap_memory: bool = False, name: str | None = None,
               maximum_iterations: Any = None, return_same_structure: bool = False) -> Any:
    """Repeat `body` while `cond` is true, as one ``While`` op (TF's control flow v2). `cond`
    and `body` take as many arguments as `loop_vars` (a nested structure); `body` returns the
    same structure and dtypes. A loop variable's shape must not become more general across
    iterations unless `shape_invariants` says so (`ValueError` here, as TF). With
    `maximum_iterations` the loop stops after that many iterations at most. One loop variable
    comes back unpacked unless `return_same_structure`. A `TensorArray` loop variable travels
    as its flow tensor and comes back a TensorArray. `back_prop=False` stops gradients;
    `parallel_iterations` and `swap_memory` are accepted for compatibility (iterations run in
    order on the op's device)."""
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    if not isinstance(parallel_iterations, int) or parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    if isinstance(loop_vars, (list, _tuple, dict)) and not _flatten(loop_vars):
        raise ValueError("No loop variables provided")
    structure = loop_vars if isinstance(loop_vars, (list, _tuple)) else [loop_vars]
    graph = _scope_graph(_flatten(structure))
    with graph.as_default(), graph.name_scope(name or "while") as scope:
        if maximum_iterations is not None:
            maximum_iterations = convert_to_tensor(maximum_iterations,
                                                   name="maximum_iterations")
            if maximum_iterations.shape.ndims != 0:
                raise ValueError("maximum_iterations must be a scalar, saw shape: "
                                 f"{maximum_iterations.shape}")
            limit, user_cond, user_body = maximum_iterations, cond, body
            counter = constant(0, dtype=limit.dtype, name="iteration_counter")
            structure = [counter, list(structure)]
            if shape_invariants is not None:
                shape_invariants = [TensorShape([]), shape_invariants]

            def cond(i: Tensor, lv: list[Any]) -> Any:
                return math_ops.logical_and(math_ops.less(i, limit), user_cond(*lv))

            def body(i: Tensor, lv: list[Any]) -> Any:
                return [i + 1, _as_list(user_body(*lv))]

        flat = [convert_to_tensor(_flow_of(v)) for v in _flatten(structure)]
        invariants = _invariants(flat, shape_invariants)
        specs = [(t.dtype, s) for t, s in zip(flat, invariants)]
        args_as = list(structure)

        def call(fn: Callable[..., Any]) -> Callable[..., Any]:
            return lambda *args: fn(*_pack_as(args_as, list(args)))

        g_c, pred = build_func_graph(f"{scope}cond", call(cond), specs, graph,
                                     outer_names=True)
        (pred,) = _as_outputs(g_c, [pred], True)
        _check_pred(pred, "while_loop's cond result")
        g_b, result = build_func_graph(f"{scope}body", call(body), specs, graph,
                                       outer_names=True)
        result = _as_list(result) if not isinstance(result, (list, _tuple, dict)) else result
        if not _same_structure(list(structure), _as_list(result)):
            raise ValueError("body must return the same structure as loop_vars: "
                             f"{structure!r} and {result!r}")
        outputs = _as_outputs(g_b, _flatten(result), True)
        for t, out, shape in zip(flat, outputs, invariants):
            if out.dtype != t.dtype:
                raise TypeError(f"Loop var {t.name} enters the loop with type {t.dtype!r}, "
                                f"but has type {out.dtype!r} after 1 iteration.")
            if not _shape_less_than_or_equal(out.shape, shape):
                raise ValueError(
                    f"Input tensor '{t.name}' enters the loop with shape {shape}, but has "
                    f"shape {out.shape} after one iteration. To allow the shape to vary across "
                    "iterations, use the `shape_invariants` argument of tf.while_loop to "
                    "specify a less-specific shape.")
        n = len(flat)
        captured = _captured_by([g_c, g_b])
        body_outputs = outputs + [g_b.capture(t) for t in captured]  # passed through unchanged
        cond_fn, body_fn = _functions_of([(g_c, [pred]), (g_b, body_outputs)], n, captured)
        inputs = flat + captured
        ops = get_registries().ops
        stateful = cond_fn.is_stateful(ops) or body_fn.is_stateful(ops)
        op = _control_op(graph, "While" if stateful else "StatelessWhile", [inputs], {
            "T": [t.dtype for t in inputs], "cond": cond_fn, "body": body_fn,
            "output_shapes": invariants + [t.shape for t in captured],
            "parallel_iterations": parallel_iterations,
        }, [g_c, g_b], "While")
        while_context(graph, graph.unique_name("while_context"), op, n, parallel_iterations,
                      back_prop, swap_memory, maximum_iterations)
        exits = op.outputs[:n]
        if not back_prop:  # TF1: no gradient flows back through the loop
            exits = [apply("StopGradient", [t]) for t in exits]
        packed = _pack_as(result, exits)
        if maximum_iterations is not None:
            packed = packed[1]
        if not return_same_structure and len(_flatten(packed)) == 1:
            return _flatten(packed)[0]
        return packed


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, _tuple)) else [value]


def _invariants(flat: list[Tensor], shape_invariants: Any) -> list[TensorShape]:
    if shape_invariants is None:
        return [t.shape for t in flat]
    shapes = [as_shape(s) for s in _flatten_shapes(shape_invariants)]
    if len(shapes) != len(flat):
        raise ValueError(f"shape_invariants has {len(shapes)} shapes for {len(flat)} loop "
                         "variables")
    for t, s in zip(flat, shapes):
        if not _shape_less_than_or_equal(t.shape, s):
            raise ValueError(
                f"The shape invariant specified for {t.name} is not compatible with the "
                f"initial shape of the loop variable. It enters the loop with shape {t.shape}, "
                f"but the specified shape invariant is {s}.")
    return shapes


def _flatten_shapes(value: Any) -> list[Any]:
    """Leaves of a nest of shapes; a list of ints or Nones is one shape."""
    if isinstance(value, TensorShape) or value is None:
        return [value]
    if isinstance(value, dict):
        return [s for k in sorted(value) for s in _flatten_shapes(value[k])]
    if isinstance(value, (list, _tuple)):
        if all(d is None or isinstance(d, int) for d in value):
            return [value]
        return [s for item in value for s in _flatten_shapes(item)]
    return [value]
