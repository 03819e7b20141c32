"""Resource variables on ps tasks: under `replica_device_setter` on a 1 ps + 2 worker
`LocalCluster` (real server processes), each ``VarHandleOp`` and every op using its handle
(reads, gathers, ``ResourceApply*``) runs on the ps, the workers send the ps only gradients,
and two workers training between-graph share the variables, as with ref variables."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.train.local_cluster import LocalCluster

IDS = [1, 3, 3]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster({"ps": 1, "worker": 2}) as local:
        yield local


def build(cluster: LocalCluster, task: int, use_resource: bool) -> tuple:
    with tf.device(tf.train.replica_device_setter(
            cluster=cluster.cluster, worker_device=f"/job:worker/task:{task}")):
        emb = tf.get_variable("emb", initializer=np.ones((6, 2), np.float32),
                              use_resource=use_resource)
        w = tf.get_variable("w", initializer=np.array([[1.0], [-1.0]], np.float32),
                            use_resource=use_resource)
        step = tf.train.get_or_create_global_step()
        ids = tf.placeholder(tf.int32, [None])
        loss = tf.reduce_mean(tf.square(tf.matmul(tf.gather(emb, ids), w) - 2.0))
        train = tf.train.AdamOptimizer(0.1).minimize(loss, global_step=step)
    return train, loss, ids, [emb, w, step]


def run_steps(cluster: LocalCluster, use_resource: bool) -> tuple[list, list, tf.RunMetadata]:
    with tf.Graph().as_default() as graph:
        train, loss, ids, variables = build(cluster, 0, use_resource)
        metadata = tf.RunMetadata()
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train], {ids: IDS})[0] for _ in range(3)]
            sess.run(train, {ids: IDS}, options=tf.RunOptions(output_partition_graphs=True),
                     run_metadata=metadata)
            final = sess.run(variables)
        placed: dict[str, set[str]] = {}
        for g in metadata.partition_graphs:
            for n in g.node:
                placed.setdefault(n.op, set()).add(n.device)
        sent = [graph.get_tensor_by_name(n.attr["tensor_name"].s.decode()).dtype
                for g in metadata.partition_graphs for n in g.node
                if n.op == "_Send" and n.device.startswith("/job:worker")
                and not n.attr["tensor_name"].s.startswith(b"_ctrl")]
    return losses + final, placed, sent


def test_resource_variables_train_on_the_ps_as_ref_ones(cluster: LocalCluster) -> None:
    resource, placed, sent = run_steps(cluster, use_resource=True)
    ref, _, _ = run_steps(cluster, use_resource=False)
    for a, b in zip(resource, ref):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert resource[-1] == 4
    ps = "/job:ps/replica:0/task:0/device:CPU:0"
    for op in ("VarHandleOp", "ReadVariableOp", "ResourceGather", "ResourceApplyAdam",
               "ResourceScatterAdd", "AssignVariableOp", "AssignSubVariableOp"):
        assert placed[op] == {ps}, op  # (the gather was requested on the worker)
    assert placed["MatMul"] == {"/job:worker/replica:0/task:0/device:CPU:0"}
    assert tf.resource not in sent  # handles never leave the ps
    assert sent


def test_two_workers_share_the_variables_on_the_ps(cluster: LocalCluster) -> None:
    graphs = []
    for task in (0, 1):
        with tf.Graph().as_default() as graph:
            graphs.append((graph, *build(cluster, task, use_resource=True)))
    (g0, train0, _, ids0, vars0), (g1, train1, _, ids1, vars1) = graphs
    with g0.as_default(), tf.Session(cluster.target("worker", 0)) as s0, \
            g1.as_default(), tf.Session(cluster.target("worker", 1)) as s1:
        with g0.as_default():
            s0.run(tf.global_variables_initializer())
        s0.run(train0, {ids0: IDS})
        s1.run(train1, {ids1: IDS})  # worker 1 sees worker 0's update, and adds its own
        s0.run(train0, {ids0: IDS})
        from0, from1 = s0.run(vars0), s1.run(vars1)
    for a, b in zip(from0, from1):
        np.testing.assert_array_equal(a, b)
    assert from0[2] == 3
    untouched = [0, 2, 4, 5]
    np.testing.assert_array_equal(from0[0][untouched], 1.0)
    assert not np.allclose(from0[0][IDS], 1.0)
