# INTERIM (lead): the old hand-written GraphDef, for the meta-graph modules until their port lands.
"""TensorFlow's ``GraphDef`` protocol buffer: our `GraphDef` in TF's wire and text formats.

Contract: `GraphDef` (``tw.GraphDef``) is the in-memory `graph_def.GraphDef` plus TF's
``versions``, with protobuf's entry points: ``SerializeToString()``, ``ParseFromString(data)``,
``FromString(data)``, ``CopyFrom``, and ``str(graph_def)`` in text format. Bytes follow TF's
``graph.proto``, ``node_def.proto``, ``attr_value.proto``, ``tensor.proto``,
``tensor_shape.proto``, ``types.proto``, ``versions.proto`` and ``function.proto``:

    GraphDef     { repeated NodeDef node = 1; FunctionDefLibrary library = 2;
                   VersionDef versions = 4; }
    VersionDef   { int32 producer = 1; int32 min_consumer = 2; repeated int32 bad_consumers = 3; }
    NodeDef      { string name = 1; string op = 2; repeated string input = 3; string device = 4;
                   map<string, AttrValue> attr = 5; }
    AttrValue    { oneof { ListValue list = 1; bytes s = 2; int64 i = 3; float f = 4; bool b = 5;
                   DataType type = 6; TensorShapeProto shape = 7; TensorProto tensor = 8;
                   string placeholder = 9; NameAttrList func = 10; } }
    ListValue    { repeated bytes s = 2; int64 i = 3; float f = 4; bool b = 5; DataType type = 6;
                   TensorShapeProto shape = 7; TensorProto tensor = 8; NameAttrList func = 9; }
    NameAttrList { string name = 1; map<string, AttrValue> attr = 2; }
    TensorProto  { DataType dtype = 1; TensorShapeProto tensor_shape = 2; bytes tensor_content = 4;
                   float_val = 5; double_val = 6; int_val = 7; string_val = 8; int64_val = 10;
                   scomplex_val = 9; bool_val = 11; dcomplex_val = 12; half_val = 13; }
    TensorShapeProto { repeated Dim dim = 2 { int64 size = 1; string name = 2; };
                       bool unknown_rank = 3; }
    FunctionDefLibrary { repeated FunctionDef function = 1; }
    FunctionDef  { OpDef signature = 1 { name = 1; input_arg = 2; output_arg = 3; };
                   repeated NodeDef node_def = 3; }

Attr values map as: None <-> an empty AttrValue; bool, int, float (float32 on the wire, as TF),
str (``s``, read back as str when it is UTF-8), `DType`, `TensorShape`, numpy arrays
(``tensor``), lists of one of those kinds (``list``; lists of int lists are shapes). A function
attr (our `FunctionDef`, for ``If``/``While``) is ``func`` naming a library function; the
library entry keeps our function's nodes, with their ``_Arg``/``_FunctionRetval`` nodes and
their ``_output_types``/``_output_shapes`` attrs, so it reads back as the same function (TF
itself cannot run it). A dict attr (a ``tf.data`` pipeline description) is a ``func`` with an
empty name and the dict as its attrs.

At the top level ``_output_types`` (bookkeeping of `Graph`) is never written, and a `Graph`
node's ``_output_shapes`` only with ``add_shapes``; a parsed node keeps what the file had.

`GraphDef.FromText(text)` (`parse_text`, and ``text_format.Merge(text, graph_def)``) reads
the text format, by way of the wire format, with the same validation: the messages and fields
above, by TF's names (``GRAPH_DEF_SCHEMA``).

Parsing validates: wire types, UTF-8 strings, known dtypes, shapes (dims >= -1, no dims with
unknown rank), tensor sizes (content length, value counts; fewer values than elements repeat the
last, as TF), library references and function structure. Anything malformed raises `ValueError`
naming the field. Parsing builds data only: nothing is executed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs
import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.graph import graph_def as _graph_def
from tensorweave.engine.graph.func_graph import RETVAL_OP, FunctionDef, check_function
from tensorweave.engine.graph.graph_def import NodeDef
from tensorweave.engine.proto import text_format
from tensorweave.engine.proto.message import (
    Field,
    Message,
    message_fields,
    read_bool,
    read_bytes,
    read_float,
    read_int,
    read_map_entry,
    read_repeated,
    read_string,
    to_binary,
    to_text,
)
from tensorweave.engine.tensor_shape import TensorShape

__all__ = ["GraphDef", "NodeDef", "VersionDef"]

DATA_TYPES: dict[dtypes.DType, int] = {
    dtypes.float32: 1, dtypes.float64: 2, dtypes.int32: 3, dtypes.uint8: 4, dtypes.int16: 5,
    dtypes.int8: 6, dtypes.string: 7, dtypes.int64: 9, dtypes.bool_: 10, dtypes.float16: 19,
    dtypes.complex64: 8, dtypes.complex128: 18,
    dtypes.uint16: 17, dtypes.uint32: 22, dtypes.uint64: 23, dtypes.resource: 20,
}
_BY_CODE = {code: dt for dt, code in DATA_TYPES.items()}
_REF = 100  # DT_FLOAT_REF = 101, ...: a ref to a variable holding that type
_TF_NAMES = {1: "FLOAT", 2: "DOUBLE", 3: "INT32", 4: "UINT8", 5: "INT16", 6: "INT8", 7: "STRING",
             9: "INT64", 10: "BOOL", 19: "HALF",
             8: "COMPLEX64", 18: "COMPLEX128",
             17: "UINT16", 22: "UINT32", 23: "UINT64", 20: "RESOURCE"}
DATA_TYPE_NAMES: dict[int, str] = ({c: f"DT_{n}" for c, n in _TF_NAMES.items()}
                                   | {c + _REF: f"DT_{n}_REF" for c, n in _TF_NAMES.items()})
_MAX_DEPTH = 100  # protobuf's default recursion limit
_MAX_SPLAT = 1 << 28  # elements a tensor may expand to from fewer stored values

INTERNAL_ATTRS = ("_output_types", "_output_shapes")


def _bad(what: str) -> ValueError:
    return ValueError(f"Error parsing GraphDef: {what}")


_TF = "tensorflow."
_ATTR_ENTRY = (5, "tensorflow.NodeDef.AttrEntry")
_DTYPE_ENUM = ("enum", DATA_TYPE_NAMES)
GRAPH_DEF_SCHEMA: text_format.Schema = {
    _TF + "GraphDef": text_format.fields(node=(1, _TF + "NodeDef"),
                                         library=(2, _TF + "FunctionDefLibrary"),
                                         versions=(4, _TF + "VersionDef")),
    _TF + "VersionDef": text_format.fields(producer=(1, "int"), min_consumer=(2, "int"),
                                           bad_consumers=(3, "int")),
    _TF + "NodeDef": text_format.fields(name=(1, "string"), op=(2, "string"),
                                        input=(3, "string"), device=(4, "string"),
                                        attr=_ATTR_ENTRY),
    _TF + "NodeDef.AttrEntry": text_format.fields(key=(1, "string"),
                                                  value=(2, _TF + "AttrValue")),
    _TF + "AttrValue": text_format.fields(
        list=(1, _TF + "AttrValue.ListValue"), s=(2, "bytes"), i=(3, "int"), f=(4, "float"),
        b=(5, "bool"), type=(6, *_DTYPE_ENUM), shape=(7, _TF + "TensorShapeProto"),
        tensor=(8, _TF + "TensorProto"), placeholder=(9, "string"),
        func=(10, _TF + "NameAttrList")),
    _TF + "AttrValue.ListValue": text_format.fields(
        s=(2, "bytes"), i=(3, "int"), f=(4, "float"), b=(5, "bool"), type=(6, *_DTYPE_ENUM),
        shape=(7, _TF + "TensorShapeProto"), tensor=(8, _TF + "TensorProto"),
        func=(9, _TF + "NameAttrList")),
    _TF + "NameAttrList": text_format.fields(name=(1, "string"),
                                             attr=(2, _TF + "NodeDef.AttrEntry")),
    _TF + "TensorProto": text_format.fields(
        dtype=(1, *_DTYPE_ENUM), tensor_shape=(2, _TF + "TensorShapeProto"),
        tensor_content=(4, "bytes"), float_val=(5, "float"), double_val=(6, "double"),
        int_val=(7, "int"), string_val=(8, "bytes"), int64_val=(10, "int"),
        bool_val=(11, "bool"), half_val=(13, "int"),
        scomplex_val=(9, "float"), dcomplex_val=(12, "double")),
    _TF + "TensorShapeProto": text_format.fields(dim=(2, _TF + "TensorShapeProto.Dim"),
                                                 unknown_rank=(3, "bool")),
    _TF + "TensorShapeProto.Dim": text_format.fields(size=(1, "int"), name=(2, "string")),
    _TF + "FunctionDefLibrary": text_format.fields(function=(1, _TF + "FunctionDef")),
    _TF + "FunctionDef": text_format.fields(signature=(1, _TF + "OpDef"),
                                            node_def=(3, _TF + "NodeDef")),
    _TF + "OpDef": text_format.fields(name=(1, "string"),
                                      input_arg=(2, _TF + "OpDef.ArgDef"),
                                      output_arg=(3, _TF + "OpDef.ArgDef")),
    _TF + "OpDef.ArgDef": text_format.fields(name=(1, "string"), type=(3, *_DTYPE_ENUM)),
}


@attrs.define
class VersionDef:
    """TF's ``VersionDef``: the producer's graph version and the oldest consumer it allows."""

    producer: int = 0
    min_consumer: int = 0
    bad_consumers: list[int] = attrs.field(factory=list)


@attrs.define
class GraphDef(_graph_def.GraphDef):
    """A `graph_def.GraphDef` that reads and writes TF's ``GraphDef`` protocol buffer."""

    versions: VersionDef = attrs.field(factory=VersionDef)
    # Graph.as_graph_def(add_shapes=True): write each node's _output_shapes
    _add_shapes: bool = attrs.field(default=False, alias="add_shapes", repr=False)

    TEXT_SCHEMA = (GRAPH_DEF_SCHEMA, "tensorflow.GraphDef")  # text_format.Merge reads by it

    def SerializeToString(self, deterministic: bool = True) -> bytes:  # noqa: N802, ARG002
        return to_binary(graph_def_message(self))

    def ParseFromString(self, data: bytes) -> int:  # noqa: N802 - protobuf's name
        parsed = parse_graph_def(data)
        self.node, self.versions, self._add_shapes = parsed.node, parsed.versions, False
        return len(data)

    @classmethod
    def FromString(cls, data: bytes) -> GraphDef:  # noqa: N802
        return parse_graph_def(data)

    @classmethod
    def FromText(cls, text: str | bytes) -> GraphDef:  # noqa: N802 - as FromString
        return parse_text(text)

    def CopyFrom(self, other: _graph_def.GraphDef) -> None:  # noqa: N802
        self.node = [n.copy() for n in other.node]
        self.versions = attrs.evolve(getattr(other, "versions", VersionDef()))
        self._add_shapes = getattr(other, "_add_shapes", False)

    def ByteSize(self) -> int:  # noqa: N802
        return len(self.SerializeToString())

    def __str__(self) -> str:
        return to_text(graph_def_message(self))


