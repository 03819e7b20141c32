"""Every registered op as a function: ``tw.raw_ops.AddV2(x=..., y=..., name=None)``.

Contract: arguments are keywords, as in TF: the op's inputs by name (a list for list inputs;
TF's Python name where its ApiDef renames one, as ``Sum``'s ``axis``), then its attrs. The
result is the op's only output, the list of its outputs, or the `Operation` itself when it has
none. An unknown op raises `AttributeError`. Functions are made once per registries
(`plugin_manager.reset` makes new ones, and so new functions).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.engine.graph.op_builder import make_op
from tensorweave.engine.plugin_manager import get_registries

_cache: dict[str, tuple[Any, Callable[..., Any]]] = {}  # name -> (its op registry, function)


def _make(op_name: str) -> Callable[..., Any]:
    op_def = get_registries().ops.get(op_name)
    if op_def is None:
        raise AttributeError(f"module 'tensorweave.api.raw_ops' has no op '{op_name}'")
    input_names = op_def.api_input_names

    def op_function(*, name: str | None = None, **kwargs: Any) -> Any:
        missing = [n for n in input_names if n not in kwargs]
        if missing:
            raise TypeError(f"{op_name}() missing required inputs {missing}")
        inputs = [kwargs.pop(n) for n in input_names]
        op = make_op(op_name, inputs, kwargs, name)
        outputs = op.outputs
        if not outputs:
            return op
        return outputs if op_def.list_output or len(outputs) > 1 else outputs[0]

    op_function.__name__ = op_name
    op_function.__doc__ = op_def.doc or f"The {op_name} op: inputs {list(input_names)}."
    return op_function


def __getattr__(name: str) -> Callable[..., Any]:
    if name.startswith("__"):
        raise AttributeError(name)
    ops = get_registries().ops
    cached = _cache.get(name)
    if cached is None or cached[0] is not ops:
        cached = _cache[name] = (ops, _make(name))
    return cached[1]


def __dir__() -> list[str]:
    return get_registries().ops.names()

