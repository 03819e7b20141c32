"""TFRecord files: the record framing, compression, a writer and readers (``tf.io``'s
``TFRecordWriter``, ``tf_record_iterator`` and ``TFRecordOptions``, and what the
``TFRecordDataset`` / ``TextLineDataset`` kernels read with).

Contract: a record is ``length u64 | masked_crc32c(length bytes) u32 | data |
masked_crc32c(data) u32``, little-endian, with CRC32C (Castagnoli) masked as TF's
``((crc >> 15) | (crc << 17)) + 0xa282ead8``, so files are bit-exact with TF's. A file is
records back to back, optionally compressed as a whole: ``"ZLIB"`` (a zlib stream) or ``"GZIP"``
(a gzip stream), made with zlib's ``deflateInit2`` parameters as TF's ``ZlibOutputBuffer``
takes them from `TFRecordOptions`, so the same options and zlib give the same bytes;
concatenated streams read as one. CRC32C is `tensorweave.formats.crc32c` (a C package).

Reading raises TF's errors, without a node (the executor names the node when a kernel reads):
`NotFoundError` for a missing file, `DataLossError` for a truncated or corrupted record
(``truncated record at <offset>``, ``corrupted record at <offset>``, offsets in the
uncompressed stream) or a damaged compressed stream. Readers stream: a file is never read
whole.
"""

from __future__ import annotations

import enum
import io
import os
import struct
import zlib
from collections.abc import Iterator
from typing import Any, BinaryIO

import attrs

from tensorweave.engine import errors
from tensorweave.formats.crc32c import masked_value as masked_crc32c

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]

_U64, _U32 = struct.Struct("<Q"), struct.Struct("<I")
_HEADER = 12  # length and its CRC
_CHUNK = 256 << 10  # TF's default zlib buffer sizes


# -- CRC32C and the record framing --------------------------------------------------------------


def encode_record(data: bytes) -> bytes:
    length = _U64.pack(len(data))
    return b"".join((length, _U32.pack(masked_crc32c(length)), data,
                     _U32.pack(masked_crc32c(data))))


# -- options ------------------------------------------------------------------------------------


