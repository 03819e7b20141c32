"""The protocol buffers of summaries and event files, encoded by hand (no protobuf dependency).

Contract: `Summary`, `SummaryValue`, `HistogramProto` and `Event` are attrs classes with
``SerializeToString()`` giving the bytes TensorFlow's ``summary.proto`` / ``event.proto``
would, and ``FromString(data)`` parsing them back (`ValueError` for malformed bytes). Field
numbers, from TF's protos:

    Summary        { repeated Value value = 1; }
    Summary.Value  { string tag = 1; float simple_value = 2; Image image = 4;
                     HistogramProto histo = 5; string node_name = 7; }
    Summary.Image  { int32 height = 1; int32 width = 2; int32 colorspace = 3;
                     bytes encoded_image_string = 4; }
    HistogramProto { double min = 1; double max = 2; double num = 3; double sum = 4;
                     double sum_squares = 5; repeated double bucket_limit = 6 [packed];
                     repeated double bucket = 7 [packed]; }
    Event          { double wall_time = 1; int64 step = 2; string file_version = 3;
                     bytes graph_def = 4; Summary summary = 5;
                     TaggedRunMetadata tagged_run_metadata = 8; bytes meta_graph_def = 9; }

``graph_def`` and ``meta_graph_def`` hold a serialized ``GraphDef`` / ``MetaGraphDef``.

Encoding follows proto3: scalar fields equal to their default are not written, repeated doubles
are packed, and fields are written in field-number order. Parsing skips fields it does not know
(the other ``Summary.Value`` kinds, ``Event.log_message`` ...), as protobuf does, and accepts
unpacked repeated doubles too.
"""

from __future__ import annotations

import struct
from typing import Any

import attrs

from tensorweave.engine.proto import wire as wire
from tensorweave.engine.proto.wire import (
    bytes_field,
    double_field,
    fields,
    int64_field,
    packed_doubles,
)


def _double(wire_type: int, raw: bytes) -> float:
    if wire_type != wire.FIXED64:
        raise ValueError("Malformed protocol buffer: a double field is not 64-bit")
    return wire.F64.unpack(raw)[0]


def _doubles(wire_type: int, raw: bytes) -> tuple[float, ...]:
    if wire_type == wire.FIXED64:
        return (wire.F64.unpack(raw)[0],)
    if wire_type != wire.BYTES or len(raw) % 8:
        raise ValueError("Malformed protocol buffer: bad packed doubles")
    return struct.unpack(f"<{len(raw) // 8}d", raw)


# -- messages ---------------------------------------------------------------------------------


@attrs.frozen
class HistogramProto:
    min: float = 0.0
    max: float = 0.0
    num: float = 0.0
    sum: float = 0.0
    sum_squares: float = 0.0
    bucket_limit: tuple[float, ...] = attrs.field(default=(), converter=tuple)
    bucket: tuple[float, ...] = attrs.field(default=(), converter=tuple)

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name
        return b"".join((
            double_field(1, self.min), double_field(2, self.max), double_field(3, self.num),
            double_field(4, self.sum), double_field(5, self.sum_squares),
            packed_doubles(6, self.bucket_limit), packed_doubles(7, self.bucket),
        ))

    @classmethod
    def FromString(cls, data: bytes) -> HistogramProto:  # noqa: N802
        scalars: dict[str, float] = {}
        lists: dict[int, list[float]] = {6: [], 7: []}
        names = {1: "min", 2: "max", 3: "num", 4: "sum", 5: "sum_squares"}
        for number, wire_type, raw in fields(data):
            if number in names:
                scalars[names[number]] = _double(wire_type, raw)
            elif number in lists:
                lists[number].extend(_doubles(wire_type, raw))
        return cls(**scalars, bucket_limit=lists[6], bucket=lists[7])


@attrs.frozen
class SummaryImage:
    """``Summary.Image``: an encoded (PNG) image and its size; colorspace is the channels."""

    height: int = 0
    width: int = 0
    colorspace: int = 0
    encoded_image_string: bytes = b""

    def SerializeToString(self) -> bytes:  # noqa: N802
        return b"".join((int64_field(1, self.height), int64_field(2, self.width),
                         int64_field(3, self.colorspace),
                         bytes_field(4, self.encoded_image_string)))

    @classmethod
    def FromString(cls, data: bytes) -> SummaryImage:  # noqa: N802
        values: dict[str, Any] = {}
        names = {1: "height", 2: "width", 3: "colorspace"}
        for number, wire_type, raw in fields(data):
            if number in names and wire_type == wire.VARINT:
                values[names[number]] = raw
            elif number == 4 and wire_type == wire.BYTES:
                values["encoded_image_string"] = raw
        return cls(**values)


