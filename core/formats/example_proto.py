"""``tf.train.Example`` and its messages, encoded by hand in protobuf's wire format.

Contract: `Example`, `Features`, `Feature`, `BytesList`, `FloatList`, `Int64List`,
`FeatureList`, `FeatureLists` and `SequenceExample` behave as the protobuf classes TF
generates from ``example.proto`` / ``feature.proto``, for what the Python API of messages
offers most: keyword construction (a submessage may be given as a message or a dict),
attribute access, ``value.append``/``extend``, ``feature["key"]`` on maps (which creates the
entry), ``add()`` on repeated messages, ``HasField``/``WhichOneof``/``ClearField``/``Clear``,
``CopyFrom``/``MergeFrom``, equality, text-format ``str()``, and ``SerializeToString()`` /
``FromString()`` / ``ParseFromString()`` / ``MergeFromString()``. As in protobuf, reading an
unset submessage gives an empty one that becomes set (in its oneof too) when first changed.
Field numbers, from TF's protos:

    BytesList { repeated bytes value = 1; }     FloatList { repeated float value = 1 [packed]; }
    Int64List { repeated int64 value = 1 [packed]; }
    Feature   { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
                             Int64List int64_list = 3; } }
    Features  { map<string, Feature> feature = 1; }
    FeatureList { repeated Feature feature = 1; }
    FeatureLists { map<string, FeatureList> feature_list = 1; }
    Example   { Features features = 1; }
    SequenceExample { Features context = 1; FeatureLists feature_lists = 2; }

Serialization is protobuf's deterministic form: fields in number order, map entries sorted by
key (each with its key and value written), packed lists for floats and int64s, nothing for an
unset submessage and empty bytes for a set but empty one. Parsing accepts unpacked lists,
skips unknown fields (they are not kept), lets a later map entry replace an earlier one, and
raises `DecodeError` (a `ValueError`) for malformed bytes. Type errors on assignment are
protobuf's: `TypeError` for a value of the wrong type, `ValueError` for an int64 out of range
or an unknown field name.
"""

from __future__ import annotations

import numbers
import struct
from collections.abc import Callable, Iterator, MutableSequence
from typing import Any, ClassVar

import attrs
import numpy as np

from tensorweave.engine.proto import wire as wire

__all__ = ["BytesList", "Example", "Feature", "FeatureList", "FeatureLists", "Features",
           "FloatList", "Int64List", "SequenceExample"]

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


class DecodeError(ValueError):
    """Bytes that are not a serialized message of the expected type (protobuf's name)."""


# -- scalar checkers ----------------------------------------------------------------------------


def _type_error(value: Any, expected: str) -> TypeError:
    return TypeError(f"{value!r} has type {type(value).__name__}, but expected one of: "
                     f"{expected}")


def _check_bytes(value: Any) -> bytes:
    if not isinstance(value, bytes):
        raise _type_error(value, "bytes")
    return bytes(value)


def _check_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _type_error(value, "int, float")
    return float(np.float32(value))  # a float field holds a float32


def _check_int64(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise _type_error(value, "int")
    value = int(value)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError(f"Value out of range: {value}")
    return value


# -- containers ---------------------------------------------------------------------------------


class RepeatedScalar(MutableSequence):
    """A repeated scalar field: a list that checks (and converts) what goes in."""

    def __init__(self, check: Callable[[Any], Any], changed: Callable[[], None]) -> None:
        self._items: list[Any] = []
        self._check = check
        self._changed = changed

    def __getitem__(self, i: Any) -> Any:
        return self._items[i]

    def __setitem__(self, i: Any, value: Any) -> None:
        if isinstance(i, slice):
            self._items[i] = [self._check(v) for v in value]
        else:
            self._items[i] = self._check(value)
        self._changed()

    def __delitem__(self, i: Any) -> None:
        del self._items[i]
        self._changed()

    def __len__(self) -> int:
        return len(self._items)

    def insert(self, i: int, value: Any) -> None:
        self._items.insert(i, self._check(value))
        self._changed()

    def extend(self, values: Any) -> None:
        checked = [self._check(v) for v in values]  # nothing is added if one is bad
        self._items.extend(checked)
        self._changed()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RepeatedScalar):
            return self._items == other._items
        return isinstance(other, (list, tuple)) and self._items == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._items)


