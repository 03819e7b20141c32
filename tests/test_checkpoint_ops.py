"""The checkpoint ops (SaveV2, RestoreV2, MergeV2Checkpoints, ShardedFilename/Spec): round
trips, slices, merging, and TF's errors naming the node."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.formats.tensor_bundle import BundleReader

raw = tf.raw_ops


def _save(prefix, names, values, slices=None):
    return raw.SaveV2(prefix=prefix, tensor_names=names,
                      shape_and_slices=slices or [""] * len(names), tensors=values,
                      name="save_it")


def _restore(prefix, names, types, slices=None):
    return raw.RestoreV2(prefix=prefix, tensor_names=names,
                         shape_and_slices=slices or [""] * len(names), dtypes=types,
                         name="restore_it")


def test_save_then_restore_round_trips(tmp_path) -> None:
    prefix = str(tmp_path / "new_dir" / "ck")
    values = [np.arange(6, dtype=np.int64).reshape(2, 3), np.array([b"x", b""], object)]
    save = _save(prefix, ["a", "b"], [tf.constant(v) for v in values])
    restored = _restore(prefix, ["b", "a"], [tf.string, tf.int64])
    with tf.Session() as sess:
        sess.run(save)
        out = sess.run(restored)
    assert sorted(os.listdir(tmp_path / "new_dir")) == ["ck.data-00000-of-00001", "ck.index"]
    np.testing.assert_array_equal(out[1], values[0])
    assert list(out[0]) == [b"x", b""]


def test_slices_save_and_restore_as_tf_specs_say(tmp_path) -> None:
    prefix = str(tmp_path / "ck")
    top, bottom = np.ones((2, 3), np.float32), np.full((1, 3), 2.0, np.float32)
    save = _save(prefix, ["w", "w"], [tf.constant(top), tf.constant(bottom)],
                 ["3 3 0,2:-", "3 3 2,1:0,3"])
    (part,) = _restore(prefix, ["w"], [tf.float32], ["3 3 1,2:1,2"])
    assert part.shape.as_list() == [2, 2]
    (whole,) = _restore(prefix, ["w"], [tf.float32])
    with tf.Session() as sess:
        sess.run(save)
        np.testing.assert_array_equal(sess.run(whole), np.concatenate([top, bottom]))
        np.testing.assert_array_equal(sess.run(part), [[1.0, 1.0], [2.0, 2.0]])
    assert BundleReader(prefix).entry("w").slices


def test_restore_errors_are_tfs_and_name_the_node(tmp_path) -> None:
    prefix = str(tmp_path / "ck")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError) as missing:
            sess.run(_restore(prefix, ["a"], [tf.float32]))
        assert "restore_it" in str(missing.value.node_def or missing.value)
        sess.run(_save(prefix, ["a"], [tf.constant([1.0, 2.0])]))
        with pytest.raises(tf.errors.NotFoundError, match="Key b not found"):
            sess.run(_restore(prefix, ["b"], [tf.float32]))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="expected dtype int32 does not equal original dtype float"):
            sess.run(_restore(prefix, ["a"], [tf.int32]))
        data = tmp_path / "ck.data-00000-of-00001"
        data.write_bytes(b"\xff" * data.stat().st_size)
        with pytest.raises(tf.errors.DataLossError, match="ck.data-00000-of-00001"):
            sess.run(_restore(prefix, ["a"], [tf.float32]))


def test_lengths_must_agree_at_graph_time() -> None:
    with pytest.raises(ValueError):
        _save("p", ["a", "b"], [tf.constant(1.0)])


def test_merge_renumbers_the_data_files_and_drops_the_temporary_dir(tmp_path) -> None:
    temp = tmp_path / "ck_temp_x"
    parts = [str(temp / f"part-0000{i}-of-00002") for i in range(2)]
    dest = str(tmp_path / "ck")
    saves = [_save(parts[0], ["a"], [tf.constant([1.0])]),
             _save(parts[1], ["b"], [tf.constant([2, 3])])]
    merge = raw.MergeV2Checkpoints(checkpoint_prefixes=parts, destination_prefix=dest)
    assert merge.type == "MergeV2Checkpoints" and merge.get_attr("delete_old_dirs") is True
    with tf.Session() as sess:
        sess.run(saves)
        sess.run(merge)
    assert not temp.exists()
    assert sorted(os.listdir(tmp_path)) == ["ck.data-00000-of-00002", "ck.data-00001-of-00002",
                                            "ck.index"]
    reader = BundleReader(dest)
    assert reader.entry("b").shard_id == 1
    np.testing.assert_array_equal(reader.read("b"), [2, 3])
    np.testing.assert_array_equal(reader.read("a"), [1.0])


def test_sharded_names() -> None:
    with tf.Session() as sess:
        assert sess.run(raw.ShardedFilename(basename="p", shard=3, num_shards=12)) == \
            b"p-00003-of-00012"
        assert sess.run(raw.ShardedFilespec(basename="p", num_shards=12)) == b"p-?????-of-00012"


def test_slice_specs_parse_as_tfs_and_reject_malformed_text() -> None:
    from tensorweave.formats import slice_spec
    from tensorweave.formats.tensor_bundle import Extent

    assert slice_spec.parse("4 3 1,2:-") == ((4, 3), (Extent(1, 2), Extent(0, 3)))
    for bad in ("4 3 1,2", "1,2", "4 x -", "4 1:2"):
        with pytest.raises(ValueError):
            slice_spec.parse(bad)
