"""tf.data's file and generator sources and interleave: TFRecordDataset, TextLineDataset,
Dataset.list_files, Dataset.interleave and Dataset.from_generator, against Python references,
with their errors; and the end-to-end path Examples -> TFRecord file -> TFRecordDataset ->
parse_single_example -> batch."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.formats.tf_record import encode_record
from tensorweave.train.local_cluster import LocalCluster
from tests.datasets import elements, fresh_graph  # noqa: F401 - the fixture


def write_records(path: Path, records: list[bytes], options: object = None) -> str:
    with tw.io.TFRecordWriter(str(path), options) as writer:
        for r in records:
            writer.write(r)
    return str(path)


def test_examples_through_a_tfrecord_file_parse_and_batch(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    images = rng.random((5, 2, 3), dtype=np.float32)
    labels = np.arange(5, dtype=np.int64) * 10
    path = str(tmp_path / "train.tfrecord")
    with tw.io.TFRecordWriter(path) as writer:
        for image, label in zip(images, labels):
            ex = tw.train.Example()
            ex.features.feature["image"].float_list.value.extend(image.ravel().tolist())
            ex.features.feature["label"].int64_list.value.append(int(label))
            ex.features.feature["name"].bytes_list.value.append(f"img{label}".encode())
            writer.write(ex.SerializeToString())
    features = {"image": tw.io.FixedLenFeature([2, 3], tw.float32),
                "label": tw.io.FixedLenFeature([], tw.int64),
                "name": tw.io.FixedLenFeature([], tw.string)}
    dataset = tw.data.TFRecordDataset(path).map(
        lambda record: tw.io.parse_single_example(record, features)).batch(2)
    assert dataset.output_types == {"image": tw.float32, "label": tw.int64, "name": tw.string}
    assert dataset.output_shapes["image"] == tw.TensorShape([None, 2, 3])
    got = elements(dataset)
    assert [len(b["label"]) for b in got] == [2, 2, 1]
    np.testing.assert_array_equal(np.concatenate([b["image"] for b in got]), images)
    np.testing.assert_array_equal(np.concatenate([b["label"] for b in got]), labels)
    assert got[0]["image"].dtype == np.float32 and got[0]["label"].dtype == np.int64
    assert [n for b in got for n in b["name"]] == [f"img{v}".encode() for v in labels]


def test_tfrecord_dataset_files_in_order_compressed_and_parallel(tmp_path: Path) -> None:
    a = write_records(tmp_path / "a", [b"a0", b"a1", b"a2"], "GZIP")
    b = write_records(tmp_path / "b", [b"b0"], "GZIP")
    ds = tw.data.TFRecordDataset([a, b], compression_type="GZIP")
    assert ds.output_types == tw.string and ds.output_shapes == tw.TensorShape([])
    assert elements(ds) == [b"a0", b"a1", b"a2", b"b0"]
    parallel = tw.data.TFRecordDataset([a, b], "GZIP", num_parallel_reads=2)
    assert elements(parallel) == [b"a0", b"b0", b"a1", b"a2"]  # interleaved, one at a time
    names = tw.data.Dataset.from_tensor_slices([b, a])
    assert elements(tw.data.TFRecordDataset(names, "GZIP")) == [b"b0", b"a0", b"a1", b"a2"]
    files = tw.placeholder(tw.string, [None])
    fed = tw.data.TFRecordDataset(files, "GZIP")
    assert elements(fed, {files: [b]}) == [b"b0"]


def test_tfrecord_dataset_errors(tmp_path: Path) -> None:
    missing = tw.data.TFRecordDataset(str(tmp_path / "missing.tfrecord"))
    it = missing.make_one_shot_iterator()
    nxt = it.get_next(name="next_record")
    with tw.Session() as s, pytest.raises(errors.NotFoundError) as info:
        s.run(nxt)
    assert "missing.tfrecord; No such file or directory" in str(info.value)
    assert "[[node next_record (op: IteratorGetNext)" in str(info.value)
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(encode_record(b"ok") + b"\x05" + bytes(11))
    got: list = []
    with pytest.raises(errors.DataLossError, match="corrupted record at 18"):
        got.extend(elements(tw.data.TFRecordDataset(str(bad))))
    with pytest.raises(errors.InvalidArgumentError, match="Unsupported compression_type: BZ2"):
        elements(tw.data.TFRecordDataset(str(bad), compression_type="BZ2"))
    with pytest.raises(TypeError, match="`filenames` must be a `tf.Tensor` of `tf.string`"):
        tw.data.TFRecordDataset([1, 2])
    with pytest.raises(ValueError, match="rank at most 1"):
        tw.data.TFRecordDataset([["a"]])
    with pytest.raises(TypeError, match="scalar `tf.string` elements"):
        tw.data.TFRecordDataset(tw.data.Dataset.range(3))


def test_text_line_dataset(tmp_path: Path) -> None:
    plain = tmp_path / "a.txt"
    plain.write_bytes(b"one\r\ntwo\n\nthree")
    zipped = tmp_path / "b.txt.gz"
    zipped.write_bytes(gzip.compress(b"x\ny\n"))
    assert elements(tw.data.TextLineDataset(str(plain))) == [b"one", b"two", b"", b"three"]
    assert elements(tw.data.TextLineDataset([str(zipped)], "GZIP")) == [b"x", b"y"]
    lengths = tw.data.TextLineDataset(str(plain)).map(tw.strings.length)
    assert elements(lengths) == [3, 3, 0, 5]


def test_list_files(tmp_path: Path) -> None:
    for name in ["b.rec", "a.rec", "c.txt", "d.rec"]:
        (tmp_path / name).write_bytes(b"")
    pattern = str(tmp_path / "*.rec")
    ordered = elements(tw.data.Dataset.list_files(pattern, shuffle=False))
    assert ordered == [str(tmp_path / n).encode() for n in ["a.rec", "b.rec", "d.rec"]]
    both = tw.data.Dataset.list_files([str(tmp_path / "c.*"), pattern], shuffle=False)
    assert elements(both)[0] == str(tmp_path / "c.txt").encode()
    shuffled = tw.data.Dataset.list_files(pattern, seed=3).repeat(4)
    got = elements(shuffled)
    passes = [got[i:i + 3] for i in range(0, 12, 3)]
    assert all(sorted(p) == ordered for p in passes)
    assert len({tuple(p) for p in passes}) > 1  # a new order on each pass
    with pytest.raises(errors.InvalidArgumentError, match="No files matched pattern: .*zzz"):
        elements(tw.data.Dataset.list_files(str(tmp_path / "zzz*")))


def test_interleave_matches_tfs_documented_order() -> None:
    # the example of tf.data.Dataset.interleave's documentation
    ds = tw.data.Dataset.range(1, 6).interleave(
        lambda x: tw.data.Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    assert elements(ds) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3,
                            4, 4, 5, 5, 5, 5, 5, 5]


@pytest.mark.parametrize(("cycle", "block", "expected"), [
    (1, 1, [300, 301, 302, 100, 400, 401, 402, 403, 200, 201, 500, 501, 502, 503, 504]),
    # a slot whose dataset ends passes the turn on; it takes the next input when its turn
    # comes back (traced by hand through TF's InterleaveDatasetOp)
    (2, 1, [300, 100, 301, 302, 400, 401, 402, 200, 403, 201, 500, 501, 502, 503, 504]),
    (3, 2, [300, 301, 100, 400, 401, 302, 402, 403, 200, 201, 500, 501, 502, 503, 504]),
])
def test_interleave_with_uneven_inner_datasets(cycle: int, block: int,
                                               expected: list[int]) -> None:
    sizes = [3, 1, 4, 0, 2, 5]
    ds = tw.data.Dataset.from_tensor_slices(np.array(sizes, np.int64)).interleave(
        lambda n: tw.data.Dataset.range(n).map(lambda v: v + n * 100),
        cycle_length=cycle, block_length=block)
    assert elements(ds) == expected


def test_interleave_errors() -> None:
    with pytest.raises(TypeError, match="must return a `Dataset`"):
        tw.data.Dataset.range(2).interleave(lambda x: x, cycle_length=1)
    bad = tw.data.Dataset.range(2).interleave(lambda x: tw.data.Dataset.range(x),
                                              cycle_length=0)
    with pytest.raises(errors.InvalidArgumentError, match="cycle_length must be greater"):
        elements(bad)


def test_from_generator_types_shapes_and_args() -> None:
    calls = []

    def gen(n: np.ndarray, word: bytes) -> Iterator:
        calls.append((int(n), word))
        for i in range(int(n)):
            yield i, [i * 0.5, 1], {"w": word * i}

    ds = tw.data.Dataset.from_generator(gen, (tw.int64, tw.float32, {"w": tw.string}),
                                        ((), (2,), {"w": ()}), args=(3, "ab"))
    assert ds.output_types == (tw.int64, tw.float32, {"w": tw.string})
    assert ds.output_shapes == (tw.TensorShape([]), tw.TensorShape([2]),
                                {"w": tw.TensorShape([])})
    got = elements(ds.repeat(2))
    assert [int(i) for i, _, _ in got] == [0, 1, 2, 0, 1, 2]
    np.testing.assert_array_equal(got[2][1], np.array([1.0, 1.0], np.float32))
    assert got[2][1].dtype == np.float32 and got[2][2]["w"] == b"abab"
    assert calls == [(3, b"ab"), (3, b"ab")]  # each pass calls the generator anew
    unknown = tw.data.Dataset.from_generator(lambda: iter([[1, 2], [3]]), tw.int32)
    assert unknown.output_shapes == tw.TensorShape(None)
    assert [list(v) for v in elements(unknown)] == [[1, 2], [3]]


@pytest.mark.parametrize(("values", "message"), [
    ([[1, 2]], r"`generator` yielded an element of shape \(2,\) where an element of shape "
               r"\(3,\) was expected"),
    ([["x", "y", "z"]], "could not be converted to the expected type. The expected type was "
                        "float32"),
])
def test_from_generator_bad_elements(values: list, message: str) -> None:
    ds = tw.data.Dataset.from_generator(lambda: iter(values), tw.float32, [3])
    with pytest.raises(errors.InvalidArgumentError, match=message):
        elements(ds)
    pairs = tw.data.Dataset.from_generator(lambda: iter([1]), (tw.int64, tw.int64))
    with pytest.raises(errors.InvalidArgumentError, match="did not match the expected "
                                                          "structure"):
        elements(pairs)
    with pytest.raises(TypeError, match="`generator` must be callable"):
        tw.data.Dataset.from_generator([1, 2], tw.int64)


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster({"worker": 1}) as local:
        yield local


def test_from_generator_runs_only_in_its_process(cluster: LocalCluster) -> None:
    ds = tw.data.Dataset.from_generator(lambda: iter([1, 2]), tw.int64)
    with tw.device("/job:worker/task:0/cpu:0"):
        nxt = ds.make_one_shot_iterator().get_next()
    with tw.Session(cluster.target("worker", 0)) as sess, \
            pytest.raises(errors.InvalidArgumentError, match="callback pyfunc_.* is not found"):
        sess.run(nxt)
