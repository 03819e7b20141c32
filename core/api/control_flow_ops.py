"""Structure ops: ``group``, ``no_op``, ``identity``, ``tuple``."""

from __future__ import annotations

from typing import Any

from tensorweave.api.scopes import name_scope
from tensorweave.framework.graph import Operation, Tensor, get_default_graph
from tensorweave.framework.op_builder import apply, make_op

__all__ = ["group", "identity", "no_op", "tuple"]

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
    """One ``NoOp`` with a control input on each op of `inputs` (nested lists included), so
    running it runs them all."""
    ops = _ops_of(inputs)
    graph = ops[0].graph if ops else get_default_graph()
    with graph.as_default(), graph.control_dependencies(ops):
        return no_op(name=name or "group_deps")


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
