"""tensorweave.formats.tensor_bundle: TF's V2 checkpoint format. TF-written checkpoints read
exactly (every dtype, strings, slices, two shards); what tensorweave writes reads back; slice keys
are TF's OrderedCode; every corruption or truncation of a file is DataLossError naming it."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from tensorweave.engine import errors
from tensorweave.formats import crc32c, tensor_bundle
from tensorweave.formats.table import build_table, read_table
from tensorweave.formats.tensor_bundle import (
    BundleEntry,
    BundleReader,
    Extent,
    SavedTensor,
    slice_key,
    write_bundle,
)

DATA = Path(__file__).parent / "data" / "tf_checkpoints"


def read_all(prefix: str) -> dict[str, np.ndarray]:
    reader = BundleReader(prefix)
    return {name: reader.read(name) for name in reader.names()}


def test_tf_checkpoints_read_the_same_from_one_or_two_shards() -> None:
    one = BundleReader(str(DATA / "v1" / "model.ckpt-5"))
    two = BundleReader(str(DATA / "sharded" / "model.ckpt-5"))
    assert (one.num_shards, two.num_shards) == (1, 2)
    assert {e.shard_id for e in two.entries.values()} == {0, 1}
    assert one.names() == two.names()
    for name in one.names():
        a, b = one.read(name), two.read(name)
        assert a.dtype == b.dtype and a.shape == b.shape and a.tolist() == b.tolist(), name
    entry = one.entry("model/w1")
    assert entry.shape == (4, 6) and entry.size == 0
    assert entry.slices == ((Extent(0, 2), Extent(0, 6)), (Extent(2, 2), Extent(0, 6)))
    np.testing.assert_array_equal(one.read_slice("model/w1", entry.slices[1]),
                                  one.read("model/w1")[2:])
    np.testing.assert_array_equal(one.read_slice("model/w1", (Extent(1, 2), Extent())),
                                  one.read("model/w1")[1:3])


def test_slice_keys_are_tfs_ordered_code() -> None:
    keys = set(BundleReader(str(DATA / "v1" / "model.ckpt-5")).entries)
    assert slice_key("model/w1", (Extent(2, 2), Extent(0, 6))) in keys
    assert slice_key("a\x00b\xffc", ()) == b"\x00a\x00\xffb\xc3\xbfc\x00\x01\x00"
    # signed numbers: order of the bytes is the order of the numbers, lengths grow by 7 bits
    numbers = [-(2 ** 63), -(2 ** 40), -8193, -8192, -65, -64, -1, 0, 1, 63, 64, 8191, 8192,
               2 ** 40, 2 ** 63 - 1]
    codes = [tensor_bundle._signed_increasing(n) for n in numbers]
    assert codes == sorted(codes)
    assert [len(c) for c in codes] == [10, 6, 3, 2, 2, 1, 1, 1, 1, 1, 2, 2, 3, 6, 10]
    assert (codes[6], codes[7], codes[10]) == (b"\x7f", b"\x80", b"\xc0\x40")


def test_every_dtype_round_trips(tmp_path: Path) -> None:
    values = {
        "f16": np.array([1.5, -0.0, np.inf], np.float16), "f32": np.float32(3.25),
        "f64": np.arange(6.0).reshape(2, 3), "i8": np.array([-128, 127], np.int8),
        "i16": np.array([-1], np.int16), "i32": np.zeros((0, 3), np.int32),
        "i64": np.array([2 ** 62], np.int64), "u8": np.array([255], np.uint8),
        "u16": np.array([65535], np.uint16), "u32": np.array([2 ** 32 - 1], np.uint32),
        "u64": np.array([2 ** 64 - 1], np.uint64), "b": np.array([[True], [False]]),
        "c64": np.array([1 + 2j], np.complex64), "c128": np.array([-1j], np.complex128),
        "s": np.array([[b"", b"x" * 200], [b"\x00", "é".encode()]], dtype=object),
        "s0": np.array(b"scalar", dtype=object),
    }
    prefix = str(tmp_path / "all")
    write_bundle(prefix, [[SavedTensor(k, v) for k, v in values.items()]])
    got = read_all(prefix)
    assert sorted(got) == sorted(values)
    for key, value in values.items():
        value = np.asarray(value)
        assert got[key].dtype == value.dtype and got[key].shape == value.shape, key
        assert got[key].tolist() == value.tolist(), key


def test_slices_from_several_shards_merge_into_one_entry(tmp_path: Path) -> None:
    full = np.arange(12, dtype=np.float32).reshape(4, 3)
    prefix = str(tmp_path / "p")
    write_bundle(prefix, [
        [SavedTensor("w", full[:1], (4, 3), (Extent(0, 1), Extent(0, 3)))],
        [SavedTensor("w", full[1:], (4, 3), (Extent(1, 3), Extent(0, 3))),
         SavedTensor("whole", full, (4, 3), (Extent(0, 4), Extent(0, 3)))],
    ])
    reader = BundleReader(prefix)
    assert reader.names() == ["w", "whole"] and len(reader.entry("w").slices) == 2
    assert reader.entry("whole").slices == ()  # one slice covering it all is a whole tensor
    np.testing.assert_array_equal(reader.read("w"), full)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "p.data-00000-of-00002", "p.data-00001-of-00002", "p.index"]


def test_uncovered_slices_and_unknown_dtypes_are_errors(tmp_path: Path) -> None:
    prefix = str(tmp_path / "p")
    write_bundle(prefix, [[SavedTensor("w", np.ones((1, 3)), (4, 3),
                                       (Extent(0, 1), Extent(0, 3)))]])
    with pytest.raises(errors.NotFoundError, match="do not cover"):
        BundleReader(prefix).read("w")
    # a bfloat16 tensor (DataType 14), which tensorweave has no dtype for
    index = Path(f"{prefix}.index")
    items = read_table(index.read_bytes(), "")
    items.append((b"z", BundleEntry(14, (2,), size=4, crc32c=crc32c.masked_value(
        bytes(4))).encode()))
    index.write_bytes(build_table(items))
    reader = BundleReader(prefix)
    assert reader.shape("z") == (2,)
    with pytest.raises(errors.UnimplementedError, match="Tensor z .* DataType 14"):
        reader.read("z")


def test_missing_files_are_not_found(tmp_path: Path) -> None:
    with pytest.raises(errors.NotFoundError, match="nope.index"):
        BundleReader(str(tmp_path / "nope"))
    shutil.copy(DATA / "v1" / "model.ckpt-5.index", tmp_path / "m.index")
    with pytest.raises(errors.NotFoundError, match="m.data-00000-of-00001"):
        BundleReader(str(tmp_path / "m")).read("model/b1")


@pytest.mark.parametrize("name", ["model.ckpt-5.index", "model.ckpt-5.data-00000-of-00002",
                                  "model.ckpt-5.data-00001-of-00002"])
def test_every_byte_flip_and_truncation_is_data_loss_naming_the_file(name: str,
                                                                     tmp_path: Path) -> None:
    for f in (DATA / "sharded").glob("model.ckpt-5.*"):
        shutil.copy(f, tmp_path / f.name)
    prefix, target = str(tmp_path / "model.ckpt-5"), tmp_path / name
    good = target.read_bytes()
    # the low bit of even bytes, the high (a varint's continuation) bit of odd ones
    damaged = [good[:i] + bytes([good[i] ^ (0x80 if i % 2 else 0x01)]) + good[i + 1:]
               for i in range(len(good))]
    damaged += [good[:n] for n in [*range(0, len(good), 5), len(good) - 1]]
    for data in damaged:
        target.write_bytes(data)
        with pytest.raises(errors.DataLossError, match=str(target)):
            read_all(prefix)
    target.write_bytes(good)
    read_all(prefix)
