"""``tf.contrib.framework``: variable helpers, the global step and argument scopes.

Contract: `get_variables` filters a collection (``GLOBAL_VARIABLES`` by default) by a scope
prefix and, with `suffix`, by a name suffix, as TF's regex match on the collection does;
`get_model_variables` does the same on ``MODEL_VARIABLES``; `get_variables_to_restore` is the
global variables under the `include` scopes minus those under the `exclude` scopes. `variable`
is `get_variable` with ``GLOBAL_VARIABLES`` as the default collections; `model_variable` adds
``MODEL_VARIABLES``. The global-step functions are `tensorweave.train`'s, and so are the
checkpoint readers (`init_from_checkpoint`, `list_variables`, `load_checkpoint`,
`load_variable`); the ``assign_from_*`` helpers are `tensorweave.contrib.variables_assign`'s,
loaded on first access because that module builds on this one.

`add_arg_scope` marks a function so that ``with arg_scope([fn, ...], **defaults)`` supplies
keyword defaults to its calls inside the block; arguments given at the call win, inner scopes
update outer ones, and a scope's yielded dict can be re-entered later (``with arg_scope(sc)``).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any

from tensorweave.api.static_value import smart_cond, smart_constant_value
from tensorweave.api.variable_scope import VariableScope, get_variable
from tensorweave.api.variables import Variable
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import GraphKeys, get_default_graph
from tensorweave.train.checkpoint_management import list_variables, load_variable
from tensorweave.train.checkpoint_utils import init_from_checkpoint, load_checkpoint
from tensorweave.train.training_util import (
    create_global_step,
    get_global_step,
    get_or_create_global_step,
)

# Loaded by `__getattr__`: `tensorweave.contrib.variables_assign` imports this module.
_ASSIGN_HELPERS = ("assign_from_checkpoint", "assign_from_checkpoint_fn", "assign_from_values",
                   "assign_from_values_fn")

__all__ = [
    "add_arg_scope", "arg_scope", "arg_scoped_arguments", "create_global_step",
    "current_arg_scope", "get_global_step", "get_local_variables", "get_model_variables",
    "get_or_create_global_step", "get_trainable_variables", "get_unique_variable",
    "get_variables", "get_variables_by_name", "get_variables_to_restore", "has_arg_scope",
    "init_from_checkpoint", "list_variables", "load_checkpoint", "load_variable",
    "model_variable", "smart_cond", "smart_constant_value", "variable", *_ASSIGN_HELPERS,
]


def __getattr__(name: str) -> Any:
    if name in _ASSIGN_HELPERS:
        from tensorweave.contrib import variables_assign

        return getattr(variables_assign, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- argument scopes -----------------------------------------------------------------------------

# One stack for the process, as TF's: each entry maps a function's key to its default kwargs.
_ARG_STACK: list[dict[str, dict[str, Any]]] = [{}]
_DECORATED: set[str] = set()


def _key(fn: Callable[..., Any]) -> str:
    return getattr(fn, "_key_op", None) or f"{fn.__module__}.{fn.__qualname__}"


def current_arg_scope() -> dict[str, dict[str, Any]]:
    """The innermost argument scope: function key -> default keyword arguments."""
    return _ARG_STACK[-1]


def has_arg_scope(fn: Callable[..., Any]) -> bool:
    """Whether `fn` was decorated with `add_arg_scope`."""
    return _key(fn) in _DECORATED


def arg_scoped_arguments(fn: Callable[..., Any]) -> list[str]:
    """The names of `fn`'s arguments that an `arg_scope` may set."""
    return list(inspect.signature(fn).parameters)


