"""LevelDB's sorted string table, as TF's ``tensorflow/core/lib/io/table_builder`` and ``table``
write and read it (the ``.index`` file of a checkpoint is one).

Contract: `build_table(items)` gives the bytes of a table holding `items` (``(key, value)`` byte
pairs whose keys are strictly increasing, bytewise); `read_table(data, name)` gives the pairs of a
table's bytes back, in order. Any inconsistency of `data` (a bad magic number, a block handle
outside the file, a checksum mismatch, a malformed entry, keys out of order) raises
`DataLossError` naming `name`.

Layout: data blocks, then a (here empty) meta-index block, then an index block whose entries map a
key >= each data block's last key to that block's handle (varint64 offset and size), then a
48-byte footer: the two handles, zero padding to 40 bytes, the magic ``0xdb4775248b80fb57``
(little-endian). A block is its entries, each ``varint32 shared | varint32 non_shared | varint32
value_length | key[shared:] | value`` (the key shares its first `shared` bytes with the one
before), then the uint32 offsets of the restart points (entries stored with shared == 0, one
every 16 entries), then their count; it is followed by a 5-byte trailer: the compression type (0:
none, the only kind TF's checkpoints use) and the masked CRC32C of the block and that type byte.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator

from tensorweave.engine import errors
from tensorweave.formats import crc32c
from tensorweave.formats.varint import read_varint, varint

MAGIC = 0xDB4775248B80FB57
FOOTER_SIZE = 48
_HANDLES_SIZE = 40  # two handles of at most 10 + 10 varint bytes each
_BLOCK_SIZE = 256 << 10  # TF's table_options default
_RESTART_INTERVAL = 16
_NO_COMPRESSION = 0
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


def _shared_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class _BlockBuilder:
    def __init__(self, restart_interval: int) -> None:
        self._interval = restart_interval
        self.parts: list[bytes] = []
        self.size = 0
        self._restarts = [0]
        self._count = 0
        self._last = b""

    def add(self, key: bytes, value: bytes) -> None:
        if self._count == self._interval:
            self._restarts.append(self.size)
            self._count, self._last = 0, b""
        shared = _shared_prefix(self._last, key)
        entry = b"".join((varint(shared), varint(len(key) - shared),
                          varint(len(value)), key[shared:], value))
        self.parts.append(entry)
        self.size += len(entry)
        self._count += 1
        self._last = key

    @property
    def estimated_size(self) -> int:
        return self.size + 4 * len(self._restarts) + 4

    def finish(self) -> bytes:
        restarts = b"".join(_U32.pack(r) for r in self._restarts)
        return b"".join(self.parts) + restarts + _U32.pack(len(self._restarts))


def _handle(offset: int, size: int) -> bytes:
    return varint(offset) + varint(size)


def _separator(start: bytes, limit: bytes) -> bytes:
    """A short key in [start, limit): LevelDB's bytewise ``FindShortestSeparator``."""
    diff = _shared_prefix(start, limit)
    if diff < min(len(start), len(limit)):
        byte = start[diff]
        if byte < 0xFF and byte + 1 < limit[diff]:
            return start[:diff] + bytes([byte + 1])
    return start


def _successor(key: bytes) -> bytes:
    """A short key >= `key`: LevelDB's bytewise ``FindShortSuccessor``."""
    for i, byte in enumerate(key):
        if byte != 0xFF:
            return key[:i] + bytes([byte + 1])
    return key


def build_table(items: Iterable[tuple[bytes, bytes]]) -> bytes:
    """The table holding `items` (byte for byte what TF's ``TableBuilder`` writes without
    compression); `ValueError` if the keys are not strictly increasing."""
    out: list[bytes] = []
    offset = 0
    index = _BlockBuilder(restart_interval=1)

    def write_block(contents: bytes) -> bytes:
        nonlocal offset
        handle = _handle(offset, len(contents))
        trailer = bytes([_NO_COMPRESSION])
        out.extend((contents, trailer, _U32.pack(crc32c.mask(crc32c.extend(
            crc32c.value(contents), trailer)))))
        offset += len(contents) + 5
        return handle

    block = _BlockBuilder(_RESTART_INTERVAL)
    last: bytes | None = None
    pending: bytes | None = None  # a written block's handle, indexed once the next key is known
    for key, value in items:
        if last is not None and key <= last:
            raise ValueError(f"table keys must be strictly increasing: {key!r} after {last!r}")
        if pending is not None:
            index.add(_separator(last, key), pending)
            pending = None
        block.add(key, value)
        last = key
        if block.estimated_size >= _BLOCK_SIZE:
            pending = write_block(block.finish())
            block = _BlockBuilder(_RESTART_INTERVAL)
    if block.parts:
        pending = write_block(block.finish())
    if pending is not None:
        index.add(_successor(last), pending)
    meta_handle = write_block(_BlockBuilder(_RESTART_INTERVAL).finish())
    index_handle = write_block(index.finish())
    handles = meta_handle + index_handle
    out.append(handles + bytes(_HANDLES_SIZE - len(handles)) + _U64.pack(MAGIC))
    return b"".join(out)


