"""The dataflow graph: `Graph`, `Operation` and `Tensor`, as in ``tf.compat.v1``.

Contract: ops are created with `Graph.create_op`, which names them uniquely under the current name
scope (``layer/MatMul``, ``layer/MatMul_1``), applies the device, control-dependency and
colocation scopes, fills type attrs from the inputs, and infers output dtypes and shapes. An
incompatible graph fails there, with `ValueError` (shapes) or `TypeError` (dtypes). Every op
creation bumps `Graph.version`, which keys the session's step cache.
"""

from __future__ import annotations

import contextlib
import linecache
import re
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.device_spec import merge_device
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef
from tensorweave.engine.op_def import REQUIRED, InferContext, OpDef, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape, as_shape

_VALID_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")


class Tensor:
    """One output of an `Operation`: a symbolic handle, not a value."""

    __array_priority__ = 100  # numpy defers `ndarray + Tensor` to Tensor.__radd__

    def __init__(self, op: Operation, value_index: int, dtype: dtypes.DType,
                 shape: TensorShape, handle: TensorSpec | None = None) -> None:
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = shape
        self._handle = handle  # a resource handle's referent (`TensorSpec.handle`)
        self._consumers: list[Operation] = []

    @property
    def op(self) -> Operation:
        return self._op

    @property
    def value_index(self) -> int:
        return self._value_index

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def graph(self) -> Graph:
        return self._op.graph

    @property
    def name(self) -> str:
        return f"{self._op.name}:{self._value_index}"

    @property
    def device(self) -> str:
        return self._op.device

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape: Any) -> None:
        self._shape = self._shape.merge_with(as_shape(shape))

    def consumers(self) -> list[Operation]:
        return list(self._consumers)

    def eval(self, feed_dict: dict | None = None, session: Any = None) -> Any:
        from tensorweave.engine.client.session import get_default_session_or_raise

        return (session or get_default_session_or_raise()).run(self, feed_dict)

    def _as_node_input(self) -> str:
        return self._op.name if self._value_index == 0 else self.name

    def __bool__(self) -> bool:
        raise TypeError(
            "Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` "
            "instead of `if t:` to test if a tensor is defined."
        )

    def __len__(self) -> int:
        raise TypeError(f"len is not well defined for symbolic Tensors ({self.name}).")

    def __hash__(self) -> int:
        return id(self)

    def __str__(self) -> str:
        # TF's print(tensor) form: the shape is left out when the rank is unknown
        shape = f", shape={self._shape}" if self._shape.ndims is not None else ""
        device = f", device={self.device}" if self.device else ""
        return f'Tensor("{self.name}"{shape}, dtype={self._dtype.name}{device})'

    def __repr__(self) -> str:
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"


def _creation_frames() -> list[tuple[Any, int]]:
    """The calling frames as (code, instruction offset), innermost first: what is cheapest to
    take at every op's creation; lines are worked out only when an error asks (`_line`)."""
    frames = []
    frame = sys._getframe(2)
    while frame is not None:
        frames.append((frame.f_code, frame.f_lasti))
        frame = frame.f_back
    return frames


def _line(code: Any, offset: int) -> int:
    for start, end, line in code.co_lines():
        if start <= offset < end and line is not None:
            return line
    return code.co_firstlineno


