"""tensorweave.formats.tf_record: the record layout against TF's spec (with a bitwise CRC as an
independent reference), writer/iterator round trips with and without
compression, and TF's errors for damaged or missing files."""

from __future__ import annotations

import gzip
import struct
import zlib
from pathlib import Path

import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.formats.tf_record import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    encode_record,
    read_lines,
    read_records,
    tf_record_iterator,
)
from tests.test_crc32c import bitwise_crc32c, masked


def test_record_bytes_follow_tfs_spec() -> None:
    data = b"hello tfrecord"
    length = struct.pack("<Q", len(data))
    expected = (length + struct.pack("<I", masked(bitwise_crc32c(length))) + data
                + struct.pack("<I", masked(bitwise_crc32c(data))))
    assert encode_record(data) == expected
    # an empty record: a zero length, its CRC, and the masked CRC of nothing
    empty = bytes(8) + struct.pack("<I", masked(bitwise_crc32c(bytes(8)))) \
        + struct.pack("<I", 0xA282EAD8)
    assert encode_record(b"") == empty and len(empty) == 16


def test_writer_and_iterator_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "plain.tfrecord"
    records = [b"", b"a", bytes(range(256)) * 40, "text é".encode()]
    with TFRecordWriter(str(path)) as writer:
        for r in records:
            writer.write(r)
        writer.write("text é")  # a str is written as UTF-8
    assert path.read_bytes() == b"".join(encode_record(r) for r in [*records, records[-1]])
    assert list(tf_record_iterator(str(path))) == [*records, records[-1]]
    assert list(tw.python_io.tf_record_iterator(path)) == [*records, records[-1]]
    assert tw.io.TFRecordWriter is tw.python_io.TFRecordWriter is TFRecordWriter


@pytest.mark.parametrize("options", ["GZIP", TFRecordCompressionType.GZIP,
                                     TFRecordOptions("GZIP", compression_level=9)])
def test_gzip_files_are_gzip_streams(tmp_path: Path, options: object) -> None:
    path = tmp_path / "z.tfrecord.gz"
    with TFRecordWriter(path, options) as writer:
        writer.write(b"one")
        writer.flush()
        writer.write(b"two" * 1000)
    assert gzip.decompress(path.read_bytes()) == encode_record(b"one") + encode_record(
        b"two" * 1000)
    assert list(tf_record_iterator(path, options)) == [b"one", b"two" * 1000]


def test_zlib_files_are_zlib_streams_and_concatenations_read_as_one(tmp_path: Path) -> None:
    path = tmp_path / "z.tfrecord"
    opts = TFRecordOptions(TFRecordCompressionType.ZLIB)
    with TFRecordWriter(path, opts) as writer:
        writer.write(b"x" * 5000)
    assert zlib.decompress(path.read_bytes()) == encode_record(b"x" * 5000)
    assert list(read_records(str(path), "ZLIB")) == [b"x" * 5000]
    twice = tmp_path / "twice.gz"
    twice.write_bytes(gzip.compress(encode_record(b"a")) + gzip.compress(encode_record(b"b")))
    assert list(read_records(str(twice), "GZIP")) == [b"a", b"b"]


def test_options_and_compression_strings() -> None:
    assert TFRecordOptions.get_compression_type_string(None) == ""
    assert TFRecordOptions.get_compression_type_string("ZLIB") == "ZLIB"
    assert TFRecordOptions.get_compression_type_string(TFRecordCompressionType.GZIP) == "GZIP"
    assert TFRecordOptions.get_compression_type_string(TFRecordOptions("GZIP")) == "GZIP"
    assert TFRecordOptions.compression_type_map[TFRecordCompressionType.NONE] == ""
    with pytest.raises(ValueError, match='Not a valid compression_type: "BZ2"'):
        TFRecordOptions("BZ2")
    with pytest.raises(ValueError, match="Not a valid compression_type"):
        TFRecordOptions.get_compression_type_string("gzip")


@pytest.mark.parametrize(("damage", "message"), [
    ("length", "corrupted record at 19"),
    ("data", "corrupted record at 31"),
    ("truncate_header", "truncated record at 19"),
    ("truncate_data", "truncated record at 31"),
    ("drop_data", "truncated record at 19"),
])
def test_damaged_records_are_data_loss(tmp_path: Path, damage: str, message: str) -> None:
    good, second = encode_record(b"abc"), bytearray(encode_record(b"hello"))
    if damage == "length":
        second[0] ^= 1
    elif damage == "data":
        second[13] ^= 1
    elif damage == "truncate_header":
        second = second[:10]
    elif damage == "truncate_data":
        second = second[:-2]
    else:
        second = second[:12]
    path = tmp_path / "bad.tfrecord"
    path.write_bytes(good + bytes(second))
    records = tf_record_iterator(str(path))
    assert next(records) == b"abc"  # errors come when iterating, as TF's generator
    with pytest.raises(errors.DataLossError, match=f"^{message}$"):
        next(records)


def test_damaged_compressed_stream_is_data_loss(tmp_path: Path) -> None:
    path = tmp_path / "bad.gz"
    path.write_bytes(gzip.compress(encode_record(b"abc" * 100))[:-12])
    with pytest.raises(errors.DataLossError, match="damaged compressed data"):
        list(read_records(str(path), "GZIP"))
    path.write_bytes(b"not gzip at all")
    with pytest.raises(errors.DataLossError):
        list(read_records(str(path), "GZIP"))


def test_missing_files_and_closed_writers(tmp_path: Path) -> None:
    missing = tmp_path / "nope.tfrecord"
    records = tf_record_iterator(str(missing))  # lazy: nothing is opened yet
    with pytest.raises(errors.NotFoundError, match="nope.tfrecord; No such file or directory"):
        next(records)
    with pytest.raises(errors.NotFoundError):
        TFRecordWriter(str(tmp_path / "no_dir" / "x.tfrecord"))
    writer = TFRecordWriter(str(tmp_path / "w.tfrecord"))
    writer.close()
    writer.close()
    with pytest.raises(errors.FailedPreconditionError, match="Writer is closed"):
        writer.write(b"late")


def test_lines_drop_their_ends(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_bytes(b"a\nb\r\n\nc\rd\nlast")
    assert list(read_lines(str(path))) == [b"a", b"b", b"", b"c\rd", b"last"]
    gz = tmp_path / "t.txt.gz"
    gz.write_bytes(gzip.compress(b"x\ny\n"))
    assert list(read_lines(str(gz), "GZIP")) == [b"x", b"y"]
