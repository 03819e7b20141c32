"""``tensorweave server --file-root DIR`` (a real server process on loopback): every
file-touching op of the task -- ReadFile, WriteFile, MatchingFiles, the readers, file datasets,
``list_files``, text-file lookup tables, a `Saver`'s save and restore ops -- works under DIR
and refuses any path outside it (by ``..``, an absolute path or a symbolic link) with
`PermissionDeniedError` naming the node."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import tensorweave as tf
from tensorweave.train.local_cluster import LocalCluster


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("file_root")
    root, outside = base / "root", base / "outside"
    root.mkdir()
    outside.mkdir()
    for directory in (root, outside):
        (directory / "data.txt").write_bytes(b"a\nb\n")
        with tf.python_io.TFRecordWriter(str(directory / "data.tfrecord")) as writer:
            writer.write(b"record")
    os.symlink(outside / "data.txt", root / "link.txt")
    return {"root": root, "outside": outside}


@pytest.fixture(scope="module")
def target(files: dict[str, Path]) -> Iterator[str]:
    with LocalCluster({"local": 1}, extra_args=["--file-root", str(files["root"])]) as cluster:
        yield cluster.target("local", 0)


def run(target: str, build: object) -> object:
    graph = tf.Graph()
    with graph.as_default(), tf.Session(target) as sess:
        fetch, init = build()  # type: ignore[operator]
        if init is not None:
            sess.run(init)
        return sess.run(fetch)


def read_file(path: Path) -> tuple[object, None]:
    return tf.read_file(str(path), name="read"), None


def whole_file_reader(path: Path) -> tuple[object, object]:
    queue = tf.FIFOQueue(1, tf.string)
    return tf.WholeFileReader(name="reader").read(queue, name="read")[1], \
        queue.enqueue(str(path))


# (initializable iterators: a one-shot one's state outlives the session on the server, by name)
def tf_record_dataset(path: Path) -> tuple[object, object]:
    iterator = tf.data.TFRecordDataset([str(path)]).make_initializable_iterator()
    return iterator.get_next(name="read"), iterator.initializer


def list_files(path: Path) -> tuple[object, object]:
    dataset = tf.data.Dataset.list_files(str(path.parent / "*.txt"), shuffle=False)
    iterator = dataset.make_initializable_iterator()
    return iterator.get_next(name="read"), iterator.initializer


def matching_files(path: Path) -> tuple[object, None]:
    return tf.matching_files(str(path.parent / "*.txt"), name="read"), None


def lookup_table(path: Path) -> tuple[object, object]:
    table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        str(path), tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
        tf.lookup.TextFileIndex.LINE_NUMBER), -1)
    return table.lookup(tf.constant("b"), name="read"), tf.tables_initializer()


READERS = [read_file, whole_file_reader, tf_record_dataset, list_files, matching_files,
           lookup_table]


@pytest.mark.parametrize("build", READERS, ids=lambda f: f.__name__)
def test_file_ops_work_inside_the_root_and_are_refused_outside_it(
        target: str, files: dict[str, Path], build: object) -> None:
    name = "data.tfrecord" if build is tf_record_dataset else "data.txt"
    inside = files["root"] / name
    assert run(target, lambda: build(inside)) is not None  # type: ignore[operator]
    sneaky = files["root"] / ".." / "outside" / name
    for path in (files["outside"] / name, sneaky):
        with pytest.raises(tf.errors.PermissionDeniedError, match="outside this server's "
                                                                  "file root") as info:
            run(target, lambda path=path: build(path))  # type: ignore[operator]
        assert str(files["root"]) in str(info.value)


def test_a_link_out_of_the_root_and_writes_outside_it_are_refused(
        target: str, files: dict[str, Path]) -> None:
    with pytest.raises(tf.errors.PermissionDeniedError) as info:
        run(target, lambda: read_file(files["root"] / "link.txt"))
    assert info.value.node_def.name == "read"
    written = files["root"] / "new" / "out.bin"
    run(target, lambda: (tf.write_file(str(written), b"payload", name="write"), None))
    assert written.read_bytes() == b"payload"
    escaped = files["outside"] / "out.bin"
    with pytest.raises(tf.errors.PermissionDeniedError):
        run(target, lambda: (tf.write_file(str(escaped), b"payload", name="write"), None))
    assert not escaped.exists()


def test_without_a_root_a_server_reads_anywhere(files: dict[str, Path]) -> None:
    with LocalCluster({"local": 1}) as cluster:
        assert run(cluster.target("local", 0),
                   lambda: read_file(files["outside"] / "data.txt")) == b"a\nb\n"


def test_a_saver_in_a_session_on_the_server_keeps_to_the_root(
        target: str, files: dict[str, Path]) -> None:
    # the save ops (SaveV2, ShardedFilename and MergeV2Checkpoints when sharded) and RestoreV2
    # run on the server, so its root confines them
    outside = files["outside"] / "theirs"
    graph = tf.Graph()
    with graph.as_default():
        v = tf.Variable([1.0, 2.0], name="saved_v")
        savers = {"plain": tf.train.Saver(), "sharded": tf.train.Saver(sharded=True)}
        with tf.Session() as local:  # a checkpoint outside the root, written by this client
            local.run(v.initializer)
            savers["plain"].save(local, str(outside))
        with tf.Session(target) as sess:
            sess.run(v.initializer)
            for kind, saver in savers.items():
                inside = files["root"] / f"ckpt_{kind}"
                assert saver.save(sess, str(inside)) == str(inside)
                assert (files["root"] / f"ckpt_{kind}.index").is_file()
                sess.run(v.assign([5.0, 6.0]))
                saver.restore(sess, str(inside))
                assert sess.run(v).tolist() == [1.0, 2.0]
                escaped = files["outside"] / f"ckpt_{kind}"
                with pytest.raises(tf.errors.PermissionDeniedError,
                                   match="outside this server's file root") as info:
                    saver.save(sess, str(escaped))
                assert "save" in info.value.node_def.name
                assert not list(files["outside"].glob(f"ckpt_{kind}*"))
                with pytest.raises(tf.errors.PermissionDeniedError,
                                   match="outside this server's file root") as info:
                    saver.restore(sess, str(outside))
                assert info.value.node_def.name.endswith("RestoreV2")