class TFRecordCompressionType(enum.IntEnum):
    """TF's compression types (``tf.io.TFRecordCompressionType``)."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


@attrs.define
class TFRecordOptions:
    """How a TFRecord file is compressed. `compression_type` is ``""``/``None``, ``"ZLIB"``,
    ``"GZIP"`` or a `TFRecordCompressionType`; the zlib parameters are ``deflateInit2``'s
    (None: TF's defaults). The buffer sizes are accepted for TF's signature; Python's buffered
    I/O sizes its own buffers."""

    compression_type: Any = None
    flush_mode: int | None = None
    input_buffer_size: int | None = None
    output_buffer_size: int | None = None
    window_bits: int | None = None
    compression_level: int | None = None
    compression_method: int | None = None
    mem_level: int | None = None
    compression_strategy: int | None = None

    compression_type_map = {TFRecordCompressionType.NONE: "",
                            TFRecordCompressionType.ZLIB: "ZLIB",
                            TFRecordCompressionType.GZIP: "GZIP"}

    def __attrs_post_init__(self) -> None:
        _compression_string(self.compression_type)  # ValueError now, as TF

    @classmethod
    def get_compression_type_string(cls, options: Any) -> str:
        """``""``, ``"ZLIB"`` or ``"GZIP"`` for `options` (options, a compression type, a
        string or None)."""
        if isinstance(options, TFRecordOptions):
            return _compression_string(options.compression_type)
        return _compression_string(options)


def _compression_string(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, TFRecordCompressionType):
        return TFRecordOptions.compression_type_map[value]
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str) and value in ("", "ZLIB", "GZIP"):
        return value
    raise ValueError(f'Not a valid compression_type: "{value}"')


def _options(options: Any) -> TFRecordOptions:
    if isinstance(options, TFRecordOptions):
        return options
    return TFRecordOptions(compression_type=options)


def _window_bits(options: TFRecordOptions, compression: str) -> int:
    bits = zlib.MAX_WBITS if options.window_bits is None else options.window_bits
    return bits + 16 if compression == "GZIP" else bits  # +16: a gzip header and trailer


# -- opening files ------------------------------------------------------------------------------


def _open_error(path: str, exc: OSError) -> errors.OpError:
    reason = exc.strerror or str(exc)
    if isinstance(exc, FileNotFoundError):
        return errors.NotFoundError(None, None, f"{path}; {reason}")
    if isinstance(exc, PermissionError):
        return errors.PermissionDeniedError(None, None, f"{path}; {reason}")
    if isinstance(exc, IsADirectoryError):
        return errors.FailedPreconditionError(None, None, f"{path}; {reason}")
    return errors.UnknownError(None, None, f"{path}; {reason}")


class _Inflater(io.RawIOBase):
    """The decompressed bytes of zlib or gzip streams, back to back."""

    def __init__(self, raw: BinaryIO, window_bits: int) -> None:
        self._raw = raw
        self._bits = window_bits
        self._z = zlib.decompressobj(window_bits)
        self._pending = b""
        self._started = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending:
            data = self._z.unused_data if self._z.eof else b""
            data = data or self._raw.read(_CHUNK)
            if not data:
                if self._started and not self._z.eof:
                    raise EOFError("the compressed stream ended before its end marker")
                return 0
            if self._z.eof:
                self._z = zlib.decompressobj(self._bits)
            self._started = True
            self._pending = self._z.decompress(data)
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def open_for_reading(path: str, options: Any = None) -> BinaryIO:
    """`path` opened as a buffered stream of its uncompressed bytes; `NotFoundError` etc."""
    opts = _options(options)
    compression = _compression_string(opts.compression_type)
    try:
        raw = open(path, "rb")  # noqa: SIM115 - closed by the caller
    except OSError as exc:
        raise _open_error(path, exc) from None
    if not compression:
        return raw
    return io.BufferedReader(_Inflater(raw, _window_bits(opts, compression)), _CHUNK)


def _data_loss(message: str) -> errors.DataLossError:
    return errors.DataLossError(None, None, message)


# -- reading ------------------------------------------------------------------------------------


def _records(f: BinaryIO) -> Iterator[bytes]:
    offset = 0
    while True:
        header = f.read(_HEADER)
        if not header:
            return
        if len(header) < _HEADER:
            raise _data_loss(f"truncated record at {offset}")
        if _U32.unpack_from(header, 8)[0] != masked_crc32c(header[:8]):
            raise _data_loss(f"corrupted record at {offset}")
        (length,) = _U64.unpack_from(header)
        body = f.read(length + 4)
        if len(body) < length + 4:
            raise _data_loss(f"truncated record at {offset + _HEADER if body else offset}")
        data = body[:length]
        if _U32.unpack_from(body, length)[0] != masked_crc32c(data):
            raise _data_loss(f"corrupted record at {offset + _HEADER}")
        yield data
        offset += _HEADER + length + 4


def _lines(f: BinaryIO) -> Iterator[bytes]:
    for line in f:
        if line.endswith(b"\n"):  # TF's ReadLine drops "\n" and a "\r" before it
            line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
        yield line


def _guarded(path: str, options: Any, split: Any) -> Iterator[bytes]:
    with open_for_reading(path, options) as f:
        try:
            yield from split(f)
        except (zlib.error, EOFError) as exc:
            raise _data_loss(f"{path}: damaged compressed data: {exc}") from None


def read_records(path: str, options: Any = None) -> Iterator[bytes]:
    """The data of each record of the TFRecord file `path`, CRCs checked (lazily: errors
    come from iterating)."""
    return _guarded(path, options, _records)


def read_lines(path: str, options: Any = None) -> Iterator[bytes]:
    """The lines of the text file `path`, without their line ends (TF's ``TextLineDataset``)."""
    return _guarded(path, options, _lines)


def tf_record_iterator(path: Any, options: Any = None) -> Iterator[bytes]:
    """``tf.io.tf_record_iterator``: each record of `path` as `bytes`; errors (a missing file,
    data loss) are raised when iterating, as TF's generator does."""
    yield from read_records(os.fsdecode(path), options)


# -- writing ------------------------------------------------------------------------------------


class TFRecordWriter:
    """``tf.io.TFRecordWriter``: writes records to a new file at `path` (truncating one that
    exists); a context manager that closes it."""

    def __init__(self, path: Any, options: Any = None) -> None:
        self._path = os.fsdecode(path)
        opts = _options(options)
        compression = _compression_string(opts.compression_type)
        try:
            self._file: BinaryIO | None = open(self._path, "wb")  # noqa: SIM115
        except OSError as exc:
            raise _open_error(self._path, exc) from None
        self._deflate = None
        if compression:
            self._deflate = zlib.compressobj(
                zlib.Z_DEFAULT_COMPRESSION if opts.compression_level is None
                else opts.compression_level,
                zlib.DEFLATED if opts.compression_method is None else opts.compression_method,
                _window_bits(opts, compression), 9 if opts.mem_level is None else opts.mem_level,
                zlib.Z_DEFAULT_STRATEGY if opts.compression_strategy is None
                else opts.compression_strategy)
        self._flush_mode = zlib.Z_SYNC_FLUSH if opts.flush_mode in (None, zlib.Z_NO_FLUSH) \
            else opts.flush_mode

    def _out(self) -> BinaryIO:
        if self._file is None:
            raise errors.FailedPreconditionError(None, None, f"{self._path}: Writer is closed.")
        return self._file

    def write(self, record: bytes | str) -> None:
        """Append one record (a `str` is written as UTF-8)."""
        data = record.encode("utf-8") if isinstance(record, str) else bytes(record)
        out = self._out()
        framed = encode_record(data)
        out.write(framed if self._deflate is None else self._deflate.compress(framed))

    def flush(self) -> None:
        """Push what was written to the file (a compressed stream is sync-flushed, so what is
        there so far can be read back)."""
        out = self._out()
        if self._deflate is not None:
            out.write(self._deflate.flush(self._flush_mode))
        out.flush()

    def close(self) -> None:
        """Finish the file; closing twice is harmless."""
        if self._file is None:
            return
        if self._deflate is not None:
            self._file.write(self._deflate.flush(zlib.Z_FINISH))
        self._file.close()
        self._file = None

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
