"""Graph scopes and collections on the default graph, as ``tf.compat.v1`` exposes them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from tensorweave.engine.graph.graph import Tensor, get_default_graph

__all__ = [
    "add_to_collection", "add_to_collections", "colocate_with", "container",
    "control_dependencies", "device",
    "get_collection", "get_collection_ref", "name_scope", "get_name_scope",
]


@contextlib.contextmanager
def name_scope(name: str | None, default_name: str | None = None,
               values: Any = None) -> Iterator[str]:
    """TF1's ``name_scope(name, default_name, values)``; yields the scope (``"a/b/"``)."""
    graph = get_default_graph()
    for v in values or ():
        if isinstance(v, Tensor):
            # (a function graph being built stays the default when it uses outer tensors)
            if not graph.encloses(v.graph):
                graph = v.graph
            break
    scope_name = name if name is not None else default_name
    with graph.as_default(), graph.name_scope(scope_name) as scope:
        yield scope


def get_name_scope() -> str:
    return get_default_graph().get_name_scope()


def device(device_name_or_function: Any) -> Any:
    return get_default_graph().device(device_name_or_function)


def container(container_name: str) -> Any:
    return get_default_graph().container(container_name)


def control_dependencies(control_inputs: Any) -> Any:
    return get_default_graph().control_dependencies(control_inputs)


def colocate_with(op: Any, ignore_existing: bool = False) -> Any:
    return get_default_graph().colocate_with(op, ignore_existing)


def add_to_collection(name: str, value: Any) -> None:
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names: Any, value: Any) -> None:
    get_default_graph().add_to_collections(names, value)


def get_collection(key: str, scope: str | None = None) -> list[Any]:
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key: str) -> list[Any]:
    return get_default_graph().get_collection_ref(key)
