"""`Variable`: state that persists across steps, as TF1's (ref) variables.

Contract: ``Variable(initial_value)`` creates, under a name scope ``v/``, the ``VariableV2`` node
``v``, its initializer ``v/Assign`` and its snapshot ``v/read`` (an ``Identity``), the last two
colocated with ``v``. Using the variable in an op, or fetching it, reads the snapshot, except
under `control_dependencies`, where a use makes a new colocated read that runs after them (so
``tf.identity(v)`` there sees the assignments it depends on, as in TF1); assignments take the
ref. Reading an uninitialized variable raises `FailedPreconditionError` at run time.
"""

from __future__ import annotations

import contextlib
import enum
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tensorweave.api import state_ops
from tensorweave.api.control_flow_ops import group
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor, is_tensor_like
from tensorweave.engine.graph.func_graph import FuncGraph, outermost_graph, outermost_name_scope
from tensorweave.engine.graph.graph import Graph, GraphKeys, Operation, Tensor, get_default_graph
from tensorweave.engine.graph.op_builder import apply
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "Variable", "VariableAggregation", "VariableSynchronization", "all_variables",
    "assert_variables_initialized", "global_variables", "global_variables_initializer",
    "initialize_all_tables", "initialize_all_variables", "local_variables",
    "local_variables_initializer", "moving_average_variables", "report_uninitialized_variables",
    "tables_initializer", "trainable_variables", "variables_initializer",
]


