"""Event files: their names, and a reader.

Contract: an event file is a TFRecord file (`tensorweave.formats.tf_record`: the framing, CRC32C,
and `DataLossError` for a truncated record or a CRC mismatch) whose records are serialized
`Event` messages, the first one carrying ``file_version="brain.Event:2"``; `read_events` parses
them, and `summary_iterator` (``tf.train.summary_iterator``) yields them lazily (a record that
is not an ``Event`` raises protobuf's ``DecodeError``, as TF's).
`event_file_name` names a new file as TF's ``EventsWriter`` does
(``events.out.tfevents.<secs>.<host><suffix>``), and `create_event_file` creates one without
clobbering another.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from typing import Any, BinaryIO

from tensorweave.formats.summary_proto import Event
from tensorweave.formats.tf_record import read_records

FILE_VERSION = "brain.Event:2"


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


def read_events(path: str) -> list[Event]:
    return list(summary_iterator(path))


def summary_iterator(path: Any) -> Iterator[Event]:
    """Each `Event` of the event file `path`, in order (errors come from iterating)."""
    for record in read_records(os.fsdecode(path)):
        yield Event.FromString(record)