def as_proto_graph_def(graph_def: _graph_def.GraphDef) -> GraphDef:
    """`graph_def` as a `GraphDef` (itself if it already is one)."""
    if isinstance(graph_def, GraphDef):
        return graph_def
    return GraphDef(node=list(graph_def.node))


# -- writing ----------------------------------------------------------------------------------


def _enum(name: str, number: int, dtype: dtypes.DType) -> Field:
    code = DATA_TYPES.get(dtypes.as_dtype(dtype))
    if code is None:
        raise ValueError(f"dtype {dtype!r} has no TensorFlow DataType")
    return Field(name, number, "enum", code, DATA_TYPE_NAMES)


def shape_message(shape: TensorShape) -> Message:
    if shape.dims is None:
        return [Field("unknown_rank", 3, "bool", True)]
    return [Field("dim", 2, "message", [Field("size", 1, "int", -1 if d is None else d)]
                  if d != 0 else [])
            for d in shape.dims]


def tensor_message(array: np.ndarray) -> Message:
    """A ``TensorProto``: typed values for one element (readable as text), else raw bytes."""
    array = np.asarray(array)
    dtype = dtypes.as_dtype(array.dtype)
    out = [_enum("dtype", 1, dtype),
           Field("tensor_shape", 2, "message", shape_message(TensorShape(array.shape)))]
    flat = array.reshape(-1)
    if dtype == dtypes.string:
        out += [Field("string_val", 8, "bytes", v if isinstance(v, bytes) else str(v).encode())
                for v in flat]
    elif flat.size != 1:
        if flat.size:
            out.append(Field("tensor_content", 4, "bytes",
                             flat.astype(flat.dtype.newbyteorder("<"), copy=False).tobytes()))
    elif dtype == dtypes.float16:
        out.append(Field("half_val", 13, "packed_int", [int(flat.view(np.uint16)[0])]))
    elif dtype.is_complex:
        # one element is its real then its imaginary part
        name, number, kind = _TYPED_FIELDS[dtype]
        out.append(Field(name, number, kind, [flat[0].real.item(), flat[0].imag.item()]))
    else:
        name, number, kind = _TYPED_FIELDS[dtype]
        out.append(Field(name, number, kind, [flat[0].item()]))
    return out


