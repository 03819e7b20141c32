"""TF's ``meta_graph.proto`` messages: `MetaGraphDef`, `MetaInfoDef`, `SaverDef` and
`CollectionDef`, binary and text (field numbers as TF's; see `tensorweave.train.meta_graph` for
exporting and importing them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from tensorweave.engine.graph.legacy_graph_def_proto import (
    GRAPH_DEF_SCHEMA,
    GraphDef,
    parse_attr,
    parse_graph_def,
)
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

CHECKPOINT_V2 = 2  # SaverDef.CheckpointFormatVersion.V2
_KINDS = ("node_list", "bytes_list", "int64_list", "float_list", "any_list")
_CHECKPOINT_VERSIONS = {0: "LEGACY", 1: "V1", 2: "V2"}

_TF = "tensorflow."
META_GRAPH_SCHEMA: text_format.Schema = {
    **GRAPH_DEF_SCHEMA,
    _TF + "MetaGraphDef": text_format.fields(
        meta_info_def=(1, _TF + "MetaGraphDef.MetaInfoDef"), graph_def=(2, _TF + "GraphDef"),
        saver_def=(3, _TF + "SaverDef"),
        collection_def=(4, _TF + "MetaGraphDef.CollectionDefEntry")),
    _TF + "MetaGraphDef.MetaInfoDef": text_format.fields(
        meta_graph_version=(1, "string"), tags=(4, "string"), tensorflow_version=(5, "string"),
        tensorflow_git_version=(6, "string"), stripped_default_attrs=(7, "bool")),
    _TF + "SaverDef": text_format.fields(
        filename_tensor_name=(1, "string"), save_tensor_name=(2, "string"),
        restore_op_name=(3, "string"), max_to_keep=(4, "int"), sharded=(5, "bool"),
        keep_checkpoint_every_n_hours=(6, "float"), version=(7, "enum", _CHECKPOINT_VERSIONS)),
    _TF + "MetaGraphDef.CollectionDefEntry": text_format.fields(
        key=(1, "string"), value=(2, _TF + "CollectionDef")),
    _TF + "CollectionDef": text_format.fields(
        node_list=(1, _TF + "CollectionDef.NodeList"),
        bytes_list=(2, _TF + "CollectionDef.BytesList"),
        int64_list=(3, _TF + "CollectionDef.Int64List"),
        float_list=(4, _TF + "CollectionDef.FloatList")),
    _TF + "CollectionDef.NodeList": text_format.fields(value=(1, "string")),
    _TF + "CollectionDef.BytesList": text_format.fields(value=(1, "bytes")),
    _TF + "CollectionDef.Int64List": text_format.fields(value=(1, "int")),
    _TF + "CollectionDef.FloatList": text_format.fields(value=(1, "float")),
}


def meta_graph_fields(data: bytes, what: str) -> Iterable[tuple[int, int, Any]]:
    return message_fields(data, "MetaGraphDef", what)


def string_fields(*pairs: tuple[str, int, str]) -> Message:
    return [Field(name, number, "string", value) for name, number, value in pairs if value]


@attrs.define
class MetaInfoDef:
    meta_graph_version: str = ""
    tags: list[str] = attrs.field(factory=list)
    tensorflow_version: str = ""
    tensorflow_git_version: str = ""
    stripped_default_attrs: bool = False
    # the producer's ``stripped_op_list`` (field 2) as ``{op: {attr: default}}``: read, so a
    # newer producer's attrs at their defaults import (TF's forward compatibility); not written
    stripped_op_list: dict[str, dict[str, Any]] = attrs.field(factory=dict)

    def message(self) -> Message:
        out = string_fields(("meta_graph_version", 1, self.meta_graph_version))
        out += [Field("tags", 4, "string", t) for t in self.tags]
        out += string_fields(("tensorflow_version", 5, self.tensorflow_version),
                        ("tensorflow_git_version", 6, self.tensorflow_git_version))
        if self.stripped_default_attrs:
            out.append(Field("stripped_default_attrs", 7, "bool", True))
        return out

    @classmethod
    def parse(cls, data: bytes) -> MetaInfoDef:
        out = cls()
        for number, wire_type, raw in meta_graph_fields(data, "meta_info_def"):
            if number == 1:
                out.meta_graph_version = read_string(wire_type, raw, "meta_graph_version")
            elif number == 2:
                out.stripped_op_list = _op_defaults(read_bytes(wire_type, raw, "stripped_op_list"))
            elif number == 4:
                out.tags.append(read_string(wire_type, raw, "tags"))
            elif number == 5:
                out.tensorflow_version = read_string(wire_type, raw, "tensorflow_version")
            elif number == 6:
                out.tensorflow_git_version = read_string(wire_type, raw,
                                                         "tensorflow_git_version")
            elif number == 7:
                out.stripped_default_attrs = read_bool(wire_type, raw, "stripped_default_attrs")
        return out


def _no_function(name: str) -> Any:
    raise ValueError(f"stripped_op_list: an attr default names function {name!r}")


def _op_defaults(data: bytes) -> dict[str, dict[str, Any]]:
    """``OpList { repeated OpDef op = 1; }``, ``OpDef { string name = 1; repeated AttrDef attr =
    4; }``, ``AttrDef { string name = 1; AttrValue default_value = 3; }``: each op's attr
    defaults (attrs without one left out)."""
    out: dict[str, dict[str, Any]] = {}
    for number, wire_type, raw in meta_graph_fields(data, "OpList"):
        if number != 1:
            continue
        name, defaults = "", {}
        for n, wt, r in meta_graph_fields(read_bytes(wire_type, raw, "OpDef"), "OpDef"):
            if n == 1:
                name = read_string(wt, r, "OpDef.name")
            elif n == 4:
                attr_name, default, has_default = "", None, False
                for an, awt, ar in meta_graph_fields(read_bytes(wt, r, "AttrDef"), "AttrDef"):
                    if an == 1:
                        attr_name = read_string(awt, ar, "AttrDef.name")
                    elif an == 3:
                        default = parse_attr(read_bytes(awt, ar, "AttrDef.default_value"),
                                             _no_function, what="AttrDef.default_value")
                        has_default = True
                if has_default:
                    defaults[attr_name] = default
        out[name] = defaults
    return out


@attrs.define
class SaverDef:
    filename_tensor_name: str = ""
    save_tensor_name: str = ""
    restore_op_name: str = ""
    max_to_keep: int = 0
    sharded: bool = False
    keep_checkpoint_every_n_hours: float = 0.0
    version: int = CHECKPOINT_V2

    def message(self) -> Message:
        out = string_fields(("filename_tensor_name", 1, self.filename_tensor_name),
                       ("save_tensor_name", 2, self.save_tensor_name),
                       ("restore_op_name", 3, self.restore_op_name))
        if self.max_to_keep:
            out.append(Field("max_to_keep", 4, "int", self.max_to_keep))
        if self.sharded:
            out.append(Field("sharded", 5, "bool", True))
        if self.keep_checkpoint_every_n_hours:
            out.append(Field("keep_checkpoint_every_n_hours", 6, "float",
                             self.keep_checkpoint_every_n_hours))
        if self.version:
            out.append(Field("version", 7, "enum", self.version, _CHECKPOINT_VERSIONS))
        return out

    @classmethod
    def parse(cls, data: bytes) -> SaverDef:
        found: dict[str, Any] = {"version": 0}
        names = {1: "filename_tensor_name", 2: "save_tensor_name", 3: "restore_op_name"}
        for number, wire_type, raw in meta_graph_fields(data, "saver_def"):
            if number in names:
                found[names[number]] = read_string(wire_type, raw, names[number])
            elif number == 4:
                found["max_to_keep"] = read_int(wire_type, raw, "max_to_keep")
            elif number == 5:
                found["sharded"] = read_bool(wire_type, raw, "sharded")
            elif number == 6:
                found["keep_checkpoint_every_n_hours"] = read_float(wire_type, raw,
                                                                    "keep_checkpoint_hours")
            elif number == 7:
                found["version"] = read_int(wire_type, raw, "version")
        return cls(**found)


@attrs.define
class ValueList:
    """``CollectionDef.NodeList`` / ``BytesList`` / ``Int64List`` / ``FloatList``."""

    value: list[Any] = attrs.field(factory=list)


@attrs.define
class CollectionDef:
    """One collection: exactly one of the lists is set."""

    node_list: ValueList | None = None
    bytes_list: ValueList | None = None
    int64_list: ValueList | None = None
    float_list: ValueList | None = None
    any_list: ValueList | None = None  # each value the bytes of one ``google.protobuf.Any``

    @property
    def kind(self) -> str | None:
        return next((k for k in _KINDS if getattr(self, k) is not None), None)

    def message(self) -> Message:
        kind = self.kind
        if kind is None:
            return []
        values = getattr(self, kind).value
        number = _KINDS.index(kind) + 1
        if kind == "node_list":
            body = [Field("value", 1, "string", v) for v in values]
        elif kind in ("bytes_list", "any_list"):
            body = [Field("value", 1, "bytes", v) for v in values]
        else:
            body = [Field("value", 1, "packed_int" if kind == "int64_list" else "packed_float",
                          values)] if values else []
        return [Field(kind, number, "message", body)]

    @classmethod
    def parse(cls, data: bytes, what: str) -> CollectionDef:
        out = cls()
        for number, wire_type, raw in meta_graph_fields(data, what):
            if not 1 <= number <= len(_KINDS):
                continue
            kind = _KINDS[number - 1]
            values: list[Any] = []
            for n, wt, r in meta_graph_fields(read_bytes(wire_type, raw, what), what):
                if n != 1:
                    continue
                if kind == "node_list":
                    values.append(read_string(wt, r, what))
                elif kind in ("bytes_list", "any_list"):
                    values.append(read_bytes(wt, r, what))
                else:
                    values += read_repeated(wt, r, "int" if kind == "int64_list" else "float",
                                            what)
            for other in _KINDS:  # a oneof: the last member set wins
                setattr(out, other, None)
            setattr(out, kind, ValueList(values))
        return out


@attrs.define
class MetaGraphDef:
    """TF's ``MetaGraphDef``; see the module docstring."""

    meta_info_def: MetaInfoDef = attrs.field(factory=MetaInfoDef)
    graph_def: GraphDef = attrs.field(factory=GraphDef)
    saver_def: SaverDef | None = None
    collection_def: dict[str, CollectionDef] = attrs.field(factory=dict)

    TEXT_SCHEMA = (META_GRAPH_SCHEMA, "tensorflow.MetaGraphDef")  # text_format.Merge reads by it

    def _message(self) -> Message:
        from tensorweave.engine.graph.legacy_graph_def_proto import graph_def_message

        out = [Field("meta_info_def", 1, "message", self.meta_info_def.message()),
               Field("graph_def", 2, "message", graph_def_message(self.graph_def))]
        if self.saver_def is not None:
            out.append(Field("saver_def", 3, "message", self.saver_def.message()))
        out += [Field("collection_def", 4, "message", [
            Field("key", 1, "string", key),
            Field("value", 2, "message", self.collection_def[key].message())])
            for key in sorted(self.collection_def)]
        return out

    def SerializeToString(self, deterministic: bool = True) -> bytes:  # noqa: N802, ARG002
        return to_binary(self._message())

    def __str__(self) -> str:
        return to_text(self._message())

    def ParseFromString(self, data: bytes) -> int:  # noqa: N802 - protobuf's name
        parsed = self.FromString(data)
        for field in attrs.fields(MetaGraphDef):
            setattr(self, field.name, getattr(parsed, field.name))
        return len(data)

    @classmethod
    def FromString(cls, data: bytes) -> MetaGraphDef:  # noqa: N802
        parts: dict[int, bytes] = {1: b"", 2: b"", 3: b""}
        seen: set[int] = set()
        collections: dict[str, CollectionDef] = {}
        for number, wire_type, raw in meta_graph_fields(data, "MetaGraphDef"):
            if number in parts:
                parts[number] += read_bytes(wire_type, raw, f"field {number}")
                seen.add(number)
            elif number == 4:
                entry = read_bytes(wire_type, raw, "collection_def")
                key, value = read_map_entry(meta_graph_fields(entry, "collection_def"),
                                            "collection_def")
                collections[key] = CollectionDef.parse(value, f"collection '{key}'")
        return cls(meta_info_def=MetaInfoDef.parse(parts[1]),
                   graph_def=parse_graph_def(parts[2]),
                   saver_def=SaverDef.parse(parts[3]) if 3 in seen else None,
                   collection_def=collections)