class Operation:
    """One node of the graph."""

    def __init__(self, graph: Graph, name: str, op_def: OpDef, inputs: Sequence[Tensor],
                 attrs: dict[str, Any], control_inputs: Sequence[Operation],
                 output_specs: Sequence[TensorSpec]) -> None:
        self._graph = graph
        self._name = name
        self._op_def = op_def
        self._inputs = tuple(inputs)
        self._attrs = attrs
        self._control_inputs = list(control_inputs)
        self._device = ""  # set by the graph once device functions have seen the op
        self._outputs = [Tensor(self, i, s.dtype, s.shape, s.handle)
                         for i, s in enumerate(output_specs)]
        self._id = graph._next_id()
        self._frames = _creation_frames()
        for t in self._inputs:
            t._consumers.append(self)

    @property
    def name(self) -> str:
        return self._name

    @property
    def type(self) -> str:
        return self._op_def.name

    @property
    def op_def(self) -> OpDef:
        return self._op_def

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        return self._inputs

    @property
    def outputs(self) -> list[Tensor]:
        return list(self._outputs)

    @property
    def control_inputs(self) -> list[Operation]:
        return list(self._control_inputs)

    @property
    def device(self) -> str:
        return self._device

    @property
    def attrs(self) -> dict[str, Any]:
        return self._attrs

    @property
    def traceback(self) -> list[tuple[str, int, str, str]]:
        """Where the op was created, outermost call first: (file, line, function, source
        line), as TF's ``Operation.traceback``."""
        out = []
        for code, offset in reversed(self._frames):
            line = _line(code, offset)
            out.append((code.co_filename, line, code.co_name,
                        linecache.getline(code.co_filename, line).strip()))
        return out

    def values(self) -> tuple[Tensor, ...]:
        return tuple(self._outputs)

    def get_attr(self, name: str) -> Any:
        if name not in self._attrs:
            raise ValueError(f"Operation '{self._name}' has no attr named '{name}'.")
        return self._attrs[name]

    def _set_device(self, device: str) -> None:
        self._device = device
        self._graph._bump()

    def _extend(self, inputs: Sequence[Tensor], attrs: dict[str, Any],
                output_specs: Sequence[TensorSpec]) -> list[Tensor]:
        """Append `inputs` and outputs of `output_specs` to this op and update its `attrs`; the
        new outputs. For a rewrite that keeps every existing input and output as it is (TF's
        ``while_v2`` adds its gradient's accumulators to the forward ``While`` so): the
        caller keeps the op valid, and places the new inputs' ops before it in graph order
        (`Graph._move_before`)."""
        self._inputs = (*self._inputs, *inputs)
        for t in inputs:
            t._consumers.append(self)
        self._attrs.update(attrs)
        start = len(self._outputs)
        self._outputs += [Tensor(self, start + i, s.dtype, s.shape, s.handle)
                          for i, s in enumerate(output_specs)]
        self._graph._bump()
        return self._outputs[start:]

    def _add_control_input(self, op: Operation) -> None:
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            self._graph._bump()

    def colocation_groups(self) -> list[str]:
        return list(self._attrs.get("_class", [f"loc:@{self._name}"]))

    @property
    def node_def(self) -> Any:
        """The op as TF's ``NodeDef`` message (function attrs name their function)."""
        from tensorweave.engine.graph.graph_def_proto import node_to_proto

        return node_to_proto(self._engine_node_def)

    @property
    def _engine_node_def(self) -> NodeDef:
        """The op in the engine's form: Python attr values, with ``_output_types``/``_shapes``."""
        inputs = [t._as_node_input() for t in self._inputs]
        inputs += [f"^{op.name}" for op in self._control_inputs]
        attr = dict(self._attrs)
        attr["_output_types"] = [t.dtype for t in self._outputs]
        attr["_output_shapes"] = [t.shape for t in self._outputs]
        return NodeDef(name=self._name, op=self.type, input=inputs, device=self._device, attr=attr)

    def run(self, feed_dict: dict | None = None, session: Any = None) -> None:
        from tensorweave.engine.client.session import get_default_session_or_raise

        (session or get_default_session_or_raise()).run(self, feed_dict)

    def __repr__(self) -> str:
        return f"<tf.Operation '{self._name}' type={self.type}>"


class GraphKeys:
    """Standard collection names."""

    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    MODEL_VARIABLES = "model_variables"
    GLOBAL_STEP = "global_step"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    SUMMARIES = "summaries"
    INIT_OP = "init_op"
    SAVERS = "savers"
    TRAIN_OP = "train_op"
    REGULARIZATION_LOSSES = "regularization_losses"
    METRIC_VARIABLES = "metric_variables"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    LOCAL_INIT_OP = "local_init_op"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    SUMMARY_OP = "summary_op"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    SAVEABLE_OBJECTS = "saveable_objects"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    EVAL_STEP = "eval_step"
    WEIGHTS = "weights"
    BIASES = "biases"
    ACTIVATIONS = "activations"
    CONCATENATED_VARIABLES = "concatenated_variables"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    # TF 1.x keeps the pre-1.0 name as a deprecated alias; old scripts still use it.
    VARIABLES = GLOBAL_VARIABLES


