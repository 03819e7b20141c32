"""TF1 readers (``tw.FixedLengthRecordReader`` ...), their kernels, and ``tw.decode_raw``."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors


def _files_queue(paths: list[str]) -> tw.FIFOQueue:
    queue = tw.FIFOQueue(10, tw.string)
    return queue, queue.enqueue_many([paths]), queue.close()


def _read_all(reader: tw.ReaderBase, paths: list[str]) -> list[tuple[bytes, bytes]]:
    queue, fill, close = _files_queue(paths)
    key, value = reader.read(queue)
    out = []
    with tw.Session() as sess:
        sess.run(fill)
        sess.run(close)
        while True:
            try:
                out.append(tuple(sess.run([key, value])))
            except errors.OutOfRangeError:
                return out


def test_fixed_length_records_with_header_footer_and_hop(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"HH" + bytes(range(10)) + b"F")
    reader = tw.FixedLengthRecordReader(record_bytes=3, header_bytes=2, footer_bytes=1,
                                        hop_bytes=2)
    got = _read_all(reader, [str(path)])
    # records start every 2 bytes after the header and must end before the footer
    assert got == [(f"{path}:{i}".encode(), bytes(range(2 * i, 2 * i + 3))) for i in range(4)]


def test_fixed_length_cifar_records_decode_to_label_and_image(tmp_path: Path) -> None:
    rng = np.random.RandomState(0)
    labels = rng.randint(0, 10, 5).astype(np.uint8)
    images = rng.randint(0, 256, (5, 3, 4, 4)).astype(np.uint8)
    paths = []
    for part in (slice(0, 2), slice(2, 5)):
        paths.append(str(tmp_path / f"batch{part.start}.bin"))
        np.concatenate([labels[part, None], images[part].reshape(-1, 48)], 1).tofile(paths[-1])
    queue, fill, close = _files_queue(paths)
    reader = tw.FixedLengthRecordReader(record_bytes=49)
    key, value = reader.read(queue)
    record = tw.decode_raw(value, tw.uint8)
    label = tw.cast(tw.strided_slice(record, [0], [1]), tw.int32)
    image = tw.transpose(tw.reshape(tw.strided_slice(record, [1], [49]), [3, 4, 4]), [1, 2, 0])
    assert record.shape.as_list() == [None] and label.dtype == tw.int32
    with tw.Session() as sess:
        sess.run(fill)
        sess.run(close)
        for i in range(5):
            k, lab, img = sess.run([key, label, image])
            assert k == f"{paths[0 if i < 2 else 1]}:{i if i < 2 else i - 2}".encode()
            assert lab.tolist() == [labels[i]]
            np.testing.assert_array_equal(img, images[i].transpose(1, 2, 0))
        assert sess.run([reader.num_records_produced(),
                         reader.num_work_units_completed()]) == [5, 1]
        with pytest.raises(errors.OutOfRangeError, match="is closed and has insufficient"):
            sess.run(key)
        assert sess.run(reader.num_work_units_completed()) == 2


def test_gzip_encoding(tmp_path: Path) -> None:
    path = tmp_path / "f.gz"
    path.write_bytes(gzip.compress(b"abcdef"))
    got = _read_all(tw.FixedLengthRecordReader(3, encoding="GZIP"), [str(path)])
    assert [v for _, v in got] == [b"abc", b"def"]


def test_text_line_reader_skips_headers_and_numbers_lines(tmp_path: Path) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_bytes(b"head\n1,2\r\n\n3,4")
    b.write_bytes(b"head\n5,6\n")
    got = _read_all(tw.TextLineReader(skip_header_lines=1), [str(a), str(b)])
    assert got == [(f"{a}:2".encode(), b"1,2"), (f"{a}:3".encode(), b""),
                   (f"{a}:4".encode(), b"3,4"), (f"{b}:2".encode(), b"5,6")]


def test_whole_file_identity_and_tfrecord_readers(tmp_path: Path) -> None:
    path = tmp_path / "w.txt"
    path.write_bytes(b"all of it")
    assert _read_all(tw.WholeFileReader(), [str(path)]) == [(str(path).encode(), b"all of it")]
    assert _read_all(tw.IdentityReader(), ["x", "y"]) == [(b"x", b"x"), (b"y", b"y")]
    rec = str(tmp_path / "r.tfrecord")
    with tw.io.TFRecordWriter(rec) as writer:
        for data in (b"one", b"three"):
            writer.write(data)
    # keys carry each record's byte offset: 16 bytes of framing around the data
    assert _read_all(tw.TFRecordReader(), [rec]) == [(f"{rec}:0".encode(), b"one"),
                                                     (f"{rec}:19".encode(), b"three")]


def test_read_up_to_returns_partial_batch_at_the_end(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(bytes(range(5)))
    queue, fill, close = _files_queue([str(path), str(path)])
    reader = tw.FixedLengthRecordReader(1, name="ones")
    keys, values = reader.read_up_to(queue, 4)
    assert keys.shape.as_list() == [None] and reader.reader_ref.op.name == "ones"
    with tw.Session() as sess:
        sess.run(fill)
        sess.run(close)
        sizes = []
        while True:
            try:
                sizes.append(len(sess.run(values)))
            except errors.OutOfRangeError:
                break
        assert sizes == [4, 4, 2]
        sess.run(reader.reset())
        assert sess.run(reader.num_records_produced()) == 0


def test_missing_file_and_bad_record_bytes_fail_the_run(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.bin")
    queue, fill, close = _files_queue([missing])
    key, _ = tw.FixedLengthRecordReader(4).read(queue)
    bad, _ = tw.FixedLengthRecordReader(0).read(queue.queue_ref)
    with tw.Session() as sess:
        sess.run(fill)
        with pytest.raises(errors.NotFoundError, match="nope.bin"):
            sess.run(key)
        with pytest.raises(errors.InvalidArgumentError, match="record_bytes must be > 0"):
            sess.run(bad)


def test_string_input_producer_feeds_a_reader_with_queue_runners(tmp_path: Path) -> None:
    paths = []
    for i in range(3):
        paths.append(str(tmp_path / f"{i}.bin"))
        Path(paths[-1]).write_bytes(bytes([i]) * 4)
    producer = tw.train.string_input_producer(paths, num_epochs=2, shuffle=False)
    _, value = tw.FixedLengthRecordReader(2).read(producer)
    with tw.Session() as sess:
        sess.run(tw.local_variables_initializer())
        coord = tw.train.Coordinator()
        threads = tw.train.start_queue_runners(sess, coord=coord)
        got = []
        try:
            while True:
                got.append(sess.run(value))
        except errors.OutOfRangeError:
            pass
        coord.request_stop()
        coord.join(threads)
    assert got == [bytes([i, i]) for _ in range(2) for i in range(3) for _ in range(2)]


def test_decode_raw_dtypes_byte_order_and_shape() -> None:
    x = np.array([[1.5, -2.0], [3.0, 4.25]], np.float32)
    rows = tw.constant([x[0].tobytes(), x[1].tobytes()])
    big = tw.decode_raw(np.array(258, ">i4").tobytes(), tw.int32, little_endian=False)
    old_keyword = tw.decode_raw(bytes=b"\x01\x02", out_type=tw.uint8)
    decoded = tw.decode_raw(rows, tw.float32)
    assert decoded.shape.as_list() == [2, None] and decoded.dtype == tw.float32
    with tw.Session() as sess:
        out = sess.run(decoded)
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out, x)
        assert sess.run(big).tolist() == [258]
        assert sess.run(old_keyword).tolist() == [1, 2]
        assert sess.run(tw.decode_raw(tw.constant([b"", b""]), tw.int16)).shape == (2, 0)
        with pytest.raises(errors.InvalidArgumentError, match="not a multiple of 4"):
            sess.run(tw.decode_raw(b"abc", tw.float32))
        with pytest.raises(errors.InvalidArgumentError, match="element 1 has size 1 != 2"):
            sess.run(tw.decode_raw(tw.constant([b"ab", b"c"]), tw.uint8))
    with pytest.raises(TypeError, match="out_type"):
        tw.decode_raw(b"ab", tw.string)
    with pytest.raises(ValueError, match="Exactly one"):
        tw.decode_raw(b"ab", tw.uint8, bytes=b"cd")


def test_decode_raw_uint16_in_both_byte_orders() -> None:
    values = np.array([0, 1, 256, 65535], np.uint16)
    little = tw.decode_raw(values.astype("<u2").tobytes(), tw.uint16)
    big = tw.decode_raw(values.astype(">u2").tobytes(), tw.uint16, little_endian=False)
    with tw.Session() as sess:
        got_little, got_big = sess.run([little, big])
    for got in (got_little, got_big):
        assert got.dtype == np.uint16 and got.tolist() == values.tolist()
    # TF 1.x's DecodeRaw has no uint32/uint64 out_type
    with pytest.raises(TypeError, match="uint32 is not in the list of allowed values"):
        tw.decode_raw(b"\x00" * 4, tw.uint32)