_TYPED_FIELDS: dict[dtypes.DType, tuple[str, int, str]] = {
    dtypes.float32: ("float_val", 5, "packed_float"),
    dtypes.float64: ("double_val", 6, "packed_double"),
    dtypes.int32: ("int_val", 7, "packed_int"), dtypes.int16: ("int_val", 7, "packed_int"),
    dtypes.int8: ("int_val", 7, "packed_int"), dtypes.uint8: ("int_val", 7, "packed_int"),
    dtypes.int64: ("int64_val", 10, "packed_int"),
    dtypes.bool_: ("bool_val", 11, "packed_bool"),
    dtypes.complex64: ("scomplex_val", 9, "packed_float"),
    dtypes.complex128: ("dcomplex_val", 12, "packed_double"),
    # tensor.proto: uint16 shares int_val; uint32/uint64 have their own fields
    dtypes.uint16: ("int_val", 7, "packed_int"),
    dtypes.uint32: ("uint32_val", 16, "packed_int"),
    dtypes.uint64: ("uint64_val", 17, "packed_int"),
}


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


def _name_attr_list(name: str, attr: Mapping[str, Any], library: _Library) -> Message:
    out = [Field("name", 1, "string", name)] if name else []
    return out + _attr_map("attr", 2, attr, library)