class Graph:
    """A TensorFlow computation, as a list of operations."""

    def __init__(self) -> None:
        self._ops: list[Operation] = []
        self._by_name: dict[str, Operation] = {}
        self._names_in_use: dict[str, int] = {}
        self._name_stack = ""
        self._device_stack: list[str | Callable[[Operation], str] | None] = []
        self._control_stack: list[list[Operation] | None] = []
        self._colocation_stack: list[Operation | None] = []
        self._gradient_override_map: dict[str, str] = {}
        self._container = ""
        self._collections: dict[str, list[Any]] = {}
        self._version = 0
        self._last_id = 0
        self._finalized = False
        self._lock = threading.RLock()
        self.seed: int | None = None

    # -- bookkeeping --------------------------------------------------------------------------

    def _next_id(self) -> int:
        self._last_id += 1
        return self._last_id

    def _bump(self) -> None:
        self._version += 1

    def encloses(self, graph: Graph) -> bool:
        """True if `graph` is this graph or one whose tensors this graph captures (a function
        graph's enclosing graphs; see `tensorweave.engine.graph.func_graph`)."""
        return graph is self

    @property
    def version(self) -> int:
        """Changes whenever the graph does; keys cached steps."""
        return self._version

    @property
    def finalized(self) -> bool:
        return self._finalized

    def finalize(self) -> None:
        self._finalized = True

    def _unsafe_unfinalize(self) -> None:
        """Allow changes again (a `MonitoredSession` closing restores a graph it finalized)."""
        self._finalized = False

    def _move_before(self, anchor: Operation, ops: Sequence[Operation]) -> None:
        """Move `ops` (of this graph, made after `anchor` and needing nothing made after it)
        to just before `anchor` in graph order, which stays topological once `anchor` takes
        their outputs (see `Operation._extend`)."""
        moved = set(ops)
        rest = [op for op in self._ops if op not in moved]
        at = rest.index(anchor)
        self._ops = [*rest[:at], *(op for op in self._ops if op in moved), *rest[at:]]
        self._bump()

    def get_operations(self) -> list[Operation]:
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.") from None

    def get_tensor_by_name(self, name: str) -> Tensor:
        op_name, sep, index = name.rpartition(":")
        if not sep or not index.isdigit():
            raise ValueError(
                f"The name '{name}' looks like an (invalid) Operation name, not a Tensor. "
                "Tensor names must be of the form \"<op_name>:<output_index>\"."
            )
        op = self._by_name.get(op_name)
        if op is None:
            raise KeyError(
                f"The name '{name}' refers to a Tensor which does not exist. The operation, "
                f"'{op_name}', does not exist in the graph."
            )
        if int(index) >= len(op.outputs):
            raise KeyError(
                f"The name '{name}' refers to a Tensor which does not exist. The operation, "
                f"'{op_name}', exists but only has {len(op.outputs)} outputs."
            )
        return op.outputs[int(index)]

    def as_graph_element(self, obj: Any, allow_tensor: bool = True,
                         allow_operation: bool = True) -> Tensor | Operation:
        """Resolve a `Tensor`, `Operation` or name to an element of this graph."""
        if hasattr(obj, "_as_graph_element"):
            obj = obj._as_graph_element()
        if isinstance(obj, str):
            if ":" in obj and allow_tensor:
                return self.get_tensor_by_name(obj)
            if allow_operation:
                return self.get_operation_by_name(obj)
            raise ValueError(f"Name '{obj}' refers to an Operation, not a Tensor.")
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj} is not an element of this graph.")
            return obj
        raise TypeError(f"Can not convert a {type(obj).__name__} into a Tensor or Operation.")

    def as_graph_def(self, from_version: int | None = None, add_shapes: bool = False) -> Any:
        """The graph's nodes as a ``GraphDef`` message (``tw.GraphDef``, see
        `tensorweave.engine.graph.graph_def_proto`); with `from_version`, only the ops created
        since `version` had that value; `add_shapes` writes each node's ``_output_shapes``."""
        from tensorweave.engine.graph.graph_def_proto import to_proto

        return to_proto(self._engine_graph_def(from_version), add_shapes=add_shapes)

    def _engine_graph_def(self, from_version: int | None = None) -> GraphDef:
        """The graph's nodes in the engine's form (Python attr values), as `as_graph_def`."""
        ops = self._ops if from_version is None else [
            op for op in self._ops if op._created_at > from_version]
        return GraphDef(node=[op._engine_node_def for op in ops])

    # -- naming -------------------------------------------------------------------------------

    def get_name_scope(self) -> str:
        return self._name_stack

    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """``name`` under the current scope, suffixed ``_N`` if already taken (TF's rule)."""
        if self._name_stack:
            name = f"{self._name_stack}/{name}"
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base = key
            while key in self._names_in_use:
                key = f"{base}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{i - 1}"
        return name

    @contextlib.contextmanager
    def name_scope(self, name: str | None) -> Iterator[str]:
        """Enter a name scope; yields the scope prefix ending in ``/`` (or ``""``)."""
        old = self._name_stack
        if not name:
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            if not _VALID_NAME.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield f"{new}/" if new else ""
        finally:
            self._name_stack = old

    # -- scopes -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def device(self, spec: str | Callable[[Operation], str] | None) -> Iterator[None]:
        if spec is not None and not isinstance(spec, str) and not callable(spec):
            spec = getattr(spec, "to_string", lambda: str(spec))()
        self._device_stack.append(spec)
        try:
            yield
        finally:
            self._device_stack.pop()

    def _apply_device_scopes(self, op: Operation) -> str:
        start = 0
        for i, entry in enumerate(self._device_stack):
            if entry is None:
                start = i + 1
        device = ""
        for entry in self._device_stack[start:]:
            device = merge_device(device, entry(op) if callable(entry) else entry)
        return device

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs: Sequence[Any] | None) -> Iterator[None]:
        if control_inputs is None:
            self._control_stack.append(None)
        else:
            ops = []
            for c in control_inputs:
                if hasattr(c, "_as_graph_element"):
                    c = c._as_graph_element()
                if isinstance(c, Tensor):
                    c = c.op
                if not isinstance(c, Operation):
                    raise TypeError(f"Control input must be Operation or Tensor: {c!r}")
                ops.append(c)
            self._control_stack.append(ops)
        try:
            yield
        finally:
            self._control_stack.pop()

    def _current_control_inputs(self) -> list[Operation]:
        out: list[Operation] = []
        for entry in reversed(self._control_stack):
            if entry is None:
                break
            out.extend(op for op in entry if op not in out)
        return out

    @contextlib.contextmanager
    def container(self, container_name: str) -> Iterator[str]:
        """TF's ``Graph.container``: stateful ops created inside that declare a ``container``
        attr and leave it empty get `container_name`."""
        saved, self._container = self._container, container_name
        try:
            yield container_name
        finally:
            self._container = saved

    @contextlib.contextmanager
    def colocate_with(self, op: Any, ignore_existing: bool = False) -> Iterator[None]:
        if op is not None:
            if hasattr(op, "_as_graph_element"):
                op = op._as_graph_element()
            if isinstance(op, Tensor):
                op = op.op
        saved_devices = self._device_stack
        if op is not None:
            self._device_stack = [op.device] if op.device else []
        stack = self._colocation_stack
        self._colocation_stack = ([] if ignore_existing else list(stack)) + [op]
        try:
            yield
        finally:
            self._colocation_stack = stack
            self._device_stack = saved_devices

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map: dict[str, str]) -> Iterator[None]:
        """Ops of a type in `op_type_map` created inside get the gradient registered under the
        mapped name (their ``_gradient_op_type`` attr), as TF's."""
        if not isinstance(op_type_map, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in op_type_map.items()):
            raise TypeError("op_type_map must be a dictionary mapping strings to strings")
        saved = self._gradient_override_map
        self._gradient_override_map = {**saved, **op_type_map}
        try:
            yield
        finally:
            self._gradient_override_map = saved

    # -- collections --------------------------------------------------------------------------

    def add_to_collection(self, name: str, value: Any) -> None:
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names: Any, value: Any) -> None:
        for name in [names] if isinstance(names, str) else names:
            self.add_to_collection(name, value)

    def get_collection_ref(self, name: str) -> list[Any]:
        return self._collections.setdefault(name, [])

    def get_collection(self, name: str, scope: str | None = None) -> list[Any]:
        items = list(self._collections.get(name, []))
        if scope is None:
            return items
        pattern = re.compile(scope)
        return [item for item in items if pattern.match(getattr(item, "name", ""))]

    def get_all_collection_keys(self) -> list[str]:
        """The names of the graph's collections (TF: only string keys; internal ones, such as
        the variable store's, are tuples)."""
        return [key for key in self._collections if isinstance(key, str)]

    def clear_collection(self, name: str) -> None:
        self._collections.pop(name, None)

    # -- op creation --------------------------------------------------------------------------

    def create_op(self, op_type: str, inputs: Sequence[Any], attrs: dict[str, Any] | None = None,
                  name: str | None = None) -> Operation:
        """Create an op; list inputs are given as Python lists at their position."""
        from tensorweave.engine.graph.op_builder import build_inputs, complete_attrs
        from tensorweave.engine.plugin_manager import get_registries

        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        op_def = get_registries().ops.get(op_type)
        if op_def is None:
            raise ValueError(f"Op type not registered '{op_type}' in the loaded plugins")
        with self._lock:
            if name and name.endswith("/"):  # TF: a name ending in "/" is used as it is
                node_name = name[:-1]
                self._names_in_use.setdefault(node_name.lower(), 1)
            else:
                node_name = self.unique_name(name or op_type)
            if node_name in self._by_name:
                raise ValueError(f"Duplicate node name in graph: '{node_name}'")
            attrs = complete_attrs(op_def, dict(attrs or {}), node_name)
            if self._container and op_def.stateful and attrs.get("container") == "":
                attrs["container"] = self._container
            flat = build_inputs(self, op_def, inputs, attrs, node_name)
            missing = [k for k, v in attrs.items() if v is REQUIRED]
            if missing:
                raise ValueError(f"Op '{node_name}' ({op_type}) is missing attrs {missing}")
            specs = op_def.infer(InferContext(
                node_name=node_name, op=op_type,
                inputs=[TensorSpec(t.dtype, t.shape, t._handle) for t in flat], attrs=attrs,
                value_of=lambda i: constant_value(flat[i]),
            ))
            control = [c for c in self._current_control_inputs()
                       if all(t.op is not c for t in flat)]
            colocated = [c for c in self._colocation_stack if c is not None]
            if colocated:
                attrs["_class"] = sorted({g for c in colocated for g in c.colocation_groups()})
            if op_type in self._gradient_override_map:
                attrs["_gradient_op_type"] = self._gradient_override_map[op_type]
            op = Operation(self, node_name, op_def, flat, attrs, control, specs)
            op._device = self._apply_device_scopes(op)
            self._ops.append(op)
            self._by_name[node_name] = op
            self._bump()
            op._created_at = self._version
        return op

    # -- default graph ------------------------------------------------------------------------

    @contextlib.contextmanager
    def as_default(self) -> Iterator[Graph]:
        _stack().append(self)
        try:
            yield self
        finally:
            _stack().pop()


