"""Partitioned variables: partitioners, shards, lookups, optimizers, checkpoints, placement."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.api.indexed_slices import IndexedSlices
from tensorweave.formats.tensor_bundle import BundleReader, Extent
from tensorweave.train.local_cluster import free_ports

TABLE = np.arange(30, dtype=np.float32).reshape(10, 3) / 10.0


def table_init(full: np.ndarray) -> Any:
    """An initializer giving each shard its rows of `full` (through TF's partition_info)."""

    def init(shape: list[int], dtype: Any = None, partition_info: Any = None) -> np.ndarray:
        offset = 0 if partition_info is None else partition_info.var_offset[0]
        return full[offset:offset + shape[0]]

    return init


def test_partitioners_follow_tf_formulas() -> None:
    shape = tf.TensorShape([10, 4])
    assert tf.fixed_size_partitioner(3)(shape=shape, dtype=tf.float32) == [3, 1]
    assert tf.fixed_size_partitioner(20)(shape=shape, dtype=tf.float32) == [10, 1]
    assert tf.fixed_size_partitioner(2, axis=1)(shape=shape, dtype=tf.float32) == [1, 2]
    # 16 bytes a row: 48 bytes fit 3 rows -> ceil(10 / 3) = 4 shards
    assert tf.variable_axis_size_partitioner(48)(shape=shape, dtype=tf.float32) == [4, 1]
    assert tf.variable_axis_size_partitioner(48, max_shards=2)(
        shape=shape, dtype=tf.float32) == [2, 1]
    # 160 bytes, slices of at least 64 -> ceil(2.5) = 3, capped by max_partitions
    assert tf.min_max_variable_partitioner(5, min_slice_size=64)(
        shape=shape, dtype=tf.float32) == [3, 1]
    assert tf.min_max_variable_partitioner(2, min_slice_size=64)(
        shape=shape, dtype=tf.float32) == [2, 1]
    with pytest.raises(ValueError, match="axis must be non-negative"):
        tf.variable_axis_size_partitioner(48, axis=-1)
    with pytest.raises(ValueError, match="Can not partition variable along axis 2"):
        tf.min_max_variable_partitioner(2, axis=2)(shape=shape, dtype=tf.float32)


def test_get_variable_makes_tf_shards_with_slice_info() -> None:
    with tf.Graph().as_default():
        with tf.variable_scope("emb", partitioner=tf.fixed_size_partitioner(3)):
            v = tf.get_variable("w", [10, 3], initializer=table_init(TABLE))
        assert isinstance(v, tf.PartitionedVariable)
        assert v.name == "emb/w" and v.get_shape().as_list() == [10, 3] and len(v) == 3
        assert [s.op.name for s in v] == ["emb/w/part_0", "emb/w/part_1", "emb/w/part_2"]
        assert [s.get_shape().as_list() for s in v] == [[4, 3], [3, 3], [3, 3]]
        assert [s._save_slice_info.spec for s in v] == [
            "10 3 0,4:0,3", "10 3 4,3:0,3", "10 3 7,3:0,3"]
        assert tf.global_variables() == list(v)
        whole = tf.convert_to_tensor(v)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(v.as_tensor()), TABLE)
            np.testing.assert_array_equal(sess.run(whole), TABLE)
            sess.run(v.assign(TABLE * 2))
            np.testing.assert_array_equal(sess.run(v.as_tensor()), TABLE * 2)


def test_reuse_and_errors_follow_get_variable() -> None:
    with tf.Graph().as_default():
        part = tf.fixed_size_partitioner(2)
        v = tf.get_variable("v", [4, 2], partitioner=part)
        with tf.variable_scope(tf.get_variable_scope(), reuse=True):
            assert tf.get_variable("v", [4, 2], partitioner=part) is v
            with pytest.raises(ValueError, match="PartitionedVariable w does not exist"):
                tf.get_variable("w", [4, 2], partitioner=part)
        with pytest.raises(ValueError, match="Partitioned variable with name v already exists"):
            tf.get_variable("v", [4, 2], partitioner=part)
        tf.get_variable("plain", [4, 2])
        with pytest.raises(ValueError, match="unpartitioned version of the variable was found"):
            tf.get_variable("plain", [4, 2], partitioner=part)
        with pytest.raises(ValueError, match="Can only slice a variable along one dimension"):
            tf.get_variable("two_axes", [4, 4], partitioner=lambda shape, dtype: [2, 2])
        with pytest.raises(ValueError, match="does not match the Variable's rank"):
            tf.get_variable("rank", [4, 4], partitioner=lambda shape, dtype: [2])


