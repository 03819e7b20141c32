"""TF's V2 checkpoint format, TensorBundle (``tensorflow/core/util/tensor_bundle``).

A checkpoint with prefix ``P`` is ``P.index`` plus data files ``P.data-00000-of-0000N``. The index
is a `tensorweave.formats.table` whose first key, ``b""``, holds the ``BundleHeaderProto``
(num_shards = 1, endianness = 2 (0: little), version = 3 {producer = 1}) and whose other keys
hold one ``BundleEntryProto`` each: dtype = 1 (TF's ``DataType``), shape = 2
(``TensorShapeProto``: dim = 2 {size = 1}), shard_id = 3, offset = 4, size = 5, crc32c = 6
(fixed32, masked CRC32C of the bytes), slices = 7 (``TensorSliceProto``: extent = 1 {start = 1,
length = 2}, an extent without a length spanning the whole dimension). The messages are coded
by the ``protobuf`` package (`tensorweave.formats.tensor_bundle_proto`).

A tensor's bytes are its elements in C order, little-endian, at `offset` of data file
`shard_id`. A string tensor's bytes are each element's length as a varint64, the masked CRC32C
of the lengths (each taken as a little-endian uint32, uint64 past 2**32 - 1), then the elements'
bytes; its entry's crc32c is that CRC extended over the length checksum and the elements.
A partitioned tensor saved in slices has an entry under its own name with the full shape and
the `slices` but no data, and one entry per slice under `slice_key(name, slice)` (keys starting
with ``b"\\x00"``, which no variable name does) holding that slice's data.

Contract: `write_bundle` writes a whole checkpoint, one data file per shard, atomically per file
(see there). Underneath, `BundleWriter` writes one data file and collects its entries and
`write_index` writes the index of the merged entries of all shards (TF's
``MergeV2Checkpoints``). `BundleReader` reads a checkpoint by prefix: a missing index or data
file is `NotFoundError`; anything else inconsistent (a truncated or corrupted file, a checksum
mismatch, a malformed entry) is `DataLossError` naming the file, and a dtype tensorweave lacks
(bfloat16, resource, ...) is `UnimplementedError` naming the tensor.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterable, Mapping
from typing import Any, BinaryIO

import attrs
import numpy as np
from google.protobuf.message import DecodeError

from tensorweave.engine import dtypes, errors
from tensorweave.formats import atomic_file, crc32c
from tensorweave.formats.table import build_table, read_table
from tensorweave.formats.tensor_bundle_proto import (
    BundleEntryProto,
    BundleHeaderProto,
    TensorShapeProto,
    TensorSliceProto,
    VersionDef,
)
from tensorweave.formats.varint import read_varint, varint

__all__ = [
    "BundleEntry", "BundleReader", "BundleWriter", "DATA_TYPES", "Extent", "SavedTensor",
    "data_path", "index_path", "slice_key", "write_bundle", "write_index",
]

# TF's DataType numbers (types.proto) of the dtypes a checkpoint can hold
DATA_TYPES: dict[dtypes.DType, int] = {
    d: number for d, number in dtypes.DATA_TYPE_ENUMS.items() if d != dtypes.resource}
_BY_CODE = {code: dtype for dtype, code in DATA_TYPES.items()}
_STRING = DATA_TYPES[dtypes.string]
_VERSION = 1  # TF's kTensorBundleVersion
_U32 = struct.Struct("<I")
FULL = -1  # an extent's length when it spans its whole dimension (TF's kFullExtent)


def index_path(prefix: str) -> str:
    return f"{prefix}.index"


def data_path(prefix: str, shard_id: int, num_shards: int) -> str:
    return f"{prefix}.data-{shard_id:05d}-of-{num_shards:05d}"


@attrs.frozen
class Extent:
    """One dimension of a slice: `length` elements from `start`, or all of it (`FULL`)."""

    start: int = 0
    length: int = FULL

    def indices(self) -> slice:
        return slice(None) if self.length == FULL else slice(self.start,
                                                             self.start + self.length)


# -- OrderedCode, for slice keys (tensorflow/core/lib/strings/ordered_code.cc) ----------------


def _num_increasing(value: int) -> bytes:
    """A length byte then the big-endian bytes of a non-negative int."""
    data = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return bytes([len(data)]) + data


def _string_increasing(value: bytes) -> bytes:
    """Each 0x00 as 0x00 0xff and each 0xff as 0xff 0x00, then the terminator 0x00 0x01."""
    out = bytearray()
    for byte in value:
        out += b"\x00\xff" if byte == 0 else b"\xff\x00" if byte == 0xFF else bytes([byte])
    return bytes(out + b"\x00\x01")


def _signed_increasing(value: int) -> bytes:
    """OrderedCode's ``WriteSignedNumIncreasing``: n bytes of two's complement whose first
    bits hold n in unary (so the order of the bytes is the order of the numbers)."""
    magnitude = ~value if value < 0 else value
    length = magnitude.bit_length() // 7 + 1
    data = bytearray(value.to_bytes(length, "big", signed=True))
    header = (0xFFFF << (16 - length)) & 0xFFFF
    data[0] ^= header >> 8
    if length > 1:
        data[1] ^= header & 0xFF
    return bytes(data)


def slice_key(name: str, extents: Iterable[Extent]) -> bytes:
    """The key of one slice's entry (TF's ``EncodeTensorNameSlice``)."""
    extents = tuple(extents)
    parts = [_num_increasing(0), _string_increasing(name.encode()), _num_increasing(len(extents))]
    for extent in extents:
        parts += [_signed_increasing(extent.start), _signed_increasing(extent.length)]
    return b"".join(parts)


# -- messages ---------------------------------------------------------------------------------


@attrs.frozen
class BundleEntry:
    """A ``BundleEntryProto``: `dtype` is TF's ``DataType`` number, `crc32c` the stored (masked)
    checksum, `slices` the extents of each saved slice of a sliced tensor."""

    dtype: int
    shape: tuple[int, ...]
    shard_id: int = 0
    offset: int = 0
    size: int = 0
    crc32c: int = 0
    slices: tuple[tuple[Extent, ...], ...] = ()

    def encode(self) -> bytes:
        proto = BundleEntryProto(dtype=self.dtype, shard_id=self.shard_id, offset=self.offset,
                                 size=self.size, crc32c=self.crc32c)
        proto.shape.SetInParent()  # TF writes the shape of a scalar too (as an empty message)
        proto.shape.dim.extend(TensorShapeProto.Dim(size=d) for d in self.shape)
        for extents in self.slices:
            proto.slices.add().extent.extend(
                TensorSliceProto.Extent() if e.length == FULL
                else TensorSliceProto.Extent(start=e.start, length=e.length) for e in extents)
        return proto.SerializeToString()

    @classmethod
    def decode(cls, data: bytes) -> BundleEntry:
        """`ValueError` for malformed bytes."""
        try:
            proto = BundleEntryProto.FromString(data)
        except DecodeError as exc:
            raise ValueError(str(exc)) from None
        entry = cls(dtype=proto.dtype, shape=tuple(d.size for d in proto.shape.dim),
                    shard_id=proto.shard_id, offset=proto.offset, size=proto.size,
                    crc32c=proto.crc32c, slices=tuple(
                        tuple(Extent(e.start, e.length if e.HasField("length") else FULL)
                              for e in s.extent) for s in proto.slices))
        if entry.offset < 0 or entry.size < 0 or any(d < 0 for d in entry.shape):
            raise ValueError("negative offset, size or dimension")
        return entry


def _header_bytes(num_shards: int) -> bytes:
    return BundleHeaderProto(num_shards=num_shards,
                             version=VersionDef(producer=_VERSION)).SerializeToString()


# -- writing ----------------------------------------------------------------------------------


def _little_endian(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    return array.astype(array.dtype.newbyteorder("<"), copy=False)


def _length_crc_bytes(length: int) -> bytes:
    """How TF checksums a string's length: as uint32, or uint64 past 2**32 - 1."""
    return struct.pack("<I" if length <= 0xFFFFFFFF else "<Q", length)


