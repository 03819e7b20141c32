"""`replica_device_setter`: variables round-robin on ps tasks, everything else on the worker."""

from __future__ import annotations

import pytest

import tensorweave as tf

CLUSTER = {"ps": ["ps0:1", "ps1:1"], "worker": ["w0:1", "w1:1"]}


def test_variables_round_robin_over_ps_tasks_and_ops_on_the_worker() -> None:
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        v0 = tf.Variable(1.0, name="v0")
        v1 = tf.Variable(2.0, name="v1")
        v2 = tf.Variable(3.0, name="v2")
        total = v0 + v1
    assert [v.device for v in (v0, v1, v2)] == ["/job:ps/task:0", "/job:ps/task:1",
                                                "/job:ps/task:0"]
    assert total.device == "/job:worker"
    assert v0.initial_value.device == "/job:worker"


def test_cluster_gives_the_number_of_ps_tasks_and_worker_device_is_kept() -> None:
    setter = tf.train.replica_device_setter(cluster=tf.train.ClusterSpec(CLUSTER),
                                            worker_device="/job:worker/task:1")
    with tf.device(setter):
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(1.0, name="b")
        c = tf.Variable(1.0, name="c")
        y = a * 2.0
    assert (a.device, b.device, c.device) == ("/job:ps/task:0", "/job:ps/task:1",
                                              "/job:ps/task:0")
    assert y.device == "/job:worker/task:1"


def test_no_ps_tasks_gives_none() -> None:
    assert tf.train.replica_device_setter() is None
    assert tf.train.replica_device_setter(cluster={"worker": ["w0:1"]}) is None


def test_explicit_inner_devices_win_and_ps_device_fields_merge() -> None:
    setter = tf.train.replica_device_setter(ps_tasks=3, ps_device="/job:ps/device:CPU:0")
    with tf.device(setter):
        v = tf.Variable(1.0, name="v")
        with tf.device("/job:ps/task:2"):
            pinned = tf.Variable(1.0, name="pinned")
        with tf.device("/device:CPU:1"):
            x = tf.constant(1.0, name="x")
    assert v.device == "/job:ps/task:0/device:CPU:0"
    assert pinned.device == "/job:ps/task:2/device:CPU:0"
    assert x.device == "/job:worker/device:CPU:1"


def test_custom_ps_ops_and_strategy() -> None:
    calls = []

    def strategy(op: object) -> int:
        calls.append(op.name)
        return 1

    setter = tf.train.replica_device_setter(ps_tasks=2, ps_ops=["Const"],
                                            ps_strategy=strategy)
    with tf.device(setter):
        c = tf.constant(1.0, name="c")
        v = tf.Variable(1.0, name="v")
    assert c.device == "/job:ps/task:1" and calls[0] == "c"
    assert v.device == "/job:worker"
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        tf.train.replica_device_setter(ps_tasks=1, ps_strategy=3)


def test_merge_devices_false_keeps_an_existing_device() -> None:
    chooser = tf.train.replica_device_setter(ps_tasks=1, merge_devices=False)

    class Op:
        type = "VariableV2"
        device = "/job:other/task:4"

    assert chooser(Op()) == "/job:other/task:4"
