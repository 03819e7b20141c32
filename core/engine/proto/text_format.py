"""Reading protobuf's text format (``google.protobuf.text_format.Merge``) for the messages that
tensorweave writes as `tensorweave.engine.proto.message` field trees.

Contract: `to_binary(text, schema, root)` parses `text` as a message of type `root` and returns
its bytes in the wire format, so that each message class reads text with the same binary parser
(and the same validation) it already has; `Parse(text, message)` / `Merge(text, message)` do that
for a message object whose class names its schema in ``TEXT_SCHEMA``. A `Schema` maps each
message type to its fields by name (`FieldSpec`: number, and a scalar kind of `proto_message`
or the name of a message type).

The grammar is protobuf's: ``name: value``, nested ``name { ... }`` or ``name < ... >`` (the
colon optional), lists ``name: [v, v]``, fields separated by whitespace, ``,`` or ``;``,
``#`` comments, strings in double or single quotes with C escapes (``\\n``, ``\\ooo``,
``\\xhh``, ``\\uhhhh``), adjacent strings concatenated, ints in decimal, hex or octal, floats
with an optional ``f`` suffix, ``inf``/``nan``, bools as ``true``/``false``/``t``/``f``/``1``/
``0``, enums by name or number. A map is a repeated ``key``/``value`` message. As ``Merge``
does, a singular field given twice keeps the last value. Malformed text, an unknown field, a
value of the wrong kind or messages nested over 100 deep raise `ParseError` (a `ValueError`)
naming ``line:column``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs
import numpy as np

from tensorweave.engine.proto.message import Field, Message
from tensorweave.engine.proto.message import to_binary as _message_bytes

__all__ = ["FieldSpec", "Merge", "Parse", "ParseError", "Schema", "fields", "to_binary"]

_SCALARS = frozenset({"string", "bytes", "int", "bool", "float", "double", "enum"})
_INT64_MIN, _UINT64_END = -(1 << 63), 1 << 64
_MAX_DEPTH = 100  # protobuf's default recursion limit


class ParseError(ValueError):
    """Text that is not a valid message of its type; `line` and `column` count from 1."""

    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(f"{line}:{column} : {message}")
        self.line, self.column = line, column


@attrs.frozen
class FieldSpec:
    """One field of a message type: its number and its `kind` (a scalar kind of
    `proto_message`, or a message type of the schema); `enum_names` for an ``enum``."""

    number: int
    kind: str
    enum_names: Mapping[int, str] | None = None


Schema = Mapping[str, Mapping[str, FieldSpec]]


def fields(**specs: tuple[Any, ...]) -> dict[str, FieldSpec]:
    """One message type's fields, ``name=(number, kind[, enum_names])`` each."""
    return {name: FieldSpec(*spec) for name, spec in specs.items()}


# -- tokens -----------------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\f\v]+|\#[^\n]*)
  | (?P<newline>\n)
  | (?P<number>(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fF]?)(?![\w.]))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<symbol>[{}<>\[\]:,;\-])
""", re.VERBOSE)


@attrs.frozen
class _Token:
    kind: str  # number, ident, string, symbol or end
    text: str
    line: int
    column: int


def _tokenize(text: str) -> list[_Token]:
    tokens, pos, line, line_start = [], 0, 1, 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        column = pos - line_start + 1
        if match is None:
            char = text[pos]
            what = "Unterminated string" if char in "\"'" else f"Unexpected character {char!r}"
            raise ParseError(line, column, what)
        kind = match.lastgroup
        if kind == "newline":
            line, line_start = line + 1, match.end()
        elif kind != "space":
            tokens.append(_Token(kind, match.group(), line, column))
        pos = match.end()
    tokens.append(_Token("end", "", line, len(text) - line_start + 1))
    return tokens


_SIMPLE_ESCAPES = {"n": 10, "r": 13, "t": 9, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92,
                   "'": 39, '"': 34, "?": 63}
_ESCAPE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{4})"
                     r"|U([0-9a-fA-F]{8})|(.))", re.DOTALL)


def _unescape(token: _Token) -> bytes:
    body, out, pos = token.text[1:-1], bytearray(), 0
    for match in _ESCAPE.finditer(body):
        out += body[pos:match.start()].encode()
        octal, hexa, u4, u8, simple = match.groups()
        if octal or hexa:
            value = int(octal, 8) if octal else int(hexa, 16)
            if value > 255:
                raise ParseError(token.line, token.column, f"Invalid escape \\{octal}")
            out.append(value)
        elif u4 or u8:
            try:
                out += chr(int(u4 or u8, 16)).encode()
            except (ValueError, UnicodeEncodeError):
                raise ParseError(token.line, token.column,
                                 f"Invalid Unicode escape \\{match.group()}") from None
        elif simple in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[simple])
        else:
            raise ParseError(token.line, token.column, f"Invalid escape sequence \\{simple}")
        pos = match.end()
    return bytes(out + body[pos:].encode())


# -- values -----------------------------------------------------------------------------------


@attrs.frozen
class _Scalar:
    """A field's value as written: a number or identifier (`negative` if preceded by ``-``),
    or a string's bytes."""

    kind: str  # number, ident or string
    value: Any
    negative: bool
    line: int
    column: int

    def error(self, message: str) -> ParseError:
        return ParseError(self.line, self.column, message)

    @property
    def text(self) -> str:
        return ("-" if self.negative else "") + str(self.value)


