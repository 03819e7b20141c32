"""The checkpoint file format, and atomic writes.

A checkpoint is one file (its path is the checkpoint's path, e.g. ``model.ckpt-100``)::

    magic     8 bytes   b"TWCKPT1\\n"
    length    8 bytes   little-endian uint64: size of the header
    header    length    UTF-8 JSON: {"tensors": [{"name", "dtype", "shape", "offset",
                        "nbytes", "crc32"}, ...]}
    data      ...       each tensor's bytes, C order, little-endian, at `offset` (counted from
                        the end of the header), with the zlib CRC-32 of those bytes

``dtype`` is a tensorweave dtype name (``float32``, ``int64``, ...). A ``string`` tensor's data
is each element in C order as a little-endian uint64 byte count then that many bytes (what a
lookup table or a dataset iterator saves). Nothing is pickled: reading a file never runs code.
`read_checkpoint` raises `DataLossError` for a truncated or corrupted
file and `NotFoundError` for a missing one.

`write_atomic` never leaves a partial file at its target: it writes a temporary file in the same
directory, fsyncs it, renames it over the target (``os.replace``, atomic on POSIX and Windows) and
fsyncs the directory; on any failure the temporary file is removed and the old target, if any, is
untouched. A crash at any point leaves either the old file or the complete new one.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import tempfile
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from tensorweave.engine import dtypes, errors

MAGIC = b"TWCKPT1\n"
_LENGTH = struct.Struct("<Q")
_CHUNK = 4 << 20  # write in bounded pieces, so no tensor is copied whole into a bytes object


def _little_endian(array: np.ndarray) -> np.ndarray:
    array = np.asarray(array, order="C")
    return array.astype(array.dtype.newbyteorder("<"), copy=False)


def _string_bytes(array: np.ndarray) -> bytes:
    parts = []
    for item in array.reshape(-1):
        data = item if isinstance(item, bytes) else str(item).encode()
        parts += [_LENGTH.pack(len(data)), data]
    return b"".join(parts)


def _strings_of(data: bytes, shape: list[int]) -> np.ndarray:
    """Inverse of `_string_bytes`; `ValueError` if `data` does not hold exactly them."""
    out, pos = np.empty(int(np.prod(shape, dtype=np.int64)), dtype=object), 0
    for i in range(out.size):
        (size,) = _LENGTH.unpack_from(data, pos)
        pos += _LENGTH.size
        if pos + size > len(data):
            raise ValueError("string data is truncated")
        out[i], pos = bytes(data[pos:pos + size]), pos + size
    if pos != len(data):
        raise ValueError("string data has trailing bytes")
    return out.reshape(shape)


def encode(tensors: dict[str, np.ndarray]) -> Iterator[bytes | memoryview]:
    """The file's bytes, in pieces."""
    entries, arrays, offset = [], [], 0
    for name in sorted(tensors):
        array = np.asarray(tensors[name])
        if array.dtype.kind in "OSU":  # a fetched string scalar may come back as bytes
            array = array.astype(object)
            data = memoryview(_string_bytes(array))
        else:
            array = _little_endian(array)
            data = memoryview(array.reshape(-1).view(np.uint8))
        entries.append({"name": name, "dtype": dtypes.as_dtype(array.dtype).name,
                        "shape": list(array.shape), "offset": offset, "nbytes": data.nbytes,
                        "crc32": zlib.crc32(data)})
        arrays.append(data)
        offset += data.nbytes
    header = json.dumps({"tensors": entries}, separators=(",", ":")).encode()
    yield MAGIC + _LENGTH.pack(len(header)) + header
    for data in arrays:
        for start in range(0, data.nbytes, _CHUNK):
            yield data[start:start + _CHUNK]


def write_atomic(path: str, chunks: Iterator[bytes | memoryview]) -> None:
    """Write `chunks` to `path` atomically; see the module docstring."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.",
                               suffix=".tmp")
    try:
        try:
            for chunk in chunks:
                view = memoryview(chunk)
                while view.nbytes:
                    view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: str) -> None:
    """Make the rename durable; directories cannot be opened for fsync on Windows."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_checkpoint(path: str, tensors: dict[str, np.ndarray]) -> None:
    write_atomic(path, encode(tensors))


def _corrupt(path: str, detail: str) -> errors.DataLossError:
    return errors.DataLossError(None, None, f"Unable to read checkpoint {path}: {detail}")


def read_index(path: str) -> tuple[list[dict[str, Any]], int, bytes]:
    """The header entries, the data offset and the file contents."""
    try:
        with open(path, "rb") as f:
            content = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"Checkpoint {path} not found") from None
    if not content.startswith(MAGIC) or len(content) < len(MAGIC) + _LENGTH.size:
        raise _corrupt(path, "not a tensorweave checkpoint (bad magic)")
    (length,) = _LENGTH.unpack_from(content, len(MAGIC))
    start = len(MAGIC) + _LENGTH.size
    if start + length > len(content):
        raise _corrupt(path, "truncated header")
    try:
        entries = json.loads(content[start:start + length])["tensors"]
    except (ValueError, KeyError, TypeError) as exc:
        raise _corrupt(path, f"bad header ({exc})") from None
    return entries, start + length, content


def read_checkpoint(path: str) -> dict[str, np.ndarray]:
    """Every tensor of the checkpoint at `path`, by name."""
    entries, base, content = read_index(path)
    out: dict[str, np.ndarray] = {}
    for entry in entries:
        begin, end = base + entry["offset"], base + entry["offset"] + entry["nbytes"]
        data = content[begin:end]
        if end > len(content) or zlib.crc32(data) != entry["crc32"]:
            raise _corrupt(path, f"data of tensor '{entry['name']}' is truncated or corrupted")
        if entry["dtype"] == "string":
            try:
                out[entry["name"]] = _strings_of(data, entry["shape"])
            except (ValueError, struct.error):
                raise _corrupt(path, f"bad string data of tensor '{entry['name']}'") from None
            continue
        dtype = np.dtype(dtypes.as_dtype(entry["dtype"]).np_type).newbyteorder("<")
        array = np.frombuffer(data, dtype=dtype).reshape(entry["shape"])
        out[entry["name"]] = array.astype(array.dtype.newbyteorder("="), copy=True)
    return out


def list_tensors(path: str) -> list[tuple[str, list[int]]]:
    """``(name, shape)`` of each tensor, sorted by name."""
    entries, _, _ = read_index(path)
    return sorted((e["name"], list(e["shape"])) for e in entries)
