"""Assignments and placeholders: ``assign``, ``assign_add``, ``assign_sub``, the scatter updates
(``scatter_update``, ``scatter_add``, ..., ``scatter_nd_update``, ...), ``placeholder``."""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "assign", "assign_add", "assign_sub", "is_variable_initialized", "placeholder",
    "placeholder_with_default", "scatter_add", "scatter_div", "scatter_max", "scatter_min",
    "scatter_mul", "scatter_nd_add", "scatter_nd_sub", "scatter_nd_update", "scatter_sub",
    "scatter_update",
]


def _ref(ref: Any) -> Any:
    return ref._ref() if hasattr(ref, "_ref") else ref


def _is_resource(ref: Any) -> bool:
    """Whether `ref` is a resource variable, whose methods make its updates."""
    return hasattr(ref, "_ref") and ref._ref().dtype == dtypes.resource


def assign(ref: Any, value: Any, validate_shape: bool | None = None,
           use_locking: bool | None = None, name: str | None = None) -> Tensor:
    attrs: dict[str, Any] = {}
    if validate_shape is not None:
        attrs["validate_shape"] = validate_shape
    if use_locking is not None:
        attrs["use_locking"] = use_locking
    if _is_resource(ref):
        return ref.assign(value, name=name)
    return apply("Assign", [_ref(ref), value], attrs, name=name or "Assign")


def assign_add(ref: Any, value: Any, use_locking: bool | None = None,
               name: str | None = None) -> Tensor:
    if _is_resource(ref):
        return ref.assign_add(value, name=name)
    attrs = {} if use_locking is None else {"use_locking": use_locking}
    return apply("AssignAdd", [_ref(ref), value], attrs, name=name or "AssignAdd")


def assign_sub(ref: Any, value: Any, use_locking: bool | None = None,
               name: str | None = None) -> Tensor:
    if _is_resource(ref):
        return ref.assign_sub(value, name=name)
    attrs = {} if use_locking is None else {"use_locking": use_locking}
    return apply("AssignSub", [_ref(ref), value], attrs, name=name or "AssignSub")


def _scatter(op_type: str, ref: Any, indices: Any, updates: Any, use_locking: bool,
             name: str | None) -> Tensor:
    if _is_resource(ref):  # ScatterAdd -> scatter_add, ScatterNdAdd -> scatter_nd_add
        kind = op_type[len("Scatter"):]
        method = "scatter_nd_" + kind[2:].lower() if kind.startswith("Nd") \
            else "scatter_" + kind.lower()
        return getattr(ref, method)(indices, updates, name=name)
    return apply(op_type, [_ref(ref), indices, updates], {"use_locking": use_locking},
                 name=name or op_type)


def scatter_update(ref: Any, indices: Any, updates: Any, use_locking: bool = True,
                   name: str | None = None) -> Tensor:
    return _scatter("ScatterUpdate", ref, indices, updates, use_locking, name)


def scatter_add(ref: Any, indices: Any, updates: Any, use_locking: bool = False,
                name: str | None = None) -> Tensor:
    return _scatter("ScatterAdd", ref, indices, updates, use_locking, name)


def scatter_sub(ref: Any, indices: Any, updates: Any, use_locking: bool = False,
                name: str | None = None) -> Tensor:
    return _scatter("ScatterSub", ref, indices, updates, use_locking, name)


def scatter_mul(ref: Any, indices: Any, updates: Any, use_locking: bool = False,
                name: str | None = None) -> Tensor:
    return _scatter("ScatterMul", ref, indices, updates, use_locking, name)


def scatter_div(ref: Any, indices: Any, updates: Any, use_locking: bool = False,
                name: str | None = None) -> Tensor:
    return _scatter("ScatterDiv", ref, indices, updates, use_locking, name)


def scatter_max(ref: Any, indices: Any, updates: Any, use_locking: bool = False,
                name: str | None = None) -> Tensor:
    return _scatter("ScatterMax", ref, indices, updates, use_locking, name)


def scatter_min(ref: Any, indices: Any, updates: Any, use_locking: bool = False,
                name: str | None = None) -> Tensor:
    return _scatter("ScatterMin", ref, indices, updates, use_locking, name)


def scatter_nd_update(ref: Any, indices: Any, updates: Any, use_locking: bool = True,
                      name: str | None = None) -> Tensor:
    return _scatter("ScatterNdUpdate", ref, indices, updates, use_locking, name)


def scatter_nd_add(ref: Any, indices: Any, updates: Any, use_locking: bool = False,
                   name: str | None = None) -> Tensor:
    return _scatter("ScatterNdAdd", ref, indices, updates, use_locking, name)


def scatter_nd_sub(ref: Any, indices: Any, updates: Any, use_locking: bool = False,
                   name: str | None = None) -> Tensor:
    return _scatter("ScatterNdSub", ref, indices, updates, use_locking, name)


def is_variable_initialized(variable: Any) -> Tensor:
    if _is_resource(variable):
        return variable.is_initialized()
    ref = _ref(variable)
    return apply("IsVariableInitialized", [ref], {"dtype": ref.dtype})


def placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> Tensor:
    return apply("Placeholder", [], {"dtype": dtypes.as_dtype(dtype),
                                     "shape": TensorShape(shape)}, name=name or "Placeholder")


def placeholder_with_default(input: Any, shape: Any, name: str | None = None) -> Tensor:  # noqa: A002
    return apply("PlaceholderWithDefault", [input], {"shape": TensorShape(shape)},
                 name=name or "PlaceholderWithDefault")