def _string_parts(array: np.ndarray) -> tuple[list[bytes], int]:
    """The bytes of a string tensor, and their CRC32C as TF computes it (over the lengths as
    fixed-size ints, not their varints)."""
    items = [item if isinstance(item, bytes) else str(item).encode()
             for item in array.reshape(-1)]
    lengths = b"".join(varint(len(item)) for item in items)
    crc = crc32c.value(b"".join(_length_crc_bytes(len(item)) for item in items))
    length_checksum = _U32.pack(crc32c.mask(crc))
    crc = crc32c.extend(crc, length_checksum)
    for item in items:
        crc = crc32c.extend(crc, item)
    return [lengths, length_checksum, *items], crc


def _dtype_code(array: np.ndarray, key: str) -> int:
    try:
        return DATA_TYPES[dtypes.as_dtype(array.dtype)]
    except (TypeError, KeyError):
        raise TypeError(f"Cannot save tensor {key!r} of dtype {array.dtype}") from None


class BundleWriter:
    """Writes data file `shard_id` to `path` (opened at once) and collects the entries of what
    it holds; `finish` flushes and fsyncs it and returns the entries by key."""

    def __init__(self, path: str, shard_id: int = 0) -> None:
        self._file: BinaryIO = open(path, "wb")  # closed by finish or abort
        self._shard_id = shard_id
        self._offset = 0
        self.entries: dict[bytes, BundleEntry] = {}

    def _write(self, parts: Iterable[Any]) -> int:
        size = 0
        for part in parts:
            size += self._file.write(memoryview(part).cast("B"))
        return size

    def add(self, key: str | bytes, array: Any) -> None:
        """Write the whole tensor `array` under `key`."""
        name = key.encode() if isinstance(key, str) else key
        if name in self.entries:
            raise ValueError(f"Tensor {key!r} is added twice")
        array = np.asarray(array)
        code = _dtype_code(array, repr(key))
        if code == _STRING:
            parts, crc = _string_parts(array.astype(object))
            size = self._write(parts)
        else:
            data = _little_endian(array).reshape(-1).view(np.uint8)
            size, crc = self._write([data]), crc32c.value(data)
        self.entries[name] = BundleEntry(code, tuple(array.shape), self._shard_id, self._offset,
                                         size, crc32c.mask(crc))
        self._offset += size

    def add_slice(self, key: str, full_shape: tuple[int, ...], extents: tuple[Extent, ...],
                  array: Any) -> None:
        """Write `array` as the slice `extents` of the tensor `key` of shape `full_shape`
        (a slice covering all of it is written as the whole tensor, as TF does)."""
        array = np.asarray(array)
        if tuple(array.shape) == tuple(full_shape):
            self.add(key, array)
            return
        self.add(slice_key(key, extents), array)
        full = self.entries.get(key.encode())
        code = _dtype_code(array, key)
        if full is not None and (full.dtype != code or full.shape != tuple(full_shape)):
            raise ValueError(f"Slices of {key!r} disagree on its dtype or shape")
        self.entries[key.encode()] = BundleEntry(
            code, tuple(full_shape), slices=(*(full.slices if full else ()), extents))

    def finish(self) -> dict[bytes, BundleEntry]:
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
        finally:
            self._file.close()
        return self.entries

    def abort(self) -> None:
        self._file.close()


