"""TFRecord framing, CRC32C and event-file reading."""

from __future__ import annotations

import os
import re
import socket
import time
from pathlib import Path

import pytest
from google.protobuf.message import DecodeError

from tensorweave.formats.event_file import (
    create_event_file,
    event_file_name,
    read_events,
    read_records,
)
from tensorweave.formats.summary_proto import Event, Summary
from tensorweave.formats.tf_record import encode_record


def test_records_and_events_round_trip(tmp_path: Path) -> None:
    events = [Event(wall_time=1.0, file_version="brain.Event:2"),
              Event(wall_time=2.5, step=3, summary=Summary(value=[Summary.Value()])),
              Event(step=2**40)]
    path = tmp_path / "events"
    path.write_bytes(b"".join(encode_record(e.SerializeToString()) for e in events))
    assert read_events(str(path)) == events
    assert list(read_records(str(path)))[1] == events[1].SerializeToString()
    path.write_bytes(encode_record(b"\xff"))  # a record, but not an Event
    with pytest.raises(DecodeError):
        read_events(str(path))


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