def _attr_map(name: str, number: int, attr: Mapping[str, Any], library: _Library) -> Message:
    return [Field(name, number, "message", [Field("key", 1, "string", key),
                                            Field("value", 2, "message",
                                                  attr_message(attr[key], library))])
            for key in sorted(attr)]


def _list_message(values: list[Any], library: _Library) -> Message:
    if not values:
        return []
    if all(isinstance(v, (bool, np.bool_)) for v in values):
        return [Field("b", 5, "packed_bool", [bool(v) for v in values])]
    if all(_is_int(v) for v in values):
        return [Field("i", 3, "packed_int", [int(v) for v in values])]
    if all(isinstance(v, (float, np.floating)) or _is_int(v) for v in values):
        return [Field("f", 4, "packed_float", [float(v) for v in values])]
    if all(isinstance(v, (str, bytes)) for v in values):
        return [Field("s", 2, "bytes", v.encode() if isinstance(v, str) else v) for v in values]
    if all(isinstance(v, dtypes.DType) for v in values):
        return [Field("type", 6, "packed_enum", [DATA_TYPES[v] for v in values],
                      DATA_TYPE_NAMES)]
    if all(_is_shape_like(v) for v in values):
        return [Field("shape", 7, "message", shape_message(TensorShape(v))) for v in values]
    if all(isinstance(v, np.ndarray) for v in values):
        return [Field("tensor", 8, "message", tensor_message(v)) for v in values]
    if all(isinstance(v, (FunctionDef, dict)) for v in values):
        return [Field("func", 9, "message", _func_message(v, library)) for v in values]
    kinds = sorted({type(v).__name__ for v in values})
    raise ValueError(f"A list attr must hold values of one kind, got {kinds}")


def _func_message(value: FunctionDef | dict, library: _Library) -> Message:
    if isinstance(value, FunctionDef):
        library.add(value)
        return _name_attr_list(value.name, {}, library)
    if not all(isinstance(k, str) for k in value):
        raise ValueError("A dict attr must have string keys")
    return _name_attr_list("", value, library)


