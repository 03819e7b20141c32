"""`tf.train.init_from_checkpoint` and `tf.train.load_checkpoint` over checkpoints written by a
`Saver` in another graph: one-to-one, scope and root mappings, variables given as objects,
partitioned variables restored into another partitioning, and TF's errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

A = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.array([7, 8, 9], np.int64)
C = np.arange(20, dtype=np.float32).reshape(5, 4) / 10


def _save(tmp_path, partitions: int = 1) -> str:
    """A checkpoint holding old/a, old/b and old/emb (written by `partitions` shards)."""
    with tf.Graph().as_default():
        with tf.variable_scope("old"):
            tf.get_variable("a", initializer=A)
            tf.get_variable("b", initializer=B)
            tf.get_variable("emb", initializer=C,
                            partitioner=tf.fixed_size_partitioner(partitions)
                            if partitions > 1 else None)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"))


def _new_vars(partitions: int = 1) -> tuple:
    with tf.variable_scope("new"):
        a = tf.get_variable("a", [2, 3])
        b = tf.get_variable("b", [3], tf.int64)
        emb = tf.get_variable("emb", [5, 4], partitioner=tf.fixed_size_partitioner(partitions)
                              if partitions > 1 else None)
    return a, b, emb


def _run_init(*fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches))


def test_scope_to_scope_mapping(tmp_path) -> None:
    path = _save(tmp_path)
    a, b, emb = _new_vars()
    other = tf.get_variable("other", initializer=np.float32(5))
    tf.train.init_from_checkpoint(str(tmp_path), {"old/": "new/"})
    got_a, got_b, got_emb, got_other = _run_init(a, b, emb, other)
    np.testing.assert_array_equal(got_a, A)
    assert got_b.dtype == np.int64
    np.testing.assert_array_equal(got_b, B)
    np.testing.assert_array_equal(got_emb, C)
    assert got_other == 5  # outside the mapped scope: its own initializer
    assert tf.train.load_checkpoint(path).get_variable_to_shape_map()["old/a"] == [2, 3]


def test_one_to_one_names_and_variable_objects(tmp_path) -> None:
    _save(tmp_path)
    a, b, emb = _new_vars()
    tf.train.init_from_checkpoint(str(tmp_path / "model.ckpt"),
                                  {"old/a": "new/a", "old/b": b})
    got_a, got_b, got_emb = _run_init(a, b, emb)
    np.testing.assert_array_equal(got_a, A)
    np.testing.assert_array_equal(got_b, B)
    assert not np.array_equal(got_emb, C)  # not mapped: glorot values
    # the initializer itself restores, so `var.initializer` alone suffices
    with tf.Session() as sess:
        sess.run(a.initializer)
        np.testing.assert_array_equal(sess.run(a), A)


@pytest.mark.parametrize(("saved_parts", "new_parts"), [(1, 3), (2, 3), (3, 1)])
def test_partitioned_variables(tmp_path, saved_parts: int, new_parts: int) -> None:
    _save(tmp_path, saved_parts)
    _, _, emb = _new_vars(new_parts)
    tf.train.init_from_checkpoint(str(tmp_path), {"old/emb": "new/emb"})
    shards = list(emb) if new_parts > 1 else [emb]
    got = _run_init(*shards)
    np.testing.assert_array_equal(np.concatenate(got), C)


def test_partitioned_variable_by_scope_and_shard_list(tmp_path) -> None:
    _save(tmp_path)
    a, _, emb = _new_vars(2)
    tf.train.init_from_checkpoint(str(tmp_path), {"old/": "new/"})
    np.testing.assert_array_equal(np.concatenate(_run_init(*emb)), C)
    tf.reset_default_graph()
    with tf.variable_scope("x"):
        emb = tf.get_variable("emb", [5, 4], partitioner=tf.fixed_size_partitioner(2))
    tf.train.init_from_checkpoint(str(tmp_path), {"old/emb": list(emb)})
    np.testing.assert_array_equal(np.concatenate(_run_init(*emb)), C)


def test_root_mappings(tmp_path) -> None:
    _save(tmp_path)
    with tf.variable_scope("old"):
        a = tf.get_variable("a", [2, 3])
    tf.train.init_from_checkpoint(str(tmp_path), {"/": "/"})
    np.testing.assert_array_equal(_run_init(a)[0], A)
    tf.reset_default_graph()
    with tf.variable_scope("top"), tf.variable_scope("old"):
        b = tf.get_variable("b", [3], tf.int64)
    tf.train.init_from_checkpoint(str(tmp_path), {"/": "top/"})
    np.testing.assert_array_equal(_run_init(b)[0], B)


def test_errors(tmp_path) -> None:
    _save(tmp_path)
    a, _, _ = _new_vars()
    with pytest.raises(ValueError, match="Tensor old/zz is not found"):
        tf.train.init_from_checkpoint(str(tmp_path), {"old/zz": "new/a"})
    with pytest.raises(ValueError, match="Shape of variable new/a:0 .* doesn't match"):
        tf.train.init_from_checkpoint(str(tmp_path), {"old/b": a})
    with pytest.raises(ValueError, match="Should be 'scope/': 'other_scope/'"):
        tf.train.init_from_checkpoint(str(tmp_path), {"old/a": "new/missing"})
    with pytest.raises(ValueError, match="Tensor other/a .* is not found"):
        tf.train.init_from_checkpoint(str(tmp_path), {"other/": "new/"})
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.load_checkpoint(str(empty))
