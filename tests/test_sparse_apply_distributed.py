"""Sparse gradients across the ps/worker boundary: on a 1 ps + 1 worker `LocalCluster`, an
embedding on the ps trains, and the worker sends the ps only the touched rows (the
`IndexedSlices` values and indices), never the [V, D] table-sized gradient."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.train.local_cluster import LocalCluster

VOCAB, DIM, IDS = 1000, 8, [1, 2, 3, 2, 7]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster({"ps": 1, "worker": 1}) as local:
        yield local


def train_on(cluster: LocalCluster, densify: bool) -> tuple[list[float], np.ndarray, list]:
    """Losses of 4 Adagrad steps, the final table, and the static shapes of the tensors the
    worker sends to the ps in a step."""
    graph = tf.Graph()
    with graph.as_default():
        with tf.device(tf.train.replica_device_setter(cluster=cluster.cluster)):
            table = tf.Variable(np.ones((VOCAB, DIM), np.float32), name="table")
            ids = tf.placeholder(tf.int32, [len(IDS)])
            loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(table, ids)))
            optimizer = tf.train.AdagradOptimizer(0.1)
            pairs = optimizer.compute_gradients(loss)
            assert isinstance(pairs[0][0], tf.IndexedSlices)
            if densify:
                pairs = [(tf.convert_to_tensor(g), v) for g, v in pairs]
            train_op = optimizer.apply_gradients(pairs)
        metadata = tf.RunMetadata()
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train_op], {ids: IDS})[0] for _ in range(3)]
            sess.run(train_op, {ids: IDS},
                     options=tf.RunOptions(output_partition_graphs=True), run_metadata=metadata)
            final = sess.run(table)
        sent = [graph.get_tensor_by_name(n.attr["tensor_name"].s.decode()).shape.as_list()
                for g in metadata.partition_graphs for n in g.node
                if n.op == "_Send" and n.device.startswith("/job:worker")
                and n.attr["recv_device"].s.startswith(b"/job:ps")]
    return losses, final, sent


def test_an_embedding_on_the_ps_trains_from_the_touched_rows_only(
        cluster: LocalCluster) -> None:
    losses, table, sent = train_on(cluster, densify=False)
    assert losses[0] == pytest.approx(len(IDS) * DIM)
    assert losses[2] < losses[1] < losses[0]
    assert [len(IDS), DIM] in sent and [len(IDS)] in sent
    assert max(int(np.prod(s)) for s in sent) == len(IDS) * DIM
    untouched = np.setdiff1d(np.arange(VOCAB), IDS)
    np.testing.assert_array_equal(table[untouched], 1.0)
    assert np.all(table[IDS] < 1.0)
    # The same steps with the gradient densified on the worker move the same values, but the
    # worker then sends the table-sized gradient: what the sparse path avoids.
    dense_losses, dense_table, dense_sent = train_on(cluster, densify=True)
    np.testing.assert_allclose(dense_table, table, rtol=1e-6)
    np.testing.assert_allclose(dense_losses, losses, rtol=1e-6)
    assert [VOCAB, DIM] in dense_sent
