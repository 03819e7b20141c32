"""TF's SavedModel protocol buffers, in TF's wire and text formats.

Contract: the classes below read and write TF's ``saved_model.proto`` and the SavedModel parts
of ``meta_graph.proto`` (field numbers as TF's):

    SavedModel   { int64 saved_model_schema_version = 1; repeated MetaGraphDef meta_graphs = 2; }
    MetaGraphDef { fields 1-4 as `tensorweave.formats.meta_graph_proto.MetaGraphDef`;
                   map<string, SignatureDef> signature_def = 5;
                   repeated AssetFileDef asset_file_def = 6; }
    SignatureDef { map<string, TensorInfo> inputs = 1; map<string, TensorInfo> outputs = 2;
                   string method_name = 3; }
    TensorInfo   { oneof encoding { string name = 1; CooSparse coo_sparse = 4; }
                   DataType dtype = 2; TensorShapeProto tensor_shape = 3; }
    CooSparse    { string values_tensor_name = 1; string indices_tensor_name = 2;
                   string dense_shape_tensor_name = 3; }
    AssetFileDef { TensorInfo tensor_info = 1; string filename = 2; }

TF's v1 builder also lists the assets in the ``saved_model_assets`` collection, an ``any_list`` of
``google.protobuf.Any { string type_url = 1; bytes value = 2; }`` each packing an
``AssetFileDef`` (`AssetFileDef.from_any`).

Each message has protobuf's entry points: ``SerializeToString()``, ``FromString(data)``,
``ParseFromString(data)`` and ``str(message)`` in text format. Maps are written sorted by key
(protobuf's deterministic order). In memory, a `TensorInfo`'s ``dtype`` is a `DType` and its
``tensor_shape`` a `TensorShape` (``None`` when unset), as tensorweave's `GraphDef` holds attrs.
Malformed bytes raise `ValueError` naming the field; parsing builds data only. Text format is
read with `tensorweave.engine.proto.text_format` (``text_format.Merge(text, SavedModel())``) by
``SAVED_MODEL_SCHEMA``.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable
from typing import Any, Self

import attrs

from tensorweave.engine import dtypes
from tensorweave.engine.graph.legacy_graph_def_proto import (
    DATA_TYPE_NAMES,
    DATA_TYPES,
    parse_dtype,
    parse_shape,
    shape_message,
)
from tensorweave.engine.proto import text_format
from tensorweave.engine.proto.message import (
    Field,
    Message,
    message_fields,
    read_bytes,
    read_int,
    read_map_entry,
    read_string,
    to_binary,
)
from tensorweave.engine.proto.message import to_text as _to_text
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.formats import meta_graph_proto as _meta_graph

__all__ = ["AssetFileDef", "CooSparse", "MetaGraphDef", "SavedModel", "SignatureDef",
           "TensorInfo"]


def _fields(data: Any, what: str) -> Iterable[tuple[int, int, Any]]:
    return message_fields(data, "SavedModel", what)


_TF = "tensorflow."
_TENSOR_INFO_ENTRY = text_format.fields(key=(1, "string"), value=(2, _TF + "TensorInfo"))
SAVED_MODEL_SCHEMA: text_format.Schema = {
    **_meta_graph.META_GRAPH_SCHEMA,
    _TF + "MetaGraphDef": {
        **_meta_graph.META_GRAPH_SCHEMA[_TF + "MetaGraphDef"],
        **text_format.fields(signature_def=(5, _TF + "MetaGraphDef.SignatureDefEntry"),
                             asset_file_def=(6, _TF + "AssetFileDef"))},
    _TF + "MetaGraphDef.SignatureDefEntry": text_format.fields(
        key=(1, "string"), value=(2, _TF + "SignatureDef")),
    _TF + "SignatureDef": text_format.fields(
        inputs=(1, _TF + "SignatureDef.InputsEntry"),
        outputs=(2, _TF + "SignatureDef.OutputsEntry"), method_name=(3, "string")),
    _TF + "SignatureDef.InputsEntry": _TENSOR_INFO_ENTRY,
    _TF + "SignatureDef.OutputsEntry": _TENSOR_INFO_ENTRY,
    _TF + "TensorInfo": text_format.fields(
        name=(1, "string"), dtype=(2, "enum", DATA_TYPE_NAMES),
        tensor_shape=(3, _TF + "TensorShapeProto"), coo_sparse=(4, _TF + "TensorInfo.CooSparse")),
    _TF + "TensorInfo.CooSparse": text_format.fields(
        values_tensor_name=(1, "string"), indices_tensor_name=(2, "string"),
        dense_shape_tensor_name=(3, "string")),
    _TF + "AssetFileDef": text_format.fields(tensor_info=(1, _TF + "TensorInfo"),
                                             filename=(2, "string")),
    _TF + "SavedModel": text_format.fields(saved_model_schema_version=(1, "int"),
                                           meta_graphs=(2, _TF + "MetaGraphDef")),
}


def _map_entries(entries: list[bytes], what: str) -> Iterable[tuple[str, bytes]]:
    return (read_map_entry(_fields(entry, what), what) for entry in entries)


def _map_message(name: str, number: int, items: dict[str, Any]) -> Message:
    return [Field(name, number, "message", [Field("key", 1, "string", key),
                                            Field("value", 2, "message", items[key].message())])
            for key in sorted(items)]


class _Proto(abc.ABC):
    """Protobuf's entry points over `message` and `parse`."""

    @abc.abstractmethod
    def message(self) -> Message:
        """The message's field tree (`tensorweave.engine.proto.message`)."""

    @classmethod
    @abc.abstractmethod
    def parse(cls, data: bytes) -> Self:
        """The message that `data` (wire format) holds."""

    def SerializeToString(self, deterministic: bool = True) -> bytes:  # noqa: N802, ARG002
        return to_binary(self.message())

    @classmethod
    def FromString(cls, data: bytes) -> Self:  # noqa: N802 - protobuf's name
        return cls.parse(data)

    def ParseFromString(self, data: bytes) -> int:  # noqa: N802
        parsed = self.parse(data)
        for field in attrs.fields(type(self)):
            setattr(self, field.name, getattr(parsed, field.name))
        return len(data)

    def __str__(self) -> str:
        return _to_text(self.message())