def attr_message(value: Any, library: _Library) -> Message:
    """An ``AttrValue`` (see the module docstring for the mapping)."""
    if value is None:
        return []
    if isinstance(value, (bool, np.bool_)):
        return [Field("b", 5, "bool", bool(value))]
    if _is_int(value):
        return [Field("i", 3, "int", int(value))]
    if isinstance(value, (float, np.floating)):
        return [Field("f", 4, "float", float(value))]
    if isinstance(value, (str, bytes)):
        return [Field("s", 2, "bytes", value.encode() if isinstance(value, str) else value)]
    if isinstance(value, dtypes.DType):
        return [_enum("type", 6, value)]
    if isinstance(value, TensorShape):
        return [Field("shape", 7, "message", shape_message(value))]
    if isinstance(value, np.ndarray):
        return [Field("tensor", 8, "message", tensor_message(value))]
    if isinstance(value, (FunctionDef, dict)):
        return [Field("func", 10, "message", _func_message(value, library))]
    if isinstance(value, (list, tuple)):
        return [Field("list", 1, "message", _list_message(list(value), library))]
    raise ValueError(f"An attr value of type {type(value).__name__} has no AttrValue form")


def node_message(node: NodeDef, library: _Library, add_shapes: bool = False,
                 internal: bool = False) -> Message:
    """A ``NodeDef``; `internal` (function bodies) keeps the bookkeeping attrs."""
    attr = dict(node.attr)
    if not internal and "_output_types" in attr:
        del attr["_output_types"]
        if not add_shapes:
            attr.pop("_output_shapes", None)
    out = [Field("name", 1, "string", node.name), Field("op", 2, "string", node.op)]
    out += [Field("input", 3, "string", i) for i in node.input]
    if node.device:
        out.append(Field("device", 4, "string", node.device))
    try:
        return out + _attr_map("attr", 5, attr, library)
    except (ValueError, KeyError) as exc:
        raise ValueError(f"Cannot write node '{node.name}' ({node.op}): {exc}") from None


def function_message(fn: FunctionDef, library: _Library) -> Message:
    def args(op: str, field: str, number: int) -> Message:
        nodes = sorted((n for n in fn.nodes if n.op == op), key=lambda n: n.attr["index"])
        return [Field(field, number, "message", [Field("name", 1, "string", n.name),
                                                 _enum("type", 3, n.attr["T"])])
                for n in nodes]

    signature = ([Field("name", 1, "string", fn.name)] + args("_Arg", "input_arg", 2)
                 + args(RETVAL_OP, "output_arg", 3))
    return ([Field("signature", 1, "message", signature)]
            + [Field("node_def", 3, "message", node_message(n, library, internal=True))
               for n in fn.nodes])


def graph_def_message(graph_def: _graph_def.GraphDef) -> Message:
    library = _Library()
    add_shapes = getattr(graph_def, "_add_shapes", False)
    out = [Field("node", 1, "message", node_message(n, library, add_shapes))
           for n in graph_def.node]
    functions: list[Message] = []
    written: set[str] = set()
    while len(written) < len(library.functions):  # writing a function may name more
        for name in [n for n in library.functions if n not in written]:
            written.add(name)
            functions.append(function_message(library.functions[name], library))
    if functions:
        out.append(Field("library", 2, "message",
                         [Field("function", 1, "message", f) for f in functions]))
    versions = getattr(graph_def, "versions", VersionDef())
    version_fields = [Field("producer", 1, "int", versions.producer)] if versions.producer else []
    if versions.min_consumer:
        version_fields.append(Field("min_consumer", 2, "int", versions.min_consumer))
    if versions.bad_consumers:
        version_fields.append(Field("bad_consumers", 3, "packed_int", versions.bad_consumers))
    out.append(Field("versions", 4, "message", version_fields))
    return out


# -- parsing ----------------------------------------------------------------------------------


def _fields(data: Any, what: str) -> Iterable[tuple[int, int, Any]]:
    return message_fields(data, "GraphDef", what)


def parse_dtype(code: int, what: str) -> dtypes.DType:
    dtype = _BY_CODE.get(code - _REF if code > _REF else code)
    if dtype is None:
        raise _bad(f"{what} has unsupported DataType {code}")
    return dtype


