"""Protobuf message classes from ``.proto`` text that the project writes itself.

Contract: `define(file_name, text)` reads `text` — the proto3 subset below — into one
``FileDescriptorProto``, adds it to tensorweave's own descriptor pool (never protobuf's default
pool, so TF's own definitions of the same messages can live in the same process) and returns
`message_class` results by name. The classes are the ``protobuf`` package's (upb), so their
bytes, ``text_format`` and ``MessageToDict`` are protobuf's.

The subset: ``syntax = "proto3";``, ``package a.b;``, ``message``/``enum`` (nested),
``[repeated] TYPE name = N [packed = false];``, ``map<K, V> name = N;``, ``oneof name { ... }``,
``reserved ...;`` and ``option ...;`` (skipped), ``//`` comments. A type name resolves as protoc
resolves it: the innermost enclosing scope first, then outward, across every file defined
before; a file's dependencies are the files its fields name. Anything else is a `SyntaxError`
naming the file and token, raised at import time, so it can only come from the project's code.
`add_file` adds a file protobuf itself describes (a well-known type: ``google.protobuf.Any``)
so `define`d files can name it; `pool` is the pool, for ``text_format`` to expand an ``Any``.
"""

from __future__ import annotations

import re

from google.protobuf import descriptor, descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message

__all__ = ["add_file", "define", "enum_values", "message_class", "pool"]

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "double": _F.TYPE_DOUBLE, "float": _F.TYPE_FLOAT, "int64": _F.TYPE_INT64,
    "uint64": _F.TYPE_UINT64, "int32": _F.TYPE_INT32, "fixed64": _F.TYPE_FIXED64,
    "fixed32": _F.TYPE_FIXED32, "bool": _F.TYPE_BOOL, "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES, "uint32": _F.TYPE_UINT32, "sfixed32": _F.TYPE_SFIXED32,
    "sfixed64": _F.TYPE_SFIXED64, "sint32": _F.TYPE_SINT32, "sint64": _F.TYPE_SINT64,
}
_TOKEN = re.compile(r'\s+|//[^\n]*|"[^"]*"|[A-Za-z_][\w.]*|-?\d+|[{}=;<>,\[\]()]')

_POOL = descriptor_pool.DescriptorPool()
_KINDS: dict[str, tuple[str, int]] = {}  # ".pkg.Name" -> (defining file, TYPE_MESSAGE/TYPE_ENUM)


class _Reader:
    def __init__(self, file_name: str, text: str) -> None:
        self.file_name = file_name
        self.tokens = [t for t in _tokens(file_name, text) if t.strip() and not t.startswith("//")]
        self.pos = 0

    def peek(self) -> str:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if not token or (expected is not None and token != expected):
            raise SyntaxError(f"{self.file_name}: expected {expected or 'a token'}, got "
                              f"{token or 'the end'!r} (token {self.pos})")
        self.pos += 1
        return token

    def number(self) -> int:
        token = self.take()
        if not token.lstrip("-").isdigit():
            raise SyntaxError(f"{self.file_name}: expected a number, got {token!r}")
        return int(token)

    def skip_statement(self) -> None:
        while self.take() != ";":
            pass


