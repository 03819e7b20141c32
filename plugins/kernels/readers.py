"""Kernels of TF1 readers (host only, as TF's): a reader turns work items (file names taken
from a queue) into (key, value) records.

Contract: a reader lives in its device's resource store under ``reader:<shared_name>`` (the
node name when the shared name is empty), made by the first run of its op; a second op with
the same name must be of the same kind with the same attrs (`InvalidArgumentError`). Keys and
values are TF's: ``FixedLengthRecordReader`` gives ``<file>:<record index>`` and each
``record_bytes`` slice after ``header_bytes``, every ``hop_bytes`` (``record_bytes`` when 0),
that ends before the ``footer_bytes`` (its file read through ``encoding`` "", "ZLIB" or
"GZIP"); ``TextLineReader`` gives ``<file>:<line number>`` (1-based, skipped header lines
counted) and the line without its ``\\n`` / ``\\r\\n``; ``WholeFileReader`` the file name
and its contents; ``TFRecordReader`` ``<file>:<byte offset of the record>`` and its data;
``IdentityReader`` the work item as both key and value.

Reads of one reader are served one at a time, in arrival order, as TF's reader mutex does:
a read takes the next record of the current work item; when that is exhausted it counts a
completed work unit and dequeues the next item from the queue (asynchronously: no thread
waits). A read from a closed, empty queue fails with the queue's `OutOfRangeError`;
``ReaderReadUpToV2`` then returns the records it already has, if any. A file that cannot be
opened fails the read (`NotFoundError` ...), and a read withdrawn by its step's abort fails
with the step's error. ``ReaderResetV2`` drops the current work item and zeroes the counters.

``DecodeRaw`` reads each string's bytes as ``out_type`` values in the given byte order; strings
of different lengths, or a length that is not a multiple of the type's size, are an
`InvalidArgumentError` (TF's words).
"""

from __future__ import annotations

import threading
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.formats.tf_record import open_for_reading, read_lines, read_records
from tensorweave.plugins.kernels.data_flow_ops import Queue, dequeue_for
from tensorweave.plugins.kernels.file_access import checked_path
from tensorweave.plugins.kernels.resources import find, make_handle
from tensorweave.plugins.standard_ops.readers import READER_OPS

Record = tuple[bytes, bytes]
Done = Callable[[Any], None]


def _read_file(path: str, encoding: str = "") -> bytes:
    with open_for_reading(path, encoding or None) as f:
        try:
            return f.read()
        except (zlib.error, EOFError) as exc:
            raise errors.DataLossError(None, None,
                                       f"{path}: damaged compressed data: {exc}") from None


def _fixed_length(work: str, attrs: dict[str, Any]) -> Iterator[Record]:
    data = _read_file(work, attrs["encoding"])
    header, size, footer = attrs["header_bytes"], attrs["record_bytes"], attrs["footer_bytes"]
    hop = attrs["hop_bytes"] or size
    end = len(data) - footer
    index, start = 0, header
    while start + size <= end:
        yield f"{work}:{index}".encode(), data[start:start + size]
        index, start = index + 1, start + hop


def _text_lines(work: str, attrs: dict[str, Any]) -> Iterator[Record]:
    for number, line in enumerate(read_lines(work), start=1):
        if number > attrs["skip_header_lines"]:
            yield f"{work}:{number}".encode(), line


def _whole_file(work: str, attrs: dict[str, Any]) -> Iterator[Record]:
    yield work.encode(), _read_file(work)


def _tf_records(work: str, attrs: dict[str, Any]) -> Iterator[Record]:
    offset = 0
    for data in read_records(work, attrs["compression_type"] or None):
        yield f"{work}:{offset}".encode(), data
        offset += len(data) + 16  # length (8), its CRC (4), data, data CRC (4)


def _identity(work: str, attrs: dict[str, Any]) -> Iterator[Record]:
    yield work.encode(), work.encode()


_SOURCES: dict[str, Callable[[str, dict[str, Any]], Iterator[Record]]] = {
    "FixedLengthRecordReaderV2": _fixed_length,
    "TextLineReaderV2": _text_lines,
    "WholeFileReaderV2": _whole_file,
    "TFRecordReaderV2": _tf_records,
    "IdentityReaderV2": _identity,
}


class Reader:
    """One reader: its kind and attrs, current work item, counters and waiting reads."""

    def __init__(self, kind: str, attrs: dict[str, Any]) -> None:
        self.kind = kind
        self.attrs = attrs
        self.lock = threading.Lock()
        self.records: Iterator[Record] | None = None
        self.produced = 0
        self.completed = 0
        self._waiting: deque[Callable[[Callable[[], None]], None]] = deque()
        self._busy = False

    def serve(self, read: Callable[[Callable[[], None]], None]) -> None:
        """Run `read(release)` once every earlier read has released the reader."""
        with self.lock:
            self._waiting.append(read)
            if self._busy:
                return
            self._busy = True
        self._next()

    def _next(self) -> None:
        with self.lock:
            if not self._waiting:
                self._busy = False
                return
            read = self._waiting.popleft()
        read(self._next)

    def next_record(self) -> Record | None:
        """The current work item's next record, or None when there is none (then the item,
        if any, counts as completed)."""
        if self.records is not None:
            record = next(self.records, None)
            if record is not None:
                self.produced += 1
                return record
            self.records = None
            self.completed += 1
        return None

    def start(self, work: bytes | str) -> None:
        name = work.decode() if isinstance(work, bytes) else str(work)
        self.records = _SOURCES[self.kind](name, self.attrs)

    def reset(self) -> None:
        self.records, self.produced, self.completed = None, 0, 0


