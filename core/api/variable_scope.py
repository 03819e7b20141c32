"""Variable sharing: ``tw.get_variable`` and ``tw.variable_scope``, as in ``tf.compat.v1``.

Contract: each graph holds a variable store (full name -> `Variable`) and a variable-scope store
(the current `VariableScope` and how often each scope name was opened). A variable's name depends
only on the variable scopes (``outer/inner/w``), never on name scopes; ops created inside
``variable_scope("s")`` go to a name scope ``s/`` made unique as usual (``s_1/``). `get_variable`
returns the stored variable when the scope reuses (``reuse=True`` or `AUTO_REUSE`), after
checking shape and dtype, and creates one otherwise; ``reuse=True`` with a missing variable, or a
second creation without reuse, raises `ValueError` with TF's message. Reuse is inherited by
sub-scopes and cannot be turned off inside a reusing scope (``reuse=False`` means "inherit").
A new variable's initializer is the argument, else the scope's, else glorot-uniform for floating
dtypes and zeros for integers and bools; a regularizer's loss goes to the
``REGULARIZATION_LOSSES`` collection. Variables and both stores belong to the outermost graph:
`get_variable` inside a control-flow function (a ``while_loop`` body) creates the variable
outside it, where its initializer runs, and the function captures it. With a partitioner (the
argument's, else the scope's) `get_variable` returns a `PartitionedVariable` of shards
(``tensorweave.api.partitioned_variables``); custom getters see the partitioner as in TF.
"""

from __future__ import annotations

import contextlib
import enum
import functools
from collections.abc import Callable, Iterator
from typing import Any

from tensorweave.api import init_ops
from tensorweave.api.scopes import name_scope
from tensorweave.api.variables import Variable
from tensorweave.engine import dtypes
from tensorweave.engine.graph.func_graph import outermost_graph
from tensorweave.engine.graph.graph import Graph, GraphKeys, Tensor, get_default_graph
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "AUTO_REUSE", "VariableScope", "get_variable", "get_variable_scope", "variable_scope",
]


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE
_STORE_KEY = ("__variable_store",)
_SCOPE_STORE_KEY = ("__varscope",)


class VariableScope:
    """The defaults (`initializer`, `regularizer`, `dtype`, ...) and reuse mode of a scope."""

    def __init__(self, reuse: Any, name: str = "", initializer: Any = None,
                 regularizer: Any = None, caching_device: Any = None, partitioner: Any = None,
                 custom_getter: Callable[..., Any] | None = None, name_scope: str = "",
                 dtype: Any = dtypes.float32, use_resource: Any = None,
                 constraint: Any = None) -> None:
        self._reuse = reuse
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtypes.as_dtype(dtype)
        self._use_resource = use_resource
        self._constraint = constraint

    @property
    def name(self) -> str:
        return self._name

    @property
    def original_name_scope(self) -> str:
        return self._name_scope

    @property
    def reuse(self) -> Any:
        return self._reuse

    @property
    def initializer(self) -> Any:
        return self._initializer

    @property
    def regularizer(self) -> Any:
        return self._regularizer

    @property
    def caching_device(self) -> Any:
        return self._caching_device

    @property
    def partitioner(self) -> Any:
        return self._partitioner

    @property
    def custom_getter(self) -> Callable[..., Any] | None:
        return self._custom_getter

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def use_resource(self) -> Any:
        return self._use_resource

    @property
    def constraint(self) -> Any:
        return self._constraint

    def reuse_variables(self) -> None:
        self._reuse = True

    def set_initializer(self, initializer: Any) -> None:
        self._initializer = initializer

    def set_regularizer(self, regularizer: Any) -> None:
        self._regularizer = regularizer

    def set_dtype(self, dtype: Any) -> None:
        self._dtype = dtypes.as_dtype(dtype)

    def set_caching_device(self, caching_device: Any) -> None:
        self._caching_device = caching_device

    def set_custom_getter(self, custom_getter: Callable[..., Any] | None) -> None:
        self._custom_getter = custom_getter

    def set_use_resource(self, use_resource: Any) -> None:
        self._use_resource = use_resource

    def set_partitioner(self, partitioner: Any) -> None:
        self._partitioner = partitioner

    def get_variable(self, var_store: _VariableStore, name: str, shape: Any = None,
                     dtype: Any = None, initializer: Any = None, regularizer: Any = None,
                     reuse: Any = None, trainable: bool | None = None,
                     collections: list[str] | None = None, caching_device: Any = None,
                     partitioner: Any = None, validate_shape: bool = True,
                     use_resource: Any = None, custom_getter: Any = None,
                     constraint: Any = None, **kwargs: Any) -> Variable:
        """The variable ``<scope>/<name>``, created or reused under this scope's rules (a
        `PartitionedVariable` with a partitioner)."""
        full_name = f"{self._name}/{name}" if self._name else name
        if reuse is None:
            reuse = self._reuse
        getter = self._custom_getter if custom_getter is None else _compose(
            custom_getter, self._custom_getter)
        # Variable names depend only on variable scopes, so the name scope restarts at the root.
        with get_default_graph().name_scope(None):
            return var_store.get_variable(
                full_name, shape=shape, dtype=self._dtype if dtype is None else dtype,
                initializer=self._initializer if initializer is None else initializer,
                regularizer=self._regularizer if regularizer is None else regularizer,
                reuse=reuse, trainable=trainable, collections=collections,
                caching_device=caching_device or self._caching_device,
                partitioner=self._partitioner if partitioner is None else partitioner,
                validate_shape=validate_shape,
                use_resource=self._use_resource if use_resource is None else use_resource,
                custom_getter=getter,
                constraint=self._constraint if constraint is None else constraint, **kwargs)