class RepeatedMessage(MutableSequence):
    """A repeated message field; ``add(**fields)`` appends a new message, ``append`` a copy."""

    def __init__(self, message: type[Message], changed: Callable[[], None]) -> None:
        self._items: list[Message] = []
        self._message = message
        self._changed = changed

    def __getitem__(self, i: Any) -> Any:
        return self._items[i]

    def __setitem__(self, i: Any, value: Any) -> None:
        raise TypeError("Does not support assignment")

    def __delitem__(self, i: Any) -> None:
        del self._items[i]
        self._changed()

    def __len__(self) -> int:
        return len(self._items)

    def add(self, **fields: Any) -> Any:
        item = self._message(**fields)
        self._items.append(item)
        self._changed()
        return item

    def insert(self, i: int, value: Any) -> None:
        self._items.insert(i, _copy_of(self._message, value))
        self._changed()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (RepeatedMessage, list, tuple)) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._items)


class MessageMap:
    """A ``map<string, Message>`` field: reading a missing key creates its entry, as
    protobuf's message maps do; ``get`` does not."""

    def __init__(self, message: type[Message], changed: Callable[[], None]) -> None:
        self._items: dict[str, Message] = {}
        self._message = message
        self._changed = changed

    def __getitem__(self, key: Any) -> Any:
        key = _check_key(key)
        item = self._items.get(key)
        if item is None:
            item = self._items[key] = self._message()
            self._changed()
        return item

    def get_or_create(self, key: Any) -> Any:
        return self[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._items[_check_key(key)] = _copy_of(self._message, value)
        self._changed()

    def put(self, key: str, value: Message) -> None:
        """Make `value` itself (not a copy) the entry of `key`."""
        self._items[key] = value
        self._changed()

    def __delitem__(self, key: Any) -> None:
        del self._items[_check_key(key)]
        self._changed()

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Any, default: Any = None) -> Any:
        return self._items.get(key, default)

    def keys(self) -> Any:
        return self._items.keys()

    def values(self) -> Any:
        return self._items.values()

    def items(self) -> Any:
        return self._items.items()

    def clear(self) -> None:
        self._items.clear()
        self._changed()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MessageMap):
            return self._items == other._items
        return isinstance(other, dict) and self._items == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._items)


def _check_key(key: Any) -> str:
    if isinstance(key, bytes):
        return key.decode("utf-8")
    if not isinstance(key, str):
        raise _type_error(key, "bytes, str")
    return key


def _copy_of(message: type[Message], value: Any) -> Message:
    if isinstance(value, dict):
        return message(**value)
    if not isinstance(value, message):
        raise TypeError(f"Parameter to CopyFrom() must be instance of same class: expected "
                        f"{message.__name__} got {type(value).__name__}.")
    copy = message()
    copy.MergeFrom(value)
    return copy


# -- messages -----------------------------------------------------------------------------------


@attrs.frozen
class _Field:
    """One field: `kind` is ``bytes``/``float``/``int64`` (repeated scalars), ``message``,
    ``repeated`` (messages) or ``map`` (string keys to messages)."""

    name: str
    number: int
    kind: str
    message: Any = None
    oneof: str | None = None


