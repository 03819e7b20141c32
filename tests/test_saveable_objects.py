"""Saveable objects (`tensorweave.train.saveable_object`) in a `Saver`: a hand-written saveable
in list and dict ``var_list``s and through ``GraphKeys.SAVEABLE_OBJECTS``, real checkpoint files
restored into fresh graphs, string tensors in the checkpoint format, and TF's errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.formats.tensor_bundle import BundleReader
from tensorweave.train.saveable_object import SaveableObject, SaveSpec
from tests.checkpoint_support import read_checkpoint, write_checkpoint


class DoubledSaveable(SaveableObject):
    """Saves a variable doubled under ``<name>-doubled`` and halves it back on restore: a
    saveable whose checkpoint value is not the variable's own."""

    def __init__(self, var: tf.Variable, name: str) -> None:
        self.var = var
        super().__init__(var, [SaveSpec(var.value() * 2.0, "", f"{name}-doubled")], name)

    def restore(self, restored_tensors, restored_shapes):  # noqa: ANN001, ANN201
        assert restored_shapes is None
        return tf.assign(self.var, restored_tensors[0] / 2.0).op


def build(value: list[float] | None = None) -> tuple[tf.Variable, DoubledSaveable]:
    var = tf.Variable(np.array(value or [0.0, 0.0], np.float32), name="hidden")
    return var, DoubledSaveable(var, "thing")


def test_a_saveable_in_a_list_saves_under_its_spec_names(tmp_path: Path) -> None:
    with tf.Graph().as_default():
        var, saveable = build([1.5, -2.0])
        other = tf.Variable(7, name="other")
        saver = tf.train.Saver([saveable, other])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "m"))
            sess.run([tf.assign(var, [9.0, 9.0]), tf.assign(other, 0)])
            saver.restore(sess, path)
            got_var, got_other = sess.run([var, other])
    saved = read_checkpoint(path)
    assert sorted(saved) == ["other", "thing-doubled"]
    np.testing.assert_array_equal(saved["thing-doubled"], np.float32([3.0, -4.0]))
    np.testing.assert_array_equal(got_var, np.float32([1.5, -2.0]))
    assert got_other == 7


def test_a_dict_value_saveable_ignores_its_key_and_restores_in_a_fresh_graph(
        tmp_path: Path) -> None:
    with tf.Graph().as_default():
        _, saveable = build([4.0, 5.0])
        saver = tf.train.Saver({"ignored": saveable})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "m"), global_step=3)
    assert path.endswith("m-3")
    assert list(read_checkpoint(path)) == ["thing-doubled"]
    with tf.Graph().as_default():
        var, saveable = build()
        saver = tf.train.Saver({"ignored": saveable})
        with tf.Session() as sess:
            saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
            np.testing.assert_array_equal(sess.run(var), np.float32([4.0, 5.0]))


def test_the_default_saver_saves_the_saveable_objects_collection(tmp_path: Path) -> None:
    with tf.Graph().as_default():
        var, saveable = build([1.0, 2.0])
        tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS, saveable)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "m"))
    # the variable is saved itself (a global variable) and through the saveable
    assert sorted(read_checkpoint(path)) == ["hidden", "thing-doubled"]


def test_a_saveable_alone_can_be_saved_and_restored(tmp_path: Path) -> None:
    with tf.Graph().as_default():
        var, saveable = build([3.0, 3.0])
        saver = tf.train.Saver([saveable])
        with tf.Session() as sess:
            sess.run(var.initializer)
            path = saver.save(sess, str(tmp_path / "m"))
            sess.run(tf.assign(var, [0.0, 1.0]))
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(var), np.float32([3.0, 3.0]))


def test_missing_key_and_wrong_dtype_are_tf_errors(tmp_path: Path) -> None:
    missing, wrong = str(tmp_path / "missing"), str(tmp_path / "wrong")
    write_checkpoint(missing, {"else": np.zeros(2, np.float32)})
    write_checkpoint(wrong, {"thing-doubled": np.zeros(2, np.int32)})
    with tf.Graph().as_default():
        _, saveable = build()
        saver = tf.train.Saver([saveable])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.NotFoundError, match="thing-doubled not found"):
                saver.restore(sess, missing)
            with pytest.raises(tf.errors.InvalidArgumentError, match="expected dtype float32"):
                saver.restore(sess, wrong)


def test_duplicate_names_and_bad_items_are_rejected() -> None:
    with tf.Graph().as_default():
        var, saveable = build()
        clash = tf.Variable(1.0, name="clash")
        with pytest.raises(ValueError, match="two names"):
            tf.train.Saver([saveable, saveable])
        with pytest.raises(ValueError, match="same name: thing-doubled"):
            tf.train.Saver({"thing-doubled": clash, "s": saveable})
        with pytest.raises(TypeError, match="not a Variable"):
            tf.train.Saver([saveable, "nope"])


def test_save_spec_and_saveable_checks() -> None:
    with tf.Graph().as_default():
        t = tf.constant([1.0])
        with pytest.raises(ValueError, match="slice_spec"):
            SaveSpec(t, "2 0,1", "x")
        with pytest.raises(TypeError, match="Tensor or a callable"):
            SaveSpec([1.0], "", "x")
        with pytest.raises(ValueError, match="needs its dtype"):
            SaveSpec(lambda: t, "", "x")
        lazy = SaveSpec(lambda: t, "", "x", dtype=tf.float32)
        assert lazy.tensor is t and lazy.dtype == tf.float32
        with pytest.raises(ValueError, match="no SaveSpec"):
            SaveableObject(t.op, [], "empty")
        with pytest.raises(NotImplementedError):
            SaveableObject(t.op, [lazy], "base").restore([t], None)


def test_string_tensors_round_trip_through_the_checkpoint_format(tmp_path: Path) -> None:
    path = str(tmp_path / "strings")
    strings = np.array([[b"", b"a"], [b"\x00\xff", "é".encode() * 3]], dtype=object)
    write_checkpoint(path, {"s": strings, "scalar": np.array(b"xyz", dtype=object),
                            "n": np.arange(3)})
    got = read_checkpoint(path)
    assert got["s"].dtype == object and got["s"].tolist() == strings.tolist()
    assert got["scalar"].shape == () and got["scalar"][()] == b"xyz"
    assert tf.train.list_variables(path) == [("n", [3]), ("s", [2, 2]), ("scalar", [])]
    # a damaged length prefix is data loss, not garbage
    data_file = Path(f"{path}.data-00000-of-00001")
    data = bytearray(data_file.read_bytes())
    data[BundleReader(path).entry("scalar").offset] = 0x7F
    data_file.write_bytes(bytes(data))
    with pytest.raises(tf.errors.DataLossError, match=str(data_file)):
        read_checkpoint(path)
