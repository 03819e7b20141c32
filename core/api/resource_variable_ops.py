"""`ResourceVariable`: TF's resource variables, and the switch that makes them the default.

Contract: ``ResourceVariable(initial_value, name="v")`` (also ``tf.Variable(...,
use_resource=True)``, ``tf.get_variable(..., use_resource=True)`` and, after
`enable_resource_variables`, every new variable) creates, as TF 1.15 does, the ``VarHandleOp``
``v`` (shared name ``v``), ``v/IsInitialized/VarIsInitializedOp``, the initializer
``v/Assign`` (an ``AssignVariableOp``) and the read ``v/Read/ReadVariableOp`` (the graph
element), all colocated with the handle. Its name is the handle's (``v:0``), as a ref
variable's is its ``VariableV2``'s, so savers and checkpoints key it ``v`` either way. Its static
shape is the initial value's, or `shape` when given; ``validate_shape`` is ignored, as TF 1.15
ignores it there (an assignment whose shape is not known statically may still change it).

Unlike a ref variable, every use as a tensor is a new ``ReadVariableOp`` made where it is used,
so a read ordered after an assignment (by data or control dependencies) sees it. Assignments
(``assign``, ``assign_add``, ``assign_sub``, the ``scatter_*`` and ``scatter_nd_*`` methods)
are ``AssignVariableOp``/``AssignAddVariableOp``/``ResourceScatter*`` ops; with ``read_value`` they
return a read made after the update, else the update op. ``tf.assign(v, x)`` and the other
``state_ops`` functions dispatch to these methods. The gradient with respect to a resource
variable is the sum over its reads (dense) and gathers (`IndexedSlices`), taken at its handle,
also through ``tf.cond`` branches and ``tf.while_loop`` bodies (the loop's gradient gives a
handle it carries the sum over all iterations of its reads' gradients).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.api.scopes import name_scope
from tensorweave.api.variables import Variable
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Operation, Tensor, get_default_graph
from tensorweave.engine.graph.op_builder import apply, make_op
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "ResourceVariable", "disable_resource_variables", "enable_resource_variables",
    "is_resource_variable", "resource_variables_enabled",
]

_DEFAULT_USE_RESOURCE = False


def enable_resource_variables() -> None:
    """New variables are resource variables unless created with ``use_resource=False``."""
    global _DEFAULT_USE_RESOURCE
    _DEFAULT_USE_RESOURCE = True


def disable_resource_variables() -> None:
    """New variables are ref variables unless created with ``use_resource=True``."""
    global _DEFAULT_USE_RESOURCE
    _DEFAULT_USE_RESOURCE = False


def resource_variables_enabled() -> bool:
    return _DEFAULT_USE_RESOURCE


def is_resource_variable(var: Any) -> bool:
    return isinstance(var, ResourceVariable)


class ResourceVariable(Variable):
    """A variable held behind a resource handle; see the module docstring. Takes
    `tf.Variable`'s arguments (`use_resource` is implied)."""

    def __init__(self, initial_value: Any = None, trainable: bool = True,
                 collections: list[str] | None = None, validate_shape: bool = True,
                 caching_device: Any = None, name: str | None = None, variable_def: Any = None,
                 dtype: Any = None, expected_shape: Any = None, import_scope: Any = None,
                 constraint: Any = None, use_resource: Any = None, synchronization: Any = None,
                 aggregation: Any = None, shape: Any = None) -> None:
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        init_from_fn = callable(initial_value)
        self._trainable = trainable
        self._constraint = constraint
        graph = get_default_graph()
        with name_scope(name, "Variable", [] if init_from_fn else [initial_value]) as scope:
            handle_name = scope[:-1]
            with name_scope("Initializer"):
                value = initial_value() if init_from_fn else initial_value
                self._initial_value = convert_to_tensor(value, dtype=dtype,
                                                        name="initial_value")
            # TF 1.15 ignores validate_shape here (its ResourceVariable takes it "for
            # compatibility with tf.Variable"): the handle has the initial value's shape
            # unless `shape` says otherwise (TensorShape(None): any shape may be assigned)
            var_shape = self._initial_value.shape if shape is None else TensorShape(shape)
            self._dtype = self._initial_value.dtype
            self._handle = apply("VarHandleOp", [], {
                "shape": var_shape, "dtype": self._dtype, "shared_name": handle_name},
                name=scope)
            with graph.colocate_with(self._handle.op):
                with name_scope("IsInitialized"):
                    self._is_initialized = apply("VarIsInitializedOp", [self._handle])
                with name_scope("Assign") as assign_scope:
                    self._initializer_op = make_op(
                        "AssignVariableOp", [self._handle, self._initial_value],
                        {"dtype": self._dtype}, name=assign_scope)
                with name_scope("Read"):
                    self._graph_element = self._snapshot = self._read()
        self._graph = graph
        self._add_to_collections(collections, trainable)

    # -- identity -----------------------------------------------------------------------------

    @property
    def handle(self) -> Tensor:
        return self._handle

    @property
    def name(self) -> str:
        return self._handle.name

    @property
    def op(self) -> Operation:
        return self._handle.op

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._handle._handle.shape

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def device(self) -> str:
        return self._handle.device

    # -- values -------------------------------------------------------------------------------

    def _read(self) -> Tensor:
        return apply("ReadVariableOp", [self._handle], {"dtype": self._dtype})

    def value(self) -> Tensor:
        """A new read of the variable, where the caller is (its control dependencies hold)."""
        with self._graph.colocate_with(self._handle.op):
            return self._read()

    def read_value(self) -> Tensor:
        with name_scope("Read"):
            value = self.value()
        return apply("Identity", [value])

    def _ref(self) -> Tensor:
        return self._handle

    def _as_graph_element(self) -> Tensor:
        return self._graph_element

    def _as_tensor(self, dtype: dtypes.DType | None = None) -> Tensor:
        self._check_conversion(dtype)
        return self.value()

    def is_initialized(self, name: str | None = None) -> Tensor:
        return apply("VarIsInitializedOp", [self._handle], name=name)

    def sparse_read(self, indices: Any, name: str | None = None) -> Tensor:
        """The rows at `indices` (``ResourceGather``); its gradient is `IndexedSlices`."""
        with name_scope("Gather" if name is None else name):
            return apply("ResourceGather", [self._handle, indices], {"dtype": self._dtype})

    # -- updates ------------------------------------------------------------------------------

    def _update(self, update: Callable[..., Tensor] | str, value: Any, use_locking: bool,
                name: str | None, read_value: bool) -> Tensor | Operation:
        op_type = update if isinstance(update, str) else _ASSIGN_OPS[update.__name__]
        value = convert_to_tensor(value, dtype=self._dtype)
        op = make_op(op_type, [self._handle, value], {"dtype": self._dtype},
                     name=name or op_type)
        return self._read_after(op) if read_value else op

    def _read_after(self, op: Operation) -> Tensor:
        # the update's graph, not the variable's: inside a cond branch or loop body the read
        # must wait for the update there, or the update is not run at all
        with op.graph.control_dependencies([op]):
            return self.value()

    def _scatter(self, op_type: str, indices: Any, updates: Any,
                 name: str | None) -> Tensor:
        updates = convert_to_tensor(updates, dtype=self._dtype)
        op = make_op(op_type, [self._handle, indices, updates], {"dtype": self._dtype},
                     name=name or op_type)
        return self._read_after(op)

    def _scatter_nd(self, op_type: str, indices: Any, updates: Any,
                    name: str | None) -> Tensor:
        updates = convert_to_tensor(updates, dtype=self._dtype)
        op = make_op(op_type, [self._handle, indices, updates], {"T": self._dtype},
                     name=name or op_type)
        return self._read_after(op)

    def scatter_nd_update(self, indices: Any, updates: Any, name: str | None = None) -> Tensor:
        return self._scatter_nd("ResourceScatterNdUpdate", indices, updates, name)

    def scatter_nd_add(self, indices: Any, updates: Any, name: str | None = None) -> Tensor:
        return self._scatter_nd("ResourceScatterNdAdd", indices, updates, name)

    def scatter_nd_sub(self, indices: Any, updates: Any, name: str | None = None) -> Tensor:
        return self._scatter_nd("ResourceScatterNdSub", indices, updates, name)

    def scatter_update(self, indices: Any, updates: Any, name: str | None = None) -> Tensor:
        return self._scatter("ResourceScatterUpdate", indices, updates, name)

    def scatter_add(self, indices: Any, updates: Any, name: str | None = None) -> Tensor:
        return self._scatter("ResourceScatterAdd", indices, updates, name)

    def scatter_sub(self, indices: Any, updates: Any, name: str | None = None) -> Tensor:
        return self._scatter("ResourceScatterSub", indices, updates, name)

    def scatter_mul(self, indices: Any, updates: Any, name: str | None = None) -> Tensor:
        return self._scatter("ResourceScatterMul", indices, updates, name)

    def scatter_div(self, indices: Any, updates: Any, name: str | None = None) -> Tensor:
        return self._scatter("ResourceScatterDiv", indices, updates, name)

    def scatter_min(self, indices: Any, updates: Any, name: str | None = None) -> Tensor:
        return self._scatter("ResourceScatterMin", indices, updates, name)

    def scatter_max(self, indices: Any, updates: Any, name: str | None = None) -> Tensor:
        return self._scatter("ResourceScatterMax", indices, updates, name)

    def __repr__(self) -> str:
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"


# state_ops' assignment functions -> the resource op each stands for
_ASSIGN_OPS = {"assign": "AssignVariableOp", "assign_add": "AssignAddVariableOp",
               "assign_sub": "AssignSubVariableOp"}