def add_arg_scope(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, taking its keyword defaults from the enclosing `arg_scope`s."""
    key = _key(fn)

    @functools.wraps(fn)
    def with_defaults(*args: Any, **kwargs: Any) -> Any:
        scoped = current_arg_scope().get(key)
        if scoped:
            kwargs = {**scoped, **kwargs}
        return fn(*args, **kwargs)

    with_defaults._key_op = key  # type: ignore[attr-defined]
    _DECORATED.add(key)
    return with_defaults


@contextlib.contextmanager
def arg_scope(list_ops_or_scope: Any, **kwargs: Any) -> Iterator[dict[str, dict[str, Any]]]:
    """Defaults `kwargs` for the calls of the functions in `list_ops_or_scope` inside the block,
    or a scope dict yielded by an earlier `arg_scope` entered again."""
    if isinstance(list_ops_or_scope, dict):
        if kwargs:
            raise ValueError("When attempting to re-use a scope by suppling a dictionary, "
                             "kwargs must be empty.")
        scope = dict(list_ops_or_scope)
    else:
        if not isinstance(list_ops_or_scope, (list, tuple)):
            raise TypeError("list_ops_or_scope must either be a list/tuple or reused scope "
                            "(i.e. dict)")
        scope = dict(current_arg_scope())
        for fn in list_ops_or_scope:
            if not has_arg_scope(fn):
                raise ValueError(f"{getattr(fn, '__name__', fn)} is not decorated with "
                                 "@add_arg_scope")
            key = _key(fn)
            scope[key] = {**scope.get(key, {}), **kwargs}
    _ARG_STACK.append(scope)
    try:
        yield scope
    finally:
        _ARG_STACK.pop()


# -- variables -----------------------------------------------------------------------------------


def get_variables(scope: str | VariableScope | None = None, suffix: str | None = None,
                  collection: str = GraphKeys.GLOBAL_VARIABLES) -> list[Any]:
    """The members of `collection` whose names match `scope` from the start and, with
    `suffix`, contain ``suffix`` just before the output index."""
    if isinstance(scope, VariableScope):
        scope = scope.name
    if suffix is not None:
        # TF's pattern: the scope, anything, then the suffix up to the output index
        scope = f"{scope or ''}.*{suffix if ':' in suffix else suffix + ':'}"
    return get_default_graph().get_collection(collection, scope)


def get_model_variables(scope: str | None = None, suffix: str | None = None) -> list[Any]:
    """`get_variables` over ``MODEL_VARIABLES``."""
    return get_variables(scope, suffix, GraphKeys.MODEL_VARIABLES)


def get_local_variables(scope: str | None = None, suffix: str | None = None) -> list[Any]:
    """`get_variables` over ``LOCAL_VARIABLES``."""
    return get_variables(scope, suffix, GraphKeys.LOCAL_VARIABLES)


def get_trainable_variables(scope: str | None = None, suffix: str | None = None) -> list[Any]:
    """`get_variables` over ``TRAINABLE_VARIABLES``."""
    return get_variables(scope, suffix, GraphKeys.TRAINABLE_VARIABLES)


def get_variables_by_name(given_name: str, scope: str | None = None) -> list[Any]:
    """The global variables under `scope` whose names end with `given_name`."""
    return get_variables(scope=scope, suffix=given_name)


def get_unique_variable(var_op_name: str) -> Any:
    """The one global variable whose op is named `var_op_name`."""
    candidates = get_variables(scope=var_op_name)
    if not candidates:
        raise ValueError(f"Couldn't find variable {var_op_name}")
    for candidate in candidates:
        if candidate.op.name == var_op_name:
            return candidate
    raise ValueError(f"Variable {var_op_name} does not uniquely identify a variable")


def _scopes(value: Any, what: str) -> list[Any]:
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{what} is provided but is not a list or a tuple.")
    return list(value)


def get_variables_to_restore(include: Any = None, exclude: Any = None) -> list[Any]:
    """The global variables under the `include` scopes (all by default), minus those under the
    `exclude` scopes, in collection order."""
    if include is None:
        candidates = get_variables()
    else:
        candidates = [v for scope in _scopes(include, "include") for v in get_variables(scope)]
    excluded: set[int] = set()
    if exclude is not None:
        excluded = {id(v) for scope in _scopes(exclude, "exclude") for v in get_variables(scope)}
    return [v for v in candidates if id(v) not in excluded]


@add_arg_scope
def variable(name: str, shape: Any = None, dtype: Any = None, initializer: Any = None,
             regularizer: Any = None, trainable: bool = True, collections: Any = None,
             caching_device: Any = None, device: Any = None, partitioner: Any = None,
             custom_getter: Any = None, use_resource: Any = None) -> Variable:
    """`get_variable` in the collections `collections` (``GLOBAL_VARIABLES`` by default),
    placed on `device` if given."""
    collections = list(dict.fromkeys(
        [GraphKeys.GLOBAL_VARIABLES] if collections is None else collections))
    with get_default_graph().device(device):
        return get_variable(name, shape=shape, dtype=dtypes.float32 if dtype is None else dtype,
                            initializer=initializer, regularizer=regularizer,
                            trainable=trainable, collections=collections,
                            caching_device=caching_device, partitioner=partitioner,
                            custom_getter=custom_getter, use_resource=use_resource)


@add_arg_scope
def model_variable(name: str, shape: Any = None, dtype: Any = dtypes.float32,
                   initializer: Any = None, regularizer: Any = None, trainable: bool = True,
                   collections: Any = None, caching_device: Any = None, device: Any = None,
                   partitioner: Any = None, custom_getter: Any = None,
                   use_resource: Any = None) -> Variable:
    """`variable`, also in ``MODEL_VARIABLES``."""
    collections = [*(collections or []), GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    return variable(name, shape=shape, dtype=dtype, initializer=initializer,
                    regularizer=regularizer, trainable=trainable, collections=collections,
                    caching_device=caching_device, device=device, partitioner=partitioner,
                    custom_getter=custom_getter, use_resource=use_resource)
