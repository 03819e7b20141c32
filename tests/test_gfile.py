"""tw.io.gfile / tw.gfile: GFile's text and binary modes, the path functions, and TF's error
types, on the local filesystem."""

from __future__ import annotations

import os
import pathlib

import pytest

import tensorweave as tf
from tensorweave.engine import errors
from tensorweave.platform import gfile as gf


def write(path: pathlib.Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def test_text_mode_gives_str_and_binary_mode_bytes(tmp_path) -> None:
    path = str(tmp_path / "f.txt")
    with gf.GFile(path, "w") as f:
        f.write("héllo\n")
        f.write(b"world\n")
    with gf.GFile(path) as f:
        assert f.read() == "héllo\nworld\n"
    with gf.GFile(path, "rb") as f:
        assert f.read() == "héllo\nworld\n".encode()
    with gf.GFile(path, "a") as f:
        f.write("more")
    assert (tmp_path / "f.txt").read_bytes() == "héllo\nworld\nmore".encode()
    with pytest.raises(TypeError, match="Expected binary or unicode string"):
        gf.GFile(path, "w").write(3)


def test_lines_iteration_seek_tell_and_size(tmp_path) -> None:
    path = write(tmp_path / "lines", b"a\nbc\n\nd")
    f = gf.GFile(path, "rb")
    assert f.size() == 7 and f.seekable() and (f.name, f.mode) == (path, "rb")
    assert f.readline() == b"a\n" and f.tell() == 2
    assert f.readlines() == [b"bc\n", b"\n", b"d"]
    assert f.readline() == b""
    f.seek(1)
    assert f.read(3) == b"\nbc"
    f.seek(-2, whence=1)
    assert f.read(1) == b"b"
    f.seek(-1, 2)
    assert f.read() == b"d"
    f.seek(position=0)
    assert list(f) == [b"a\n", b"bc\n", b"\n", b"d"]
    with pytest.raises(TypeError, match="offset argument required"):
        f.seek()
    with pytest.raises(TypeError, match="may not be set simultaneously"):
        f.seek(1, position=1)
    with pytest.raises(errors.InvalidArgumentError, match="Invalid whence argument: 3"):
        f.seek(0, 3)
    with pytest.raises(errors.InvalidArgumentError):
        f.seek(-1)
    f.close()
    assert [line for line in gf.GFile(path)] == ["a\n", "bc\n", "\n", "d"]


def test_files_open_lazily_as_tensorflow(tmp_path) -> None:
    missing = str(tmp_path / "missing")
    f = gf.GFile(missing)  # no error until the first read
    with pytest.raises(errors.NotFoundError, match="missing"):
        f.read()
    with gf.GFile(missing, "w"):
        pass
    assert not os.path.exists(missing)  # TF creates the file on the first write
    with gf.GFile(missing, "w+") as f:
        f.write("xyz")
        f.flush()
        f.seek(0)
        assert f.read() == "xyz"
    with gf.GFile(missing, "r+b") as f:
        f.seek(1)
        f.write(b"Y")
    assert (tmp_path / "missing").read_bytes() == b"xYz"


def test_modes_and_permissions(tmp_path) -> None:
    path = write(tmp_path / "f", b"data")
    with pytest.raises(errors.InvalidArgumentError, match="mode is not 'r' or 'w'"):
        gf.GFile(path, "x")
    with pytest.raises(errors.PermissionDeniedError, match="File isn't open for writing"):
        gf.GFile(path, "r").write("x")
    with pytest.raises(errors.PermissionDeniedError, match="File isn't open for reading"):
        gf.GFile(path, "a").read()
    with pytest.raises(errors.FailedPreconditionError):  # EISDIR
        gf.GFile(str(tmp_path), "w").write("x")
    assert gf.Open is gf.GFile and gf.FastGFile is gf.GFile


def test_exists_isdir_stat(tmp_path) -> None:
    path = write(tmp_path / "f", b"12345")
    assert gf.exists(path) and gf.exists(tmp_path) and not gf.exists(tmp_path / "nope")
    assert gf.isdir(str(tmp_path)) and not gf.isdir(path) and not gf.isdir(tmp_path / "nope")
    st = gf.stat(path)
    assert (st.length, st.is_directory) == (5, False)
    assert st.mtime_nsec == os.stat(path).st_mtime_ns
    assert gf.stat(tmp_path).is_directory
    with pytest.raises(errors.NotFoundError):
        gf.stat(tmp_path / "nope")
    assert gf.exists(path.encode()) and gf.exists(f"file://{path}")


def test_mkdir_makedirs_listdir(tmp_path) -> None:
    gf.mkdir(tmp_path / "a")
    with pytest.raises(errors.AlreadyExistsError):
        gf.mkdir(tmp_path / "a")
    with pytest.raises(errors.NotFoundError):
        gf.mkdir(tmp_path / "x" / "y")
    gf.makedirs(str(tmp_path / "a" / "b" / "c"))
    gf.makedirs(str(tmp_path / "a" / "b"))  # an existing directory is fine
    assert gf.isdir(tmp_path / "a" / "b" / "c")
    file_path = write(tmp_path / "a" / "file", b"")
    with pytest.raises(errors.FailedPreconditionError, match="file is not a directory"):
        gf.makedirs(os.path.join(file_path, "sub"))
    assert sorted(gf.listdir(tmp_path / "a")) == ["b", "file"]
    with pytest.raises(errors.NotFoundError, match="Could not find directory"):
        gf.listdir(file_path)
    with pytest.raises(errors.NotFoundError, match="Could not find directory"):
        gf.listdir(tmp_path / "nope")


def test_glob_follows_tensorflow_patterns(tmp_path) -> None:
    for name in ("a1.txt", "a2.txt", "b.txt", ".hidden.txt", "sub/c.txt"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    root = str(tmp_path)
    assert gf.glob(f"{root}/a?.txt") == [f"{root}/a1.txt", f"{root}/a2.txt"]
    assert gf.glob(f"{root}/*.txt") == [f"{root}/{n}" for n in
                                        (".hidden.txt", "a1.txt", "a2.txt", "b.txt")]
    assert gf.glob(f"{root}/[^a]*.txt") == [f"{root}/.hidden.txt", f"{root}/b.txt"]
    assert gf.glob(f"{root}/*/*.txt") == [f"{root}/sub/c.txt"]
    assert gf.glob([f"{root}/b.txt", f"{root}/a1*"]) == [f"{root}/b.txt", f"{root}/a1.txt"]
    assert gf.glob(f"{root}/nope/*") == []
    assert gf.glob(f"{root}/b.txt") == [f"{root}/b.txt"]


def test_remove_rename_copy(tmp_path) -> None:
    src = write(tmp_path / "src", b"one")
    dst = write(tmp_path / "dst", b"two")
    with pytest.raises(errors.AlreadyExistsError, match="file already exists"):
        gf.copy(src, dst)
    gf.copy(src, dst, overwrite=True)
    assert (tmp_path / "dst").read_bytes() == b"one"
    gf.copy(src, tmp_path / "copy")
    assert (tmp_path / "copy").read_bytes() == b"one"
    with pytest.raises(errors.NotFoundError):
        gf.copy(tmp_path / "nope", tmp_path / "new")
    (tmp_path / "dst").write_bytes(b"two")
    with pytest.raises(errors.AlreadyExistsError, match="file already exists"):
        gf.rename(src, dst)
    assert (tmp_path / "src").exists()
    gf.rename(src, dst, overwrite=True)
    assert not (tmp_path / "src").exists() and (tmp_path / "dst").read_bytes() == b"one"
    gf.rename(dst, tmp_path / "moved")
    assert (tmp_path / "moved").read_bytes() == b"one"
    with pytest.raises(errors.NotFoundError):
        gf.rename(tmp_path / "nope", tmp_path / "new")
    (tmp_path / "d").mkdir()
    gf.rename(tmp_path / "d", tmp_path / "e")
    assert gf.isdir(tmp_path / "e")
    gf.remove(tmp_path / "moved")
    assert not (tmp_path / "moved").exists()
    with pytest.raises(errors.NotFoundError):
        gf.remove(tmp_path / "moved")
    with pytest.raises(errors.FailedPreconditionError):  # a directory: EISDIR
        gf.remove(tmp_path / "e")


def test_rmtree(tmp_path) -> None:
    (tmp_path / "t" / "a" / "b").mkdir(parents=True)
    (tmp_path / "t" / "a" / "f").write_bytes(b"x")
    gf.rmtree(str(tmp_path / "t"))
    assert not (tmp_path / "t").exists()
    with pytest.raises(errors.NotFoundError):
        gf.rmtree(tmp_path / "t")
    path = write(tmp_path / "file", b"x")
    with pytest.raises(errors.FailedPreconditionError):
        gf.rmtree(path)


def make_tree(root: pathlib.Path) -> str:
    for name in ("x/y/f1", "x/f2", "top"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"")
    return str(root)


def test_walk_orders_and_pruning(tmp_path) -> None:
    root = make_tree(tmp_path)
    top_down = [(d, sorted(s), sorted(f)) for d, s, f in gf.walk(root)]
    assert top_down == [(root, ["x"], ["top"]), (f"{root}/x", ["y"], ["f2"]),
                        (f"{root}/x/y", [], ["f1"])]
    assert [d for d, _, _ in gf.walk(root, topdown=False)] == [f"{root}/x/y", f"{root}/x", root]
    assert [d for d, _, _ in gf.Walk(root, in_order=False)] == [f"{root}/x/y", f"{root}/x",
                                                                root]
    pruned = []
    for dirname, subdirs, _ in gf.walk(root):
        pruned.append(dirname)
        subdirs.clear()  # removing names skips them, as os.walk
    assert pruned == [root]
    assert list(gf.walk(tmp_path / "nope")) == []
    seen: list[errors.OpError] = []
    assert list(gf.walk(tmp_path / "nope", onerror=seen.append)) == []
    assert len(seen) == 1 and isinstance(seen[0], errors.NotFoundError)


def test_other_filesystems_are_unimplemented(tmp_path) -> None:
    with pytest.raises(errors.UnimplementedError,
                       match="File system scheme 'gs' not implemented"):
        gf.exists("gs://bucket/file")
    with pytest.raises(errors.UnimplementedError, match="'hdfs'"):
        gf.GFile("hdfs://host/file").read()
    with pytest.raises(errors.UnimplementedError, match="'s3'"):
        gf.makedirs("s3://bucket/dir")
    assert not gf.isdir("gs://bucket/dir")  # TF's isdir is False on any error


def test_namespaces_and_tf1_aliases() -> None:
    assert tf.io.gfile is tf.gfile is gf
    pairs = [(gf.Exists, gf.exists), (gf.MakeDirs, gf.makedirs), (gf.MkDir, gf.mkdir),
             (gf.ListDirectory, gf.listdir), (gf.Glob, gf.glob), (gf.Remove, gf.remove),
             (gf.Rename, gf.rename), (gf.Copy, gf.copy), (gf.IsDirectory, gf.isdir),
             (gf.DeleteRecursively, gf.rmtree), (gf.Stat, gf.stat)]
    assert all(a is b for a, b in pairs)
    assert set(gf.__all__) <= set(dir(gf))
