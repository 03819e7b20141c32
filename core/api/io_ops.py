"""TF1 readers: ``tw.FixedLengthRecordReader``, ``TextLineReader``, ``WholeFileReader``,
``TFRecordReader`` and ``IdentityReader`` (``tf.compat.v1``'s ``ReaderBase`` family).

Contract: constructing a reader creates its reader op (`tensorweave.plugins.standard_ops.
readers`; the node is named `name`, else after the op) and keeps its handle, `reader_ref`.
``read(queue)`` builds a ``ReaderReadV2`` whose outputs, a scalar key and value (strings), are
the next record of the work items (file names) that `queue` gives; `queue` is a queue object
or its handle tensor. ``read_up_to`` gives vectors of at most `num_records` records; the
counters and ``reset`` act on the reader's state. What each reader yields is stated in
`tensorweave.plugins.kernels.readers`. State serialization (``serialize_state``) is not
supported: no tensorweave reader supports it (TF's built-in readers mostly do not either).

``decode_raw(input_bytes, out_type, little_endian=True)`` (``tf.compat.v1.decode_raw``, which
also takes the old keyword ``bytes``) reinterprets each string of a string tensor as a vector
of `out_type`, e.g. a fixed-length record as ``uint8`` pixels.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply, make_op
from tensorweave.formats.tf_record import TFRecordOptions

__all__ = ["FixedLengthRecordReader", "IdentityReader", "ReaderBase", "TFRecordReader",
           "TextLineReader", "WholeFileReader", "decode_raw"]


def _queue_ref(queue: Any) -> Tensor:
    return queue if isinstance(queue, Tensor) else queue.queue_ref


class ReaderBase:
    """A reader, reached through the string handle `reader_ref` its reader op gives."""

    def __init__(self, reader_ref: Tensor, supports_serialize: bool = False) -> None:
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self) -> Tensor:
        return self._reader_ref

    @property
    def supports_serialize(self) -> bool:
        return self._supports_serialize

    def read(self, queue: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
        """The next record (key, value) from the files `queue` names."""
        op = make_op("ReaderReadV2", [self._reader_ref, _queue_ref(queue)], name=name)
        return op.outputs[0], op.outputs[1]

    def read_up_to(self, queue: Any, num_records: Any,
                   name: str | None = None) -> tuple[Tensor, Tensor]:
        """Up to `num_records` records (keys, values), fewer only at the queue's end."""
        op = make_op("ReaderReadUpToV2", [self._reader_ref, _queue_ref(queue), num_records],
                     name=name)
        return op.outputs[0], op.outputs[1]

    def num_records_produced(self, name: str | None = None) -> Tensor:
        return apply("ReaderNumRecordsProducedV2", [self._reader_ref], name=name)

    def num_work_units_completed(self, name: str | None = None) -> Tensor:
        return apply("ReaderNumWorkUnitsCompletedV2", [self._reader_ref], name=name)

    def reset(self, name: str | None = None) -> Operation:
        return make_op("ReaderResetV2", [self._reader_ref], name=name)


def _reader(op: str, name: str | None, **attrs: Any) -> Tensor:
    return apply(op, [], attrs, name=name or op)


class FixedLengthRecordReader(ReaderBase):
    """Records of `record_bytes` bytes after a header, before a footer, every `hop_bytes`."""

    def __init__(self, record_bytes: int, header_bytes: int | None = None,
                 footer_bytes: int | None = None, hop_bytes: int | None = None,
                 name: str | None = None, encoding: str | None = None) -> None:
        super().__init__(_reader("FixedLengthRecordReaderV2", name,
                                 record_bytes=int(record_bytes),
                                 header_bytes=int(header_bytes or 0),
                                 footer_bytes=int(footer_bytes or 0),
                                 hop_bytes=int(hop_bytes or 0), encoding=encoding or ""))


class TextLineReader(ReaderBase):
    """The lines of text files, after `skip_header_lines` lines of each."""

    def __init__(self, skip_header_lines: int | None = None, name: str | None = None) -> None:
        super().__init__(_reader("TextLineReaderV2", name,
                                 skip_header_lines=int(skip_header_lines or 0)))


class WholeFileReader(ReaderBase):
    """Each file whole: its name as the key, its contents as the value."""

    def __init__(self, name: str | None = None) -> None:
        super().__init__(_reader("WholeFileReaderV2", name))


class TFRecordReader(ReaderBase):
    """The records of TFRecord files (`options` gives their compression)."""

    def __init__(self, name: str | None = None, options: Any = None) -> None:
        compression = TFRecordOptions.get_compression_type_string(options)
        super().__init__(_reader("TFRecordReaderV2", name, compression_type=compression))


class IdentityReader(ReaderBase):
    """Each work item itself, as key and value."""

    def __init__(self, name: str | None = None) -> None:
        super().__init__(_reader("IdentityReaderV2", name))


def decode_raw(input_bytes: Any = None, out_type: Any = None, little_endian: bool = True,
               name: str | None = None, bytes: Any = None) -> Tensor:  # noqa: A002 - TF's name
    """Each string of `input_bytes` as a vector of `out_type` (shape: input's + [length])."""
    if (input_bytes is None) == (bytes is None):
        raise ValueError("Exactly one of input_bytes and bytes must be specified")
    if out_type is None:
        raise TypeError("decode_raw() missing required argument 'out_type'")
    data = convert_to_tensor(input_bytes if bytes is None else bytes, dtype=dtypes.string)
    return apply("DecodeRaw", [data], {"out_type": dtypes.as_dtype(out_type),
                                       "little_endian": bool(little_endian)}, name=name)