_INT = re.compile(r"0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*")


def _to_int(scalar: _Scalar) -> int:
    if scalar.kind != "number" or not _INT.fullmatch(scalar.value):
        raise scalar.error(f"Couldn't parse integer: {scalar.text}")
    text = scalar.value
    if text[:2] in ("0x", "0X"):
        value = int(text, 16)
    else:
        value = int(text, 8 if text.startswith("0") and len(text) > 1 else 10)
    value = -value if scalar.negative else value
    if not _INT64_MIN <= value < _UINT64_END:
        raise scalar.error(f"Integer out of range: {scalar.text}")
    return value


def _to_float(scalar: _Scalar, single: bool) -> float:
    if scalar.kind == "ident" and scalar.value.lower() in ("inf", "infinity", "inff", "nan",
                                                           "nanf"):
        value = float("nan") if scalar.value.lower().startswith("nan") else float("inf")
    elif scalar.kind == "number":
        text = scalar.value.rstrip("fF") if scalar.value[:2] not in ("0x", "0X") else ""
        if not text:
            raise scalar.error(f"Couldn't parse float: {scalar.text}")
        value = float(text)
    else:
        raise scalar.error(f"Couldn't parse float: {scalar.text}")
    value = -value if scalar.negative else value
    if single:
        with np.errstate(over="ignore"):  # out of float32's range reads as +-inf, as protobuf
            value = float(np.float32(value))
    return value


def _to_bool(scalar: _Scalar) -> bool:
    if not scalar.negative:
        if scalar.kind == "ident" and scalar.value in ("true", "True", "t"):
            return True
        if scalar.kind == "ident" and scalar.value in ("false", "False", "f"):
            return False
        if scalar.kind == "number" and scalar.value in ("0", "1"):
            return scalar.value == "1"
    raise scalar.error(f"Couldn't parse boolean: {scalar.text}")


def _to_enum(scalar: _Scalar, spec: FieldSpec, name: str) -> int:
    names = spec.enum_names or {}
    if scalar.kind == "number":
        return _to_int(scalar)
    if scalar.kind == "ident" and not scalar.negative:
        for number, enum_name in names.items():
            if enum_name == scalar.value:
                return number
    raise scalar.error(f'Enum field "{name}" has no value named {scalar.text}.')


def _scalar_value(scalar: _Scalar, spec: FieldSpec, name: str) -> Any:
    kind = spec.kind
    if kind in ("string", "bytes"):
        if scalar.kind != "string":
            raise scalar.error(f'Expected a string for field "{name}", got {scalar.text}')
        if kind == "bytes":
            return scalar.value
        try:
            return scalar.value.decode("utf-8")
        except UnicodeDecodeError:
            raise scalar.error(f'String field "{name}" is not valid UTF-8') from None
    if scalar.kind == "string":
        raise scalar.error(f'Expected a {kind} for field "{name}", got a string')
    if kind == "int":
        return _to_int(scalar)
    if kind == "bool":
        return _to_bool(scalar)
    if kind in ("float", "double"):
        return _to_float(scalar, kind == "float")
    return _to_enum(scalar, spec, name)


# -- parsing ----------------------------------------------------------------------------------


