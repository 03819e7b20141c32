"""Protocol-buffer messages as plain field trees, written in the binary wire format or in
protobuf's text format (what ``str(proto)`` and ``text_format.MessageToString`` give).

Contract: a message is a list of `Field`s in the order they are written (field-number order, as
protobuf does). A field holds one value of its `kind`; a repeated field is several `Field`s with
the same name, except the ``packed_*`` kinds, which hold a sequence and are written packed on the
wire and one ``name: value`` line per element in text. A map field is a repeated ``message``
field whose messages hold ``key`` and ``value``. `to_binary` and `to_text` never drop or reorder
fields: defaults are left out by whoever builds the tree, as proto3 does.

Text format follows protobuf's printer: nested messages as ``name {`` ... ``}`` indented by two
spaces, strings double-quoted with C escapes (bytes outside printable ASCII as ``\\ooo``), enums
by name, bools as ``true``/``false``, float fields at float32 precision.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from tensorweave.engine.proto import wire as wire

_SCALAR_KINDS = frozenset({"string", "bytes", "int", "bool", "float", "double", "enum"})
_PACKED_KINDS = {"packed_int": "int", "packed_float": "float", "packed_bool": "bool",
                 "packed_enum": "enum", "packed_double": "double"}


@attrs.frozen
class Field:
    """One field: `kind` is ``string``, ``bytes``, ``int`` (int64/int32/uint: a varint),
    ``bool``, ``float``, ``double``, ``enum``, ``message`` (a list of `Field`s) or a
    ``packed_*`` kind; `enum_names` names an enum's values for text."""

    name: str
    number: int
    kind: str
    value: Any
    enum_names: Mapping[int, str] | None = None


Message = list[Field]


# -- binary -----------------------------------------------------------------------------------


def _scalar_bytes(kind: str, value: Any) -> tuple[int, bytes]:
    if kind in ("int", "enum"):
        return wire.VARINT, wire.varint(int(value))
    if kind == "bool":
        return wire.VARINT, b"\x01" if value else b"\x00"
    if kind == "float":
        return wire.FIXED32, wire.F32.pack(value)
    if kind == "double":
        return wire.FIXED64, wire.F64.pack(value)
    data = value.encode() if kind == "string" else bytes(value)
    return wire.BYTES, wire.varint(len(data)) + data


def _packed_bytes(kind: str, values: Sequence[Any]) -> bytes:
    if kind == "float":
        return struct.pack(f"<{len(values)}f", *values)
    if kind == "double":
        return struct.pack(f"<{len(values)}d", *values)
    return b"".join(wire.varint(int(v)) for v in values)


def to_binary(message: Message) -> bytes:
    out = bytearray()
    for f in message:
        if f.kind == "message":
            body = to_binary(f.value)
            out += wire.key(f.number, wire.BYTES) + wire.varint(len(body)) + body
        elif f.kind in _PACKED_KINDS:
            body = _packed_bytes(_PACKED_KINDS[f.kind], f.value)
            out += wire.key(f.number, wire.BYTES) + wire.varint(len(body)) + body
        elif f.kind in _SCALAR_KINDS:
            wire_type, body = _scalar_bytes(f.kind, f.value)
            out += wire.key(f.number, wire_type) + body
        else:
            raise ValueError(f"Unknown field kind {f.kind!r}")
    return bytes(out)


# -- text -------------------------------------------------------------------------------------

_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"',
            ord("'"): "\\'", ord("\\"): "\\\\"}


def _quote(data: bytes) -> str:
    out = []
    for b in data:
        if b in _ESCAPES:
            out.append(_ESCAPES[b])
        elif 32 <= b < 127:
            out.append(chr(b))
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def _float_text(value: float, single: bool) -> str:
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    # shortest text that reads back as the same float32 / float64
    return str(np.float32(value)) if single else repr(float(value))


def _scalar_text(f: Field, kind: str, value: Any) -> str:
    if kind == "string":
        return _quote(value.encode())
    if kind == "bytes":
        return _quote(bytes(value))
    if kind == "bool":
        return "true" if value else "false"
    if kind in ("float", "double"):
        return _float_text(value, kind == "float")
    if kind == "enum" and f.enum_names and int(value) in f.enum_names:
        return f.enum_names[int(value)]
    return str(int(value))


