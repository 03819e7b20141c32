"""TF's ``GraphDef`` protocol buffer <-> the engine's `graph_def.GraphDef`.

Contract: `GraphDef` (``tw.GraphDef``), `NodeDef` and `VersionDef` are the protobuf classes of
`tensorweave.engine.proto.framework`, so ``graph_def.node[i].attr["value"].tensor`` reads as
with TF. `to_proto` writes an engine graph (nodes with Python attr values) as one; `from_proto`
reads one back into the engine's form, validating it. Attr values map as:

None <-> an empty ``AttrValue``; bool ``b``; int ``i``; float ``f`` (float32 on the wire, as TF);
str ``s`` (read back as str when it is UTF-8); `DType` ``type``; `TensorShape` ``shape``; numpy
arrays ``tensor``; lists of one of those kinds ``list`` (lists of int lists are shapes). A
function attr (the engine's `FunctionDef`, for ``If``/``While``) is ``func`` naming a library
function; the library entry keeps the function's nodes, with their ``_Arg``/``_FunctionRetval``
nodes and ``_output_types``/``_output_shapes`` attrs, so it reads back as the same function (TF
itself cannot run it). A dict attr (a ``tf.data`` pipeline description) is a ``func`` with an
empty name and the dict as its attrs.

At the top level ``_output_types`` (bookkeeping of `Graph`) is never written, and
``_output_shapes`` only with ``add_shapes``; a read node keeps what the message had.

`from_proto` checks: nodes have a name and an op, dtypes are known, shapes and tensors are well
formed (see `tensor_proto`), library references resolve, functions are well formed, nesting
stays within protobuf's depth. Anything else raises `ValueError` ("Error parsing GraphDef: ...")
naming the node and attr. Reading builds data only: nothing is executed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from google.protobuf import text_format

from tensorweave.engine import dtypes
from tensorweave.engine.graph import graph_def as _graph_def
from tensorweave.engine.graph.func_graph import RETVAL_OP, FunctionDef, check_function
from tensorweave.engine.graph.tensor_proto import (
    dtype_from_enum,
    shape_from_proto,
    shape_to_proto,
    tensor_from_proto,
    tensor_to_proto,
)
from tensorweave.engine.proto import framework
from tensorweave.engine.proto.framework import GraphDef, NodeDef, VersionDef
from tensorweave.engine.tensor_shape import TensorShape

__all__ = ["GraphDef", "NodeDef", "VersionDef", "from_proto", "node_to_proto", "parse_text",
           "to_proto"]

_MAX_DEPTH = 100  # protobuf's default recursion limit
INTERNAL_ATTRS = ("_output_types", "_output_shapes")


def _bad(what: str) -> ValueError:
    return ValueError(f"Error parsing GraphDef: {what}")


# -- writing ----------------------------------------------------------------------------------


class _Library:
    """The functions the attrs written so far refer to, by name."""

    def __init__(self) -> None:
        self.functions: dict[str, FunctionDef] = {}

    def add(self, fn: FunctionDef) -> None:
        known = self.functions.setdefault(fn.name, fn)
        if known is not fn:
            raise ValueError(f"Two different functions are named '{fn.name}'")


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_shape_like(v: Any) -> bool:
    return isinstance(v, TensorShape) or (
        isinstance(v, (list, tuple)) and all(d is None or _is_int(d) for d in v))


def _write_attr_map(attr: Mapping[str, Any], out: Any, library: _Library) -> None:
    for key in sorted(attr):
        attr_to_proto(attr[key], library, out[key])


def _write_list(values: list[Any], library: _Library, out: framework.AttrValue.ListValue) -> None:
    if not values:
        return
    if all(isinstance(v, (bool, np.bool_)) for v in values):
        out.b.extend(bool(v) for v in values)
    elif all(_is_int(v) for v in values):
        out.i.extend(int(v) for v in values)
    elif all(isinstance(v, (float, np.floating)) or _is_int(v) for v in values):
        out.f.extend(float(v) for v in values)
    elif all(isinstance(v, (str, bytes)) for v in values):
        out.s.extend(v.encode() if isinstance(v, str) else v for v in values)
    elif all(isinstance(v, dtypes.DType) for v in values):
        out.type.extend(v.as_datatype_enum for v in values)
    elif all(_is_shape_like(v) for v in values):
        for v in values:
            shape_to_proto(v, out.shape.add())
    elif all(isinstance(v, np.ndarray) for v in values):
        for v in values:
            tensor_to_proto(v, proto=out.tensor.add())
    elif all(isinstance(v, (FunctionDef, dict)) for v in values):
        for v in values:
            _write_func(v, library, out.func.add())
    else:
        kinds = sorted({type(v).__name__ for v in values})
        raise ValueError(f"A list attr must hold values of one kind, got {kinds}")


def _write_func(value: FunctionDef | dict, library: _Library,
                out: framework.NameAttrList) -> None:
    if isinstance(value, FunctionDef):
        library.add(value)
        out.name = value.name
        return
    if not all(isinstance(k, str) for k in value):
        raise ValueError("A dict attr must have string keys")
    out.SetInParent()
    _write_attr_map(value, out.attr, library)


def attr_to_proto(value: Any, library: _Library, out: framework.AttrValue) -> None:
    """Write `value` into ``AttrValue`` `out` (see the module docstring for the mapping)."""
    if value is None:
        out.SetInParent()
    elif isinstance(value, (bool, np.bool_)):
        out.b = bool(value)
    elif _is_int(value):
        out.i = int(value)
    elif isinstance(value, (float, np.floating)):
        out.f = float(value)
    elif isinstance(value, (str, bytes)):
        out.s = value.encode() if isinstance(value, str) else value
    elif isinstance(value, dtypes.DType):
        out.type = value.as_datatype_enum
    elif isinstance(value, TensorShape):
        shape_to_proto(value, out.shape)
        out.shape.SetInParent()
    elif isinstance(value, np.ndarray):
        tensor_to_proto(value, proto=out.tensor)
    elif isinstance(value, (FunctionDef, dict)):
        _write_func(value, library, out.func)
    elif isinstance(value, (list, tuple)):
        out.list.SetInParent()
        _write_list(list(value), library, out.list)
    else:
        raise ValueError(f"An attr value of type {type(value).__name__} has no AttrValue form")


def _write_node(node: _graph_def.NodeDef, library: _Library, out: NodeDef,
                add_shapes: bool = False, internal: bool = False) -> None:
    """Write `node` into `out`; `internal` (function bodies) keeps the bookkeeping attrs."""
    attr = node.attr
    if not internal and "_output_types" in attr:
        attr = dict(attr)
        del attr["_output_types"]
        if not add_shapes:
            attr.pop("_output_shapes", None)
    out.name, out.op = node.name, node.op
    out.input.extend(node.input)
    if node.device:
        out.device = node.device
    try:
        _write_attr_map(attr, out.attr, library)
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"Cannot write node '{node.name}' ({node.op}): {exc}") from None


def node_to_proto(node: _graph_def.NodeDef) -> NodeDef:
    """One node as a ``NodeDef`` message, without the bookkeeping attrs (a function attr names
    its function; the function itself needs a graph's library)."""
    out = NodeDef()
    _write_node(node, _Library(), out)
    return out


def _write_function(fn: FunctionDef, library: _Library, out: framework.FunctionDef) -> None:
    out.signature.name = fn.name
    for op, args in (("_Arg", out.signature.input_arg), (RETVAL_OP, out.signature.output_arg)):
        for n in sorted((n for n in fn.nodes if n.op == op), key=lambda n: n.attr["index"]):
            args.add(name=n.name, type=dtypes.as_dtype(n.attr["T"]).as_datatype_enum)
    for n in fn.nodes:
        _write_node(n, library, out.node_def.add(), internal=True)


def to_proto(graph_def: _graph_def.GraphDef, add_shapes: bool = False,
             versions: VersionDef | None = None) -> GraphDef:
    """`graph_def` as a ``GraphDef`` message (itself if it already is one); `add_shapes` writes
    each node's ``_output_shapes``."""
    if isinstance(graph_def, GraphDef):
        return graph_def
    library = _Library()
    out = GraphDef()
    for node in graph_def.node:
        _write_node(node, library, out.node.add(), add_shapes)
    written: set[str] = set()
    while len(written) < len(library.functions):  # writing a function may name more
        for name in [n for n in library.functions if n not in written]:
            written.add(name)
            _write_function(library.functions[name], library, out.library.function.add())
    out.versions.SetInParent()
    if versions is not None:
        out.versions.CopyFrom(versions)
    return out


# -- reading ----------------------------------------------------------------------------------


Resolve = Callable[[str], FunctionDef]


def _text(raw: bytes) -> str | bytes:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def _read_attr_map(attr: Mapping[str, framework.AttrValue], resolve: Resolve, depth: int,
                   what: str) -> dict[str, Any]:
    return {key: attr_from_proto(attr[key], resolve, depth + 1, f"{what}['{key}']")
            for key in attr}


def _read_func(func: framework.NameAttrList, resolve: Resolve, depth: int, what: str) -> Any:
    if not func.name:
        return _read_attr_map(func.attr, resolve, depth, what)
    if func.attr:
        raise _bad(f"{what} instantiates function '{func.name}' with attrs, which is not "
                   "supported")
    return resolve(func.name)


_LIST_KINDS = ("s", "i", "f", "b", "type", "shape", "tensor", "func")


def _read_list(values: framework.AttrValue.ListValue, resolve: Resolve, depth: int,
               what: str) -> list[Any]:
    kinds = [k for k in _LIST_KINDS if len(getattr(values, k))]
    if len(kinds) > 1:
        raise _bad(f"{what} is a list of more than one kind")
    if not kinds:
        return []
    kind = kinds[0]
    items = getattr(values, kind)
    if kind == "s":
        return [_text(v) for v in items]
    if kind in ("i", "f", "b"):
        return list(items)
    if kind == "type":
        return [_dtype(v, what) for v in items]
    if kind == "shape":
        return [_shape(v, what) for v in items]
    if kind == "tensor":
        return [_tensor(v, what) for v in items]
    return [_read_func(v, resolve, depth + 1, what) for v in items]


def _dtype(number: int, what: str) -> dtypes.DType:
    try:
        return dtype_from_enum(number, what)
    except ValueError as exc:
        raise _bad(str(exc)) from None


def _shape(proto: framework.TensorShapeProto, what: str) -> TensorShape:
    try:
        return shape_from_proto(proto, what)
    except ValueError as exc:
        raise _bad(str(exc)) from None


def _tensor(proto: framework.TensorProto, what: str) -> np.ndarray:
    try:
        return tensor_from_proto(proto, what)
    except ValueError as exc:
        raise _bad(str(exc)) from None


def attr_from_proto(attr: framework.AttrValue, resolve: Resolve, depth: int = 0,
                    what: str = "attr") -> Any:
    """An ``AttrValue``'s value (see the module docstring for the mapping)."""
    if depth > _MAX_DEPTH:
        raise _bad(f"{what} is nested too deeply")
    kind = attr.WhichOneof("value")
    if kind is None:
        return None
    if kind == "s":
        return _text(attr.s)
    if kind in ("i", "f", "b"):
        return getattr(attr, kind)
    if kind == "type":
        return _dtype(attr.type, what)
    if kind == "shape":
        return _shape(attr.shape, what)
    if kind == "tensor":
        return _tensor(attr.tensor, what)
    if kind == "list":
        return _read_list(attr.list, resolve, depth, what)
    if kind == "func":
        return _read_func(attr.func, resolve, depth, what)
    raise _bad(f"{what} is a function placeholder, which only a TF function body can hold")


def node_from_proto(node: NodeDef, resolve: Resolve, what: str = "node") -> _graph_def.NodeDef:
    if not node.name or not node.op:
        raise _bad(f"a {what} has {'no name' if not node.name else f'no op ({node.name!r})'}")
    attr = _read_attr_map(node.attr, resolve, 0, f"node '{node.name}' attr")
    return _graph_def.NodeDef(name=node.name, op=node.op, input=list(node.input),
                              device=node.device, attr=attr)


def _library_resolver(library: framework.FunctionDefLibrary) -> Resolve:
    """A resolver of the library's functions by name, each read once, on first use."""
    functions: dict[str, framework.FunctionDef] = {}
    for fn in library.function:
        name = fn.signature.name
        if not name:
            raise _bad("a library function has no signature name")
        if name in functions:
            raise _bad(f"the library has two functions named '{name}'")
        functions[name] = fn
    done: dict[str, FunctionDef] = {}
    in_progress: list[str] = []

    def resolve(name: str) -> FunctionDef:
        if name in done:
            return done[name]
        if name not in functions:
            raise _bad(f"an attr names function '{name}', which is not in the library")
        if name in in_progress:
            raise _bad(f"function '{name}' refers to itself")
        in_progress.append(name)
        nodes = [node_from_proto(n, resolve, f"function '{name}' node")
                 for n in functions[name].node_def]
        in_progress.pop()
        fn = FunctionDef(name, tuple(nodes))
        try:
            check_function(fn)
        except ValueError as exc:
            raise _bad(str(exc)) from None
        done[name] = fn
        return fn

    return resolve


def from_proto(proto: GraphDef) -> _graph_def.GraphDef:
    """The engine's form of ``GraphDef`` message `proto`; `ValueError` if it is malformed."""
    if not isinstance(proto, GraphDef):
        raise TypeError(f"Expected a GraphDef, got {type(proto).__name__}")
    resolve = _library_resolver(proto.library)
    return _graph_def.GraphDef(node=[node_from_proto(n, resolve) for n in proto.node])


def parse_text(text: str | bytes) -> GraphDef:
    """A ``GraphDef`` in protobuf's text format; `text_format.ParseError` (a `ValueError`) naming
    the line if the text is malformed."""
    return text_format.Parse(text, GraphDef())