def parse_shape(data: Any, what: str = "shape") -> TensorShape:
    dims: list[int | None] = []
    unknown_rank = False
    for number, wire_type, raw in _fields(data, what):
        if number == 2:
            size = 0
            for n, wt, r in _fields(read_bytes(wire_type, raw, f"{what}.dim"), what):
                if n == 1:
                    size = read_int(wt, r, f"{what}.dim.size")
            if size < -1:
                raise _bad(f"{what} has a dimension of size {size}")
            dims.append(None if size == -1 else size)
        elif number == 3:
            unknown_rank = read_bool(wire_type, raw, f"{what}.unknown_rank")
    if unknown_rank and dims:
        raise _bad(f"{what} has unknown rank and {len(dims)} dimensions")
    return TensorShape(None if unknown_rank else dims)


_VALUE_FIELDS = {5: ("float_val", "float"), 6: ("double_val", "double"), 7: ("int_val", "int"),
                 10: ("int64_val", "int"), 11: ("bool_val", "bool"), 13: ("half_val", "int"),
                 9: ("scomplex_val", "float"), 12: ("dcomplex_val", "double"),
                 16: ("uint32_val", "int"), 17: ("uint64_val", "int")}
_FIELD_FOR = {dtypes.float32: 5, dtypes.float64: 6, dtypes.int32: 7, dtypes.int16: 7,
              dtypes.int8: 7, dtypes.uint8: 7, dtypes.int64: 10, dtypes.bool_: 11,
              dtypes.float16: 13, dtypes.complex64: 9, dtypes.complex128: 12,
              dtypes.uint16: 7, dtypes.uint32: 16, dtypes.uint64: 17}


def parse_tensor(data: Any, what: str = "tensor") -> np.ndarray:
    """A ``TensorProto`` as a numpy array (TF's ``tensor_util.MakeNdarray``)."""
    dtype: dtypes.DType | None = None
    shape = TensorShape([])
    content: bytes | None = None
    values: dict[int, list[Any]] = {}
    strings: list[bytes] = []
    for number, wire_type, raw in _fields(data, what):
        if number == 1:
            dtype = parse_dtype(read_int(wire_type, raw, f"{what}.dtype"), what)
        elif number == 2:
            shape = parse_shape(read_bytes(wire_type, raw, f"{what}.tensor_shape"), what)
        elif number == 4:
            content = read_bytes(wire_type, raw, f"{what}.tensor_content")
        elif number == 8:
            strings.append(read_bytes(wire_type, raw, f"{what}.string_val"))
        elif number in _VALUE_FIELDS:
            name, kind = _VALUE_FIELDS[number]
            values.setdefault(number, []).extend(
                read_repeated(wire_type, raw, kind, f"{what}.{name}"))
    if dtype is None:
        raise _bad(f"{what} has no dtype")
    if not shape.is_fully_defined():
        raise _bad(f"{what} has a shape that is not fully defined: {shape}")
    count = shape.num_elements()
    np_type = np.dtype(dtype.np_type)
    if dtype == dtypes.string:
        given: list[Any] = strings
    elif content is not None:
        if len(content) != count * np_type.itemsize:
            raise _bad(f"{what}.tensor_content has {len(content)} bytes for {count} "
                       f"{dtype.name} elements")
        return np.frombuffer(content, np_type.newbyteorder("<")).astype(np_type).reshape(
            shape.as_list())
    else:
        given = values.get(_FIELD_FOR[dtype], [])
        stray = set(values) - {_FIELD_FOR[dtype]}
        if stray:
            raise _bad(f"{what} of dtype {dtype.name} has {_VALUE_FIELDS[min(stray)][0]}")
        if dtype.is_complex:
            if len(given) % 2:
                raise _bad(f"{what} has an odd number of {_VALUE_FIELDS[_FIELD_FOR[dtype]][0]} "
                           f"values")
            given = [complex(re, im) for re, im in zip(given[::2], given[1::2])]
    if len(given) > count:
        raise _bad(f"{what} has {len(given)} values for {count} elements")
    if given and len(given) < count and count > _MAX_SPLAT:
        raise _bad(f"{what} would expand to {count} elements")
    if dtype == dtypes.string:
        flat = np.empty(count, dtype=object)
        flat[:] = given + [given[-1] if given else b""] * (count - len(given))
        return flat.reshape(shape.as_list())
    if dtype == dtypes.float16:
        array = np.array(given, dtype=np.int64).astype(np.uint16).view(np.float16)
    elif dtype == dtypes.uint64:
        # varints read back as int64: values from 2**63 come back negative
        array = np.array(given, dtype=np.int64).view(np.uint64)
    else:
        try:
            array = np.array(given, dtype=np_type)
        except OverflowError:
            raise _bad(f"{what} has a value out of range for {dtype.name}") from None
    if not given:
        return np.zeros(shape.as_list(), np_type)
    if len(given) < count:
        array = np.concatenate([array, np.full(count - len(given), array[-1], np_type)])
    return array.reshape(shape.as_list())