def _node_error(ctx: KernelContext, exc: BaseException) -> BaseException:
    if isinstance(exc, errors.OpError) and exc.node_def is None:
        return type(exc)(ctx.node_name, ctx.op, exc.message)
    return exc


def reader_op(ctx: KernelContext) -> Any:
    if ctx.op == "FixedLengthRecordReaderV2" and int(ctx.attrs["record_bytes"]) <= 0:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"record_bytes must be > 0 not {ctx.attrs['record_bytes']}")
    if ctx.attrs.get("encoding", "") not in ("", "ZLIB", "GZIP"):
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"Unsupported encoding: {ctx.attrs['encoding']}")
    settings = {k: ctx.attrs[k] for k in READER_OPS[ctx.op]}

    def mismatch(reader: Reader) -> str | None:
        if reader.kind != ctx.op or reader.attrs != settings:
            return (f"Shared reader '{ctx.attrs['shared_name']}' is a {reader.kind} with "
                    f"{reader.attrs}, not a {ctx.op} with {settings}")
        return None

    return make_handle(ctx, "reader", lambda _name: Reader(ctx.op, settings), mismatch)


def _read_records(ctx: KernelContext, step: Any, done: Done, handle: Any, queue_handle: Any,
                  wanted: int, partial_ok: bool) -> None:
    """Read `wanted` records (fewer at the queue's end when `partial_ok`), then call `done`
    with the list of records or the error."""
    reader = find(ctx, handle, Reader)
    queue = find(ctx, queue_handle, Queue)
    got: list[Record] = []

    def read(release: Callable[[], None]) -> None:
        def finish(result: Any) -> None:
            release()
            done(result)

        def on_work(result: Any) -> None:
            if isinstance(result, BaseException):
                finish(got if partial_ok and got else _node_error(ctx, result))
                return
            try:
                work = np.asarray(result[0]).item()
                if reader.kind != "IdentityReaderV2":  # its work items are not files
                    checked_path(ctx, work)
                reader.start(work)
            except Exception as exc:  # noqa: BLE001 - a failed open fails the read
                finish(_node_error(ctx, exc))
                return
            advance()

        def advance() -> None:
            try:
                while len(got) < wanted:
                    record = reader.next_record()
                    if record is None:
                        dequeue_for(ctx, step, queue, on_work)
                        return
                    got.append(record)
            except Exception as exc:  # noqa: BLE001 - data loss in a file fails the read
                finish(_node_error(ctx, exc))
                return
            finish(got)

        advance()

    reader.serve(read)


def _strings(values: list[bytes]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def read(ctx: KernelContext, step: Any, done: Done, handle: Any, queue_handle: Any) -> None:
    def finished(result: Any) -> None:
        if isinstance(result, BaseException):
            done(result)
        else:
            key, value = result[0]
            done((np.array(key, dtype=object), np.array(value, dtype=object)))

    _read_records(ctx, step, finished, handle, queue_handle, 1, partial_ok=False)


def read_up_to(ctx: KernelContext, step: Any, done: Done, handle: Any, queue_handle: Any,
               num_records: Any) -> None:
    count = int(num_records)
    if count <= 0:
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op,
                                          f"num_records must be > 0 but is {count}")

    def finished(result: Any) -> None:
        if isinstance(result, BaseException):
            done(result)
        else:
            done((_strings([k for k, _ in result]), _strings([v for _, v in result])))

    _read_records(ctx, step, finished, handle, queue_handle, count, partial_ok=True)


def num_records_produced(ctx: KernelContext, handle: Any) -> np.ndarray:
    return np.array(find(ctx, handle, Reader).produced, np.int64)


def num_work_units_completed(ctx: KernelContext, handle: Any) -> np.ndarray:
    return np.array(find(ctx, handle, Reader).completed, np.int64)


def reset(ctx: KernelContext, handle: Any) -> None:
    reader = find(ctx, handle, Reader)
    with reader.lock:
        reader.reset()


def decode_raw(ctx: KernelContext, data: np.ndarray) -> np.ndarray:
    dtype = np.dtype(ctx.out_np).newbyteorder("<" if ctx.attrs["little_endian"] else ">")
    flat = data.reshape(-1)
    sizes = {len(item) for item in flat}
    if len(sizes) > 1:
        first = len(flat[0])
        index = next(i for i, item in enumerate(flat) if len(item) != first)
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, "DecodeRaw requires input strings to all be the same size, "
            f"but element {index} has size {len(flat[index])} != {first}")
    size = sizes.pop() if sizes else 0
    if size % dtype.itemsize:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"Input to DecodeRaw has length {size} that is not a "
            f"multiple of {dtype.itemsize}, the size of {ctx.output_dtypes[0].name}")
    decoded = np.frombuffer(b"".join(flat), dtype=dtype)
    return decoded.astype(ctx.out_np).reshape(*data.shape, size // dtype.itemsize)


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    for op in READER_OPS:
        registry.add(op, device_type, reader_op)
    registry.add("ReaderReadV2", device_type, read, is_async=True)
    registry.add("ReaderReadUpToV2", device_type, read_up_to, is_async=True)
    registry.add("ReaderNumRecordsProducedV2", device_type, num_records_produced)
    registry.add("ReaderNumWorkUnitsCompletedV2", device_type, num_work_units_completed)
    registry.add("ReaderResetV2", device_type, reset)
    registry.add("DecodeRaw", device_type, decode_raw)