@attrs.define
class CooSparse(_Proto):
    """The three tensors of a `SparseTensor`, by name."""

    values_tensor_name: str = ""
    indices_tensor_name: str = ""
    dense_shape_tensor_name: str = ""

    def message(self) -> Message:
        return [Field(f.name, i, "string", getattr(self, f.name))
                for i, f in enumerate(attrs.fields(CooSparse), 1) if getattr(self, f.name)]

    @classmethod
    def parse(cls, data: bytes) -> CooSparse:
        names = [f.name for f in attrs.fields(CooSparse)]
        found = {}
        for number, wire_type, raw in _fields(data, "coo_sparse"):
            if 1 <= number <= 3:
                found[names[number - 1]] = read_string(wire_type, raw, names[number - 1])
        return cls(**found)


@attrs.define
class TensorInfo(_Proto):
    """A tensor of a signature: its name (or its sparse parts), dtype and static shape."""

    name: str = ""
    dtype: dtypes.DType | None = None
    tensor_shape: TensorShape | None = None
    coo_sparse: CooSparse | None = None

    def WhichOneof(self, oneof_group: str) -> str | None:  # noqa: N802 - protobuf's name
        if oneof_group != "encoding":
            raise ValueError(f'Protocol message has no "{oneof_group}" field.')
        if self.coo_sparse is not None:
            return "coo_sparse"
        return "name" if self.name else None

    def message(self) -> Message:
        out: Message = []
        encoding = self.WhichOneof("encoding")
        if encoding == "name":
            out.append(Field("name", 1, "string", self.name))
        if self.dtype is not None:
            code = DATA_TYPES.get(dtypes.as_dtype(self.dtype))
            if code is None:
                raise ValueError(f"dtype {self.dtype!r} has no TensorFlow DataType")
            out.append(Field("dtype", 2, "enum", code, DATA_TYPE_NAMES))
        if self.tensor_shape is not None:
            out.append(Field("tensor_shape", 3, "message",
                             shape_message(TensorShape(self.tensor_shape))))
        if encoding == "coo_sparse":
            out.append(Field("coo_sparse", 4, "message", self.coo_sparse.message()))
        return out

    @classmethod
    def parse(cls, data: bytes) -> TensorInfo:
        out = cls()
        for number, wire_type, raw in _fields(data, "TensorInfo"):
            if number == 1:  # a oneof: the last member set wins
                out.name, out.coo_sparse = read_string(wire_type, raw, "TensorInfo.name"), None
            elif number == 2:
                code = read_int(wire_type, raw, "TensorInfo.dtype")
                out.dtype = parse_dtype(code, "TensorInfo.dtype") if code else None
            elif number == 3:
                out.tensor_shape = parse_shape(read_bytes(wire_type, raw, "tensor_shape"),
                                               "TensorInfo.tensor_shape")
            elif number == 4:
                out.name = ""
                out.coo_sparse = CooSparse.parse(read_bytes(wire_type, raw, "coo_sparse"))
        return out


@attrs.define
class SignatureDef(_Proto):
    """A named computation of a meta graph: input and output tensors by key, and its method."""

    inputs: dict[str, TensorInfo] = attrs.field(factory=dict)
    outputs: dict[str, TensorInfo] = attrs.field(factory=dict)
    method_name: str = ""

    def message(self) -> Message:
        out = _map_message("inputs", 1, self.inputs) + _map_message("outputs", 2, self.outputs)
        if self.method_name:
            out.append(Field("method_name", 3, "string", self.method_name))
        return out

    @classmethod
    def parse(cls, data: bytes) -> SignatureDef:
        entries: dict[int, list[bytes]] = {1: [], 2: []}
        out = cls()
        for number, wire_type, raw in _fields(data, "SignatureDef"):
            if number in entries:
                entries[number].append(read_bytes(wire_type, raw, "SignatureDef map"))
            elif number == 3:
                out.method_name = read_string(wire_type, raw, "SignatureDef.method_name")
        out.inputs = {k: TensorInfo.parse(v) for k, v in _map_entries(entries[1], "inputs")}
        out.outputs = {k: TensorInfo.parse(v) for k, v in _map_entries(entries[2], "outputs")}
        return out