def merge_entries(shards: Iterable[Mapping[bytes, BundleEntry]]) -> dict[bytes, BundleEntry]:
    """One index's entries from each shard's (a sliced tensor's slices gathered from all)."""
    merged: dict[bytes, BundleEntry] = {}
    for entries in shards:
        for key, entry in entries.items():
            seen = merged.get(key)
            if seen is None:
                merged[key] = entry
            elif seen.slices and entry.slices and (seen.dtype, seen.shape) == (entry.dtype,
                                                                              entry.shape):
                merged[key] = attrs.evolve(seen, slices=seen.slices + entry.slices)
            else:
                raise ValueError(f"Tensor {key!r} is saved by two shards")
    return merged


@attrs.frozen
class SavedTensor:
    """One tensor to save: `value` under `key`, or, with `full_shape`, as the slice `extents` of
    the tensor `key` of that shape."""

    key: str
    value: Any
    full_shape: tuple[int, ...] | None = None
    extents: tuple[Extent, ...] = ()


def write_bundle(prefix: str, shards: list[list[SavedTensor]]) -> None:
    """Write the checkpoint `prefix` with one data file per element of `shards`, atomically per
    file (`tensorweave.formats.atomic_file`): every file is written under a temporary name first,
    then the data files are renamed into place, the index last. An error before the renames
    leaves nothing of the new checkpoint."""
    num_shards = len(shards)
    temps: list[tuple[str, str]] = []
    try:
        entries = []
        for shard_id, tensors in enumerate(shards):
            final = data_path(prefix, shard_id, num_shards)
            temps.append((atomic_file.temp_path(final), final))
            writer = BundleWriter(temps[-1][0], shard_id)
            try:
                for t in tensors:
                    if t.full_shape is None:
                        writer.add(t.key, t.value)
                    else:
                        writer.add_slice(t.key, t.full_shape, t.extents, t.value)
            except BaseException:
                writer.abort()
                raise
            entries.append(writer.finish())
        final = index_path(prefix)
        temps.append((atomic_file.temp_path(final), final))
        write_index(temps[-1][0], merge_entries(entries), num_shards)
        atomic_file.replace_all(temps)
    except BaseException:
        for temp, _ in temps:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
        raise


