"""``tf.compat.v1.summary``: summary ops and `FileWriter`, which writes TensorBoard event files.

Contract: `FileWriter(logdir)` creates `logdir` and a new event file in it
(``events.out.tfevents.<secs>.<host><suffix>``, never an existing one) whose first record is the
``file_version="brain.Event:2"`` event, as TF's. `add_summary` takes a serialized ``Summary``
(what ``sess.run`` of a summary op returns) or a `Summary` object and records it with
`global_step` and the wall time; `add_event` records an `Event`; `add_graph` records the whole
``GraphDef`` (attrs too, and each node's ``_output_shapes`` for a `Graph`, which TensorBoard's
graph view shows), and `add_meta_graph` a ``MetaGraphDef``; a writer made with a graph writes
both, as TF's does; `add_run_metadata`
records a traced run's `RunMetadata` under a tag used once per writer (`ValueError` otherwise).
Records reach the file in order; the file is flushed once `max_queue` records are pending,
every `flush_secs` seconds (by a daemon thread), on `flush` and on `close`. After `close`, adds
are ignored until `reopen`, which starts a new file, as in TF. A `session` (TF2's
summary-writer bridge) is not supported. `FileWriterCache` (TF's ``SummaryWriterCache``) hands
out one writer per directory, created with the default graph of its first `get`, so that hooks
writing to one directory share a file.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, ClassVar

from tensorweave.api.summary_ops import histogram, image, merge, merge_all, scalar
from tensorweave.engine.graph.graph import Graph, get_default_graph
from tensorweave.formats.event_file import FILE_VERSION, create_event_file
from tensorweave.formats.summary_proto import (
    Event,
    HistogramProto,
    SessionLog,
    Summary,
    SummaryDescription,
    TaggedRunMetadata,
)
from tensorweave.formats.tf_record import encode_record

__all__ = ["Event", "FileWriter", "FileWriterCache", "HistogramProto", "SessionLog",
           "Summary", "SummaryDescription", "TaggedRunMetadata", "histogram", "image", "merge",
           "merge_all", "scalar"]


class FileWriter:
    """Writes ``Event`` protos to an event file in `logdir` (see the module docstring)."""

    def __init__(self, logdir: str, graph: Graph | None = None, max_queue: int = 10,
                 flush_secs: float = 120, graph_def: Any = None,
                 filename_suffix: str | None = None, session: Any = None) -> None:
        if session is not None:
            raise NotImplementedError("FileWriter(session=...) is not supported by tensorweave")
        self._logdir = str(logdir)
        self._max_queue = max(1, int(max_queue))
        self._flush_secs = float(flush_secs)
        self._suffix = filename_suffix
        self._lock = threading.Lock()
        self._file: Any = None
        self._pending = 0
        self._stop = threading.Event()
        self._run_metadata_tags: set[str] = set()
        self._open()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)
            from tensorweave.train.meta_graph import export_meta_graph

            self.add_meta_graph(export_meta_graph(
                graph_def=graph_def if graph_def is not None else graph.as_graph_def(
                    add_shapes=True), graph=graph))

    def _open(self) -> None:
        os.makedirs(self._logdir, exist_ok=True)
        self._path, self._file = create_event_file(self._logdir, self._suffix)
        self._stop = threading.Event()
        self._write(Event(wall_time=time.time(), file_version=FILE_VERSION))
        threading.Thread(target=self._flush_periodically, args=(self._stop,),
                         name="FileWriter-flush", daemon=True).start()

    def _flush_periodically(self, stop: threading.Event) -> None:
        while not stop.wait(self._flush_secs):
            self.flush()

    def _write(self, event: Event) -> None:
        record = encode_record(event.SerializeToString())
        with self._lock:
            if self._file is None:
                return
            self._file.write(record)
            self._pending += 1
            if self._pending >= self._max_queue:
                self._flush_locked()

    def _flush_locked(self) -> None:
        self._file.flush()
        self._pending = 0

    @property
    def event_file_path(self) -> str:
        """The file events go to now."""
        return self._path

    def get_logdir(self) -> str:
        return self._logdir

    def add_event(self, event: Event) -> None:
        self._write(event)

    def add_summary(self, summary: bytes | Summary, global_step: int | None = None) -> None:
        """Record `summary` (serialized ``Summary`` bytes or a `Summary`) at `global_step`;
        bytes that are not a ``Summary`` raise protobuf's ``DecodeError``, as TF's."""
        if not isinstance(summary, (bytes, Summary)) and hasattr(summary, "SerializeToString"):
            summary = summary.SerializeToString()  # another library's Summary, e.g. TF's
        if isinstance(summary, bytes):
            summary = Summary.FromString(summary)
        if not isinstance(summary, Summary):
            raise TypeError(f"add_summary expects a serialized Summary (bytes) or a Summary, "
                            f"got {type(summary).__name__}")
        self._write(Event(wall_time=time.time(), step=int(global_step or 0), summary=summary))

    def add_run_metadata(self, run_metadata: Any, tag: str,
                         global_step: int | None = None) -> None:
        """Record `run_metadata` (a traced run's ``RunMetadata``) under `tag`, as TF's."""
        if tag in self._run_metadata_tags:
            raise ValueError("The provided tag was already used for this event type")
        self._run_metadata_tags.add(tag)
        tagged = TaggedRunMetadata(tag=tag, run_metadata=run_metadata.SerializeToString())
        self._write(Event(wall_time=time.time(), step=int(global_step or 0),
                          tagged_run_metadata=tagged))

    def add_graph(self, graph: Graph | None, global_step: int | None = None,
                  graph_def: Any = None) -> None:
        """Record `graph` with its nodes' shapes (or `graph_def`, a `GraphDef`, as it is)."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        if graph is not None:
            graph_def = graph.as_graph_def(add_shapes=True)
        self._write(Event(wall_time=time.time(), step=int(global_step or 0),
                          graph_def=graph_def.SerializeToString()))

    def add_meta_graph(self, meta_graph_def: Any, global_step: int | None = None) -> None:
        """Record `meta_graph_def` (a `MetaGraphDef`), as TF's ``add_meta_graph``."""
        self._write(Event(wall_time=time.time(), step=int(global_step or 0),
                          meta_graph_def=meta_graph_def.SerializeToString()))

    def flush(self) -> None:
        with self._lock:
            if self._file is not None:
                self._flush_locked()

    def close(self) -> None:
        with self._lock:
            if self._file is None:
                return
            self._stop.set()
            self._file.close()
            self._file = None

    def reopen(self) -> None:
        """Start a new event file after `close` (no-op while open)."""
        with self._lock:
            if self._file is not None:
                return
        self._open()

    def __enter__(self) -> FileWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class FileWriterCache:
    """One `FileWriter` per log directory, shared by everything that writes there."""

    _cache: ClassVar[dict[str, FileWriter]] = {}
    _lock: ClassVar[threading.RLock] = threading.RLock()

    @staticmethod
    def get(logdir: str) -> FileWriter:
        """The writer of `logdir`, created (with the default graph) on first use."""
        with FileWriterCache._lock:
            logdir = str(logdir)
            if logdir not in FileWriterCache._cache:
                FileWriterCache._cache[logdir] = FileWriter(logdir, graph=get_default_graph())
            return FileWriterCache._cache[logdir]

    @staticmethod
    def clear() -> None:
        """Close every cached writer and forget them."""
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache = {}
