"""TFRecord framing, CRC32C and event-file reading."""

from __future__ import annotations

import os
import re
import socket
import struct
import time
from pathlib import Path

import pytest

from tensorweave import errors
from tensorweave.event_file import (
    crc32c,
    create_event_file,
    encode_record,
    event_file_name,
    masked_crc32c,
    read_events,
    read_records,
)
from tensorweave.summary_proto import Event


def test_crc32c_known_vectors() -> None:
    assert crc32c(b"123456789") == 0xE3069283  # the Castagnoli check value
    assert crc32c(b"") == 0
    assert crc32c(bytes(32)) == 0x8A9136AA  # RFC 3720, B.4
    assert crc32c(b"\xff" * 32) == 0x62A8AB43
    assert crc32c(bytes(range(32))) == 0x46DD794E


def test_masked_crc_rotates_and_adds_the_delta() -> None:
    crc = 0xE3069283
    expected = (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    assert masked_crc32c(b"123456789") == expected
    assert masked_crc32c(b"") == 0xA282EAD8


def test_record_layout() -> None:
    record = encode_record(b"abc")
    length = struct.pack("<Q", 3)
    assert record == (length + struct.pack("<I", masked_crc32c(length)) + b"abc"
                      + struct.pack("<I", masked_crc32c(b"abc")))


def test_records_and_events_round_trip(tmp_path: Path) -> None:
    events = [Event(wall_time=1.0, file_version="brain.Event:2"),
              Event(wall_time=2.5, step=3, summary=b"\x0a\x00"), Event(step=2**40)]
    path = tmp_path / "events"
    path.write_bytes(b"".join(encode_record(e.SerializeToString()) for e in events))
    assert read_events(str(path)) == events
    assert list(read_records(str(path)))[1] == events[1].SerializeToString()


@pytest.mark.parametrize("damage", ["length", "data", "truncate_header", "truncate_data"])
def test_damaged_records_are_data_loss(tmp_path: Path, damage: str) -> None:
    good = encode_record(b"hello")
    data = bytearray(good)
    if damage == "length":
        data[0] ^= 1
    elif damage == "data":
        data[13] ^= 1
    elif damage == "truncate_header":
        data = data[:10]
    else:
        data = data[:-2]
    path = tmp_path / "events"
    path.write_bytes(good + bytes(data))
    with pytest.raises(errors.DataLossError, match="offset 21"):
        list(read_records(str(path)))


def test_event_file_name_as_tf_names_it(tmp_path: Path) -> None:
    before = int(time.time())
    name = os.path.basename(event_file_name(str(tmp_path), ".v2"))
    match = re.fullmatch(r"events\.out\.tfevents\.(\d{10})\.(.+)\.v2", name)
    assert match and match.group(2) == socket.gethostname()
    assert before <= int(match.group(1)) <= time.time()


def test_create_event_file_never_reuses_a_name(tmp_path: Path) -> None:
    first, f1 = create_event_file(str(tmp_path), ".s")
    second, f2 = create_event_file(str(tmp_path), ".s")
    f1.close()
    f2.close()
    assert first != second and second.endswith(".s") and os.path.exists(first)
