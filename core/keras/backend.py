"""``tw.keras.backend``: the graph-mode Keras backend of TF 1.15 (the parts the rest of
``tw.keras`` stands on).

Contract: Keras runs every model in a session of the graph it was built in. `get_session` gives
the session of the default graph (or of `graph`), created lazily, and before returning it
initializes the variables of that graph that Keras has not seen yet and that are not initialized
already (TF's ``_initialize_variables``), so a freshly built model runs without an explicit
initializer. `set_session` installs a session for its graph. `learning_phase` is one bool
``keras_learning_phase`` placeholder per graph with default False; training steps feed it True.
Layer names are made unique per graph by `unique_object_name` (``dense``, ``dense_1``, ...),
skipping the names layers were given explicitly (`observe_object_name`);
`clear_session` resets the default graph, its session and those counters.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorweave.api.state_ops import (
    assign,
    is_variable_initialized,
    placeholder,
    placeholder_with_default,
)
from tensorweave.api.variables import Variable, global_variables, variables_initializer
from tensorweave.engine.client.session import Session
from tensorweave.engine.graph.graph import Graph, Tensor, get_default_graph, reset_default_graph

__all__ = [
    "batch_get_value", "batch_set_value", "clear_session", "floatx", "get_session", "get_value",
    "learning_phase", "set_floatx", "set_learning_phase", "set_session", "set_value",
]

_FLOATX = ["float32"]
_SESSIONS: weakref.WeakKeyDictionary[Graph, Session] = weakref.WeakKeyDictionary()
_LEARNING_PHASES: weakref.WeakKeyDictionary[Graph, Any] = weakref.WeakKeyDictionary()
_NAME_UIDS: weakref.WeakKeyDictionary[Graph, defaultdict[str, int]] = \
    weakref.WeakKeyDictionary()
# Variables Keras has initialized or found initialized, per graph (TF marks the variable).
_SEEN: weakref.WeakKeyDictionary[Graph, set[str]] = weakref.WeakKeyDictionary()


def floatx() -> str:
    """The default float type's name (``"float32"``)."""
    return _FLOATX[0]


def set_floatx(value: str) -> None:
    if value not in ("float16", "float32", "float64"):
        raise ValueError(f"Unknown floatx type: {value}")
    _FLOATX[0] = value


def get_uid(prefix: str = "") -> int:
    """1, 2, 3, ... for successive calls with `prefix` in the default graph."""
    uids = _NAME_UIDS.setdefault(get_default_graph(), defaultdict(int))
    uids[prefix] += 1
    return uids[prefix]


def unique_object_name(base: str) -> str:
    """`base` the first time in the default graph, then ``base_1``, ``base_2``, ..."""
    n = get_uid(base) - 1
    return base if n == 0 else f"{base}_{n}"


def unused_scope_name(name: str) -> str:
    """`name`, or ``name_<n>`` if variables of the default graph already use it as their
    top-level scope (a copy of a layer built in the graph of its original)."""
    used = {v.op.name.split("/", 1)[0] for v in global_variables()}
    candidates = (name if n == 0 else f"{name}_{n}" for n in range(len(used) + 1))
    return next(c for c in candidates if c not in used)


def observe_object_name(name: str, base: str) -> None:
    """Note that `name` (``base`` or ``base_<n>``) was given explicitly, so `unique_object_name`
    does not hand it out again (a model loaded from its config names its layers)."""
    if name == base:
        n = 0
    elif name.startswith(f"{base}_") and name[len(base) + 1:].isdigit():
        n = int(name[len(base) + 1:])
    else:
        return
    uids = _NAME_UIDS.setdefault(get_default_graph(), defaultdict(int))
    uids[base] = max(uids[base], n + 1)


def learning_phase() -> Any:
    """The default graph's learning phase: a bool tensor (False unless fed), or the Python
    value set by `set_learning_phase`."""
    graph = get_default_graph()
    phase = _LEARNING_PHASES.get(graph)
    if phase is None:
        with graph.name_scope(""):
            phase = placeholder_with_default(False, shape=[], name="keras_learning_phase")
        _LEARNING_PHASES[graph] = phase
    return phase


def set_learning_phase(value: int) -> None:
    """Fix the learning phase of the default graph to 0 (test) or 1 (train)."""
    if value not in (0, 1):
        raise ValueError("Expected learning phase to be 0 or 1.")
    _LEARNING_PHASES[get_default_graph()] = value


def get_session(graph: Graph | None = None) -> Session:
    """The session of `graph` (default: the default graph), with its new variables
    initialized; see the module docstring."""
    graph = graph or get_default_graph()
    session = _SESSIONS.get(graph)
    if session is None or session._closed:
        session = Session(graph=graph)
        _SESSIONS[graph] = session
        _SEEN[graph] = set()
    _initialize_variables(session, graph)
    return session


def set_session(session: Session) -> None:
    """Make `session` the one Keras uses for its graph."""
    _SESSIONS[session.graph] = session
    _SEEN[session.graph] = set()


def _initialize_variables(session: Session, graph: Graph) -> None:
    seen = _SEEN.setdefault(graph, set())
    with graph.as_default():
        candidates = [v for v in global_variables() if v.op.name not in seen]
        if not candidates:
            return
        with graph.name_scope("keras_init"):
            flags = session.run([is_variable_initialized(v) for v in candidates])
            pending = [v for v, ready in zip(candidates, flags) if not ready]
            if pending:
                session.run(variables_initializer(pending))
    seen.update(v.op.name for v in candidates)


def clear_session() -> None:
    """A fresh default graph: its session, learning phase and layer-name counters start
    over."""
    graph = get_default_graph()
    session = _SESSIONS.pop(graph, None)
    if session is not None:
        session.close()
    reset_default_graph()


def get_value(x: Variable | Tensor) -> np.ndarray:
    return batch_get_value([x])[0]


def batch_get_value(tensors: Sequence[Variable | Tensor]) -> list[np.ndarray]:
    """The values of `tensors` (variables or tensors of one graph), fetched in one step."""
    if not tensors:
        return []
    return list(get_session(tensors[0].graph).run(list(tensors)))


def set_value(x: Variable, value: Any) -> None:
    batch_set_value([(x, value)])


def batch_set_value(tuples: Sequence[tuple[Variable, Any]]) -> None:
    """Assign numpy values to variables in one step, through one cached placeholder and
    ``Assign`` per variable."""
    if not tuples:
        return
    graph = tuples[0][0].graph
    feeds, ops = {}, []
    for variable, value in tuples:
        value = np.asarray(value, dtype=variable.dtype.np_type)
        if tuple(variable.shape.as_list()) != value.shape:
            raise ValueError(f"Layer weight shape {tuple(variable.shape.as_list())} not "
                             f"compatible with provided weight shape {value.shape}")
        assign_placeholder, assign_op = _assign_op(variable)
        feeds[assign_placeholder] = value
        ops.append(assign_op)
    get_session(graph).run(ops, feeds)


_ASSIGNS: weakref.WeakKeyDictionary[Variable, tuple[Tensor, Any]] = weakref.WeakKeyDictionary()


def _assign_op(variable: Variable) -> tuple[Tensor, Any]:
    cached = _ASSIGNS.get(variable)
    if cached is None:
        graph = variable.graph
        with graph.as_default(), graph.name_scope(f"{variable.op.name}/keras_assign"):
            value = placeholder(variable.dtype, variable.shape, name="assign_placeholder")
            cached = (value, assign(variable, value).op)
        _ASSIGNS[variable] = cached
    return cached