class Message:
    """The protobuf message API over `FIELDS`; see the module docstring."""

    FIELDS: ClassVar[tuple[_Field, ...]] = ()
    _BY_NAME: ClassVar[dict[str, _Field]]
    _BY_NUMBER: ClassVar[dict[int, _Field]]

    def __init_subclass__(cls) -> None:
        cls._BY_NAME = {f.name: f for f in cls.FIELDS}
        cls._BY_NUMBER = {f.number: f for f in cls.FIELDS}
        for f in cls.FIELDS:
            setattr(cls, f.name, property(lambda self, f=f: self._get(f)))

    def __init__(self, **fields: Any) -> None:
        self._listener: Callable[[], None] | None = None
        self._values: dict[str, Any] = {}
        self._pending: dict[str, Message] = {}
        for f in self.FIELDS:
            if f.kind in _SCALARS:
                self._values[f.name] = RepeatedScalar(_SCALARS[f.kind], self._modified)
            elif f.kind == "repeated":
                self._values[f.name] = RepeatedMessage(f.message, self._modified)
            elif f.kind == "map":
                self._values[f.name] = MessageMap(f.message, self._modified)
        for name, value in fields.items():
            if value is not None:
                self._init_field(self._field(name), value)

    def _field(self, name: str) -> _Field:
        f = self._BY_NAME.get(name)
        if f is None:
            raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
        return f

    def _init_field(self, f: _Field, value: Any) -> None:
        if f.kind == "message":
            self._mutable(f).MergeFrom(_copy_of(f.message, value))
        elif f.kind == "map":
            for key, item in dict(value).items():
                self._values[f.name][key] = item
        else:
            self._values[f.name].extend(value)

    # -- presence ---------------------------------------------------------------------------

    def _modified(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener()

    def _get(self, f: _Field) -> Any:
        if f.kind != "message" or f.name in self._values:
            return self._values[f.name]
        child = self._pending.get(f.name)
        if child is None:
            child = self._pending[f.name] = f.message()
            child._listener = lambda: self._set(f, child)
        return child

    def _set(self, f: _Field, child: Message) -> None:
        if f.oneof is not None:
            for other in self.FIELDS:
                if other.oneof == f.oneof and other is not f:
                    self._values.pop(other.name, None)
        self._pending.pop(f.name, None)
        child._listener = None
        self._values[f.name] = child
        self._modified()

    def _mutable(self, f: _Field) -> Message:
        """The submessage of `f`, set."""
        child = self._get(f)
        if f.name not in self._values:
            self._set(f, child)
        return child

    def HasField(self, name: str) -> bool:  # noqa: N802 - protobuf's name
        f = self._BY_NAME.get(name)
        if f is None:
            oneof = [g for g in self.FIELDS if g.oneof == name]
            if not oneof:
                raise ValueError(f'Protocol message has no singular "{name}" field.')
            return any(g.name in self._values for g in oneof)
        if f.kind != "message":
            raise ValueError(f'Protocol message has no singular "{name}" field.')
        return name in self._values

    def WhichOneof(self, oneof_group: str) -> str | None:  # noqa: N802
        names = [f.name for f in self.FIELDS if f.oneof == oneof_group]
        if not names:
            raise ValueError(f'Protocol message has no oneof "{oneof_group}" field.')
        return next((n for n in names if n in self._values), None)

    def ClearField(self, name: str) -> None:  # noqa: N802
        f = self._field(name)
        if f.kind == "message":
            self._values.pop(name, None)
            self._pending.pop(name, None)
        else:
            self._values[name].clear()

    def Clear(self) -> None:  # noqa: N802
        for f in self.FIELDS:
            self.ClearField(f.name)

    def ListFields(self) -> list[tuple[_Field, Any]]:  # noqa: N802
        """The set fields (non-empty ones, for repeated fields and maps), in number order."""
        return [(f, self._values[f.name]) for f in self.FIELDS
                if f.name in self._values and (f.kind == "message" or len(self._values[f.name]))]

    # -- copying and comparing --------------------------------------------------------------

    def MergeFrom(self, other: Message) -> None:  # noqa: N802
        if not isinstance(other, type(self)):
            raise TypeError(f"Parameter to MergeFrom() must be instance of same class: expected "
                            f"{type(self).__name__} got {type(other).__name__}.")
        self.MergeFromString(other.SerializeToString())

    def CopyFrom(self, other: Message) -> None:  # noqa: N802
        if other is self:
            return
        self.Clear()
        self.MergeFrom(other)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and \
            self.SerializeToString() == other.SerializeToString()  # type: ignore[union-attr]

    __hash__ = None  # type: ignore[assignment]

    # -- wire format ------------------------------------------------------------------------

    def SerializeToString(self, deterministic: bool | None = None) -> bytes:  # noqa: N802
        """The message's bytes (always protobuf's deterministic form)."""
        out = []
        for f in self.FIELDS:
            if f.name not in self._values:
                continue
            value = self._values[f.name]
            if f.kind == "bytes":
                out.extend(wire.bytes_field(f.number, v, always=True) for v in value)
            elif f.kind == "float":
                out.append(wire.bytes_field(f.number, struct.pack(f"<{len(value)}f", *value)))
            elif f.kind == "int64":
                out.append(wire.bytes_field(f.number, b"".join(wire.varint(v) for v in value)))
            elif f.kind == "message":
                out.append(wire.bytes_field(f.number, value.SerializeToString(), always=True))
            elif f.kind == "repeated":
                out.extend(wire.bytes_field(f.number, m.SerializeToString(), always=True)
                           for m in value)
            else:
                for key in sorted(value):
                    entry = (wire.bytes_field(1, key.encode("utf-8"), always=True)
                             + wire.bytes_field(2, value[key].SerializeToString(), always=True))
                    out.append(wire.bytes_field(f.number, entry, always=True))
        return b"".join(out)

    def SerializePartialToString(self, deterministic: bool | None = None) -> bytes:  # noqa: N802
        return self.SerializeToString()

    def ByteSize(self) -> int:  # noqa: N802
        return len(self.SerializeToString())

    @classmethod
    def FromString(cls, data: bytes) -> Any:  # noqa: N802
        message = cls()
        message.MergeFromString(data)
        return message

    def ParseFromString(self, data: bytes) -> int:  # noqa: N802
        self.Clear()
        return self.MergeFromString(data)

    def MergeFromString(self, data: bytes) -> int:  # noqa: N802
        """Merge the serialized message `data` into this one; returns its length."""
        data = bytes(data)
        try:
            self._merge(data)
        except (ValueError, UnicodeDecodeError, struct.error) as exc:
            if isinstance(exc, DecodeError):
                raise
            raise DecodeError(f"Error parsing message: {exc}") from None
        return len(data)

    def _merge(self, data: bytes) -> None:
        for number, wire_type, raw in wire.fields(data):
            f = self._BY_NUMBER.get(number)
            if f is None:
                continue
            if f.kind in _SCALARS:
                self._values[f.name].extend(decode_scalars(f.kind, wire_type, raw))
            elif wire_type != wire.BYTES:
                raise DecodeError(f"Error parsing message: field {f.name} has wire type "
                                  f"{wire_type}")
            elif f.kind == "message":
                self._mutable(f)._merge(raw)
            elif f.kind == "repeated":
                self._values[f.name].add()._merge(raw)
            else:
                key, value = "", f.message()
                for entry_number, entry_type, entry_raw in wire.fields(raw):
                    if entry_number == 1 and entry_type == wire.BYTES:
                        key = bytes(entry_raw).decode("utf-8")
                    elif entry_number == 2 and entry_type == wire.BYTES:
                        value._merge(entry_raw)
                self._values[f.name].put(key, value)

    # -- text format ------------------------------------------------------------------------

    def __str__(self) -> str:
        return "".join(self._text(0))

    def __repr__(self) -> str:
        return str(self)

    def _text(self, depth: int) -> Iterator[str]:
        pad = "  " * depth
        for f, value in self.ListFields():
            if f.kind in _SCALARS:
                for v in value:
                    yield f"{pad}{f.name}: {_text_scalar(f.kind, v)}\n"
            elif f.kind == "message":
                yield from _text_message(pad, f.name, value, depth)
            elif f.kind == "repeated":
                for m in value:
                    yield from _text_message(pad, f.name, m, depth)
            else:
                for key in sorted(value):
                    yield f"{pad}{f.name} {{\n{pad}  key: {_text_scalar('bytes', key.encode())}\n"
                    yield from _text_message(pad + "  ", "value", value[key], depth + 1)
                    yield f"{pad}}}\n"


_SCALARS: dict[str, Callable[[Any], Any]] = {
    "bytes": _check_bytes, "float": _check_float, "int64": _check_int64}


def decode_scalars(kind: str, wire_type: int, raw: Any) -> list[Any]:
    """The values one wire field of a ``bytes``/``float``/``int64`` list holds."""
    if kind == "bytes":
        if wire_type != wire.BYTES:
            raise DecodeError("Error parsing message: a bytes field is not length-delimited")
        return [bytes(raw)]
    if kind == "float":
        if wire_type == wire.FIXED32:
            return [wire.F32.unpack(raw)[0]]
        if wire_type != wire.BYTES or len(raw) % 4:
            raise DecodeError("Error parsing message: bad packed floats")
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    if wire_type == wire.VARINT:
        return [wire.signed64(raw)]
    if wire_type != wire.BYTES:
        raise DecodeError("Error parsing message: bad int64 field")
    values, pos = [], 0
    while pos < len(raw):
        value, pos = wire.read_varint(raw, pos)
        values.append(wire.signed64(value))
    return values


_KINDS = {1: "bytes", 2: "float", 3: "int64"}  # Feature's oneof field numbers


def example_features(data: bytes) -> dict[bytes, tuple[str | None, list[Any]]]:
    """The features of a serialized `Example`, straight from its bytes (what TF's fast
    parser reads): key -> (``"bytes"``/``"float"``/``"int64"``, or None for a feature with no
    kind set; its values). Merging is protobuf's: a later map entry replaces an earlier one,
    and a feature's last kind wins. A `SequenceExample`'s context is its field 1 too, so this
    reads a SequenceExample's context features. `DecodeError` for malformed bytes."""
    try:
        return {key: _feature_values(value) for key, value in _map_entries(data, 1)}
    except (ValueError, struct.error) as exc:
        raise DecodeError(f"Error parsing message: {exc}") from None


def feature_lists(data: bytes) -> dict[bytes, list[tuple[str | None, list[Any]]]]:
    """The feature lists of a serialized `SequenceExample`, straight from its bytes: key ->
    one ``(kind, values)`` per step, as `example_features` gives a feature. Merging is
    protobuf's (a later map entry replaces an earlier one). `DecodeError` for malformed
    bytes."""
    try:
        return {key: [_feature_values(raw) for number, wire_type, raw in wire.fields(value)
                      if number == 1 and wire_type == wire.BYTES]
                for key, value in _map_entries(data, 2)}
    except (ValueError, struct.error) as exc:
        raise DecodeError(f"Error parsing message: {exc}") from None


def _map_entries(data: bytes, field: int) -> Iterator[tuple[bytes, bytes]]:
    """Key and value bytes of each entry of the ``map<string, Message>`` held by the
    submessage at `field` of `data` (``Features.feature``, ``FeatureLists.feature_list``);
    later entries come later, so a dict built from them keeps the last one."""
    for number, wire_type, submessage in wire.fields(data):
        if number != field or wire_type != wire.BYTES:
            continue
        for entry_number, entry_type, entry in wire.fields(submessage):
            if entry_number != 1 or entry_type != wire.BYTES:
                continue
            key, value = b"", b""
            for part_number, part_type, part in wire.fields(entry):
                if part_type == wire.BYTES and part_number == 1:
                    key = bytes(part)
                elif part_type == wire.BYTES and part_number == 2:
                    value += part  # two values of one entry merge
            yield key, value


def _feature_values(data: bytes) -> tuple[str | None, list[Any]]:
    kind: str | None = None
    values: list[Any] = []
    for number, wire_type, raw in wire.fields(data):
        if number not in _KINDS or wire_type != wire.BYTES:
            continue
        if _KINDS[number] != kind:  # setting another member of the oneof clears the first
            kind, values = _KINDS[number], []
        for value_number, value_type, value in wire.fields(raw):
            if value_number == 1:
                values.extend(decode_scalars(kind, value_type, value))
    return kind, values


def _text_scalar(kind: str, value: Any) -> str:
    if kind == "bytes":
        escaped = "".join(chr(b) if 32 <= b < 127 and b not in (34, 39, 92) else
                          {34: '\\"', 39: "\\'", 92: "\\\\", 10: "\\n", 13: "\\r",
                           9: "\\t"}.get(b, f"\\{b:03o}") for b in value)
        return f'"{escaped}"'
    return str(np.float32(value)) if kind == "float" else str(value)


def _text_message(pad: str, name: str, message: Message, depth: int) -> Iterator[str]:
    yield f"{pad}{name} {{\n"
    yield from message._text(depth + 1)
    yield f"{pad}}}\n"


class BytesList(Message):
    FIELDS = (_Field("value", 1, "bytes"),)


class FloatList(Message):
    FIELDS = (_Field("value", 1, "float"),)


class Int64List(Message):
    FIELDS = (_Field("value", 1, "int64"),)


class Feature(Message):
    FIELDS = (_Field("bytes_list", 1, "message", BytesList, "kind"),
              _Field("float_list", 2, "message", FloatList, "kind"),
              _Field("int64_list", 3, "message", Int64List, "kind"))


class Features(Message):
    FIELDS = (_Field("feature", 1, "map", Feature),)


class FeatureList(Message):
    FIELDS = (_Field("feature", 1, "repeated", Feature),)


class FeatureLists(Message):
    FIELDS = (_Field("feature_list", 1, "map", FeatureList),)


class Example(Message):
    FIELDS = (_Field("features", 1, "message", Features),)


class SequenceExample(Message):
    FIELDS = (_Field("context", 1, "message", Features),
              _Field("feature_lists", 2, "message", FeatureLists))