def _compose(outer: Callable[..., Any], inner: Callable[..., Any] | None) -> Callable[..., Any]:
    """TF's nesting of custom getters: the inner scope's getter wraps the outer one's."""
    if inner is None:
        return outer
    return lambda getter, *args, **kwargs: outer(functools.partial(inner, getter), *args,
                                                 **kwargs)


class _VariableStore:
    """Full name -> `Variable`, for one graph."""

    def __init__(self) -> None:
        self.vars: dict[str, Variable] = {}

    def get_variable(self, name: str, shape: Any = None, dtype: Any = dtypes.float32,
                     initializer: Any = None, regularizer: Any = None, reuse: Any = None,
                     trainable: bool | None = None, collections: list[str] | None = None,
                     caching_device: Any = None, validate_shape: bool = True,
                     use_resource: Any = None, custom_getter: Any = None,
                     constraint: Any = None, **kwargs: Any) -> Variable:
        def true_getter(name: str, shape: Any = None, dtype: Any = dtypes.float32,
                        initializer: Any = None, regularizer: Any = None, reuse: Any = None,
                        trainable: bool | None = None, collections: list[str] | None = None,
                        caching_device: Any = None, validate_shape: bool = True,
                        constraint: Any = None, partitioner: Any = None,
                        use_resource: Any = None, **_: Any) -> Variable:
            if partitioner is not None:
                from tensorweave.api.partitioned_variables import get_partitioned_variable

                return get_partitioned_variable(self, name, shape, dtype, initializer,
                                                regularizer, reuse, trainable, collections,
                                                caching_device, partitioner, validate_shape,
                                                constraint, use_resource)
            return self._get_single_variable(name, shape, dtype, initializer, regularizer,
                                             reuse, trainable, collections, caching_device,
                                             validate_shape, constraint, use_resource)

        args = dict(name=name, shape=shape, dtype=dtype, initializer=initializer,
                    regularizer=regularizer, reuse=reuse, trainable=trainable,
                    collections=collections, caching_device=caching_device,
                    validate_shape=validate_shape, use_resource=use_resource,
                    constraint=constraint, **kwargs)
        if custom_getter is not None:
            if not callable(custom_getter):
                raise ValueError(f"Passed a custom_getter which is not callable: "
                                 f"{custom_getter}")
            return custom_getter(true_getter, **args)
        return true_getter(**args)

    def _get_single_variable(self, name: str, shape: Any, dtype: Any, initializer: Any,
                             regularizer: Any, reuse: Any, trainable: bool | None,
                             collections: list[str] | None, caching_device: Any,
                             validate_shape: bool, constraint: Any,
                             use_resource: Any = None) -> Variable:
        from_value = initializer is not None and not callable(initializer)
        if shape is not None and from_value:
            raise ValueError("If initializer is a constant, do not specify shape.")
        dtype = dtypes.as_dtype(dtype)
        shape = TensorShape(shape)
        found = self.vars.get(name)
        if found is not None:
            if reuse is False:
                raise ValueError(
                    f"Variable {name} already exists, disallowed. Did you mean to set "
                    "reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
            if not shape.is_compatible_with(found.get_shape()):
                raise ValueError(f"Trying to share variable {name}, but specified shape {shape} "
                                 f"and found shape {found.get_shape()}.")
            if not from_value and dtype != found.dtype:
                raise ValueError(f"Trying to share variable {name}, but specified dtype "
                                 f"{dtype.name} and found dtype {found.dtype.name}.")
            return found
        if reuse is True:
            raise ValueError(
                f"Variable {name} does not exist, or was not created with tf.get_variable(). "
                "Did you mean to set reuse=tf.AUTO_REUSE in VarScope?")
        if initializer is None:
            initializer = _default_initializer(name, dtype)
        if isinstance(initializer, type):
            initializer = initializer()
        if from_value:
            init_val: Any = initializer
            variable_dtype = None
        else:
            if not shape.is_fully_defined():
                raise ValueError(f"Shape of a new variable ({name}) must be fully defined, but "
                                 f"instead was {shape}.")
            init_val = functools.partial(initializer, shape.as_list(), dtype=dtype,
                                         partition_info=None)
            variable_dtype = dtype
        # Created in the outermost graph (a loop body's variable lives outside the loop, as with
        # TF's init_scope), at its root name scope; initial values never wait on the caller's ops.
        graph = outermost_graph(get_default_graph())
        with graph.as_default(), graph.name_scope(None), graph.control_dependencies(None):
            variable = Variable(initial_value=init_val, name=name,
                                trainable=True if trainable is None else trainable,
                                collections=collections, caching_device=caching_device,
                                dtype=variable_dtype, validate_shape=validate_shape,
                                constraint=constraint, use_resource=use_resource)
            self.vars[name] = variable
            if regularizer is not None:
                with graph.colocate_with(variable.op), name_scope(f"{name}/Regularizer/"):
                    loss = regularizer(variable)
                if loss is not None:
                    graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return variable


def _default_initializer(name: str, dtype: dtypes.DType) -> init_ops.Initializer:
    if dtype.is_floating:
        return init_ops.glorot_uniform_initializer()
    if dtype.is_integer or dtype.is_bool:
        return init_ops.zeros_initializer()
    raise ValueError(f"An initializer for variable {name} of {dtype.name} is required")


class _VariableScopeStore:
    """The current scope of one graph, and how often each scope name was opened."""

    def __init__(self) -> None:
        self.current_scope = VariableScope(False)
        self.variable_scopes_count: dict[str, int] = {}

    def open_variable_scope(self, scope_name: str) -> None:
        self.variable_scopes_count[scope_name] = self.variable_scopes_count.get(scope_name, 0) + 1

    def close_variable_subscopes(self, scope_name: str) -> None:
        for key in self.variable_scopes_count:
            if key.startswith(scope_name + "/"):
                self.variable_scopes_count[key] = 0

    def variable_scope_count(self, scope_name: str) -> int:
        return self.variable_scopes_count.get(scope_name, 0)


def _graph_singleton(graph: Graph, key: tuple[str], factory: Callable[[], Any]) -> Any:
    ref = graph.get_collection_ref(key)
    if not ref:
        ref.append(factory())
    return ref[0]


def _variable_store() -> _VariableStore:
    return _graph_singleton(outermost_graph(get_default_graph()), _STORE_KEY, _VariableStore)


def _scope_store() -> _VariableScopeStore:
    return _graph_singleton(outermost_graph(get_default_graph()), _SCOPE_STORE_KEY,
                            _VariableScopeStore)


def get_variable_scope() -> VariableScope:
    """The current variable scope of the default graph."""
    return _scope_store().current_scope


def get_variable(name: str, shape: Any = None, dtype: Any = None, initializer: Any = None,
                 regularizer: Any = None, trainable: bool | None = None,
                 collections: list[str] | None = None, caching_device: Any = None,
                 partitioner: Any = None, validate_shape: bool = True, use_resource: Any = None,
                 custom_getter: Any = None, constraint: Any = None, **kwargs: Any) -> Variable:
    """Get an existing variable of the current scope, or create a new one; see the module
    docstring."""
    return get_variable_scope().get_variable(
        _variable_store(), name, shape=shape, dtype=dtype, initializer=initializer,
        regularizer=regularizer, trainable=trainable, collections=collections,
        caching_device=caching_device, partitioner=partitioner, validate_shape=validate_shape,
        use_resource=use_resource, custom_getter=custom_getter, constraint=constraint, **kwargs)


def _unique_scope_name(prefix: str) -> str:
    store = _scope_store()
    current = store.current_scope.name
    name = f"{current}/{prefix}" if current else prefix
    if store.variable_scope_count(name) == 0:
        return prefix
    idx = 1
    while store.variable_scope_count(f"{name}_{idx}") > 0:
        idx += 1
    return f"{prefix}_{idx}"


@contextlib.contextmanager
def _pure_variable_scope(name_or_scope: str | VariableScope, reuse: Any,
                         old_name_scope: str | None,
                         overrides: dict[str, Any]) -> Iterator[VariableScope]:
    store = _scope_store()
    old = store.current_scope
    jump = isinstance(name_or_scope, VariableScope)
    # Jumping to a shared scope copies it; a new sub-scope inherits from the current one.
    base = name_or_scope if jump else old
    if jump:
        new_name = base.name
        scope_of_ops = base.original_name_scope
    else:
        new_name = f"{old.name}/{name_or_scope}" if old.name else name_or_scope
        scope_of_ops = name_or_scope if old_name_scope is None else old_name_scope
    settings = {"initializer": base.initializer, "regularizer": base.regularizer,
                "caching_device": base.caching_device, "partitioner": base.partitioner,
                "custom_getter": base.custom_getter,
                "dtype": base.dtype, "use_resource": base.use_resource,
                "constraint": base.constraint}
    for key, value in overrides.items():
        if value is not None:
            settings[key] = _compose(value, base.custom_getter) if key == "custom_getter" \
                else value
    scope = VariableScope(reuse or base.reuse, name=new_name, name_scope=scope_of_ops,
                          **settings)
    store.open_variable_scope(new_name)
    saved_counts = dict(store.variable_scopes_count)
    store.current_scope = scope
    try:
        yield scope
    finally:
        if jump:
            store.variable_scopes_count = saved_counts
        else:
            store.close_variable_subscopes(new_name)
        store.current_scope = old


@contextlib.contextmanager
def variable_scope(name_or_scope: str | VariableScope | None, default_name: str | None = None,
                   values: Any = None, initializer: Any = None, regularizer: Any = None,
                   caching_device: Any = None, partitioner: Any = None,
                   custom_getter: Any = None, reuse: Any = None, dtype: Any = None,
                   use_resource: Any = None, constraint: Any = None,
                   auxiliary_name_scope: bool = True) -> Iterator[VariableScope]:
    """Open a variable scope (and, unless `auxiliary_name_scope` is False, a name scope);
    yields the `VariableScope`."""
    if name_or_scope is None and default_name is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    if reuse is False:  # TF1: reuse cannot be turned off below a reusing scope
        reuse = None
    if reuse not in (True, None, AUTO_REUSE):
        raise ValueError("The reuse parameter must be True or False or None.")
    if name_or_scope is not None and not isinstance(name_or_scope, (str, VariableScope)):
        raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
    overrides = {"initializer": initializer, "regularizer": regularizer,
                 "caching_device": caching_device, "partitioner": partitioner,
                 "custom_getter": custom_getter,
                 "dtype": dtype, "use_resource": use_resource, "constraint": constraint}
    graph = next((v.graph for v in values or () if isinstance(v, Tensor)), get_default_graph())
    if get_default_graph().encloses(graph):  # a function graph using outer tensors stays
        graph = get_default_graph()
    with graph.as_default():
        if name_or_scope is None:
            if reuse is True:
                raise ValueError("reuse=True cannot be used without a name_or_scope")
            with _name_scope(default_name, auxiliary_name_scope) as current:
                unique = _unique_scope_name(default_name)
                with _pure_variable_scope(unique, reuse, current, overrides) as scope:
                    yield scope
            return
        short = name_or_scope if isinstance(name_or_scope, str) \
            else name_or_scope.name.split("/")[-1]
        if not short and auxiliary_name_scope:  # re-entering the root scope
            with _pure_variable_scope(name_or_scope, reuse, None, overrides) as scope:
                yield scope
            return
        with _name_scope(short, auxiliary_name_scope) as current:
            with _pure_variable_scope(name_or_scope, reuse, current, overrides) as scope:
                yield scope


@contextlib.contextmanager
def _name_scope(name: str, auxiliary: bool) -> Iterator[str]:
    """A new name scope, or (not `auxiliary`) the current one entered again."""
    graph = get_default_graph()
    if auxiliary:
        with graph.name_scope(name) as scope:
            yield scope
        return
    current = graph.get_name_scope()
    with graph.name_scope(f"{current}/" if current else None) as scope:
        yield scope
