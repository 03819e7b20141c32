"""The global step: the int64 scalar variable counting training steps, as TF1's
``training_util``.

Contract: the global step is the variable named ``global_step`` in the ``GLOBAL_STEP`` collection
(or, for graphs built without the collection, the tensor ``global_step:0``), not trainable, in
``GLOBAL_VARIABLES``, initialized to 0. `create_global_step` raises `ValueError` if it exists;
`get_or_create_global_step` returns the existing one; `get_global_step` returns ``None`` when
there is none and raises `TypeError` when the candidate is not an integer scalar.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import init_ops
from tensorweave.api.variable_scope import get_variable
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Graph, GraphKeys, get_default_graph

__all__ = ["create_global_step", "get_global_step", "get_or_create_global_step", "global_step"]


def global_step(sess: Any, global_step_tensor: Any) -> int:
    """The global step's value, as a Python int."""
    return int(sess.run(global_step_tensor))


def _check(candidate: Any) -> Any:
    if not candidate.dtype.is_integer:
        raise TypeError(f"Existing \"global_step\" does not have integer type: "
                        f"{candidate.dtype.name}")
    if candidate.get_shape().ndims != 0 and candidate.get_shape().is_fully_defined():
        raise TypeError(f"Existing \"global_step\" is not scalar: {candidate.get_shape()}")
    return candidate


def get_global_step(graph: Graph | None = None) -> Any:
    """The global step variable (or tensor) of `graph`, or ``None``."""
    graph = graph or get_default_graph()
    collected = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(collected) > 1:
        raise TypeError("Multiple tensors in global_step collection.")
    if collected:
        return _check(collected[0])
    try:
        candidate = graph.get_tensor_by_name("global_step:0")
    except KeyError:
        return None
    return _check(candidate)


def create_global_step(graph: Graph | None = None) -> Any:
    """Create the global step variable in `graph`; `ValueError` if it already exists."""
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), graph.name_scope(None):
        return get_variable(GraphKeys.GLOBAL_STEP, shape=[], dtype=dtypes.int64,
                            initializer=init_ops.zeros_initializer(), trainable=False,
                            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph: Graph | None = None) -> Any:
    """The global step of `graph`, created if it does not exist yet."""
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    return create_global_step(graph) if step is None else step