class VariableSynchronization(enum.Enum):
    """When a distributed variable is aggregated (TF's enum; one process has nothing to
    synchronize, so tensorweave only records it)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How a distributed variable's updates are aggregated (TF's enum, recorded only)."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3  # TF's deprecated alias of ONLY_FIRST_REPLICA


def _enum_arg(kind: type[enum.Enum], value: Any, default: enum.Enum, what: str,
              name: str | None) -> Any:
    if value is None:
        return default
    try:
        return value if isinstance(value, kind) else kind(value)
    except ValueError:
        raise ValueError(f"Invalid variable {what} mode: {value} for variable: {name}") from None


@contextlib.contextmanager
def _init_scope(graph: Graph, initial_value: Any) -> Iterator[Graph]:
    """Where a variable is created (TF's ``init_scope``): in `graph`, or, when `graph` is a
    function's (a `cond` branch, a loop body), in the outermost graph under the name scope
    the function was built in, without control dependencies. There its initializer runs with
    the others, and the function reads it as an outside tensor."""
    if not isinstance(graph, FuncGraph):
        yield graph
        return
    if is_tensor_like(initial_value) and getattr(initial_value, "graph", None) is graph:
        raise ValueError(
            "Initializer for variable is from inside a control-flow construct, such as a loop "
            "or conditional. When creating a variable inside a loop or conditional, use a "
            "lambda as the initializer.")
    scope = outermost_name_scope(graph)
    graph = outermost_graph(graph)
    with graph.as_default(), graph.name_scope(f"{scope}/" if scope else None), \
            graph.control_dependencies(None):
        yield graph


class Variable:
    """A TF1 variable. Of TF's constructor arguments, `variable_def`, `expected_shape`,
    `import_scope` and `caching_device` are accepted and ignored; `synchronization` and
    `aggregation` are checked and recorded (one process has nothing to synchronize);
    `use_resource` chooses a `ResourceVariable`."""

    __array_priority__ = 100  # numpy defers `ndarray * Variable` to Variable.__rmul__

    def __new__(cls, *args: Any, **kwargs: Any) -> Variable:
        """A `ResourceVariable` for ``use_resource=True``, or by default after
        ``tf.enable_resource_variables()`` (TF's variable metaclass)."""
        if cls is Variable:
            from tensorweave.api import resource_variable_ops

            use_resource = args[11] if len(args) > 11 else kwargs.get("use_resource")
            if use_resource is None:
                use_resource = resource_variable_ops.resource_variables_enabled()
            if use_resource:
                return super().__new__(resource_variable_ops.ResourceVariable)
        return super().__new__(cls)

    def __init__(self, initial_value: Any = None, trainable: bool = True,
                 collections: list[str] | None = None, validate_shape: bool = True,
                 caching_device: Any = None, name: str | None = None, variable_def: Any = None,
                 dtype: Any = None, expected_shape: Any = None, import_scope: Any = None,
                 constraint: Any = None, use_resource: Any = None, synchronization: Any = None,
                 aggregation: Any = None, shape: Any = None) -> None:
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if constraint is not None and not callable(constraint):
            raise ValueError("The `constraint` argument must be a callable.")
        init_from_fn = callable(initial_value)
        self._synchronization = _enum_arg(VariableSynchronization, synchronization,
                                          VariableSynchronization.AUTO, "synchronization", name)
        self._aggregation = _enum_arg(VariableAggregation, aggregation, VariableAggregation.NONE,
                                      "aggregation", name)
        self._trainable = trainable
        self._constraint = constraint
        with _init_scope(get_default_graph(), initial_value) as graph, \
                name_scope(name, "Variable", [] if init_from_fn else [initial_value]) as scope:
            if init_from_fn:
                with name_scope("Initializer"):
                    self._initial_value = convert_to_tensor(initial_value(), dtype=dtype,
                                                            name="initial_value")
            else:
                self._initial_value = convert_to_tensor(initial_value, dtype=dtype,
                                                        name="initial_value")
            var_shape = self._initial_value.shape if validate_shape else TensorShape(None)
            if shape is not None:
                var_shape = TensorShape(shape)
            self._variable = apply("VariableV2", [], {
                "shape": var_shape, "dtype": self._initial_value.dtype}, name=scope)
            with graph.colocate_with(self._variable.op):
                self._initializer_op = state_ops.assign(
                    self._variable, self._initial_value, validate_shape=validate_shape,
                    name="Assign").op
                self._snapshot = apply("Identity", [self._variable], name="read")
        self._graph = graph
        self._add_to_collections(collections, trainable)

    def _add_to_collections(self, collections: Any, trainable: bool) -> None:
        """Join `collections` (default: the global variables) and, if `trainable`, the
        trainable variables, as TF's variables do."""
        for key in collections or [GraphKeys.GLOBAL_VARIABLES]:
            self._graph.add_to_collection(key, self)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in (collections or []):
            self._graph.add_to_collection(GraphKeys.TRAINABLE_VARIABLES, self)

    # -- identity -----------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._variable.name

    @property
    def op(self) -> Operation:
        return self._variable.op

    @property
    def dtype(self) -> dtypes.DType:
        return self._variable.dtype

    @property
    def shape(self) -> TensorShape:
        return self._variable.shape

    def get_shape(self) -> TensorShape:
        return self._variable.shape

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def device(self) -> str:
        return self._variable.device

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def constraint(self) -> Any:
        return self._constraint

    @property
    def initializer(self) -> Operation:
        return self._initializer_op

    @property
    def initial_value(self) -> Tensor:
        return self._initial_value

    @property
    def synchronization(self) -> VariableSynchronization:
        return self._synchronization

    @property
    def aggregation(self) -> VariableAggregation:
        return self._aggregation

    # -- serialization ------------------------------------------------------------------------

    def to_proto(self, export_scope: str | None = None) -> Any:
        """This variable's `VariableDef` (its ops' names, without `export_scope`), or None
        when it lies outside `export_scope`."""
        from tensorweave.train.meta_graph import variable_def

        if export_scope and not self._variable.name.startswith(export_scope + "/"):
            return None
        return variable_def(self, export_scope)

    @staticmethod
    def from_proto(variable_def: Any, import_scope: str | None = None) -> Variable:
        """The variable of the default graph that `variable_def` names (under
        `import_scope`)."""
        return Variable._from_def(get_default_graph(), variable_def,
                                  f"{import_scope}/" if import_scope else "")

    @classmethod
    def _from_def(cls, graph: Graph, variable_def: Any, prefix: str) -> Variable:
        """A Python object around the graph's existing ops, as TF's
        ``Variable(variable_def=...)`` rebuilds one."""
        handle = graph.get_tensor_by_name(prefix + variable_def.variable_name)
        if variable_def.is_resource:
            from tensorweave.api.resource_variable_ops import ResourceVariable

            var = object.__new__(ResourceVariable)
            var._handle, var._dtype = handle, handle.op.get_attr("dtype")
        else:
            var = object.__new__(cls)
            var._variable = handle
        var._initializer_op = graph.get_operation_by_name(prefix + variable_def.initializer_name)
        var._snapshot = var._graph_element = graph.get_tensor_by_name(
            prefix + variable_def.snapshot_name)
        var._initial_value = (
            graph.get_tensor_by_name(prefix + variable_def.initial_value_name)
            if variable_def.initial_value_name else var._initializer_op.inputs[1])
        var._graph = graph
        var._trainable = variable_def.trainable
        var._constraint = None
        var._synchronization = VariableSynchronization.AUTO
        var._aggregation = VariableAggregation.NONE
        if variable_def.HasField("save_slice_info_def"):  # a shard of a partitioned variable
            from tensorweave.api.partitioned_variables import SaveSliceInfo

            info = variable_def.save_slice_info_def
            var._save_slice_info = SaveSliceInfo(prefix + info.full_name, tuple(info.full_shape),
                                                 tuple(info.var_offset), tuple(info.var_shape))
        return var

    # -- values -------------------------------------------------------------------------------

    def value(self) -> Tensor:
        return self._snapshot

    def read_value(self) -> Tensor:
        """A new read of the variable, made after the current control dependencies."""
        with self._graph.colocate_with(self._variable.op):
            return apply("Identity", [self._variable], name="read")

    def initialized_value(self) -> Tensor:
        """TF1's: this variable's value once it is initialized, else its initial value (a
        `cond` on `is_variable_initialized`, built outside any control-flow construct), so
        another variable can be initialized from this one in any order."""
        from tensorweave.api.control_flow_ops import cond
        from tensorweave.api.misc_ops import init_scope

        with init_scope():
            return cond(state_ops.is_variable_initialized(self), self.read_value,
                        lambda: self.initial_value)

    def set_shape(self, shape: Any) -> None:
        """TF1's ``RefVariable.set_shape``: give the variable (its ref and its snapshot) the
        static `shape`, merged with what is known (`ValueError` if incompatible), as for a
        variable made with ``validate_shape=False`` whose shape varies."""
        self._variable.set_shape(shape)
        self._snapshot.set_shape(shape)

    def _ref(self) -> Tensor:
        return self._variable

    def _as_graph_element(self) -> Tensor:
        return self._snapshot

    def _check_conversion(self, dtype: dtypes.DType | None) -> None:
        """TF's refusal to convert this variable to another dtype."""
        if dtype is not None and dtypes.as_dtype(dtype) != self.dtype:
            raise ValueError(
                f"Incompatible type conversion requested to type '{dtypes.as_dtype(dtype).name}' "
                f"for variable of type '{self.dtype.name}'")

    def _as_tensor(self, dtype: dtypes.DType | None = None) -> Tensor:
        self._check_conversion(dtype)
        # Under control dependencies TF1's snapshot aliases the variable's buffer, so
        # `with tf.control_dependencies([update]): tf.identity(v)` sees the update. Snapshots
        # here are copies: read anew, after the dependencies.
        if self._graph._current_control_inputs():
            return self.read_value()
        return self._snapshot

    def eval(self, session: Any = None) -> Any:
        return self._snapshot.eval(session=session)

    def assign(self, value: Any, use_locking: bool = False, name: str | None = None,
               read_value: bool = True) -> Any:
        return self._update(state_ops.assign, value, use_locking, name, read_value)

    def assign_add(self, delta: Any, use_locking: bool = False, name: str | None = None,
                   read_value: bool = True) -> Any:
        return self._update(state_ops.assign_add, delta, use_locking, name, read_value)

    def assign_sub(self, delta: Any, use_locking: bool = False, name: str | None = None,
                   read_value: bool = True) -> Any:
        return self._update(state_ops.assign_sub, delta, use_locking, name, read_value)

    # TF's scatter_update/scatter_add/scatter_sub methods take an IndexedSlices, which
    # tensorweave lacks: use tw.scatter_update(v, indices, updates) and friends.
    def scatter_nd_update(self, indices: Any, updates: Any, name: str | None = None) -> Tensor:
        return state_ops.scatter_nd_update(self._variable, indices, updates, True, name)

    def scatter_nd_add(self, indices: Any, updates: Any, name: str | None = None) -> Tensor:
        return state_ops.scatter_nd_add(self._variable, indices, updates, True, name)

    def scatter_nd_sub(self, indices: Any, updates: Any, name: str | None = None) -> Tensor:
        return state_ops.scatter_nd_sub(self._variable, indices, updates, True, name)

    def _update(self, update: Callable[..., Tensor], value: Any, use_locking: bool,
                name: str | None, read_value: bool) -> Tensor | Operation:
        """`update` (an assignment of ``state_ops``) on the ref: its output, or with
        `read_value` False its op."""
        out = update(self._variable, value, use_locking=use_locking, name=name)
        return out if read_value else out.op

    def count_up_to(self, limit: int) -> Tensor:
        """Increments this int32/int64 variable up to `limit`; the value before each
        increment, and `OutOfRangeError` once it reached `limit`."""
        return apply("CountUpTo", [self._variable], {"limit": int(limit)}, name="CountUpTo")

    def load(self, value: Any, session: Any = None) -> None:
        from tensorweave.engine.client.session import get_default_session_or_raise

        session = session or get_default_session_or_raise()
        session.run(self._initializer_op, {self._initializer_op.inputs[1]: value})

    def __repr__(self) -> str:
        return (f"<tf.Variable '{self.name}' shape={self.shape} "
                f"dtype={self.dtype.name}_ref>")

    def __hash__(self) -> int:
        return id(self)

    def __bool__(self) -> bool:
        raise TypeError("Using a `tf.Variable` as a Python `bool` is not allowed.")


def _forward(method: str) -> Any:
    def forwarded(self: Variable, *args: Any) -> Any:
        return getattr(self._as_tensor(), method)(*args)

    forwarded.__name__ = method
    return forwarded


OPERATORS = (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
    "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__abs__", "__lt__", "__le__", "__gt__",
    "__ge__", "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__invert__",
    "__getitem__",
)
for _name in OPERATORS:
    setattr(Variable, _name, _forward(_name))


def global_variables(scope: str | None = None) -> list[Variable]:
    return get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


all_variables = global_variables


def trainable_variables(scope: str | None = None) -> list[Variable]:
    return get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope: str | None = None) -> list[Variable]:
    return get_default_graph().get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def variables_initializer(var_list: list[Variable], name: str = "init") -> Operation:
    if not var_list:
        return group(name=name)
    return group(*[v.initializer for v in var_list], name=name)


def global_variables_initializer() -> Operation:
    return variables_initializer(global_variables(), name="init")


initialize_all_variables = global_variables_initializer


def local_variables_initializer() -> Operation:
    return variables_initializer(local_variables(), name="init_1")


def tables_initializer(name: str = "init_all_tables") -> Operation:
    """An op running every initializer in ``GraphKeys.TABLE_INITIALIZERS`` (a no-op if none)."""
    return group(*get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS), name=name)