def to_text(message: Message, indent: int = 0) -> str:
    pad = " " * indent
    lines = []
    for f in message:
        if f.kind == "message":
            lines.append(f"{pad}{f.name} {{\n{to_text(f.value, indent + 2)}{pad}}}\n")
        elif f.kind in _PACKED_KINDS:
            kind = _PACKED_KINDS[f.kind]
            lines.extend(f"{pad}{f.name}: {_scalar_text(f, kind, v)}\n" for v in f.value)
        else:
            lines.append(f"{pad}{f.name}: {_scalar_text(f, f.kind, f.value)}\n")
    return "".join(lines)


# -- reading ----------------------------------------------------------------------------------
# Readers of one field's value from `proto_wire.fields` output; each raises ValueError naming
# the field when the wire type or the bytes do not fit.


def expect(wire_type: int, want: int, what: str) -> None:
    if wire_type != want:
        raise ValueError(f"Error parsing message: field {what} has wire type {wire_type}, "
                         f"expected {want}")


def read_string(wire_type: int, raw: Any, what: str) -> str:
    expect(wire_type, wire.BYTES, what)
    try:
        return bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"Error parsing message: field {what} is not valid UTF-8") from None


def read_bytes(wire_type: int, raw: Any, what: str) -> bytes:
    expect(wire_type, wire.BYTES, what)
    return bytes(raw)


def message_fields(data: Any, message: str, what: str) -> Iterable[tuple[int, int, Any]]:
    """`proto_wire.fields` of `data`, a malformed message raising ``ValueError("Error parsing
    <message>: <what>: ...")``."""
    try:
        yield from wire.fields(bytes(data))
    except ValueError as exc:
        raise ValueError(f"Error parsing {message}: {what}: {exc}") from None


def read_map_entry(fields: Iterable[tuple[int, int, Any]], what: str) -> tuple[str, bytes]:
    """The key and the value bytes of one ``map<string, bytes or message>`` entry, from its
    fields (``key`` = 1, ``value`` = 2; a repeated value is merged, as protobuf merges)."""
    key, value = "", b""
    for number, wire_type, raw in fields:
        if number == 1:
            key = read_string(wire_type, raw, f"{what} key")
        elif number == 2:
            value += read_bytes(wire_type, raw, f"{what} value")
    return key, value


def read_int(wire_type: int, raw: Any, what: str) -> int:
    """An int64 / int32 / enum field (negative values are 10-byte varints)."""
    expect(wire_type, wire.VARINT, what)
    return wire.signed64(raw)


def read_bool(wire_type: int, raw: Any, what: str) -> bool:
    expect(wire_type, wire.VARINT, what)
    return bool(raw)


def read_float(wire_type: int, raw: Any, what: str) -> float:
    expect(wire_type, wire.FIXED32, what)
    return wire.F32.unpack(raw)[0]


def read_repeated(wire_type: int, raw: Any, kind: str, what: str) -> list[Any]:
    """The values of one occurrence of a repeated scalar field, packed or not; `kind` is
    ``int``, ``bool``, ``float`` or ``double``."""
    if kind == "float" and wire_type == wire.FIXED32:
        return [wire.F32.unpack(raw)[0]]
    if kind == "double" and wire_type == wire.FIXED64:
        return [wire.F64.unpack(raw)[0]]
    if kind in ("int", "bool") and wire_type == wire.VARINT:
        return [bool(raw) if kind == "bool" else wire.signed64(raw)]
    expect(wire_type, wire.BYTES, what)
    raw = bytes(raw)
    if kind in ("float", "double"):
        size = 4 if kind == "float" else 8
        if len(raw) % size:
            raise ValueError(f"Error parsing message: packed field {what} is truncated")
        return list(struct.unpack(f"<{len(raw) // size}{'f' if size == 4 else 'd'}", raw))
    out, pos = [], 0
    while pos < len(raw):
        value, pos = wire.read_varint(raw, pos)
        out.append(bool(value) if kind == "bool" else wire.signed64(value))
    return out