@attrs.define
class SummaryValue:
    """``Summary.Value``: a tag and one of `simple_value`, `image` or `histo` (None: none of
    those; other kinds keep only their tag here). `node_name` is TF's optional name of the
    node that produced the value."""

    tag: str
    simple_value: float | None = None
    histo: HistogramProto | None = None
    image: SummaryImage | None = None
    node_name: str = ""

    def SerializeToString(self) -> bytes:  # noqa: N802
        out = bytes_field(1, self.tag.encode())
        if self.simple_value is not None:  # a oneof member is written even when 0
            out += wire.key(2, wire.FIXED32) + wire.F32.pack(self.simple_value)
        if self.image is not None:
            out += bytes_field(4, self.image.SerializeToString(), always=True)
        if self.histo is not None:
            out += bytes_field(5, self.histo.SerializeToString(), always=True)
        return out + bytes_field(7, self.node_name.encode())

    @classmethod
    def FromString(cls, data: bytes) -> SummaryValue:  # noqa: N802
        tag, simple, histo, image, node_name = "", None, None, None, ""
        for number, wire_type, raw in fields(data):
            if number == 1 and wire_type == wire.BYTES:
                tag = raw.decode("utf-8")
            elif number == 2 and wire_type == wire.FIXED32:
                simple = wire.F32.unpack(raw)[0]
            elif number == 4 and wire_type == wire.BYTES:
                image = SummaryImage.FromString(raw)
            elif number == 5 and wire_type == wire.BYTES:
                histo = HistogramProto.FromString(raw)
            elif number == 7 and wire_type == wire.BYTES:
                node_name = raw.decode("utf-8")
        return cls(tag, simple, histo, image, node_name)


class SummaryValues(list):  # type: list[SummaryValue]
    """``Summary.value`` as protobuf's repeated field: a list with ``add(**fields)``."""

    def add(self, **fields: Any) -> SummaryValue:
        value = SummaryValue(**{"tag": "", **fields})
        self.append(value)
        return value


@attrs.define
class Summary:
    """A mutable message, as TF 1.x scripts use it: ``s = Summary(); s.ParseFromString(b);
    s.value.add(tag=..., simple_value=...)``."""

    value: SummaryValues = attrs.field(factory=SummaryValues, converter=SummaryValues)

    Value = SummaryValue  # TF's nested name: tf.Summary.Value(tag=..., simple_value=...)
    Image = SummaryImage

    def SerializeToString(self) -> bytes:  # noqa: N802
        return b"".join(bytes_field(1, v.SerializeToString(), always=True) for v in self.value)

    @classmethod
    def FromString(cls, data: bytes) -> Summary:  # noqa: N802
        return cls(SummaryValue.FromString(raw) for number, wire_type, raw in fields(data)
                   if number == 1 and wire_type == wire.BYTES)

    def ParseFromString(self, data: bytes) -> None:  # noqa: N802
        """Replace this message's values with those of the serialized `data`."""
        self.value = Summary.FromString(data).value


@attrs.frozen
class TaggedRunMetadata:
    """TF's ``TaggedRunMetadata``: a tag and a serialized ``RunMetadata``."""

    tag: str = ""
    run_metadata: bytes = b""

    def SerializeToString(self) -> bytes:  # noqa: N802
        return bytes_field(1, self.tag.encode()) + bytes_field(2, self.run_metadata)

    @classmethod
    def FromString(cls, data: bytes) -> TaggedRunMetadata:  # noqa: N802
        found = {number: bytes(raw) for number, wire_type, raw in fields(data)
                 if number in (1, 2) and wire_type == wire.BYTES}
        return cls(found.get(1, b"").decode("utf-8"), found.get(2, b""))


@attrs.frozen
class Event:
    """One record of an event file. `summary` is a serialized `Summary` (None: not set)."""

    wall_time: float = 0.0
    step: int = 0
    file_version: str | None = None
    graph_def: bytes | None = None
    summary: bytes | None = None
    tagged_run_metadata: TaggedRunMetadata | None = None
    meta_graph_def: bytes | None = None

    def SerializeToString(self) -> bytes:  # noqa: N802
        out = double_field(1, self.wall_time) + int64_field(2, self.step)
        if self.file_version is not None:
            out += bytes_field(3, self.file_version.encode(), always=True)
        if self.graph_def is not None:
            out += bytes_field(4, self.graph_def, always=True)
        if self.summary is not None:
            out += bytes_field(5, self.summary, always=True)
        if self.tagged_run_metadata is not None:
            out += bytes_field(8, self.tagged_run_metadata.SerializeToString(), always=True)
        if self.meta_graph_def is not None:
            out += bytes_field(9, self.meta_graph_def, always=True)
        return out

    @classmethod
    def FromString(cls, data: bytes) -> Event:  # noqa: N802
        found: dict[str, Any] = {}
        for number, wire_type, raw in fields(data):
            if number == 1:
                found["wall_time"] = _double(wire_type, raw)
            elif number == 2 and wire_type == wire.VARINT:
                found["step"] = wire.signed64(raw)
            elif number == 3 and wire_type == wire.BYTES:
                found["file_version"] = raw.decode("utf-8")
            elif number == 4 and wire_type == wire.BYTES:
                found["graph_def"] = bytes(raw)
            elif number == 5 and wire_type == wire.BYTES:
                found["summary"] = bytes(raw)
            elif number == 8 and wire_type == wire.BYTES:
                found["tagged_run_metadata"] = TaggedRunMetadata.FromString(raw)
            elif number == 9 and wire_type == wire.BYTES:
                found["meta_graph_def"] = bytes(raw)
        return cls(**found)
