"""Meta graphs: export/import with collections and variables, Saver's .meta files, and
resuming training from them."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.formats.meta_graph_proto import CollectionDef, MetaGraphDef

RNG = np.random.RandomState(0)
X = RNG.randn(64, 3).astype(np.float32)
Y = X @ np.array([[1.0], [2.0], [-1.0]], np.float32)


def build_model() -> dict:
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.Variable(tf.zeros([3, 1]), name="w")
    tf.Variable(0, trainable=False, name="counter")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y), name="loss")
    step = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=step)
    tf.add_to_collection("train_op", train)
    tf.add_to_collection(tf.GraphKeys.LOSSES, loss)
    return {"loss": loss, "train": train}


def test_training_resumes_from_a_saved_meta_graph(tmp_path) -> None:
    m = build_model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(m["loss"], {"x:0": X, "y:0": Y})
        for _ in range(20):
            sess.run(m["train"], {"x:0": X, "y:0": Y})
        last = sess.run(m["loss"], {"x:0": X, "y:0": Y})
        path = saver.save(sess, str(tmp_path / "model"), global_step=tf.train.get_global_step())
    assert os.path.isfile(path + ".meta")
    tf.reset_default_graph()
    restorer = tf.train.import_meta_graph(path + ".meta")
    assert sorted(v.op.name for v in tf.trainable_variables()) == ["w"]
    assert {"w", "counter", "global_step", "w/Adam", "w/Adam_1"} <= {
        v.op.name for v in tf.global_variables()}
    train = tf.get_collection("train_op")[0]
    loss = tf.get_collection(tf.GraphKeys.LOSSES)[0]
    assert isinstance(train, tf.Operation) and loss.name == "loss:0"
    with tf.Session() as sess:
        restorer.restore(sess, path)
        assert sess.run(tf.train.get_global_step()) == 20
        resumed = sess.run(loss, {"x:0": X, "y:0": Y})
        for _ in range(20):
            sess.run(train, {"x:0": X, "y:0": Y})
        final = sess.run(loss, {"x:0": X, "y:0": Y})
        assert sess.run(tf.train.get_global_step()) == 40
    assert resumed == pytest.approx(last, rel=1e-6) and last < first
    assert final < resumed


def test_export_writes_collections_as_tensorflow_does(tmp_path) -> None:
    build_model()
    tf.add_to_collection("ints", 3)
    tf.add_to_collection("floats", 0.5)
    tf.add_to_collection("names", "hello")
    tf.add_to_collection("mixed", 1)
    tf.add_to_collection("mixed", "a")
    meta = tf.train.export_meta_graph(str(tmp_path / "g.meta"))
    parsed = MetaGraphDef.FromString((tmp_path / "g.meta").read_bytes())
    collections = parsed.collection_def
    assert collections["ints"] == CollectionDef(int64_list=CollectionDef.Int64List(value=[3]))
    assert collections["floats"] == CollectionDef(float_list=CollectionDef.FloatList(value=[0.5]))
    assert collections["names"] == CollectionDef(
        bytes_list=CollectionDef.BytesList(value=[b"hello"]))
    assert collections["losses"] == CollectionDef(
        node_list=CollectionDef.NodeList(value=["loss:0"]))
    assert "mixed" not in collections
    variables = collections["trainable_variables"].bytes_list.value
    assert variables == [b"\n\x03w:0\x12\x08w/Assign\x1a\x08w/read:0"
                         b"\x32\x07zeros:0\x38\x01"]  # initial_value_name = 6, trainable = 7
    assert [n.name for n in parsed.graph_def.node] == [n.name for n in meta.graph_def.node]
    tf.train.export_meta_graph(str(tmp_path / "g.pbtxt"), as_text=True)
    text = (tmp_path / "g.pbtxt").read_text()
    assert 'key: "trainable_variables"' in text and "graph_def {" in text


def test_import_scope_prefixes_names_and_the_saver_keeps_the_original_keys(tmp_path) -> None:
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(v.assign([5.0, 6.0]))
            path = saver.save(sess, str(tmp_path / "ckpt"))
    with tf.Graph().as_default():
        restorer = tf.train.import_meta_graph(path + ".meta", import_scope="net",
                                              clear_devices=True)
        (var,) = tf.global_variables()
        assert var.op.name == "net/v" and var.name == "net/v:0"
        with tf.Session() as sess:
            restorer.restore(sess, path)
            np.testing.assert_array_equal(sess.run(var), [5.0, 6.0])


def test_no_variables_gives_no_saver_and_write_meta_graph_false_writes_none(tmp_path) -> None:
    tf.constant(1.0, name="c")
    meta = tf.train.export_meta_graph()
    with tf.Graph().as_default():
        assert tf.train.import_meta_graph(meta) is None
        assert tf.get_default_graph().get_operation_by_name("c").type == "Const"
    v = tf.Variable(1.0)
    saver = tf.train.Saver(max_to_keep=1)
    with tf.Session() as sess:
        sess.run(v.initializer)
        saver.save(sess, str(tmp_path / "a"), write_meta_graph=False)
        assert sorted(os.listdir(tmp_path)) == ["a.data-00000-of-00001", "a.index", "checkpoint"]
        saver.save(sess, str(tmp_path / "b"))
        saver.save(sess, str(tmp_path / "c"))  # max_to_keep removes a, b and b.meta
    assert sorted(os.listdir(tmp_path)) == ["c.data-00000-of-00001", "c.index", "c.meta",
                                            "checkpoint"]


def test_saver_def_round_trips_and_malformed_files_raise(tmp_path) -> None:
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver(max_to_keep=3, keep_checkpoint_every_n_hours=2.0)
    meta = saver.export_meta_graph(str(tmp_path / "s.meta"))
    parsed = MetaGraphDef.FromString(meta.SerializeToString())
    assert parsed.saver_def == meta.saver_def
    assert parsed.saver_def.restore_op_name == "save/restore_all"
    saver_def = parsed.saver_def
    assert (saver_def.max_to_keep, saver_def.keep_checkpoint_every_n_hours) == (3, 2.0)
    (tmp_path / "bad.meta").write_bytes(b"\x12\x05ab")
    with pytest.raises(ValueError, match="Cannot parse"):
        tf.train.import_meta_graph(str(tmp_path / "bad.meta"))
    with pytest.raises(OSError):
        tf.train.import_meta_graph(str(tmp_path / "missing.meta"))


def test_variable_in_a_custom_collection_comes_back_as_its_tensor() -> None:
    # TF writes a variable outside the variable collections as a node_list name (ptb_word_lm's
    # "lr" collection), so a fetch of the imported item reads the variable
    lr = tf.Variable(0.5, trainable=False, name="lr")
    tf.add_to_collection("lr", lr)
    meta = tf.train.export_meta_graph()
    assert meta.collection_def["lr"].node_list.value == ["lr:0"]
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta)
        (imported,) = tf.get_collection("lr")
        assert isinstance(imported, tf.Tensor) and imported.name == "lr:0"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(imported) == pytest.approx(0.5)


def test_stripped_op_list_lists_the_ops_used_with_their_attr_defaults() -> None:
    x = tf.placeholder(tf.float32, [2, 2], name="x")
    tf.matmul(x, x, name="product")
    meta = tf.train.export_meta_graph()
    ops = meta.meta_info_def.stripped_op_list.op
    assert [op.name for op in ops] == ["MatMul", "Placeholder"]  # sorted, as TF's
    matmul = ops[0]
    assert [(a.name, a.type_attr) for a in matmul.input_arg] == [("a", "T"), ("b", "T")]
    attrs = {a.name: a for a in matmul.attr}
    assert attrs["transpose_a"].type == "bool"
    assert attrs["transpose_a"].default_value.HasField("b")
    assert attrs["transpose_a"].default_value.b is False
    assert (attrs["T"].type, attrs["T"].HasField("default_value")) == ("type", False)


def test_a_saver_writes_the_meta_graph_export_gives(tmp_path) -> None:
    v = tf.Variable([1.0, 2.0], name="v")
    tf.add_to_collection("outs", tf.identity(v, name="out"))
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(v.initializer)
        for step in range(2):  # the second save reuses the graph's cached part
            path = saver.save(sess, str(tmp_path / "model"), global_step=step)
    written = MetaGraphDef.FromString((tmp_path / "model-1.meta").read_bytes())
    exported = tf.train.export_meta_graph(saver_def=saver.as_saver_def())
    assert written == exported
    assert written.SerializeToString(deterministic=True) == (
        tmp_path / "model-1.meta").read_bytes()  # fields in TF's order
    assert path.endswith("model-1")


def test_a_partitioned_shard_keeps_its_place_in_the_full_variable() -> None:
    tf.get_variable("w", [4, 3], partitioner=tf.fixed_size_partitioner(2))
    meta = tf.train.export_meta_graph()
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta, import_scope="net")
        shards = sorted(tf.global_variables(), key=lambda v: v.op.name)
        assert [v.op.name for v in shards] == ["net/w/part_0", "net/w/part_1"]
        info = shards[1]._save_slice_info
        assert (info.full_name, info.full_shape, info.var_offset, info.var_shape) == (
            "net/w", (4, 3), (2, 0), (2, 3))


def test_stripped_op_list_tells_repeated_inputs_from_type_lists() -> None:
    tf.add_n([tf.constant(1.0), tf.constant(2.0)], name="total")
    tf.identity_n([tf.constant(1), tf.constant("a")], name="both")
    ops = {op.name: op for op in tf.train.export_meta_graph().meta_info_def.stripped_op_list.op}
    (inputs,) = ops["AddN"].input_arg
    assert (inputs.number_attr, inputs.type_attr, inputs.type_list_attr) == ("N", "T", "")
    (both,) = ops["IdentityN"].input_arg
    assert (both.number_attr, both.type_attr, both.type_list_attr) == ("", "", "T")


def test_a_stripped_op_list_default_naming_a_function_raises_naming_the_field() -> None:
    meta = tf.train.export_meta_graph()
    op = meta.meta_info_def.stripped_op_list.op.add(name="Mine")
    op.attr.add(name="f", type="func").default_value.func.name = "missing"
    with tf.Graph().as_default(), pytest.raises(ValueError, match="stripped_op_list: .*missing"):
        tf.train.import_meta_graph(meta)
