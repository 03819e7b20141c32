"""The protobuf messages of TF's TensorBundle index, coded by the ``protobuf`` package.

Contract: `BundleHeaderProto`, `BundleEntryProto`, `TensorShapeProto`, `TensorSliceProto` and
`VersionDef` are protobuf message classes with TF's field names and numbers (proto3), so their
bytes are TF's: ``BundleHeaderProto`` {num_shards = 1, endianness = 2 (LITTLE = 0, BIG = 1),
version = 3}; ``VersionDef`` {producer = 1, min_consumer = 2, bad_consumers = 3};
``BundleEntryProto`` {dtype = 1, shape = 2, shard_id = 3, offset = 4, size = 5, crc32c = 6
(fixed32), slices = 7}; ``TensorShapeProto`` {dim = 2 {size = 1, name = 2}, unknown_rank = 3};
``TensorSliceProto`` {extent = 1 {start = 1, length = 2 (in a oneof, so a length of 0 is still
set)}}. ``dtype`` is TF's ``DataType`` number (an open enum: numbers tensorweave has no dtype
for read back unchanged). The descriptors are built here, in a pool of their own, so they never
clash with another definition of the same TF messages in the process.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["BundleEntryProto", "BundleHeaderProto", "TensorShapeProto", "TensorSliceProto",
           "VersionDef"]

_F = descriptor_pb2.FieldDescriptorProto
_OPTIONAL, _REPEATED = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
_SCALARS = {"int32": _F.TYPE_INT32, "int64": _F.TYPE_INT64, "fixed32": _F.TYPE_FIXED32,
            "bool": _F.TYPE_BOOL, "string": _F.TYPE_STRING}
_PACKAGE = "tensorflow"


def _message(parent: descriptor_pb2.FileDescriptorProto | descriptor_pb2.DescriptorProto,
             name: str, *fields: tuple[str, int, str, bool]) -> descriptor_pb2.DescriptorProto:
    """Add message `name` with ``(name, number, type, repeated)`` fields; a type that is not a
    scalar names a message or enum (``.tensorflow.X``)."""
    message = (parent.message_type if isinstance(parent, descriptor_pb2.FileDescriptorProto)
               else parent.nested_type).add(name=name)
    for field_name, number, kind, repeated in fields:
        field = message.field.add(name=field_name, number=number,
                                  label=_REPEATED if repeated else _OPTIONAL)
        if kind in _SCALARS:
            field.type = _SCALARS[kind]
        else:
            field.type = _F.TYPE_ENUM if kind.endswith(("DataType", "Endianness")) \
                else _F.TYPE_MESSAGE
            field.type_name = kind
    return message


def _file() -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(name="tensorweave/tensor_bundle.proto",
                                               package=_PACKAGE, syntax="proto3")
    data_type = proto.enum_type.add(name="DataType")
    for name, number in (("DT_INVALID", 0), ("DT_FLOAT", 1), ("DT_DOUBLE", 2), ("DT_INT32", 3),
                         ("DT_UINT8", 4), ("DT_INT16", 5), ("DT_INT8", 6), ("DT_STRING", 7),
                         ("DT_COMPLEX64", 8), ("DT_INT64", 9), ("DT_BOOL", 10),
                         ("DT_BFLOAT16", 14), ("DT_UINT16", 17), ("DT_COMPLEX128", 18),
                         ("DT_HALF", 19), ("DT_RESOURCE", 20), ("DT_VARIANT", 21),
                         ("DT_UINT32", 22), ("DT_UINT64", 23)):
        data_type.value.add(name=name, number=number)
    shape = _message(proto, "TensorShapeProto",
                     ("dim", 2, ".tensorflow.TensorShapeProto.Dim", True),
                     ("unknown_rank", 3, "bool", False))
    _message(shape, "Dim", ("size", 1, "int64", False), ("name", 2, "string", False))
    slice_proto = _message(proto, "TensorSliceProto",
                           ("extent", 1, ".tensorflow.TensorSliceProto.Extent", True))
    extent = _message(slice_proto, "Extent", ("start", 1, "int64", False),
                      ("length", 2, "int64", False))
    extent.oneof_decl.add(name="has_length")
    extent.field[1].oneof_index = 0
    _message(proto, "VersionDef", ("producer", 1, "int32", False),
             ("min_consumer", 2, "int32", False), ("bad_consumers", 3, "int32", True))
    header = _message(proto, "BundleHeaderProto", ("num_shards", 1, "int32", False),
                      ("endianness", 2, ".tensorflow.BundleHeaderProto.Endianness", False),
                      ("version", 3, ".tensorflow.VersionDef", False))
    endianness = header.enum_type.add(name="Endianness")
    endianness.value.add(name="LITTLE", number=0)
    endianness.value.add(name="BIG", number=1)
    _message(proto, "BundleEntryProto", ("dtype", 1, ".tensorflow.DataType", False),
             ("shape", 2, ".tensorflow.TensorShapeProto", False),
             ("shard_id", 3, "int32", False), ("offset", 4, "int64", False),
             ("size", 5, "int64", False), ("crc32c", 6, "fixed32", False),
             ("slices", 7, ".tensorflow.TensorSliceProto", True))
    return proto


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_file())


def _class(name: str) -> type:
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{_PACKAGE}.{name}"))


TensorShapeProto = _class("TensorShapeProto")
TensorSliceProto = _class("TensorSliceProto")
VersionDef = _class("VersionDef")
BundleHeaderProto = _class("BundleHeaderProto")
BundleEntryProto = _class("BundleEntryProto")
