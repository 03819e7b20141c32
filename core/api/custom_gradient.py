"""User gradients: ``tw.RegisterGradient``, ``tw.no_gradient`` (``NotDifferentiable``,
``NoGradient``) and ``tw.custom_gradient``, as in ``tf.compat.v1`` graph mode.

Contract: `RegisterGradient("Name")` decorates ``fn(op, *grads)`` and registers it under
``Name``; registering a name twice, or one the plugins already define, raises `KeyError`.
`no_gradient("OpType")` declares an op type not differentiable. An op whose ``_gradient_op_type``
attr (set by ``Graph.gradient_override_map``) names a gradient registered here, or a built-in
op type's, uses it; otherwise an op type registered here is looked up
before the plugins' registry (`lookup`, called by ``tw.gradients``).

`custom_gradient(f)`: ``f(*inputs)`` returns ``(y, grad_fn)``; the wrapped function returns `y`
(a tensor or a nest of them) through one ``IdentityN`` over ``y + inputs + variables`` whose
gradient is ``grad_fn(*dys)``, so grad_fn's input gradients replace the ones the forward ops
would give. The variables are those the forward pass reads (found by walking its ops back to
`inputs`); when there are any, ``grad_fn(*dys, variables=...)`` must return ``(input_grads,
variable_grads)``, one per variable (`ValueError` otherwise), and a grad_fn without a
``variables`` parameter is a `TypeError`, as in TF. Keyword arguments are refused in graph mode.
"""

from __future__ import annotations

import functools
import inspect
import itertools
from collections.abc import Callable
from typing import Any

from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import GraphKeys, Operation, Tensor, get_default_graph
from tensorweave.engine.graph.op_builder import make_op
from tensorweave.engine.plugin_manager import get_registries

__all__ = ["NoGradient", "NotDifferentiable", "RegisterGradient", "custom_gradient",
           "no_gradient"]

GradientFn = Callable[..., Any]
_registered: dict[str, GradientFn | None] = {}
_uids = itertools.count()
_OVERRIDE_ATTR = "_gradient_op_type"


def _register(name: str, fn: GradientFn | None) -> None:
    if not isinstance(name, str):
        raise TypeError("op_type must be a string")
    if name in _registered or name in get_registries().gradients:
        raise KeyError(f"Registering two gradient with name '{name}'!")
    _registered[name] = fn


class RegisterGradient:
    """Decorator registering a gradient function under `op_type`."""

    def __init__(self, op_type: str) -> None:
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, fn: GradientFn) -> GradientFn:
        _register(self._op_type, fn)
        return fn


def no_gradient(op_type: str) -> None:
    """Declare `op_type` not differentiable: gradients stop there instead of failing."""
    _register(op_type, None)


NotDifferentiable = NoGradient = no_gradient


def lookup(op: Operation) -> GradientFn | None:
    """The gradient function of `op`: the one registered under its ``_gradient_op_type`` attr
    (``Graph.gradient_override_map``) or else its type, here first, then the plugins' registry,
    then its op def's own; ``None`` if it is not differentiable; `LookupError` if it has none."""
    override = op.attrs.get(_OVERRIDE_ATTR)
    name = op.type if override is None else (
        override.decode() if isinstance(override, bytes) else override)
    if name in _registered:
        return _registered[name]
    registries = get_registries()
    if name in registries.gradients:
        return registries.gradients.get(name)
    op_def = registries.ops.get(name)
    if op_def is not None and op_def.grad is not None:
        return op_def.grad
    detail = "" if override is None else f": gradient '{name}' is not registered"
    raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type})"
                      f"{detail}")


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _flatten(item)]
    return [value]


def _pack(structure: Any, flat: Any) -> Any:
    if isinstance(structure, (list, tuple)):
        items = [_pack(item, flat) for item in structure]
        return type(structure)(items) if isinstance(structure, list) or not hasattr(
            structure, "_fields") else type(structure)(*items)
    return next(flat)


def _variables_read(results: list[Tensor], inputs: list[Tensor]) -> list[Any]:
    """The graph's variables whose ops the forward pass reaches from `results`, not crossing
    `inputs` (TF's tape of watched variables, for ref variables)."""
    graph = get_default_graph()
    by_op = {v.op: v for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES)
             for v in graph.get_collection(key) if hasattr(v, "_ref")}
    stop = {t.op for t in inputs}
    seen: set[Operation] = set()
    found: dict[Operation, Any] = {}
    stack = [t.op for t in results]
    while stack:
        op = stack.pop()
        if op in seen or op in stop:
            continue
        seen.add(op)
        if op in by_op:
            found[op] = by_op[op]
            continue
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return list(found.values())


def _accepts_variables(grad_fn: GradientFn) -> bool:
    params = inspect.signature(grad_fn).parameters.values()
    return any(p.name == "variables" or p.kind is p.VAR_KEYWORD for p in params)


def custom_gradient(f: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator: `f` returns ``(y, grad_fn)``; see the module docstring."""

    @functools.wraps(f)
    def decorated(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise ValueError("The custom_gradient decorator currently supports keywords "
                             "arguments only when eager execution is enabled.")
        inputs = [convert_to_tensor(x) for x in args]
        result, grad_fn = f(*inputs)
        flat = [convert_to_tensor(y) for y in _flatten(result)]
        variables = _variables_read(flat, inputs)
        takes_variables = _accepts_variables(grad_fn)
        if variables and not takes_variables:
            raise TypeError("If using @custom_gradient with a function that uses variables, "
                            "then grad_fn must accept a keyword argument 'variables'.")
        name = f"CustomGradient-{next(_uids)}"

        def identity_n_grad(op: Operation, *grads: Any) -> list[Any]:
            dys = list(grads[:len(flat)])
            if variables:
                input_grads, variable_grads = grad_fn(*dys, variables=variables)
                if len(variable_grads) != len(variables):
                    raise ValueError("Must return gradient for each variable from "
                                     "@custom_gradient grad_fn.")
            else:
                input_grads, variable_grads = grad_fn(*dys), []
            input_grads = _flatten(input_grads)
            if len(input_grads) != len(inputs):
                raise ValueError(f"custom_gradient function expected to return {len(inputs)} "
                                 f"gradients but returned {len(input_grads)} instead.")
            return [None] * len(flat) + input_grads + list(variable_grads)

        _register(name, identity_n_grad)
        reads = [v.value() for v in variables]
        op = make_op("IdentityN", [flat + inputs + reads], {_OVERRIDE_ATTR: name})
        return _pack(result, iter(op.outputs[:len(flat)]))

    return decorated
