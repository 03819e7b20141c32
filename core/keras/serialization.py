"""Constructor arguments as JSON values, for ``get_config`` / ``from_config``.

Contract: `serialize_arguments(fn, args, kwargs)` binds the arguments of a call to `fn` (a
constructor, ``self`` left out) to their parameter names, extra keyword arguments flattened in,
and turns each value into JSON: numbers, strings, booleans and None as they are, tuples as
lists, dicts by value, objects with a ``get_config`` (initializers, regularizers, constraints)
as ``{"class_name", "config"}`` (which the layers' ``get`` functions take back), a `DType` as
its name, and a named function (an activation, a loss) as its name, which the layers resolve
again by name or through `custom_objects` on loading. Anything else is a `TypeError` naming the
argument. `resolve_custom_objects` puts the objects of `custom_objects` back in place of their
names.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from tensorweave.engine import dtypes

__all__ = ["resolve_custom_objects", "serialize_arguments", "serialize_value"]


def serialize_value(value: Any, what: str) -> Any:
    """`value` as JSON (see the module docstring); `what` names it in errors."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [serialize_value(v, what) for v in value]
    if isinstance(value, dict):
        return {str(k): serialize_value(v, what) for k, v in value.items()}
    if isinstance(value, dtypes.DType):
        return value.name
    if hasattr(value, "get_config") and not isinstance(value, type):
        return {"class_name": type(value).__name__,
                "config": serialize_value(value.get_config(), what)}
    if inspect.isfunction(value) and value.__name__ != "<lambda>":
        return value.__name__
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        return value.item()  # a numpy scalar
    raise TypeError(f"Cannot serialize {what}: {value!r} is not a number, string, list, dict, "
                    "named function or object with a `get_config`")


def serialize_arguments(fn: Callable[..., Any], args: tuple[Any, ...],
                        kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments of ``fn(self, *args, **kwargs)`` by name, as JSON."""
    bound = inspect.signature(fn).bind(None, *args, **kwargs).arguments
    named: dict[str, Any] = {}
    parameters = inspect.signature(fn).parameters
    for name, value in list(bound.items())[1:]:
        if parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
            named.update(value)
        elif parameters[name].kind is inspect.Parameter.VAR_POSITIONAL:
            raise TypeError(f"Cannot serialize the variable positional arguments of {fn}")
        else:
            named[name] = value
    return {name: serialize_value(value, name) for name, value in named.items()}


def resolve_custom_objects(value: Any, custom_objects: dict[str, Any]) -> Any:
    """`value` with the strings naming `custom_objects` replaced by those objects."""
    if isinstance(value, str):
        return custom_objects.get(value, value)
    if isinstance(value, list):
        return [resolve_custom_objects(v, custom_objects) for v in value]
    if isinstance(value, dict):  # a "class_name" stays a name: the layers' `get` read it
        return {k: v if k == "class_name" else resolve_custom_objects(v, custom_objects)
                for k, v in value.items()}
    return value
