"""Loading SavedModels: a trained model served from a fresh graph, meta graphs picked by tags,
import scopes, main ops with assets, and TF's errors (loader.py, simple_save.py)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tensorweave as tf

sm = tf.saved_model
RNG = np.random.RandomState(0)
X = RNG.randn(32, 3).astype(np.float32)
Y = X @ np.array([[1.0], [2.0], [-1.0]], np.float32) + 0.5


def train_model() -> dict:
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.Variable(tf.zeros([3, 1]), name="w")
    b = tf.Variable(tf.zeros([1]), name="b")
    pred = tf.add(tf.matmul(x, w), b, name="pred")
    loss = tf.reduce_mean(tf.square(pred - y))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return {"x": x, "y": y, "pred": pred, "train": train, "w": w, "b": b}


def test_simple_save_then_serve_from_a_fresh_graph(tmp_path) -> None:
    export_dir = str(tmp_path / "model")
    m = train_model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(20):
            sess.run(m["train"], {m["x"]: X, m["y"]: Y})
        expected, w = sess.run([m["pred"], m["w"]], {m["x"]: X})
        tf.saved_model.simple_save(sess, export_dir, {"x": m["x"]}, {"pred": m["pred"]})
    assert not np.allclose(w, 0)
    with tf.Graph().as_default() as graph, tf.Session(graph=graph) as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING],
                                          export_dir)
        signature = meta.signature_def[sm.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        assert signature.method_name == sm.PREDICT_METHOD_NAME
        out = sess.run(signature.outputs["pred"].name, {signature.inputs["x"].name: X})
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, expected, rtol=1e-6)
        np.testing.assert_array_equal(sess.run("w:0"), w)
        assert {v.op.name for v in tf.global_variables()} == {"w", "b"}
        assert len(tf.trainable_variables()) == 2


def test_load_picks_the_meta_graph_by_its_tag_set(tmp_path) -> None:
    export_dir = str(tmp_path / "model")
    m = train_model()
    builder = sm.Builder(export_dir)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(m["train"], {m["x"]: X, m["y"]: Y})
        expected = sess.run(m["pred"], {m["x"]: X})
        train_sig = sm.build_signature_def(
            {"x": sm.build_tensor_info(m["x"]), "y": sm.build_tensor_info(m["y"])}, {},
            "train")
        builder.add_meta_graph_and_variables(sess, [sm.TRAINING], {"train": train_sig})
        doubled = tf.multiply(m["pred"], 2.0, name="doubled")
        builder.add_meta_graph([sm.SERVING, sm.GPU], {
            "serving_default": sm.predict_signature_def({"x": m["x"]}, {"out": doubled})})
    builder.save()
    with tf.Session(graph=tf.Graph()) as sess:
        meta = sm.load(sess, ["gpu", "serve"], export_dir)  # a set: order does not matter
        assert sorted(meta.meta_info_def.tags) == ["gpu", "serve"]
        sig = meta.signature_def["serving_default"]
        np.testing.assert_allclose(sess.run(sig.outputs["out"].name, {"x:0": X}), 2 * expected,
                                   rtol=1e-6)
    with tf.Session(graph=tf.Graph()) as sess:
        meta = sm.load(sess, ["train"], export_dir)
        assert list(meta.signature_def) == ["train"]
        with pytest.raises(KeyError):
            sess.graph.get_tensor_by_name("doubled:0")
        np.testing.assert_allclose(sess.run("pred:0", {"x:0": X}), expected, rtol=1e-6)
    with tf.Session(graph=tf.Graph()) as sess:
        with pytest.raises(RuntimeError, match=r"MetaGraphDef associated with tags 'serve' "
                                               r"could not be found in SavedModel"):
            sm.load(sess, ["serve"], export_dir)


def test_import_scope_prefixes_the_loaded_names(tmp_path) -> None:
    export_dir = str(tmp_path / "model")
    m = train_model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(m["b"].assign([3.0]))
        sm.simple_save(sess, export_dir, {"x": m["x"]}, {"pred": m["pred"]})
    with tf.Session(graph=tf.Graph()) as sess:
        meta = sm.load(sess, ["serve"], export_dir, import_scope="served")
        info = meta.signature_def["serving_default"].outputs["pred"]
        pred = sm.get_tensor_from_tensor_info(info, import_scope="served")
        assert pred.name == "served/pred:0"
        np.testing.assert_allclose(sess.run(pred, {"served/x:0": X[:2]}), [[3.0], [3.0]])


def test_legacy_init_op_runs_with_asset_paths_fed(tmp_path) -> None:
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\n")
    asset = tf.constant(str(vocab), name="vocab_path")
    tf.add_to_collection("asset_filepaths", asset)
    seen = tf.Variable("", collections=[tf.GraphKeys.LOCAL_VARIABLES], name="seen")
    calls = tf.Variable(0, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="calls")
    init = tf.group(tf.assign(seen, asset), tf.assign(calls, 7), name="legacy_init")
    out = tf.identity(tf.Variable(2.0, name="v") * 3.0, name="out")
    export_dir = str(tmp_path / "model")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sm.simple_save(sess, export_dir, {"path": asset}, {"out": out}, legacy_init_op=init)
    assert os.listdir(tmp_path / "model" / "assets") == ["vocab.txt"]
    with tf.Session(graph=tf.Graph()) as sess:
        meta = sm.load(sess, ["serve"], export_dir)
        assert sess.run("calls:0") == 7
        assert sess.run("seen:0") == os.fsencode(
            os.path.join(export_dir, "assets", "vocab.txt"))
        assert sess.run("out:0") == np.float32(6.0)
        assert meta.asset_file_def[0].filename == "vocab.txt"


def test_a_model_without_variables_loads(tmp_path) -> None:
    x = tf.placeholder(tf.int32, [2], name="x")
    y = tf.add(x, 1, name="y")
    with tf.Session() as sess:
        sm.simple_save(sess, str(tmp_path / "m"), {"x": x}, {"y": y})
    with tf.Session(graph=tf.Graph()) as sess:
        sm.load(sess, ["serve"], str(tmp_path / "m"))
        result = sess.run("y:0", {"x:0": [1, 2]})
    np.testing.assert_array_equal(result, np.array([2, 3], np.int32))
    assert result.dtype == np.int32


def test_unreadable_saved_models_raise(tmp_path) -> None:
    with tf.Session() as sess:
        with pytest.raises(OSError, match="SavedModel file does not exist at: "):
            sm.load(sess, ["serve"], str(tmp_path))
        (tmp_path / "saved_model.pb").write_bytes(b"\x12\x40abc")
        with pytest.raises(OSError, match="Cannot parse file .*saved_model.pb"):
            sm.load(sess, ["serve"], str(tmp_path))
    (tmp_path / "text").mkdir()
    (tmp_path / "text" / "saved_model.pbtxt").write_text("saved_model_schema_version: x\n")
    with tf.Session(graph=tf.Graph()) as sess, pytest.raises(OSError, match="pbtxt: 1:29 "):
        sm.load(sess, ["serve"], str(tmp_path / "text"))