_state = threading.local()
_global_default: Graph | None = None


def _stack() -> list[Graph]:
    if not hasattr(_state, "stack"):
        _state.stack = []
    return _state.stack


def get_default_graph() -> Graph:
    global _global_default
    stack = _stack()
    if stack:
        return stack[-1]
    if _global_default is None:
        _global_default = Graph()
    return _global_default


def reset_default_graph() -> None:
    global _global_default
    if _stack():
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. If "
                             "you need a cleared graph, exit the nesting and create a new "
                             "graph.")
    _global_default = Graph()


_UNKNOWN = object()
_FOLD_LIMIT = 4096  # elements: larger constant subgraphs are left to the constant-folding pass
_FEEDABLE = frozenset({"PlaceholderWithDefault"})  # meant to be overridden by a feed


def constant_value(tensor: Tensor) -> np.ndarray | None:
    """The value of `tensor` if it is known when the graph is built (TF's
    ``tensor_util.constant_value``), else ``None``.

    Besides the cases TF spells out (Const, Shape of a known shape, ...), a small stateless op
    whose inputs are all known is evaluated with its CPU kernel. Results are memoized on the
    tensor, so asking is cheap however deep the graph.
    """
    cached = tensor.__dict__.get("_constant", _UNKNOWN)
    if cached is _UNKNOWN:
        cached = tensor._constant = _constant_value(tensor)
    return cached


