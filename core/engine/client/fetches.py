"""Fetch structures: flattening what `Session.run` is asked for, and rebuilding the answer.

Contract: `FetchMapper(graph, fetches)` accepts a `Tensor`, an `Operation`, a name (``"x:0"``,
``"op"``), anything with ``_as_graph_element`` (a variable is fetched through its ref, so it
is read when the step ends, as in TF), a value of a type registered in `conversions`
(`SparseTensor`, `RaggedTensor`, `IndexedSlices`: fetched as their component tensors and
rebuilt by their rebuild function), and lists, tuples, namedtuples and dicts of these, nested.
`tensor_names` lists each fetched tensor once; `target_names` the ops run for effect.
`build(values)` returns the same structure with each tensor replaced by its value and each
operation by ``None``. A bad fetch raises `TypeError` or `ValueError`, as TF does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.engine.client.conversions import conversion_of
from tensorweave.engine.graph.graph import Graph, Operation, Tensor


class FetchMapper:
    def __init__(self, graph: Graph, fetches: Any) -> None:
        self.graph = graph
        self.tensor_names: list[str] = []
        self.tensors: list[Tensor] = []
        self.target_names: list[str] = []
        self._index: dict[str, int] = {}
        self._build = self._map(fetches)

    def _map(self, fetch: Any) -> Callable[[list[Any]], Any]:
        if fetch is None:
            raise TypeError(f"Fetch argument None has invalid type {type(None)}")
        conversion = conversion_of(fetch)
        if conversion is not None:
            tensors, rebuild = conversion.fetch(fetch)
            parts = [self._map(t) for t in tensors]
            return lambda values: rebuild([b(values) for b in parts])
        if isinstance(fetch, (list, tuple)):
            builders = [self._map(f) for f in fetch]
            if hasattr(fetch, "_fields"):  # namedtuple
                return lambda values: type(fetch)(*(b(values) for b in builders))
            kind = type(fetch)
            return lambda values: kind(b(values) for b in builders)
        if isinstance(fetch, dict):
            items = [(k, self._map(v)) for k, v in fetch.items()]
            kind = type(fetch)
            return lambda values: kind((k, b(values)) for k, b in items)
        try:
            element = self.graph.as_graph_element(fetch)
        except TypeError as exc:
            raise TypeError(
                f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must be a string or "
                f"Tensor. ({exc})") from None
        except (KeyError, ValueError) as exc:
            raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. "
                             f"({exc})") from None
        ref = getattr(fetch, "_variable", None)
        if isinstance(ref, Tensor) and ref.graph is element.graph:
            element = ref  # a fetched variable is its ref, read when the step ends (TF's)
        if isinstance(element, Operation):
            if element.name not in self.target_names:
                self.target_names.append(element.name)
            return lambda values: None
        index = self._index.get(element.name)
        if index is None:
            index = self._index[element.name] = len(self.tensor_names)
            self.tensor_names.append(element.name)
            self.tensors.append(element)
        return lambda values: values[index]

    def build(self, values: list[Any]) -> Any:
        return self._build(values)