class _Parser:
    """Recursive descent over the tokens, building `Field` trees against a schema."""

    def __init__(self, text: str, schema: Schema) -> None:
        self.tokens = _tokenize(text)
        self.pos = 0
        self.schema = schema

    def peek(self) -> _Token:
        return self.tokens[self.pos]

    def next(self) -> _Token:
        token = self.tokens[self.pos]
        if token.kind != "end":
            self.pos += 1
        return token

    def accept(self, symbol: str) -> bool:
        token = self.peek()
        if token.kind == "symbol" and token.text == symbol:
            self.pos += 1
            return True
        return False

    def expect(self, symbol: str) -> None:
        if not self.accept(symbol):
            token = self.peek()
            got = token.text or "end of input"
            raise ParseError(token.line, token.column, f'Expected "{symbol}", found "{got}".')

    def message(self, type_name: str, close: str | None, depth: int = 0) -> Message:
        if depth > _MAX_DEPTH:
            token = self.peek()
            raise ParseError(token.line, token.column,
                             f"Message nested more than {_MAX_DEPTH} levels deep")
        known = self.schema[type_name]
        out: Message = []
        while True:
            token = self.peek()
            if close is not None and self.accept(close):
                return out
            if token.kind == "end":
                if close is None:
                    return out
                raise ParseError(token.line, token.column, f'Expected "{close}".')
            name = self.next()
            if name.kind != "ident":
                raise ParseError(name.line, name.column,
                                 f'Expected a field name, found "{name.text}".')
            spec = known.get(name.text)
            if spec is None:
                raise ParseError(name.line, name.column,
                                 f'Message type "{type_name}" has no field named '
                                 f'"{name.text}".')
            out += self.field(name, spec, depth)
            if not self.accept(","):
                self.accept(";")

    def field(self, name: _Token, spec: FieldSpec, depth: int) -> Message:
        is_message = spec.kind not in _SCALARS
        colon = self.accept(":")
        if not colon and not is_message:
            token = self.peek()
            raise ParseError(token.line, token.column,
                             f'Expected ":" after field "{name.text}".')
        if colon and self.accept("["):
            values: Message = []
            while not self.accept("]"):
                if values:
                    self.expect(",")
                values.append(self.value(name, spec, depth))
            return values
        return [self.value(name, spec, depth)]

    def value(self, name: _Token, spec: FieldSpec, depth: int) -> Field:
        if spec.kind not in _SCALARS:
            for open_, close in (("{", "}"), ("<", ">")):
                if self.accept(open_):
                    return Field(name.text, spec.number, "message",
                                 self.message(spec.kind, close, depth + 1))
            token = self.peek()
            raise ParseError(token.line, token.column,
                             f'Expected "{{" for message field "{name.text}", found '
                             f'"{token.text}".')
        return Field(name.text, spec.number, spec.kind,
                     _scalar_value(self.scalar(), spec, name.text))

    def scalar(self) -> _Scalar:
        negative = self.accept("-")
        token = self.next()
        if token.kind == "string" and not negative:
            data = _unescape(token)
            while self.peek().kind == "string":  # "a" "b" is "ab", as in C
                data += _unescape(self.next())
            return _Scalar("string", data, False, token.line, token.column)
        if token.kind in ("number", "ident"):
            return _Scalar(token.kind, token.text, negative, token.line, token.column)
        got = token.text or "end of input"
        raise ParseError(token.line, token.column, f'Expected a value, found "{got}".')


def to_binary(text: str | bytes, schema: Schema, root: str) -> bytes:
    """The wire-format bytes of the `root` message that `text` holds; `ParseError` if it is
    malformed."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(1, 1, f"Text is not valid UTF-8: {exc}") from None
    return _message_bytes(_Parser(text, schema).message(root, None))


def Merge(text: str | bytes, message: Any) -> Any:  # noqa: N802 - protobuf's name
    """Merge the text-format `text` into `message` (whose class has a ``TEXT_SCHEMA`` of
    ``(schema, root type)``), as protobuf's ``text_format.Merge``; returns `message`."""
    data = to_binary(text, *type(message).TEXT_SCHEMA)
    # concatenated messages merge on the wire: singular fields last-wins, repeated ones append
    message.ParseFromString(message.SerializeToString() + data)
    return message


def Parse(text: str | bytes, message: Any) -> Any:  # noqa: N802 - protobuf's name
    """Replace `message` by the text-format `text`, as protobuf's ``text_format.Parse``
    (except that a singular field given twice keeps the last value, as ``Merge``)."""
    message.ParseFromString(to_binary(text, *type(message).TEXT_SCHEMA))
    return message