def _constant_value(tensor: Tensor) -> np.ndarray | None:
    op = tensor.op
    if op.type == "Const":
        return op.get_attr("value")
    if op.type in ("Identity", "StopGradient"):
        return constant_value(op.inputs[0])
    if op.type == "Shape" and op.inputs[0].shape.is_fully_defined():
        return np.array(op.inputs[0].shape.as_list(), dtype=tensor.dtype.np_type)
    if op.type == "Size" and op.inputs[0].shape.is_fully_defined():
        return np.array(op.inputs[0].shape.num_elements(), dtype=tensor.dtype.np_type)
    if op.type == "Rank" and op.inputs[0].shape.ndims is not None:
        return np.array(op.inputs[0].shape.ndims, dtype=np.int32)
    if op.op_def.stateful or op.control_inputs or not op.inputs or op.type in _FEEDABLE:
        return None
    values = []
    for t in op.inputs:
        value = constant_value(t)
        if value is None or np.size(value) > _FOLD_LIMIT:
            return None
        values.append(value)
    outputs = _evaluate(op, values)
    return None if outputs is None else outputs[tensor.value_index]


def _evaluate(op: Operation, values: list[np.ndarray]) -> list[np.ndarray] | None:
    """Run `op`'s CPU kernel on known inputs; ``None`` if there is none or it fails."""
    from tensorweave.engine.plugin_manager import get_registries
    from tensorweave.engine.runtime.host_eval import evaluate_on_host

    arrays = evaluate_on_host(op.name, op.type, op.attrs, [t.dtype for t in op.outputs],
                              [t.shape for t in op.outputs], values, get_registries().kernels)
    for array in arrays or ():
        array.flags.writeable = False
    return arrays