def _tokens(file_name: str, text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise SyntaxError(f"{file_name}: cannot read {text[pos:pos + 20]!r}")
        out.append(match.group())
        pos = match.end()
    return out


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _read_enum(reader: _Reader, enum: descriptor_pb2.EnumDescriptorProto) -> None:
    enum.name = reader.take()
    reader.take("{")
    while reader.peek() != "}":
        if reader.peek() in ("option", "reserved"):
            reader.skip_statement()
            continue
        name = reader.take()
        reader.take("=")
        enum.value.add(name=name, number=reader.number())
        reader.take(";")
    reader.take("}")


def _read_field(reader: _Reader, message: descriptor_pb2.DescriptorProto,
                pending: list[tuple[_F, str, list[str]]], scope: list[str],
                names: dict[str, int], oneof: int | None = None) -> None:
    label = _F.LABEL_OPTIONAL
    if reader.peek() == "repeated":
        reader.take()
        label = _F.LABEL_REPEATED
    kind = reader.take()
    entry = None
    if kind == "map":
        reader.take("<")
        key = reader.take()
        reader.take(",")
        value = reader.take()
        reader.take(">")
        label, entry = _F.LABEL_REPEATED, (key, value)
    name = reader.take()
    reader.take("=")
    field = message.field.add(name=name, number=reader.number(), label=label)
    if oneof is not None:
        field.oneof_index = oneof
    if reader.peek() == "[":
        reader.take()
        while reader.peek() != "]":
            option = reader.take()
            reader.take("=")
            setting = reader.take()
            if option == "packed":
                field.options.packed = setting == "true"
            if reader.peek() == ",":
                reader.take()
        reader.take("]")
    reader.take(";")
    if entry is not None:
        map_entry = message.nested_type.add(name=_camel(name) + "Entry")
        map_entry.options.map_entry = True
        for number, (field_name, entry_kind) in enumerate(zip(("key", "value"), entry), 1):
            entry_field = map_entry.field.add(name=field_name, number=number,
                                              label=_F.LABEL_OPTIONAL)
            _set_type(entry_field, entry_kind, pending, [*scope, map_entry.name])
        kind = map_entry.name
        names[".".join([*scope, kind])] = _F.TYPE_MESSAGE
    _set_type(field, kind, pending, scope)


def _set_type(field: _F, kind: str, pending: list[tuple[_F, str, list[str]]],
              scope: list[str]) -> None:
    if kind in _SCALARS:
        field.type = _SCALARS[kind]
    else:
        pending.append((field, kind, list(scope)))


def _read_message(reader: _Reader, message: descriptor_pb2.DescriptorProto,
                  pending: list[tuple[_F, str, list[str]]], scope: list[str],
                  names: dict[str, int]) -> None:
    message.name = reader.take()
    scope = [*scope, message.name]
    names[".".join(scope)] = _F.TYPE_MESSAGE
    reader.take("{")
    while reader.peek() != "}":
        token = reader.peek()
        if token in ("option", "reserved"):
            reader.skip_statement()
        elif token == "message":
            reader.take()
            _read_message(reader, message.nested_type.add(), pending, scope, names)
        elif token == "enum":
            reader.take()
            enum = message.enum_type.add()
            _read_enum(reader, enum)
            names[".".join([*scope, enum.name])] = _F.TYPE_ENUM
        elif token == "oneof":
            reader.take()
            index = len(message.oneof_decl)
            message.oneof_decl.add(name=reader.take())
            reader.take("{")
            while reader.peek() != "}":
                _read_field(reader, message, pending, scope, names, oneof=index)
            reader.take("}")
        else:
            _read_field(reader, message, pending, scope, names)
    reader.take("}")


def _resolve(file_name: str, kind: str, scope: list[str],
             names: dict[str, int]) -> tuple[str, int, str]:
    """``(full name, type, defining file)`` of type `kind` seen from `scope` (protoc's rule)."""
    if kind.startswith("."):
        candidates = [kind[1:]]
    else:
        candidates = [".".join([*scope[:i], kind]) for i in range(len(scope), -1, -1)]
    for candidate in candidates:
        if candidate in names:
            return candidate, names[candidate], file_name
        known = _KINDS.get(candidate)
        if known is not None:
            return candidate, known[1], known[0]
    raise SyntaxError(f"{file_name}: unknown type {kind!r} in {'.'.join(scope)}")


def define(file_name: str, text: str) -> None:
    """Add the messages of `text` (the module docstring's subset) to the pool."""
    reader = _Reader(file_name, text)
    proto = descriptor_pb2.FileDescriptorProto(name=file_name, syntax="proto3")
    package: list[str] = []
    pending: list[tuple[_F, str, list[str]]] = []
    names: dict[str, int] = {}
    while reader.peek():
        token = reader.take()
        if token == "syntax":
            reader.take("=")
            if reader.take() != '"proto3"':
                raise SyntaxError(f"{file_name}: only proto3 is read")
            reader.take(";")
        elif token == "package":
            proto.package = reader.take()
            package = proto.package.split(".")
            reader.take(";")
        elif token in ("option", "import"):
            reader.skip_statement()
        elif token == "message":
            _read_message(reader, proto.message_type.add(), pending, package, names)
        elif token == "enum":
            enum = proto.enum_type.add()
            _read_enum(reader, enum)
            names[".".join([*package, enum.name])] = _F.TYPE_ENUM
        else:
            raise SyntaxError(f"{file_name}: unexpected {token!r}")
    dependencies: list[str] = []
    for field, kind, scope in pending:
        full_name, field_type, defined_in = _resolve(file_name, kind, scope, names)
        field.type, field.type_name = field_type, "." + full_name
        if defined_in != file_name and defined_in not in dependencies:
            dependencies.append(defined_in)
    proto.dependency.extend(dependencies)
    _POOL.Add(proto)
    for name, kind_of in names.items():
        _KINDS[name] = (file_name, kind_of)


def add_file(file: descriptor.FileDescriptor) -> None:
    """Add a file that protobuf itself describes (a well-known type such as
    ``google/protobuf/any.proto``) to the pool, so `define`d files can name its messages; adding
    the same file again does nothing."""
    try:
        _POOL.FindFileByName(file.name)
        return
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto()
    file.CopyToProto(proto)
    _POOL.Add(proto)
    prefix = f"{proto.package}." if proto.package else ""
    for message in proto.message_type:
        _KINDS[prefix + message.name] = (file.name, _F.TYPE_MESSAGE)
    for enum in proto.enum_type:
        _KINDS[prefix + enum.name] = (file.name, _F.TYPE_ENUM)


def pool() -> descriptor_pool.DescriptorPool:
    """The pool of every `define`d and added file: what ``text_format`` needs to read and write
    a ``google.protobuf.Any`` that packs one of its messages (``descriptor_pool=pool()``)."""
    return _POOL


def message_class(full_name: str) -> type[Message]:
    """The message class of `full_name` (``package.Outer.Inner``) from a `define`d file."""
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(full_name))


def enum_values(full_name: str) -> dict[str, int]:
    """The values of enum `full_name`, by name."""
    return {v.name: v.number for v in _POOL.FindEnumTypeByName(full_name).values}