def write_index(path: str, entries: Mapping[bytes, BundleEntry], num_shards: int) -> None:
    """Write (and fsync) the index of a checkpoint with `num_shards` data files to `path`."""
    items = [(b"", _header_bytes(num_shards))]
    items += [(key, entries[key].encode()) for key in sorted(entries)]
    with open(path, "wb") as f:
        f.write(build_table(items))
        f.flush()
        os.fsync(f.fileno())


# -- reading ----------------------------------------------------------------------------------


def _data_loss(path: str, detail: str) -> errors.DataLossError:
    return errors.DataLossError(None, None, f"Unable to read checkpoint file {path}: {detail}")


def _read_file(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"Checkpoint file {path} not found") from None


class BundleReader:
    """The checkpoint with prefix `prefix`; its index is read at once, data when asked for."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._index = index_path(prefix)
        items = read_table(_read_file(self._index), self._index)
        if not items or items[0][0] != b"":
            raise _data_loss(self._index, "no header entry")
        try:
            header = BundleHeaderProto.FromString(items[0][1])
            self.entries = {key: BundleEntry.decode(value) for key, value in items[1:]}
        except (ValueError, DecodeError) as exc:
            raise _data_loss(self._index, f"malformed entry ({exc})") from None
        self.num_shards = header.num_shards
        if header.endianness != BundleHeaderProto.LITTLE:
            raise errors.UnimplementedError(None, None, f"Checkpoint {prefix} is big-endian")
        if header.version.min_consumer > _VERSION or _VERSION in header.version.bad_consumers:
            raise errors.UnimplementedError(
                None, None, f"Checkpoint {prefix} needs a newer TensorBundle reader (its "
                f"version is {header.version.producer}, min_consumer "
                f"{header.version.min_consumer})")
        for key, entry in self.entries.items():
            if not entry.slices and not 0 <= entry.shard_id < max(self.num_shards, 1):
                raise _data_loss(self._index, f"entry {key!r} names shard {entry.shard_id} of "
                                              f"{self.num_shards}")
        self._sizes: dict[int, int] = {}
        self._names = sorted(key.decode("utf-8", "replace") for key in self.entries
                             if not key.startswith(b"\x00"))

    def names(self) -> list[str]:
        """The names of the saved tensors (not the slices' own keys), sorted."""
        return list(self._names)

    def __contains__(self, name: str) -> bool:
        return not name.startswith("\x00") and name.encode() in self.entries

    def entry(self, name: str) -> BundleEntry:
        entry = self.entries.get(name.encode())
        if entry is None:
            raise errors.NotFoundError(None, None,
                                       f"Key {name} not found in checkpoint {self.prefix}")
        return entry

    def dtype(self, name: str) -> dtypes.DType:
        code = self.entry(name).dtype
        if code not in _BY_CODE:
            raise errors.UnimplementedError(
                None, None, f"Tensor {name} of checkpoint {self.prefix} has DataType {code}, "
                "which tensorweave does not have")
        return _BY_CODE[code]

    def shape(self, name: str) -> tuple[int, ...]:
        return self.entry(name).shape

    def read(self, name: str) -> np.ndarray:
        """The whole saved tensor `name` (a sliced one assembled from its slices)."""
        entry = self.entry(name)
        dtype = self.dtype(name)
        if not entry.slices:
            return self._read_entry(name, entry, dtype)
        full = np.empty(entry.shape, dtype=dtype.np_type)
        covered = 0
        for extents in entry.slices:
            key = slice_key(name, extents)
            part = self.entries.get(key)
            indices = tuple(e.indices() for e in extents)
            if part is None or len(extents) != len(entry.shape):
                raise _data_loss(self._index, f"slice {extents} of {name} has no entry")
            value = self._read_entry(name, part, dtype)
            try:
                full[indices] = value
            except ValueError:
                raise _data_loss(self._index, f"slice of {name} has shape {value.shape}, "
                                              f"its extents {extents} say otherwise") from None
            covered += value.size
        if covered != full.size:
            raise errors.NotFoundError(None, None, f"The slices of {name} in checkpoint "
                                                   f"{self.prefix} do not cover it")
        return full

    def read_slice(self, name: str, extents: tuple[Extent, ...]) -> np.ndarray:
        """The slice `extents` of the saved tensor `name`."""
        entry = self.entry(name)
        if extents in entry.slices:
            return self._read_entry(name, self.entries[slice_key(name, extents)],
                                    self.dtype(name))
        return self.read(name)[tuple(e.indices() for e in extents)]

    def _data_size(self, shard_id: int, path: str) -> int:
        if shard_id not in self._sizes:
            try:
                self._sizes[shard_id] = os.path.getsize(path)
            except FileNotFoundError:
                raise errors.NotFoundError(None, None,
                                           f"Checkpoint data file {path} not found") from None
        return self._sizes[shard_id]

    def _read_entry(self, name: str, entry: BundleEntry, dtype: dtypes.DType) -> np.ndarray:
        path = data_path(self.prefix, entry.shard_id, max(self.num_shards, 1))
        if entry.offset + entry.size > self._data_size(entry.shard_id, path):
            raise _data_loss(path, f"tensor {name} lies past the end of the file (truncated?)")
        buffer = np.empty(entry.size, dtype=np.uint8)
        with open(path, "rb") as f:
            f.seek(entry.offset)
            if f.readinto(memoryview(buffer)) != entry.size:
                raise _data_loss(path, f"tensor {name} is truncated")
        try:
            if dtype == dtypes.string:
                array, crc = _strings_of(buffer.tobytes(), entry.shape)
            else:
                array, crc = buffer.view(np.dtype(dtype.np_type).newbyteorder("<")), None
                array = array.reshape(entry.shape)
        except ValueError as exc:
            raise _data_loss(path, f"bad data of tensor {name} ({exc})") from None
        if crc32c.mask(crc32c.value(buffer) if crc is None else crc) != entry.crc32c:
            raise _data_loss(path, f"checksum mismatch in tensor {name} (corrupted file?)")
        return array.astype(array.dtype.newbyteorder("="), copy=False)


def _strings_of(data: bytes, shape: tuple[int, ...]) -> tuple[np.ndarray, int]:
    """A string tensor from its bytes and their CRC32C as TF computes it; `ValueError` if they
    do not hold exactly such a tensor."""
    count = int(np.prod(shape, dtype=np.int64))
    lengths, pos = [], 0
    for _ in range(count):
        length, pos = read_varint(data, pos, len(data))
        lengths.append(length)
    crc = crc32c.value(b"".join(_length_crc_bytes(n) for n in lengths))
    if pos + 4 > len(data) or _U32.unpack_from(data, pos)[0] != crc32c.mask(crc):
        raise ValueError("string lengths checksum mismatch")
    crc = crc32c.extend(crc, data[pos:pos + 4])
    pos += 4
    out = np.empty(count, dtype=object)
    for i, length in enumerate(lengths):
        out[i], pos = data[pos:pos + length], pos + length
        crc = crc32c.extend(crc, out[i])
    if pos != len(data):
        raise ValueError("string lengths do not add up to the data")
    return out.reshape(shape), crc
