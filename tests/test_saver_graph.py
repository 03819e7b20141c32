"""The saver's graph ops (TF 1.15's BulkSaverBuilder): the names its SaverDef records, and that
running them writes the files `Saver.save` writes and restores them."""

from __future__ import annotations

import os

import numpy as np

import tensorweave as tf


def _files(prefix) -> dict[str, bytes]:
    directory, base = os.path.split(str(prefix))
    return {name[len(base):]: open(os.path.join(directory, name), "rb").read()
            for name in sorted(os.listdir(directory)) if name.startswith(base + ".")}


def test_saver_def_names_the_graph_ops() -> None:
    tf.Variable([1.0], name="v")
    saver_def = tf.train.Saver(max_to_keep=3, keep_checkpoint_every_n_hours=2.0).as_saver_def()
    graph = tf.get_default_graph()
    assert (saver_def.filename_tensor_name, saver_def.save_tensor_name,
            saver_def.restore_op_name) == ("save/Const:0", "save/control_dependency:0",
                                           "save/restore_all")
    assert (saver_def.max_to_keep, saver_def.keep_checkpoint_every_n_hours,
            saver_def.sharded, saver_def.version) == (3, 2.0, False, 2)
    assert graph.get_operation_by_name("save/Const").type == "PlaceholderWithDefault"
    assert graph.get_operation_by_name("save/SaveV2").type == "SaveV2"
    assert graph.get_operation_by_name("save/RestoreV2").get_attr("dtypes") == [tf.float32]
    assert graph.get_operation_by_name("save/Assign").type == "Assign"


def test_graph_save_writes_the_files_saver_save_writes(tmp_path) -> None:
    with tf.variable_scope("m"):
        tf.Variable(np.arange(6.0).reshape(2, 3), name="w")
        tf.Variable([b"a", b"bc"], name="s")
        tf.get_variable("p", [5, 2], initializer=tf.constant_initializer(3.0),
                        partitioner=tf.fixed_size_partitioner(2))
    saver = tf.train.Saver()
    saver_def = saver.as_saver_def()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, str(tmp_path / "py"), write_meta_graph=False, write_state=False)
        sess.run(saver_def.save_tensor_name,
                 {saver_def.filename_tensor_name: str(tmp_path / "graph")})
    assert _files(tmp_path / "graph") == _files(tmp_path / "py")


def test_sharded_graph_save_merges_into_the_files_saver_save_writes(tmp_path) -> None:
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.device("/cpu:0"):
        a = tf.Variable([1.0, 2.0], name="a")
    with tf.device("/cpu:1"):
        b = tf.Variable([3, 4], name="b")
    saver = tf.train.Saver(sharded=True)
    saver_def = saver.as_saver_def()
    assert saver_def.sharded and saver_def.save_tensor_name == "save/Identity:0"
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, str(tmp_path / "py"), write_meta_graph=False, write_state=False)
        out = sess.run(saver_def.save_tensor_name,
                       {saver_def.filename_tensor_name: str(tmp_path / "graph")})
        assert out == str(tmp_path / "graph").encode()
        files = _files(tmp_path / "graph")
        assert set(files) == {".index", ".data-00000-of-00002", ".data-00001-of-00002"}
        assert files == _files(tmp_path / "py")
        assert sorted(os.listdir(tmp_path)) == sorted(  # the shards' temporary directory is gone
            [f"graph{s}" for s in files] + [f"py{s}" for s in files])
        sess.run([a.assign([0.0, 0.0]), b.assign([0, 0])])
        sess.run(saver_def.restore_op_name,
                 {saver_def.filename_tensor_name: str(tmp_path / "graph")})
        np.testing.assert_array_equal(sess.run(a), [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(b), [3, 4])


def test_restore_all_restores_a_partitioned_variable_by_its_slices(tmp_path) -> None:
    p = tf.get_variable("p", [4, 2], initializer=tf.random_normal_initializer(seed=1),
                        partitioner=tf.fixed_size_partitioner(2))
    saver = tf.train.Saver()
    saver_def = saver.as_saver_def()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "p"))
        saved = sess.run(tf.concat(list(p), 0))
        sess.run([shard.assign(tf.zeros_like(shard)) for shard in p])
        sess.run(saver_def.restore_op_name, {saver_def.filename_tensor_name: path})
        np.testing.assert_array_equal(sess.run(tf.concat(list(p), 0)), saved)


def test_import_meta_graph_restores_custom_keys_through_the_graphs_ops_in_a_scope(tmp_path) -> None:
    v = tf.Variable([1.0, 2.0], name="v")
    saver = tf.train.Saver({"my/key": v}, max_to_keep=2)
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = saver.save(sess, str(tmp_path / "ck"))
    with tf.Graph().as_default() as graph, tf.Session() as sess:
        imported = tf.train.import_meta_graph(f"{path}.meta", import_scope="outer")
        assert imported.as_saver_def().max_to_keep == 2
        imported.restore(sess, path)
        np.testing.assert_array_equal(sess.run("outer/v:0"), [1.0, 2.0])
        assert graph.get_operation_by_name("outer/save/restore_all").type == "NoOp"
