"""Checkpoints: round trips, the state file, max_to_keep, restore in a new process, errors, and
crashes in the middle of a save."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.formats import atomic_file
from tensorweave.formats.tensor_bundle import BundleReader

REPO = Path(__file__).resolve().parents[1]


def make_model():
    w = tf.get_variable("layer/w", [2, 3], dtype=tf.float64,
                        initializer=tf.constant_initializer(np.arange(6.0).reshape(2, 3)))
    step = tf.train.get_or_create_global_step()
    flag = tf.Variable(True, name="flag")
    return w, step, flag


def run_script(source: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(source), *args], env=env,
                          capture_output=True, text=True, timeout=120)


def test_save_and_restore_round_trip(tmp_path) -> None:
    w, step, flag = make_model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([w.assign(w * 10.0), step.assign(7), flag.assign(False)])
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
        assert path == str(tmp_path / "model.ckpt-7")
        sess.run(tf.global_variables_initializer())
        saver.restore(sess, path)
        vw, vstep, vflag = sess.run([w, step, flag])
    np.testing.assert_array_equal(vw, np.arange(6.0).reshape(2, 3) * 10.0)
    assert vw.dtype == np.float64 and vstep == 7 and not vflag
    assert tf.train.list_variables(str(tmp_path)) == [("flag", []), ("global_step", []),
                                                      ("layer/w", [2, 3])]
    np.testing.assert_array_equal(tf.train.load_variable(path, "layer/w"), vw)


def test_restore_makes_uninitialized_variables_usable(tmp_path) -> None:
    w, _, _ = make_model()
    saver = tf.train.Saver([w])
    with tf.Session() as sess:
        sess.run(w.initializer)
        path = saver.save(sess, str(tmp_path / "w"))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(w)
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(w), np.arange(6.0).reshape(2, 3))


def test_max_to_keep_deletes_the_oldest_and_state_file_tracks_them(tmp_path) -> None:
    w, step, _ = make_model()
    saver = tf.train.Saver(max_to_keep=2)
    prefix = str(tmp_path / "model.ckpt")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        paths = [saver.save(sess, prefix, global_step=i) for i in range(4)]
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint", "model.ckpt-2.data-00000-of-00001", "model.ckpt-2.index",
        "model.ckpt-2.meta", "model.ckpt-3.data-00000-of-00001", "model.ckpt-3.index",
        "model.ckpt-3.meta"]
    assert saver.last_checkpoints == paths[2:]
    assert tf.train.latest_checkpoint(str(tmp_path)) == paths[3]
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == paths[3]
    assert state.all_model_checkpoint_paths == paths[2:]
    text = (tmp_path / "checkpoint").read_text()
    assert text.splitlines()[0] == 'model_checkpoint_path: "model.ckpt-3"'


def test_max_to_keep_none_keeps_everything(tmp_path) -> None:
    make_model()
    saver = tf.train.Saver(max_to_keep=None)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(3):
            saver.save(sess, str(tmp_path / "m"), global_step=i)
    assert len([f for f in os.listdir(tmp_path) if f.endswith(".index")]) == 3


def test_recover_last_checkpoints_adopts_a_previous_run(tmp_path) -> None:
    make_model()
    prefix = str(tmp_path / "m")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = tf.train.Saver(max_to_keep=2)
        old = [first.save(sess, prefix, global_step=i) for i in range(2)]
        second = tf.train.Saver(max_to_keep=2)
        second.recover_last_checkpoints(
            tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths)
        second.save(sess, prefix, global_step=2)
    assert not os.path.exists(f"{old[0]}.index") and os.path.exists(f"{old[1]}.index")


def test_a_state_file_as_tf_writes_it_reads_as_a_checkpoint_state(tmp_path) -> None:
    import json

    from tensorweave.formats.checkpoint_state_proto import CheckpointState

    expected = json.loads((REPO / "tests" / "data" / "meta_graph_proto" / "expected.json")
                          .read_text())["checkpoint_state"]["text"]  # TF 2.21's text
    (tmp_path / "checkpoint").write_text(expected)
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert isinstance(state, CheckpointState)
    assert state.model_checkpoint_path == str(tmp_path / "model.ckpt-200")
    assert list(state.all_model_checkpoint_paths) == [str(tmp_path / "model.ckpt-100"),
                                                      str(tmp_path / "model.ckpt-200")]
    assert list(state.all_model_checkpoint_timestamps) == [1.5, 2.25]
    assert state.last_preserved_timestamp == 0.5
    tf.train.update_checkpoint_state(str(tmp_path), str(tmp_path / "model.ckpt-200"),
                                     [str(tmp_path / "model.ckpt-100")])
    assert (tmp_path / "checkpoint").read_text() == expected.split("all_model_checkpoint_t")[0]
    (tmp_path / "checkpoint").write_text("model_checkpoint_path: 3\n")
    with pytest.raises(ValueError, match="Invalid checkpoint state file .*1:24"):
        tf.train.get_checkpoint_state(str(tmp_path))


def test_latest_checkpoint_without_state_is_none(tmp_path) -> None:
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "gone"\n')
    assert tf.train.latest_checkpoint(str(tmp_path)) is None


def test_var_list_as_dict_renames_keys(tmp_path) -> None:
    w, _, _ = make_model()
    other = tf.Variable(np.zeros((2, 3)), name="other")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver({"shared": w}).save(sess, str(tmp_path / "d"))
        tf.train.Saver({"shared": other}).restore(sess, path)
        np.testing.assert_array_equal(sess.run(other), sess.run(w))


def test_restore_errors(tmp_path) -> None:
    w, _, _ = make_model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver([w]).save(sess, str(tmp_path / "only_w"))
        wrong_shape = tf.Variable(np.zeros(4), name="layer/w_")
        wrong_dtype = tf.Variable(np.zeros((2, 3), np.float32))
        with pytest.raises(tf.errors.NotFoundError, match="Key global_step not found"):
            tf.train.Saver().restore(sess, path)
        with pytest.raises(tf.errors.InvalidArgumentError, match="shapes"):
            tf.train.Saver({"layer/w": wrong_shape}).restore(sess, path)
        with pytest.raises(tf.errors.InvalidArgumentError, match="dtype"):
            tf.train.Saver({"layer/w": wrong_dtype}).restore(sess, path)
        with pytest.raises(ValueError, match="not a valid checkpoint"):
            tf.train.Saver([w]).restore(sess, str(tmp_path / "missing"))
        with pytest.raises(ValueError, match="doesn't exist"):
            tf.train.Saver([w]).save(sess, str(tmp_path / "no_dir" / "x"))
    with pytest.raises(ValueError, match="same name"):
        tf.train.Saver([w, w])
    with pytest.raises(ValueError, match="No variables to save"):
        with tf.Graph().as_default():
            tf.train.Saver()


def test_corrupted_checkpoint_is_data_loss(tmp_path) -> None:
    w, _, _ = make_model()
    saver = tf.train.Saver([w])
    with tf.Session() as sess:
        sess.run(w.initializer)
        path = saver.save(sess, str(tmp_path / "c"))
        data_file = Path(f"{path}.data-00000-of-00001")
        data = bytearray(data_file.read_bytes())
        data[-1] ^= 0xFF
        data_file.write_bytes(bytes(data))
        with pytest.raises(tf.errors.DataLossError, match=f"{data_file}.*checksum"):
            saver.restore(sess, path)
        data_file.write_bytes(bytes(data[:20]))
        with pytest.raises(tf.errors.DataLossError, match=str(data_file)):
            saver.restore(sess, path)
        index = Path(f"{path}.index")
        index.write_bytes(index.read_bytes()[:-3])
        with pytest.raises(tf.errors.DataLossError, match=str(index)):
            saver.restore(sess, path)


def test_format_is_tf_v2_bytes_not_pickle(tmp_path) -> None:
    v = tf.Variable(np.arange(3, dtype=np.int32), name="a")
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = tf.train.Saver().save(sess, str(tmp_path / "f"), write_meta_graph=False)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "f.data-00000-of-00001", "f.index"]
    assert (tmp_path / "f.data-00000-of-00001").read_bytes() == np.arange(3, dtype="<i4").tobytes()
    assert (tmp_path / "f.index").read_bytes()[-8:] == bytes.fromhex("57fb808b247547db")
    np.testing.assert_array_equal(BundleReader(path).read("a"), [0, 1, 2])


def test_failed_write_keeps_the_previous_checkpoint(tmp_path, monkeypatch) -> None:
    w, step, _ = make_model()
    saver = tf.train.Saver()
    prefix = str(tmp_path / "model.ckpt")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        good = saver.save(sess, prefix, global_step=1)
        sess.run(w.assign(w * 0.0))

        def failing_fsync(fd):
            raise OSError(5, "Input/output error")

        monkeypatch.setattr(os, "fsync", failing_fsync)
        with pytest.raises(OSError, match="Input/output"):
            saver.save(sess, prefix, global_step=1)  # same path as the good one
        monkeypatch.undo()
        assert sorted(os.listdir(tmp_path)) == [
            "checkpoint", "model.ckpt-1.data-00000-of-00001", "model.ckpt-1.index",
            "model.ckpt-1.meta"]
        assert tf.train.latest_checkpoint(str(tmp_path)) == good
        saver.restore(sess, good)
        np.testing.assert_array_equal(sess.run(w), np.arange(6.0).reshape(2, 3))


MODEL_SCRIPT = """
    import os, sys, time
    import numpy as np
    import tensorweave as tf

    directory, mode = sys.argv[1], sys.argv[2]
    w = tf.get_variable("w", [512, 512], initializer=tf.zeros_initializer())
    step = tf.train.get_or_create_global_step()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        if mode == "restore":
            path = tf.train.latest_checkpoint(directory)
            saver.restore(sess, path)
            print(os.path.basename(path), float(sess.run(w)[3, 4]), int(sess.run(step)))
            sys.exit(0)
        sess.run(tf.global_variables_initializer())
        sess.run([w.assign(tf.ones([512, 512])), step.assign(1)])
        saver.save(sess, os.path.join(directory, "model.ckpt"), global_step=step)
        sess.run([w.assign(tf.ones([512, 512]) * 2.0), step.assign(2)])
        if mode == "hang":  # wait to be killed once the data is written, before it is renamed
            real_fsync = os.fsync

            def hanging_fsync(fd):
                real_fsync(fd)
                open(os.path.join(directory, "hanging"), "w").close()
                time.sleep(120)

            os.fsync = hanging_fsync
        saver.save(sess, os.path.join(directory, "model.ckpt"), global_step=step)