def test_value_initializer_is_sliced_and_create_partitioned_variables() -> None:
    with tf.Graph().as_default():
        v = tf.get_variable("t", initializer=tf.constant(TABLE),
                            partitioner=tf.fixed_size_partitioner(4))
        parts = tf.create_partitioned_variables([10, 3], [1, 3], tf.ones_initializer(),
                                                name="cols")
        assert [p.op.name for p in parts] == ["cols/part_0", "cols/part_1", "cols/part_2"]
        assert [p.get_shape().as_list() for p in parts] == [[10, 1]] * 3
        with pytest.raises(ValueError, match="must have the length"):
            tf.create_partitioned_variables([10, 3], [2], tf.ones_initializer())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(v.as_tensor()), TABLE)
            np.testing.assert_array_equal(sess.run(tf.concat(parts, 1)), np.ones([10, 3]))


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_embedding_lookup_over_shards_matches_tf_layout(strategy: str) -> None:
    ids = np.array([[0, 9, 4], [5, 5, 1]], np.int64)
    with tf.Graph().as_default():
        v = tf.get_variable("w", [10, 3], initializer=table_init(TABLE),
                            partitioner=tf.fixed_size_partitioner(3))
        got = tf.nn.embedding_lookup(v, ids, partition_strategy=strategy)
        assert got.shape.as_list() == [2, 3, 3]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            shards = sess.run(list(v))
    if strategy == "div":
        expected = TABLE[ids]  # consecutive row ranges: the shards' rows are the table's
    else:
        # "mod": row r lives in shard r % 3 at position r // 3
        expected = np.stack([shards[r % 3][r // 3] for r in ids.ravel()]).reshape(2, 3, 3)
    with tf.Graph().as_default():
        v = tf.get_variable("w", [10, 3], initializer=table_init(TABLE),
                            partitioner=tf.fixed_size_partitioner(3))
        got = tf.nn.embedding_lookup(v, ids, partition_strategy=strategy)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(got), expected)


def build_model(partitioner: Any) -> tuple[Any, Any, Any]:
    """A linear model over embeddings; returns (loss, train op, table as one tensor)."""
    ids = tf.constant([1, 7, 7, 3, 8])
    labels = tf.constant([1.0, -1.0, 0.5, 2.0, 0.0])
    table = tf.get_variable("table", [10, 3], initializer=table_init(TABLE),
                            partitioner=partitioner)
    weights = tf.get_variable("weights", initializer=tf.constant([[1.0], [-2.0], [0.5]]))
    emb = tf.nn.embedding_lookup(table, ids, partition_strategy="div")
    loss = tf.reduce_mean(tf.square(tf.squeeze(tf.matmul(emb, weights), 1) - labels))
    train = tf.train.AdagradOptimizer(0.3).minimize(loss)
    whole = table.as_tensor() if partitioner is not None else table.value()
    return loss, train, whole


def train_steps(target: str, partitioner: Any, device_fn: Any = None, steps: int = 4
                ) -> tuple[list[float], np.ndarray]:
    with tf.Graph().as_default():
        with tf.device(device_fn):
            loss, train, whole = build_model(partitioner)
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [float(sess.run([loss, train])[0]) for _ in range(steps)]
            return losses, sess.run(whole)


def test_shard_gradients_stay_sparse_and_training_matches_unpartitioned() -> None:
    with tf.Graph().as_default():
        loss, _, _ = build_model(tf.fixed_size_partitioner(3))
        shards = [v for v in tf.trainable_variables() if "table" in v.op.name]
        grads = tf.gradients(loss, shards)
        assert all(isinstance(g, IndexedSlices) for g in grads)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            served = [sorted(sess.run(g.indices).tolist()) for g in grads]
        assert served == [[1, 3], [], [0, 0, 1]]  # rows 1, 3 | none of 4-6 | 7, 7, 8 - 7
    expected = train_steps("", None)
    got = train_steps("", tf.fixed_size_partitioner(3))
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-6)


def test_shards_spread_over_ps_tasks_and_train_like_unpartitioned() -> None:
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
            v = tf.get_variable("w", [9, 2], partitioner=tf.fixed_size_partitioner(3))
        assert [s.device for s in v] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
    ports = free_ports(3)
    spec = {"ps": [f"localhost:{ports[0]}", f"localhost:{ports[1]}"],
            "worker": [f"localhost:{ports[2]}"]}
    servers = [tf.train.Server(spec, "ps", 0), tf.train.Server(spec, "ps", 1),
               tf.train.Server(spec, "worker", 0)]
    try:
        device_fn = tf.train.replica_device_setter(cluster=tf.train.ClusterSpec(spec))
        got = train_steps(servers[2].target, tf.fixed_size_partitioner(3), device_fn)
    finally:
        for server in servers:
            server.stop()
    expected = train_steps("", None)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-6)


def test_checkpoint_of_three_shards_restores_into_two_and_into_one(tmp_path: Any) -> None:
    path = os.path.join(tmp_path, "model.ckpt")
    with tf.Graph().as_default():
        tf.get_variable("t", [10, 3], initializer=table_init(TABLE),
                        partitioner=tf.fixed_size_partitioner(3))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            saver.save(sess, path, write_meta_graph=False)
    assert [name for name, _ in tf.train.list_variables(path)] == ["t"]
    np.testing.assert_array_equal(tf.train.load_variable(path, "t"), TABLE)
    for partitioner in (tf.fixed_size_partitioner(2), None):
        with tf.Graph().as_default():
            v = tf.get_variable("t", [10, 3], partitioner=partitioner)
            whole = v.as_tensor() if partitioner is not None else v.value()
            with tf.Session() as sess:
                tf.train.Saver().restore(sess, path)
                np.testing.assert_array_equal(sess.run(whole), TABLE)
    with tf.Graph().as_default():
        v = tf.get_variable("t", [8, 3], partitioner=tf.fixed_size_partitioner(2))
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="shape"):
            tf.train.Saver([v]).restore(sess, path)


def test_a_partitioned_variable_saves_as_tf_slices_under_its_dict_key(tmp_path: Any) -> None:
    path = os.path.join(tmp_path, "renamed")
    with tf.Graph().as_default():
        v = tf.get_variable("t", [10, 3], initializer=table_init(TABLE),
                            partitioner=tf.fixed_size_partitioner(3))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver({"table": v}).save(sess, path, write_meta_graph=False)
    reader = BundleReader(path)
    assert reader.names() == ["table"]
    assert reader.entry("table").slices == tuple(
        (Extent(start, length), Extent(0, 3)) for start, length in ((0, 4), (4, 3), (7, 3)))
    with tf.Graph().as_default():
        other = tf.get_variable("other", [10, 3], partitioner=tf.fixed_size_partitioner(2))
        with tf.Session() as sess:
            tf.train.Saver({"table": other}).restore(sess, path)
            np.testing.assert_array_equal(sess.run(other.as_tensor()), TABLE)