class _CorruptError(Exception):
    """A structural error found while decoding; `read_table` names the file."""


def _read_handle(data: bytes | memoryview, pos: int) -> tuple[int, int, int]:
    """The offset and size of the block handle at `pos` of `data`, and the position after it;
    an overlong varint (which TF never writes) is corruption too."""
    start = pos
    offset, pos = read_varint(data, pos, len(data))
    size, pos = read_varint(data, pos, len(data))
    if bytes(data[start:pos]) != _handle(offset, size):
        raise _CorruptError("overlong block handle")
    return offset, size, pos


def _read_block(data: bytes, offset: int, size: int) -> memoryview:
    """The checked contents of the block at `offset` of `size` bytes."""
    end = offset + size + 5
    if end > len(data) - FOOTER_SIZE:
        raise _CorruptError(f"block at {offset} of size {size} lies outside the file "
                            "(truncated?)")
    contents, kind = memoryview(data)[offset:offset + size], data[offset + size]
    (stored,) = _U32.unpack_from(data, offset + size + 1)
    if crc32c.mask(crc32c.extend(crc32c.value(contents), bytes([kind]))) != stored:
        raise _CorruptError(f"block checksum mismatch at offset {offset}")
    if kind != _NO_COMPRESSION:
        raise _CorruptError(f"unsupported block compression type {kind}")
    return contents


def _block_entries(block: memoryview) -> Iterator[tuple[bytes, memoryview]]:
    if len(block) < 4:
        raise _CorruptError("block too short")
    (restarts,) = _U32.unpack_from(block, len(block) - 4)
    limit = len(block) - 4 - 4 * restarts
    if restarts < 1 or limit < 0:
        raise _CorruptError("bad restart count")
    pos, key = 0, b""
    while pos < limit:
        shared, pos = read_varint(block, pos, limit)
        non_shared, pos = read_varint(block, pos, limit)
        value_length, pos = read_varint(block, pos, limit)
        if shared > len(key) or pos + non_shared + value_length > limit:
            raise _CorruptError("bad block entry")
        key = key[:shared] + bytes(block[pos:pos + non_shared])
        pos += non_shared
        yield key, block[pos:pos + value_length]
        pos += value_length


def read_table(data: bytes, name: str) -> list[tuple[bytes, bytes]]:
    """Every ``(key, value)`` of the table `data` (the contents of file `name`), in order."""
    try:
        if len(data) < FOOTER_SIZE:
            raise _CorruptError("file too short to be a table")
        footer = memoryview(data)[len(data) - FOOTER_SIZE:]
        if _U64.unpack_from(footer, _HANDLES_SIZE)[0] != MAGIC:
            raise _CorruptError("not a table (bad magic number)")
        meta_offset, meta_size, pos = _read_handle(footer, 0)
        index_offset, index_size, pos = _read_handle(footer, pos)
        if any(footer[pos:_HANDLES_SIZE]):
            raise _CorruptError("footer padding is not zero")
        _read_block(data, meta_offset, meta_size)
        out: list[tuple[bytes, bytes]] = []
        for _, handle in _block_entries(_read_block(data, index_offset, index_size)):
            offset, size, end = _read_handle(handle, 0)
            if end != len(handle):
                raise _CorruptError("bad block handle")
            for key, value in _block_entries(_read_block(data, offset, size)):
                if out and key <= out[-1][0]:
                    raise _CorruptError("keys out of order")
                out.append((key, bytes(value)))
        return out
    except (_CorruptError, ValueError, struct.error, IndexError) as exc:
        raise errors.DataLossError(None, None, f"Unable to read table {name}: {exc}") from None