"""


def test_restore_in_a_new_process(tmp_path) -> None:
    saved = run_script(MODEL_SCRIPT, str(tmp_path), "save")
    assert saved.returncode == 0, saved.stderr
    restored = run_script(MODEL_SCRIPT, str(tmp_path), "restore")
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout.split() == ["model.ckpt-2", "2.0", "2"]


def temp_files(directory: Path) -> list[str]:
    return sorted(f for f in os.listdir(directory) if ".tempstate" in f)


def test_process_killed_mid_save_leaves_the_last_checkpoint_restorable(tmp_path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    saver = subprocess.Popen([sys.executable, "-c", textwrap.dedent(MODEL_SCRIPT),
                              str(tmp_path), "hang"], env=env)
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "hanging").exists() and saver.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        saver.send_signal(signal.SIGKILL)
    finally:
        saver.kill()
        assert saver.wait() == -signal.SIGKILL
    (tmp_path / "hanging").unlink()
    debris = temp_files(tmp_path)
    assert [f.split(".tempstate")[0] for f in debris] == ["model.ckpt-2.data-00000-of-00001"]
    assert (tmp_path / debris[0]).stat().st_size == 512 * 512 * 4 + 8  # w and global_step
    assert not (tmp_path / "model.ckpt-2.index").exists()
    restored = run_script(MODEL_SCRIPT, str(tmp_path), "restore")
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout.split() == ["model.ckpt-1", "1.0", "1"]
    # the next save removes what the killed one left behind
    saved = run_script(MODEL_SCRIPT, str(tmp_path), "save")
    assert saved.returncode == 0, saved.stderr
    assert temp_files(tmp_path) == []


def test_a_save_leaves_temp_files_of_live_writers_alone(tmp_path) -> None:
    w, _, _ = make_model()
    mine = Path(atomic_file.temp_path(str(tmp_path / "x.index")))
    mine.write_bytes(b"in progress")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    other_host = tmp_path / f"y.index.tempstate{dead}-elsewhere-{'0' * 16}"
    other_host.write_bytes(b"another machine's")
    with tf.Session() as sess:
        sess.run(w.initializer)
        tf.train.Saver([w]).save(sess, str(tmp_path / "w"))
    assert mine.exists() and other_host.exists()


def test_restore_ops_live_with_their_variables() -> None:
    with tf.device("/job:ps/task:1"):
        remote = tf.Variable(np.zeros(3), name="remote")
    tf.train.Saver([remote])  # builds its restore ops now
    graph = tf.get_default_graph()
    assign = graph.get_operation_by_name("save/Assign")
    assert assign.device == remote.device and "loc:@remote" in assign.colocation_groups()
    # as TF's BulkSaverBuilder: the one read of the file is on the client's CPU
    assert graph.get_operation_by_name("save/RestoreV2").device == "/device:CPU:0"


def test_round_trip_with_variables_on_two_devices(tmp_path) -> None:
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.device("/cpu:0"):
        a = tf.Variable([1.0, 2.0], name="a")
    with tf.device("/cpu:1"):
        b = tf.Variable([3.0], name="b")
    saver = tf.train.Saver()
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "two"))
        sess.run([a.assign([0.0, 0.0]), b.assign([0.0])])
        saver.restore(sess, path)
        values = sess.run([a, b])
    np.testing.assert_array_equal(values[0], [1.0, 2.0])
    np.testing.assert_array_equal(values[1], [3.0])


def test_wide_unsigned_variables_round_trip_at_their_extremes(tmp_path) -> None:
    values = {"u16": np.array([0, 65535], np.uint16), "u32": np.array([0, 2**32 - 1], np.uint32),
              "u64": np.array([0, 2**63, 2**64 - 1], np.uint64)}
    variables = [tf.Variable(value, name=name) for name, value in values.items()]
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "uint"))
    with tf.Session() as sess:
        saver.restore(sess, path)
        restored = sess.run(variables)
    for got, expected in zip(restored, values.values()):
        assert got.dtype == expected.dtype and got.tolist() == expected.tolist()
    reader = tf.train.NewCheckpointReader(path)
    assert reader.get_variable_to_dtype_map() == {"u16": tf.uint16, "u32": tf.uint32,
                                                  "u64": tf.uint64}
    on_disk = BundleReader(path).read("u64")
    assert on_disk.dtype == np.uint64 and on_disk.tolist() == values["u64"].tolist()
