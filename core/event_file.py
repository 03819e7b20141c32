"""Event files: TFRecord framing with masked CRC32C, and a reader.

Contract: a TFRecord is ``length u64 | masked_crc32c(length bytes) u32 | data |
masked_crc32c(data) u32``, all little-endian; an event file is a sequence of records, each a
serialized `Event` (the first one carries ``file_version="brain.Event:2"``). `event_file_name`
names a new file as TF's ``EventsWriter`` does (``events.out.tfevents.<secs>.<host><suffix>``),
and `create_event_file` creates one without clobbering another.
`read_records` yields each record's data and raises `DataLossError` for a truncated record
or a CRC mismatch; `read_events` parses them as `Event`s. CRC32C (Castagnoli) is computed in pure
Python with a byte table: event files are small.
"""

from __future__ import annotations

import os
import socket
import struct
import time
from collections.abc import Iterator
from typing import BinaryIO

from tensorweave import errors
from tensorweave.summary_proto import Event

FILE_VERSION = "brain.Event:2"
_MASK_DELTA = 0xA282EAD8
_U64, _U32 = struct.Struct("<Q"), struct.Struct("<I")


def _table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1  # reflected Castagnoli
        table.append(crc)
    return tuple(table)


_TABLE = _table()


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    table = _TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC: rotated right by 15 bits plus a constant, so that a CRC stored
    inside CRC'd data does not weaken the check."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def encode_record(data: bytes) -> bytes:
    length = _U64.pack(len(data))
    return b"".join((length, _U32.pack(masked_crc32c(length)), data,
                     _U32.pack(masked_crc32c(data))))


def event_file_name(logdir: str, suffix: str | None = None, serial: int = 0) -> str:
    """TF's name for a new event file; a `serial` > 0 goes before the suffix."""
    return os.path.join(logdir, f"events.out.tfevents.{int(time.time()):010d}."
                                f"{socket.gethostname()}{f'.{serial}' if serial else ''}"
                                f"{suffix or ''}")


def create_event_file(logdir: str, suffix: str | None = None) -> tuple[str, BinaryIO]:
    """A new event file, opened for writing. Unlike TF1, which truncates a file of the same
    name (two writers in one second), an existing name gets a serial number instead."""
    serial = 0
    while True:
        path = event_file_name(logdir, suffix, serial)
        try:
            return path, open(path, "xb")  # noqa: SIM115 - the caller closes it
        except FileExistsError:
            serial += 1


def _data_loss(path: str, what: str) -> errors.DataLossError:
    return errors.DataLossError(None, None, f"{path}: {what}")


def read_records(path: str) -> Iterator[bytes]:
    """The data of each record in `path`, CRCs checked."""
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        if pos + 12 > len(data):
            raise _data_loss(path, f"truncated record header at offset {pos}")
        header = data[pos:pos + 8]
        (length,) = _U64.unpack(header)
        if _U32.unpack_from(data, pos + 8)[0] != masked_crc32c(header):
            raise _data_loss(path, f"corrupted record length at offset {pos}")
        start = pos + 12
        if start + length + 4 > len(data):
            raise _data_loss(path, f"truncated record at offset {pos}")
        body = data[start:start + length]
        if _U32.unpack_from(data, start + length)[0] != masked_crc32c(body):
            raise _data_loss(path, f"corrupted record data at offset {pos}")
        yield body
        pos = start + length + 4


def read_events(path: str) -> list[Event]:
    return [Event.FromString(record) for record in read_records(path)]