Resolve = Callable[[str], FunctionDef]


def _text(raw: bytes) -> str | bytes:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def _parse_attr_map(entries: list[bytes], resolve: Resolve, depth: int,
                    what: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for entry in entries:
        key, value = read_map_entry(_fields(entry, what), what)
        out[key] = parse_attr(value, resolve, depth + 1, f"{what}['{key}']")
    return out


def _parse_func(data: bytes, resolve: Resolve, depth: int, what: str) -> Any:
    name, entries = "", []
    for number, wire_type, raw in _fields(data, what):
        if number == 1:
            name = read_string(wire_type, raw, f"{what}.name")
        elif number == 2:
            entries.append(read_bytes(wire_type, raw, f"{what}.attr"))
    if not name:
        return _parse_attr_map(entries, resolve, depth, what)
    if entries:
        raise _bad(f"{what} instantiates function '{name}' with attrs, which is not supported")
    return resolve(name)


def _parse_list(data: bytes, resolve: Resolve, depth: int, what: str) -> list[Any]:
    kinds: dict[int, list[Any]] = {}
    for number, wire_type, raw in _fields(data, what):
        items = kinds.setdefault(number, [])
        if number == 2:
            items.append(_text(read_bytes(wire_type, raw, f"{what}.s")))
        elif number in (3, 6):
            items.extend(read_repeated(wire_type, raw, "int", f"{what}"))
        elif number == 4:
            items.extend(read_repeated(wire_type, raw, "float", f"{what}.f"))
        elif number == 5:
            items.extend(read_repeated(wire_type, raw, "bool", f"{what}.b"))
        elif number == 7:
            items.append(parse_shape(read_bytes(wire_type, raw, f"{what}.shape"), what))
        elif number == 8:
            items.append(parse_tensor(read_bytes(wire_type, raw, f"{what}.tensor"), what))
        elif number == 9:
            items.append(_parse_func(read_bytes(wire_type, raw, f"{what}.func"), resolve,
                                     depth + 1, what))
    kinds = {k: v for k, v in kinds.items() if v and k in range(2, 10)}
    if len(kinds) > 1:
        raise _bad(f"{what} is a list of more than one kind")
    number, items = next(iter(kinds.items()), (0, []))
    if number == 6:
        return [parse_dtype(code, what) for code in items]
    return items


def parse_attr(data: bytes, resolve: Resolve, depth: int = 0, what: str = "attr") -> Any:
    """An ``AttrValue``'s value (see the module docstring for the mapping)."""
    if depth > _MAX_DEPTH:
        raise _bad(f"{what} is nested too deeply")
    value: Any = None
    for number, wire_type, raw in _fields(data, what):  # a oneof: the last member set wins
        if number == 1:
            value = _parse_list(read_bytes(wire_type, raw, what), resolve, depth, what)
        elif number == 2:
            value = _text(read_bytes(wire_type, raw, what))
        elif number == 3:
            value = read_int(wire_type, raw, what)
        elif number == 4:
            value = read_float(wire_type, raw, what)
        elif number == 5:
            value = read_bool(wire_type, raw, what)
        elif number == 6:
            value = parse_dtype(read_int(wire_type, raw, what), what)
        elif number == 7:
            value = parse_shape(read_bytes(wire_type, raw, what), what)
        elif number == 8:
            value = parse_tensor(read_bytes(wire_type, raw, what), what)
        elif number == 9:
            raise _bad(f"{what} is a function placeholder, which only a TF function body "
                       "can hold")
        elif number == 10:
            value = _parse_func(read_bytes(wire_type, raw, what), resolve, depth, what)
    return value


def parse_node(data: bytes, resolve: Resolve, what: str = "node") -> NodeDef:
    name = op = device = ""
    inputs: list[str] = []
    entries: list[bytes] = []
    for number, wire_type, raw in _fields(data, what):
        if number == 1:
            name = read_string(wire_type, raw, f"{what}.name")
        elif number == 2:
            op = read_string(wire_type, raw, f"{what}.op")
        elif number == 3:
            inputs.append(read_string(wire_type, raw, f"{what}.input"))
        elif number == 4:
            device = read_string(wire_type, raw, f"{what}.device")
        elif number == 5:
            entries.append(read_bytes(wire_type, raw, f"{what}.attr"))
    if not name or not op:
        raise _bad(f"a {what} has {'no name' if not name else f'no op ({name!r})'}")
    attr = _parse_attr_map(entries, resolve, 0, f"node '{name}' attr")
    return NodeDef(name=name, op=op, input=inputs, device=device, attr=attr)


def _function_name(data: bytes) -> str:
    for number, wire_type, raw in _fields(data, "library function"):
        if number == 1:
            for n, wt, r in _fields(read_bytes(wire_type, raw, "signature"), "signature"):
                if n == 1:
                    return read_string(wt, r, "signature.name")
    raise _bad("a library function has no signature name")


def _library_resolver(data: bytes) -> Resolve:
    """A resolver of the library's functions by name, each parsed once, on first use."""
    raw_functions: dict[str, bytes] = {}
    for number, wire_type, raw in _fields(data, "library"):
        if number == 1:
            body = read_bytes(wire_type, raw, "library.function")
            name = _function_name(body)
            if name in raw_functions:
                raise _bad(f"the library has two functions named '{name}'")
            raw_functions[name] = body
    parsed: dict[str, FunctionDef] = {}
    in_progress: list[str] = []

    def resolve(name: str) -> FunctionDef:
        if name in parsed:
            return parsed[name]
        if name not in raw_functions:
            raise _bad(f"an attr names function '{name}', which is not in the library")
        if name in in_progress:
            raise _bad(f"function '{name}' refers to itself")
        in_progress.append(name)
        nodes = [parse_node(read_bytes(wire_type, raw, "node_def"), resolve,
                            f"function '{name}' node")
                 for number, wire_type, raw in _fields(raw_functions[name], name)
                 if number == 3]
        in_progress.pop()
        fn = FunctionDef(name, tuple(nodes))
        try:
            check_function(fn)
        except ValueError as exc:
            raise _bad(str(exc)) from None
        parsed[name] = fn
        return fn

    return resolve


def parse_versions(data: bytes) -> VersionDef:
    versions = VersionDef()
    for number, wire_type, raw in _fields(data, "versions"):
        if number == 1:
            versions.producer = read_int(wire_type, raw, "versions.producer")
        elif number == 2:
            versions.min_consumer = read_int(wire_type, raw, "versions.min_consumer")
        elif number == 3:
            versions.bad_consumers += read_repeated(wire_type, raw, "int",
                                                    "versions.bad_consumers")
    return versions


def parse_graph_def(data: bytes) -> GraphDef:
    """A serialized ``GraphDef``; `ValueError` if malformed."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"Expected bytes, got {type(data).__name__}")
    nodes: list[bytes] = []
    library = versions = b""
    for number, wire_type, raw in _fields(data, "GraphDef"):
        # a message field given more than once is merged: concatenating its bytes does that
        if number == 1:
            nodes.append(read_bytes(wire_type, raw, "GraphDef.node"))
        elif number == 2:
            library += read_bytes(wire_type, raw, "GraphDef.library")
        elif number == 4:
            versions += read_bytes(wire_type, raw, "GraphDef.versions")
    resolve = _library_resolver(library)
    return GraphDef(node=[parse_node(n, resolve) for n in nodes],
                    versions=parse_versions(versions))


def parse_text(text: str | bytes) -> GraphDef:
    """A ``GraphDef`` in text format; `text_format.ParseError` (a `ValueError`) naming the line
    if the text is malformed, `ValueError` if the graph it holds is."""
    return parse_graph_def(text_format.to_binary(text, GRAPH_DEF_SCHEMA, "tensorflow.GraphDef"))