initialize_all_tables = tables_initializer


def moving_average_variables(scope: str | None = None) -> list[Variable]:
    return get_default_graph().get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def assert_variables_initialized(var_list: list[Any] | None = None) -> Tensor | None:
    """An op whose run fails with `FailedPreconditionError` while a variable of `var_list`
    (default: global and local) is uninitialized: the rank of each variable, read where it
    lives (TF's); None without variables."""
    from tensorweave.api.array_ops import stack

    if var_list is None:
        var_list = global_variables() + local_variables()
    if not var_list:
        return None
    graph = get_default_graph()
    ranks = []
    for var in var_list:
        ref = var._ref() if isinstance(var, Variable) else var
        with graph.colocate_with(ref.op):
            # A Rank op that reads the variable (the static rank would fold it away).
            ranks.append(apply("Rank", [apply("Identity", [ref])]))
    return ranks[0] if len(ranks) == 1 else stack(ranks)


# report tensor -> the names of the variables its indices refer to
_REPORTED_NAMES: weakref.WeakKeyDictionary[Tensor, list[str]] = weakref.WeakKeyDictionary()


def report_uninitialized_variables(var_list: list[Any] | None = None,
                                   name: str = "report_uninitialized_variables") -> Tensor:
    """The variables of `var_list` (default: global and local) not initialized yet, as a 1-D
    tensor that is empty when all are. TF's holds their names as strings; tensorweave has no
    string tensors, so this one holds their positions in `var_list` (int64: TF's readiness
    check takes an int32 answer as "ready"), and `uninitialized_variable_names` turns a fetched
    value into the names."""
    from tensorweave.api.array_ops import boolean_mask, stack
    from tensorweave.api.math_ops import logical_not

    graph = get_default_graph()
    if var_list is None:
        var_list = global_variables() + local_variables()
    with name_scope(name):
        initialized = [state_ops.is_variable_initialized(v) for v in var_list]
        # TF reports from the CPU of the current device scope.
        with graph.device("/cpu:0"):
            if not var_list:
                report = convert_to_tensor(np.zeros([0], np.int64))
            else:
                positions = convert_to_tensor(np.arange(len(var_list), dtype=np.int64))
                report = boolean_mask(positions, logical_not(stack(initialized)))
    _REPORTED_NAMES[report] = [v.op.name for v in var_list]
    return report


def uninitialized_variable_names(report: Tensor, value: Any) -> list[str]:
    """The names of the variables a fetched `report_uninitialized_variables` value lists."""
    names = _REPORTED_NAMES.get(report)
    if names is None:
        return [str(item) for item in np.asarray(value).ravel()]
    return [names[int(i)] for i in np.asarray(value).ravel()]
