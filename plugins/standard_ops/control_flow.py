"""OpDefs of the functional control-flow ops, as TF's control flow v2: ``If``/``StatelessIf``,
``Case``/``StatelessCase`` and ``While``/``StatelessWhile``, whose branches, condition and body
are `FunctionDef` attrs, and ``_FunctionRetval``, the result of a function.

Contract: ``If(cond, input)`` (`cond` of any type ``Tcond``, as TF's) runs ``then_branch`` or
``else_branch`` (attr functions taking ``Tin`` and returning ``Tout``) on ``input``; its outputs
are typed ``Tout`` with ``output_shapes``. ``Case(branch_index, input)`` (an int32 scalar index)
runs ``branches[branch_index]`` of its list of such functions (at least one), and the last
branch when the index is out of range, as TF's (a non-scalar index fails at run time, as there).
``While(input)`` (types ``T``) runs ``body`` (``T`` -> ``T``) while ``cond`` (``T`` -> one
scalar) is true; outputs as inputs, shaped ``output_shapes``. The ``Stateless`` variants promise
their functions hold no stateful op, so they may be merged like any pure op; the plain ones are
stateful (never merged or folded). Creating one whose functions' signatures disagree with the
attrs or inputs raises `TypeError`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.graph.func_graph import RETVAL_OP, FunctionDef
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape


def _check_signature(ctx: InferContext, attr: str, takes: list[Any], gives: list[Any] | None,
                     fn: Any = None) -> FunctionDef:
    """The function attr `attr` (or `fn`, the item of a list attr that `attr` names), checked
    against the types the op feeds it and declares it returns."""
    fn = ctx.attr(attr) if fn is None else fn
    if not isinstance(fn, FunctionDef):
        raise ctx.type_error(f"attr '{attr}' must be a function, got {type(fn).__name__}")
    if fn.arg_types != takes:
        raise ctx.type_error(f"function {fn.name} ({attr}) takes "
                             f"{[t.name for t in fn.arg_types]}, the op feeds "
                             f"{[t.name for t in takes]}")
    if gives is not None and fn.ret_types != gives:
        raise ctx.type_error(f"function {fn.name} ({attr}) returns "
                             f"{[t.name for t in fn.ret_types]}, the op declares "
                             f"{[t.name for t in gives]}")
    return fn


def _outputs(ctx: InferContext, types: list[dtypes.DType]) -> list[TensorSpec]:
    shapes = ctx.attrs.get("output_shapes") or [TensorShape(None)] * len(types)
    if len(shapes) != len(types):
        raise ctx.type_error(f"{len(shapes)} output_shapes for {len(types)} outputs")
    return [TensorSpec(t, s) for t, s in zip(types, shapes)]


def _input_types(ctx: InferContext, first: int, attr: str) -> list[dtypes.DType]:
    types = list(ctx.attr(attr))
    given = [s.dtype for s in ctx.inputs[first:]]
    if given != types:
        raise ctx.type_error(f"attr {attr} is {[t.name for t in types]} but the inputs are "
                             f"{[t.name for t in given]}")
    return types


def _if(ctx: InferContext) -> list[TensorSpec]:
    tin = _input_types(ctx, 1, "Tin")
    tout = list(ctx.attr("Tout"))
    for attr in ("then_branch", "else_branch"):
        _check_signature(ctx, attr, tin, tout)
    return _outputs(ctx, tout)


def _case(ctx: InferContext) -> list[TensorSpec]:
    tin = _input_types(ctx, 1, "Tin")
    tout = list(ctx.attr("Tout"))
    branches = ctx.attr("branches")
    if not isinstance(branches, list) or not branches:
        raise ctx.type_error("attr 'branches' must be a list of at least one function")
    for i in range(len(branches)):
        _check_signature(ctx, f"branches[{i}]", tin, tout, branches[i])
    return _outputs(ctx, tout)


def _while(ctx: InferContext) -> list[TensorSpec]:
    types = _input_types(ctx, 0, "T")
    cond = _check_signature(ctx, "cond", types, None)
    if len(cond.ret_types) != 1:
        raise ctx.type_error(f"function {cond.name} (cond) must return one value")
    _check_signature(ctx, "body", types, types)
    return _outputs(ctx, types)


def register(registry: Any) -> None:
    for name, stateful in (("If", True), ("StatelessIf", False)):
        registry.op(name, ["cond:Tcond", "input:*"], _if, stateful=stateful, list_output=True,
                    attrs={"Tcond": REQUIRED, "Tin": REQUIRED, "Tout": REQUIRED,
                           "then_branch": REQUIRED, "else_branch": REQUIRED,
                           "output_shapes": []})
    for name, stateful in (("Case", True), ("StatelessCase", False)):
        registry.op(name, ["branch_index:int32", "input:*"], _case, stateful=stateful,
                    list_output=True, attrs={"Tin": REQUIRED, "Tout": REQUIRED,
                                             "branches": REQUIRED, "output_shapes": []})
    for name, stateful in (("While", True), ("StatelessWhile", False)):
        registry.op(name, ["input:*"], _while, stateful=stateful, list_output=True,
                    attrs={"T": REQUIRED, "cond": REQUIRED, "body": REQUIRED,
                           "output_shapes": [], "parallel_iterations": 10})
    registry.op(RETVAL_OP, ["input:T"], lambda ctx: [],
                attrs={"T": REQUIRED, "index": REQUIRED}, stateful=True)
