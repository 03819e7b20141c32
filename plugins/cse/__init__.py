"""The ``cse`` plugin: common-subexpression elimination before placement.

Contract: two nodes merge when they have the same op, the same data inputs (in order) and control
inputs (as a set), both after earlier merges, the same attrs and the same requested device.
Const values compare by dtype, shape and bytes. Stateful ops (random ops, variables, assigns,
``_Arg``/``_Retval``/``_Send``/``_Recv``), placeholders and ops without an `OpDef` never merge,
and a node in `PassContext.protected` is never removed. The first node in topological order
survives; every consumer of a merged node is rewired to it. A graph with a cycle, or without
two such nodes (looked for before sorting it), is returned unchanged (the executor reports the
cycle).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from tensorweave.engine.dtypes import DType
from tensorweave.engine.graph.graph_def import (
    GraphDef,
    NodeDef,
    parse_input,
    tensor_input,
    topological_order,
)
from tensorweave.engine.plugin_manager import hookimpl
from tensorweave.engine.runtime.passes import Pass, PassContext
from tensorweave.engine.tensor_shape import TensorShape

ORDER = 10
# An unfed placeholder fails the step with an error naming it, so two are never one.
NEVER_MERGED = frozenset({"Placeholder"})


class _ArrayKey:
    """An array as a dict key: hashed by a digest, equal only for identical dtype, shape and
    bytes."""

    __slots__ = ("array", "_hash")

    def __init__(self, array: np.ndarray) -> None:
        self.array = np.asarray(array, order="C")  # not ascontiguousarray: it makes 0-d 1-d
        digest = hashlib.blake2b(self.array.reshape(-1).view(np.uint8), digest_size=16).digest()
        self._hash = hash((self.array.dtype.str, self.array.shape, digest))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _ArrayKey):
            return NotImplemented
        a, b = self.array, other.array
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


_PLAIN = frozenset({str, int, bool, type(None), DType, TensorShape})


def _value_key(value: Any) -> Any:
    """A hashable form of an attr value that is equal only for equal values of the same type."""
    kind = type(value)
    if kind in _PLAIN:
        return (kind, value)
    if kind is float:  # distinguishes -0.0 and keeps NaN equal to itself
        return (kind, value.hex())
    if kind is list or kind is tuple:
        return (kind, tuple(map(_value_key, value)))
    if isinstance(value, np.ndarray) and value.dtype.kind == "O":  # strings: by their bytes
        return (np.ndarray, value.shape, tuple(value.reshape(-1).tolist()))
    if isinstance(value, (np.ndarray, np.generic)):
        return _ArrayKey(np.asarray(value))
    if isinstance(value, dict):
        return (dict, _attrs_key(value))
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))
    return (kind, value)


def _attrs_key(attrs: dict[str, Any]) -> tuple[Any, ...]:
    # Output dtypes and shapes follow from the op, inputs and other attrs: no need to compare.
    return tuple(sorted((k, _value_key(v)) for k, v in attrs.items()
                        if not k.startswith("_output")))


class _Bucket:
    """The nodes that share op, inputs and device. Attrs are compared (Const values hashed) only
    once a second node arrives, since most nodes have no twin."""

    __slots__ = ("first", "by_attrs")

    def __init__(self, first: NodeDef) -> None:
        self.first = first
        self.by_attrs: dict[tuple[Any, ...], str] | None = None

    def survivor(self, node: NodeDef) -> str:
        """The name of the earlier node with `node`'s attrs, or `node`'s own name."""
        if self.by_attrs is None:
            self.by_attrs = {_attrs_key(self.first.attr): self.first.name}
        return self.by_attrs.setdefault(_attrs_key(node.attr), node.name)


def _rewired(inputs: list[str], merged: dict[str, str]) -> list[str]:
    data, control = [], []
    for text in inputs:
        src, index = parse_input(text)
        text = tensor_input(merged.get(src, src), index)
        if index >= 0:
            data.append(text)
        elif text not in control:
            control.append(text)
    return data + control


def _key(node: NodeDef, data: tuple[Any, ...], control: frozenset[str]) -> tuple[Any, ...]:
    """The bucket of a node: op, inputs, device and, for a Const, its value when small, so
    Consts of different values never meet (a bucket compares attrs, hashing Const values)."""
    value = node.attr.get("value") if node.op == "Const" else None
    small = isinstance(value, np.ndarray) and value.dtype.kind != "O" and value.nbytes <= 64
    return (node.op, data, control, node.device,
            (value.dtype.str, value.shape, value.tobytes()) if small else None)


def _mergeable(node: NodeDef, ops: Any) -> bool:
    op_def = ops.get(node.op)
    return not (op_def is None or op_def.stateful or node.op in NEVER_MERGED)


def _has_twins(graph_def: GraphDef, ops: Any) -> bool:
    """Whether two mergeable nodes have the same op, inputs, device and attrs as the graph
    stands, found without sorting it: the first merge in topological order is of such a pair,
    so without one nothing merges."""
    buckets: dict[tuple[Any, ...], _Bucket] = {}
    for node in graph_def.node:
        if not _mergeable(node, ops):
            continue
        data = tuple(parse_input(t) for t in node.input if not t.startswith("^"))
        key = _key(node, data, frozenset(t for t in node.input if t.startswith("^")))
        bucket = buckets.get(key)
        if bucket is None:
            buckets[key] = _Bucket(node)
        elif bucket.survivor(node) != node.name:
            return True
    return False


def eliminate_common_subexpressions(graph_def: GraphDef, ctx: PassContext) -> GraphDef:
    """Merge duplicate nodes; see the module docstring."""
    ops = ctx.registries.ops
    if not _has_twins(graph_def, ops):
        return graph_def
    order = topological_order(graph_def)
    if order is None:
        return graph_def
    merged: dict[str, str] = {}  # removed node -> its survivor
    buckets: dict[tuple[Any, ...], _Bucket] = {}
    rewritten: dict[str, NodeDef] = {}
    for node in order:
        inputs = _rewired(node.input, merged)
        if inputs != node.input:
            node = node.copy(input=inputs)
        rewritten[node.name] = node
        if not _mergeable(node, ops):
            continue
        data = tuple(t for t in inputs if not t.startswith("^"))
        key = _key(node, data, frozenset(t for t in inputs if t.startswith("^")))
        bucket = buckets.get(key)
        if bucket is None:
            buckets[key] = _Bucket(node)
            continue
        survivor = bucket.survivor(node)
        if survivor != node.name and node.name not in ctx.protected:
            merged[node.name] = survivor
    if not merged:
        return graph_def
    return GraphDef(node=[rewritten[n.name] for n in graph_def.node if n.name not in merged])


@hookimpl
def tensorweave_graph_passes() -> list[Pass]:
    return [Pass("cse", "pre_placement", ORDER, eliminate_common_subexpressions)]
