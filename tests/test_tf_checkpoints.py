"""Checkpoints shared with TensorFlow: the model of ``tests/data/tf_checkpoints/tf_model.py``,
built with tensorweave, restores the checkpoints TF wrote (v1 behaviour with ref variables, v2
behaviour with resource variables, sharded over two devices), continues training with TF's
losses, and saves checkpoints byte-identical to TF's. With ``TENSORWEAVE_TF_PYTHON`` naming a
Python that has TF, TF restores what tensorweave saved and continues with tensorweave's losses.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.python.tools.inspect_checkpoint import print_tensors_in_checkpoint_file

DATA = Path(__file__).parent / "data" / "tf_checkpoints"
BEHAVIOURS = ["v1", "v2", "sharded"]
STEPS_BEFORE, STEPS_AFTER = 5, 3
VOCAB = [b"a", b"", b"b\x00c", b"\xff" * 300]


def prefix(behaviour: str) -> str:
    return str(DATA / behaviour / f"model.ckpt-{STEPS_BEFORE}")


def tf_losses(behaviour: str) -> list[float]:
    return json.loads((DATA / behaviour / "losses.json").read_text())


def build(extras_device: str | None = None, partitions: int = 2):
    """tf_model.build with tensorweave (initial values differ: they are restored)."""
    rng = np.random.RandomState(0)
    x, y = tf.constant(rng.randn(8, 4).astype(np.float32)), tf.constant(
        rng.randint(0, 3, size=8).astype(np.int32))
    with tf.variable_scope("model"):
        w1 = tf.get_variable("w1", [4, 6], partitioner=tf.fixed_size_partitioner(partitions))
        b1 = tf.get_variable("b1", [6], initializer=tf.zeros_initializer())
        hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
        with tf.variable_scope("dense"):
            kernel = tf.get_variable("kernel", [6, 3])
            bias = tf.get_variable("bias", [3], initializer=tf.zeros_initializer())
        logits = tf.matmul(hidden, kernel) + bias
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    step = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=step)
    with tf.variable_scope("extras"), tf.device(extras_device):
        extras = [tf.get_variable("vocab", initializer=tf.constant([b""] * 4)),
                  tf.get_variable("counts", [3], tf.int64, initializer=tf.zeros_initializer()),
                  tf.get_variable("flags", [1, 2], tf.bool, initializer=tf.zeros_initializer()),
                  tf.get_variable("half", [2], tf.float16, initializer=tf.zeros_initializer())]
    return loss, train, extras


def two_cpus() -> tf.Session:
    return tf.Session(config=tf.ConfigProto(device_count={"CPU": 2}))


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_tensorweave_continues_training_from_a_tf_checkpoint(behaviour: str) -> None:
    loss, train, extras = build()
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, prefix(behaviour))
        losses = [float(sess.run([loss, train])[0]) for _ in range(STEPS_AFTER)]
        step = sess.run(tf.train.get_global_step())
        vocab, counts, flags, half = sess.run(extras)
    np.testing.assert_allclose(losses, tf_losses(behaviour), rtol=1e-5)
    assert step == STEPS_BEFORE + STEPS_AFTER
    assert vocab.tolist() == VOCAB
    assert counts.dtype == np.int64 and counts.tolist() == [1, -2, 2 ** 40]
    assert flags.dtype == np.bool_ and flags.tolist() == [[True, False]]
    assert half.dtype == np.float16 and half.tolist() == [1.5, -0.25]


@pytest.mark.parametrize("behaviour", ["v1", "sharded"])
def test_a_restored_checkpoint_saves_byte_identical_to_tfs(behaviour: str, tmp_path) -> None:
    sharded = behaviour == "sharded"
    build("/cpu:1" if sharded else None)
    saver = tf.train.Saver(sharded=sharded)
    with two_cpus() as sess:
        saver.restore(sess, prefix(behaviour))
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=STEPS_BEFORE,
                          write_meta_graph=False)
    ours = sorted(os.listdir(tmp_path))
    assert ours == sorted(f for f in os.listdir(DATA / behaviour) if f != "losses.json")
    assert len([f for f in ours if ".data-" in f]) == (2 if sharded else 1)
    for name in ours:
        assert (tmp_path / name).read_bytes() == (DATA / behaviour / name).read_bytes(), name
    assert tf.train.latest_checkpoint(str(tmp_path)) == path


def test_a_checkpoint_restores_into_another_partitioning() -> None:
    loss, train, _ = build(partitions=4)
    by_name = {v.op.name: v for v in tf.global_variables()}
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, prefix("v1"))
        part, slot = sess.run([by_name["model/w1/part_3"], by_name["model/w1/part_3/Adam"]])
        losses = [float(sess.run([loss, train])[0]) for _ in range(STEPS_AFTER)]
    np.testing.assert_array_equal(part, tf.train.load_variable(prefix("v1"), "model/w1")[3:])
    np.testing.assert_array_equal(slot, tf.train.load_variable(prefix("v1"),
                                                               "model/w1/Adam")[3:])
    np.testing.assert_allclose(losses, tf_losses("v1"), rtol=1e-5)


def test_reader_list_and_load_read_tf_checkpoints() -> None:
    reader = tf.train.NewCheckpointReader(prefix("v1"))
    shapes = reader.get_variable_to_shape_map()
    assert shapes["model/w1"] == [4, 6] and shapes["model/w1/Adam_1"] == [4, 6]
    assert shapes["global_step"] == [] and shapes["extras/vocab"] == [4]
    assert not any(name.startswith("\x00") or "part_" in name for name in shapes)
    assert len(shapes) == 19  # 22 variables, of them 3 partitioned in 2
    dtypes = reader.get_variable_to_dtype_map()
    assert (dtypes["extras/vocab"], dtypes["extras/half"], dtypes["global_step"]) == (
        tf.string, tf.float16, tf.int64)
    assert reader.get_tensor("extras/vocab").tolist() == VOCAB
    assert reader.has_tensor("model/b1") and not reader.has_tensor("model/w1/part_0")
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found"):
        reader.get_tensor("nope")
    listed = tf.train.list_variables(str(DATA / "v2"))
    assert ("model/w1", [4, 6]) in listed and [n for n, _ in listed] == sorted(shapes)
    for behaviour in BEHAVIOURS:
        np.testing.assert_array_equal(
            tf.train.load_variable(str(DATA / behaviour), "model/w1:0"),
            tf.train.load_variable(prefix("v1"), "model/w1"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_tensors_in_checkpoint_file(prefix("sharded"), "extras/counts", False)
    assert out.getvalue().split("\n")[0] == "tensor_name:  extras/counts"
    assert "1099511627776" in out.getvalue()


def test_init_from_checkpoint_reads_a_tf_checkpoint() -> None:
    with tf.variable_scope("new"):
        w1 = tf.get_variable("w1", [4, 6], partitioner=tf.fixed_size_partitioner(3))
        vocab = tf.get_variable("vocab", initializer=tf.constant([b""] * 4))
    tf.train.init_from_checkpoint(str(DATA / "v2"), {"model/w1": "new/w1",
                                                     "extras/vocab": vocab})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_w1, got_vocab = sess.run([w1.as_tensor(), vocab])
    np.testing.assert_array_equal(got_w1, tf.train.load_variable(prefix("v2"), "model/w1"))
    assert got_vocab.tolist() == VOCAB


TF_PYTHON = os.environ.get("TENSORWEAVE_TF_PYTHON")


@pytest.mark.skipif(not TF_PYTHON, reason="TENSORWEAVE_TF_PYTHON does not name a Python with "
                                          "TensorFlow, so TF cannot read tensorweave's checkpoint")
@pytest.mark.parametrize("sharded", [False, True])
def test_tf_continues_training_from_a_tensorweave_checkpoint(sharded: bool, tmp_path) -> None:
    loss, train, _ = build("/cpu:1" if sharded else None)
    saver = tf.train.Saver(sharded=sharded)
    with two_cpus() as sess:
        saver.restore(sess, prefix("v1"))
        for _ in range(2):  # so that the checkpoint holds tensorweave's own training
            sess.run(train)
        path = saver.save(sess, str(tmp_path / "tw.ckpt"), global_step=tf.train.get_global_step())
        ours = [float(sess.run([loss, train])[0]) for _ in range(STEPS_AFTER)]
    assert len([f for f in os.listdir(tmp_path) if ".data-" in f]) == (2 if sharded else 1)
    done = subprocess.run([TF_PYTHON, str(DATA / "tf_model.py"), "continue", path],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(theirs["losses"], ours, rtol=1e-5)
    assert theirs["global_step"] == STEPS_BEFORE + 2 + STEPS_AFTER
