"""The master service behind real ``tensorweave server`` processes on loopback: RunStep checks
every feed against its tensor's dtype and static shape on the server, so a client that skips the
Python checks gets `InvalidArgumentError` naming the fed node; kernels on a ps refuse what TF's
refuse."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import errors
from tensorweave.train.local_cluster import LocalCluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster({"ps": 1, "worker": 1}) as local:
        yield local


@pytest.mark.parametrize("value, match", [
    (np.ones((2, 4), np.float32), r"shape \[2,4\] for Tensor 'x:0', which has shape \[\?,3\]"),
    (np.ones(3, np.float32), r"shape \[3\] for Tensor 'x:0'"),
    (np.ones((2, 3), np.float64), r"dtype float64 for Tensor 'x:0', which has dtype float32"),
    (np.array([[b"a", b"b", b"c"]], object), "dtype string for Tensor 'x:0'"),
])
def test_a_feed_the_placeholder_cannot_take_is_refused_by_the_server(
        cluster: LocalCluster, value: np.ndarray, match: str) -> None:
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:ps/task:0"):
            x = tf.placeholder(tf.float32, [None, 3], name="x")
            y = tf.reduce_sum(x * 2.0)
        with tf.Session(cluster.target("worker", 0), graph=graph) as sess:
            assert sess.run(y, {x: np.ones((2, 3), np.float32)}) == 12.0
            # what a client that skips Session.run's checks sends: the master's own RunStep
            for _ in range(2):  # a compiled signature takes the asynchronous path
                with pytest.raises(errors.InvalidArgumentError, match=match) as info:
                    sess._master.run({"x:0": value}, [y.name], [])
                assert info.value.node_def == "x"  # the raw master call: the node's name
            assert sess.run(y, {x: np.ones((1, 3), np.float32)}) == 6.0


def test_assign_add_of_another_shape_fails_on_the_ps_and_leaves_the_variable(
        cluster: LocalCluster) -> None:
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(np.zeros(3, np.float32), name="v")
        with tf.device("/job:worker/task:0"):
            delta = tf.placeholder(tf.float32, name="delta")
            doubled = delta * 2.0
        update = tf.assign_add(v, doubled)
        with tf.Session(cluster.target("worker", 0), graph=graph) as sess:
            sess.run(v.initializer)
            with pytest.raises(errors.InvalidArgumentError,
                               match="must be the same size") as info:
                sess.run(update, {delta: np.ones((2, 1, 3), np.float32)})
            assert info.value.node_def.name == update.op.name
            np.testing.assert_array_equal(sess.run(v), np.zeros(3))
