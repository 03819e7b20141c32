"""SavedModelBuilder: directory layout, meta graphs and TF's errors."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.formats.saved_model_proto import SavedModel, SignatureDef, TensorInfo
from tests.checkpoint_support import read_checkpoint

sm = tf.saved_model


def model() -> tuple[tf.Tensor, tf.Tensor]:
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable(np.array([[1.0], [2.0]], np.float32), name="w")
    return x, tf.matmul(x, w, name="y")


def read_saved_model(export_dir: str) -> SavedModel:
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
        return SavedModel.FromString(f.read())


def test_layout_is_saved_model_pb_and_a_tf_v2_checkpoint(tmp_path) -> None:
    export_dir = str(tmp_path / "export")
    x, y = model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        builder = sm.builder.SavedModelBuilder(export_dir)
        builder.add_meta_graph_and_variables(
            sess, [sm.SERVING], {"serving_default": sm.predict_signature_def({"x": x}, {"y": y})})
        path = builder.save()
    assert path == os.fsencode(os.path.join(export_dir, "saved_model.pb"))
    assert sorted(os.listdir(export_dir)) == ["saved_model.pb", "variables"]
    assert sorted(os.listdir(os.path.join(export_dir, "variables"))) == [
        "variables.data-00000-of-00001", "variables.index"]
    variables = os.path.join(export_dir, "variables", "variables")
    saved = read_checkpoint(variables)
    assert list(saved) == ["w"]
    np.testing.assert_array_equal(saved["w"], np.array([[1.0], [2.0]], np.float32))
    model_proto = read_saved_model(export_dir)
    assert model_proto.saved_model_schema_version == 1
    [meta] = model_proto.meta_graphs
    assert meta.meta_info_def.tags == ["serve"]
    assert meta.saver_def is not None and meta.saver_def.restore_op_name
    assert meta.signature_def["serving_default"].outputs["y"].name == "y:0"
    assert {n.name for n in meta.graph_def.node} >= {"x", "w", "y"}
    assert sm.maybe_saved_model_directory(export_dir)
    assert sm.contains_saved_model(export_dir)
    assert not sm.maybe_saved_model_directory(str(tmp_path))


def test_export_directory_must_be_new_or_empty(tmp_path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "file").write_text("x")
    with pytest.raises(AssertionError, match="Export directory already exists, and isn't "
                                             "empty."):
        sm.Builder(str(tmp_path / "full"))
    (tmp_path / "empty").mkdir()
    sm.Builder(str(tmp_path / "empty"))
    sm.Builder(str(tmp_path / "new" / "nested"))
    assert os.path.isdir(tmp_path / "new" / "nested")


def test_meta_graphs_must_come_in_order(tmp_path) -> None:
    model()
    builder = sm.Builder(str(tmp_path / "m"))
    with pytest.raises(AssertionError, match="Please invoke `add_meta_graph_and_variables"):
        builder.add_meta_graph(["serve"])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        builder.add_meta_graph_and_variables(sess, ["train"])
        with pytest.raises(AssertionError, match="has already been saved"):
            builder.add_meta_graph_and_variables(sess, ["serve"])
    with pytest.raises(TypeError, match="tags must be a list of strings"):
        builder.add_meta_graph("serve")


def test_signature_def_map_is_validated(tmp_path) -> None:
    x, y = model()
    builder = sm.Builder(str(tmp_path / "m"))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        no_dtype = SignatureDef(inputs={"x": TensorInfo(name="x:0")})
        with pytest.raises(AssertionError, match="must have the dtype field set"):
            builder.add_meta_graph_and_variables(sess, ["serve"], {"k": no_dtype})
        no_name = SignatureDef(outputs={"y": TensorInfo(dtype=1)})  # DT_FLOAT
        with pytest.raises(AssertionError, match="'encoding' fields"):
            builder.add_meta_graph_and_variables(sess, ["serve"], {"k": no_name})
        good = sm.predict_signature_def({"x": x}, {"y": y})
        with pytest.raises(KeyError, match="__saved_model_init_op.*reserved"):
            builder.add_meta_graph_and_variables(sess, ["serve"],
                                                 {"__saved_model_init_op": good})
        with pytest.raises(TypeError, match="must be a SignatureDef"):
            builder.add_meta_graph_and_variables(sess, ["serve"], {"k": {"x": x}})
    assert not os.path.exists(tmp_path / "m" / "variables")


def test_main_op_is_an_operation_and_only_one(tmp_path) -> None:
    x, _ = model()
    init = tf.group(tf.local_variables_initializer(), name="init")
    builder = sm.Builder(str(tmp_path / "m"))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(TypeError, match="main_op needs to be an Operation"):
            builder.add_meta_graph_and_variables(sess, ["train"], main_op=x)
        builder.add_meta_graph_and_variables(sess, ["train"], main_op=init)
        with pytest.raises(ValueError, match="Graph already contains one or more main ops"):
            builder.add_meta_graph(["serve"], legacy_init_op=init)
        builder.add_meta_graph(["serve"])
    builder.save()
    metas = read_saved_model(str(tmp_path / "m")).meta_graphs
    # TF's v1 builder keeps the main op in the graph's collection, so both meta graphs have it
    assert [m.collection_def["saved_model_main_op"].node_list.value for m in metas] == [
        ["init"], ["init"]]


def test_as_text_writes_saved_model_pbtxt(tmp_path) -> None:
    model()
    export_dir = str(tmp_path / "m")
    builder = sm.Builder(export_dir)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        builder.add_meta_graph_and_variables(sess, ["serve"])
    path = builder.save(as_text=True)
    assert path.endswith(b"saved_model.pbtxt")
    assert not os.path.exists(os.path.join(export_dir, "saved_model.pb"))
    with open(path, "rb") as f:
        text = f.read().decode()
    assert text.startswith("saved_model_schema_version: 1\nmeta_graphs {\n")
    assert 'tags: "serve"' in text and 'name: "w"' in text
    assert sm.maybe_saved_model_directory(export_dir)


def test_assets_are_copied_with_unique_names(tmp_path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "vocab.txt").write_text("one")
    (tmp_path / "b" / "vocab.txt").write_text("two")
    first = tf.constant(str(tmp_path / "a" / "vocab.txt"), name="first")
    second = tf.constant(str(tmp_path / "b" / "vocab.txt"), name="second")
    again = tf.constant(str(tmp_path / "a" / "vocab.txt"), name="again")
    export_dir = tmp_path / "m"
    builder = sm.Builder(str(export_dir))
    with tf.Session() as sess:
        builder.add_meta_graph_and_variables(sess, ["serve"],
                                             assets_collection=[first, second, again])
        with pytest.raises(TypeError, match="Asset path tensor must be of type constant."):
            builder.add_meta_graph(["x"], assets_collection=[tf.identity(first)])
        with pytest.raises(TypeError, match="Asset path tensor must be of type string."):
            builder.add_meta_graph(["x"], assets_collection=[tf.constant(1.0)])
        with pytest.raises(TypeError, match="Asset path tensor must be a scalar."):
            builder.add_meta_graph(["x"], assets_collection=[tf.constant(["a", "b"])])
    builder.save()
    assert sorted(os.listdir(export_dir / "assets")) == ["vocab.txt", "vocab.txt_1"]
    assert (export_dir / "assets" / "vocab.txt_1").read_text() == "two"
    [meta] = read_saved_model(str(export_dir)).meta_graphs
    assert [(a.tensor_info.name, a.filename) for a in meta.asset_file_def] == [
        ("first:0", "vocab.txt"), ("second:0", "vocab.txt_1"), ("again:0", "vocab.txt")]


def test_a_graph_without_variables_saves_no_checkpoint(tmp_path) -> None:
    with tf.device("/cpu:0"):
        c = tf.constant(1.0, name="c")
    assert c.op.device
    builder = sm.Builder(str(tmp_path / "m"))
    with tf.Session() as sess:
        builder.add_meta_graph_and_variables(sess, ["serve"], clear_devices=True)
        builder.add_meta_graph(["kept"])
    builder.save()
    assert os.listdir(tmp_path / "m" / "variables") == []
    cleared, kept = read_saved_model(str(tmp_path / "m")).meta_graphs
    assert [n.device for n in cleared.graph_def.node if n.name == "c"] == [""]
    assert [n.device for n in kept.graph_def.node if n.name == "c"] == [c.op.device]