@attrs.define
class AssetFileDef(_Proto):
    """An asset: the graph tensor fed with its path at load time, and its file name under
    ``assets/``."""

    tensor_info: TensorInfo = attrs.field(factory=TensorInfo)
    filename: str = ""

    def message(self) -> Message:
        out = [Field("tensor_info", 1, "message", self.tensor_info.message())]
        if self.filename:
            out.append(Field("filename", 2, "string", self.filename))
        return out

    @classmethod
    def from_any(cls, data: bytes) -> AssetFileDef:
        """The `AssetFileDef` a ``google.protobuf.Any``'s bytes pack (`ValueError` for another
        type)."""
        type_url, value = "", b""
        for number, wire_type, raw in _fields(data, "Any"):
            if number == 1:
                type_url = read_string(wire_type, raw, "Any.type_url")
            elif number == 2:
                value = read_bytes(wire_type, raw, "Any.value")
        if type_url.rpartition("/")[2] != "tensorflow.AssetFileDef":
            raise ValueError(f"Expected an Any packing tensorflow.AssetFileDef, got {type_url!r}")
        return cls.parse(value)

    @classmethod
    def parse(cls, data: bytes) -> AssetFileDef:
        out = cls()
        for number, wire_type, raw in _fields(data, "AssetFileDef"):
            if number == 1:
                out.tensor_info = TensorInfo.parse(read_bytes(wire_type, raw, "tensor_info"))
            elif number == 2:
                out.filename = read_string(wire_type, raw, "AssetFileDef.filename")
        return out


@attrs.define
class MetaGraphDef(_meta_graph.MetaGraphDef):
    """TF's ``MetaGraphDef`` with its SavedModel fields: signatures and assets."""

    signature_def: dict[str, SignatureDef] = attrs.field(factory=dict)
    asset_file_def: list[AssetFileDef] = attrs.field(factory=list)

    TEXT_SCHEMA = (SAVED_MODEL_SCHEMA, "tensorflow.MetaGraphDef")  # text_format.Merge's

    @classmethod
    def from_meta_graph(cls, meta: _meta_graph.MetaGraphDef) -> MetaGraphDef:
        """`meta` (a plain meta graph, as `export_meta_graph` gives) with no signatures yet."""
        return cls(**{f.name: getattr(meta, f.name) for f in attrs.fields(type(meta))})

    def message(self) -> Message:
        return (self._message() + _map_message("signature_def", 5, self.signature_def)
                + [Field("asset_file_def", 6, "message", a.message())
                   for a in self.asset_file_def])

    def SerializeToString(self, deterministic: bool = True) -> bytes:  # noqa: N802, ARG002
        return to_binary(self.message())

    def __str__(self) -> str:
        return _to_text(self.message())

    def ParseFromString(self, data: bytes) -> int:  # noqa: N802
        parsed = self.FromString(data)
        for field in attrs.fields(MetaGraphDef):
            setattr(self, field.name, getattr(parsed, field.name))
        return len(data)

    @classmethod
    def FromString(cls, data: bytes) -> MetaGraphDef:  # noqa: N802
        out = cls.from_meta_graph(_meta_graph.MetaGraphDef.FromString(data))
        signatures: list[bytes] = []
        for number, wire_type, raw in _fields(data, "MetaGraphDef"):
            if number == 5:
                signatures.append(read_bytes(wire_type, raw, "signature_def"))
            elif number == 6:
                out.asset_file_def.append(
                    AssetFileDef.parse(read_bytes(wire_type, raw, "asset_file_def")))
        out.signature_def = {k: SignatureDef.parse(v)
                             for k, v in _map_entries(signatures, "signature_def")}
        return out


@attrs.define
class SavedModel(_Proto):
    """The ``saved_model.pb`` file: a schema version and meta graphs, each with its tags."""

    saved_model_schema_version: int = 0
    meta_graphs: list[MetaGraphDef] = attrs.field(factory=list)

    TEXT_SCHEMA = (SAVED_MODEL_SCHEMA, "tensorflow.SavedModel")  # text_format.Merge's

    def message(self) -> Message:
        out: Message = []
        if self.saved_model_schema_version:
            out.append(Field("saved_model_schema_version", 1, "int",
                             self.saved_model_schema_version))
        return out + [Field("meta_graphs", 2, "message", m.message()) for m in self.meta_graphs]

    @classmethod
    def parse(cls, data: bytes) -> SavedModel:
        out = cls()
        for number, wire_type, raw in _fields(data, "SavedModel"):
            if number == 1:
                out.saved_model_schema_version = read_int(wire_type, raw,
                                                          "saved_model_schema_version")
            elif number == 2:
                out.meta_graphs.append(
                    MetaGraphDef.FromString(read_bytes(wire_type, raw, "meta_graphs")))
        return out
