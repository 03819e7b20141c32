"""``tw.make_template``: a function whose variables are created on its first call and shared by
every later call, as in ``tf.compat.v1``; and ``tw.get_local_variable``, ``tw.model_variables``.

Contract: `make_template(name_, func_)` returns a `Template`. Its variable scope is opened
(uniquified from `name_`, or exactly `unique_name_`) at construction with `create_scope_now_`,
else on the first call; every call runs `func_` (with `kwargs` bound) inside that scope, the
first creating variables through ``tw.get_variable`` and later ones reusing them. A later call
that creates a trainable variable raises `ValueError` (a ``tw.Variable`` where
``tw.get_variable`` was meant). `get_local_variable` is `get_variable` into ``LOCAL_VARIABLES``,
not trainable.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from tensorweave.api.variable_scope import VariableScope, get_variable, variable_scope
from tensorweave.engine.graph.graph import GraphKeys, get_default_graph

__all__ = ["Template", "get_local_variable", "make_template", "model_variables"]


class Template:
    """A function wrapped so that all its calls share variables; see the module docstring."""

    def __init__(self, name: str, func: Callable[..., Any], create_scope_now: bool = False,
                 unique_name: str | None = None, custom_getter: Any = None) -> None:
        if not name:
            raise ValueError("name cannot be None.")
        self._func = func
        self._name = name
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        self._variable_scope: VariableScope | None = None
        self._variables_created = False
        if create_scope_now:
            with self._new_scope() as scope:
                self._variable_scope = scope

    def _new_scope(self) -> Any:
        return variable_scope(self._unique_name, self._name, custom_getter=self._custom_getter)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._variable_scope is not None:
            # reuse=False means "inherit": the first call creates, later ones reuse
            with variable_scope(self._variable_scope, reuse=self._variables_created or None):
                return self._call_func(args, kwargs)
        with self._new_scope() as scope:
            self._variable_scope = scope
            return self._call_func(args, kwargs)

    def _call_func(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        graph = get_default_graph()
        trainable_before = len(graph.get_collection(GraphKeys.TRAINABLE_VARIABLES))
        result = self._func(*args, **kwargs)
        if self._variables_created:
            trainable = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
            if len(trainable) != trainable_before:
                raise ValueError(
                    "Trainable variable created when calling a template after the first time, "
                    "perhaps you used tf.Variable when you meant tf.get_variable: "
                    f"{trainable[trainable_before:]}")
        self._variables_created = True
        return result

    @property
    def name(self) -> str:
        return self._name

    @property
    def func(self) -> Callable[..., Any]:
        return self._func

    @property
    def variable_scope(self) -> VariableScope | None:
        return self._variable_scope

    var_scope = variable_scope

    @property
    def variable_scope_name(self) -> str | None:
        return None if self._variable_scope is None else self._variable_scope.name

    def _collection(self, key: str) -> list[Any]:
        if self._variable_scope is None:
            return []
        return get_default_graph().get_collection(key, self._variable_scope.name + "/")

    @property
    def variables(self) -> list[Any]:
        return self.global_variables + self.local_variables

    @property
    def global_variables(self) -> list[Any]:
        return self._collection(GraphKeys.GLOBAL_VARIABLES)

    @property
    def local_variables(self) -> list[Any]:
        return self._collection(GraphKeys.LOCAL_VARIABLES)

    @property
    def trainable_variables(self) -> list[Any]:
        return self._collection(GraphKeys.TRAINABLE_VARIABLES)

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self) -> list[Any]:
        trainable = set(map(id, self.trainable_variables))
        return [v for v in self.global_variables if id(v) not in trainable]

    non_trainable_weights = non_trainable_variables
    weights = variables


def make_template(name_: str, func_: Callable[..., Any], create_scope_now_: bool = False,
                  unique_name_: str | None = None, custom_getter_: Any = None,
                  **kwargs: Any) -> Template:
    """`func_` (with `kwargs` bound) as a variable-sharing `Template`."""
    func = functools.partial(func_, **kwargs) if kwargs else func_
    return Template(name_, func, create_scope_now=create_scope_now_, unique_name=unique_name_,
                    custom_getter=custom_getter_)


def get_local_variable(name: str, shape: Any = None, dtype: Any = None, initializer: Any = None,
                       regularizer: Any = None, trainable: bool = False,
                       collections: list[str] | None = None, **kwargs: Any) -> Any:
    """`get_variable` into ``LOCAL_VARIABLES`` (and `collections`), not trainable."""
    return get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                        regularizer=regularizer, trainable=False,
                        collections=list(collections or []) + [GraphKeys.LOCAL_VARIABLES],
                        **kwargs)


def model_variables(scope: str | None = None) -> list[Any]:
    """The ``MODEL_VARIABLES`` collection (``tf.contrib.framework.model_variable``'s)."""
    return get_default_graph().get_collection(GraphKeys.MODEL_VARIABLES, scope)
