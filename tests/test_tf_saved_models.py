"""SavedModels and meta graphs shared with TensorFlow, both ways.

TF -> tensorweave (fixtures of ``tests/data/tf_saved_models/make_tf_fixtures.py``, read without
TF): a `SavedModelBuilder` export (asset file, lookup table initialized by the main op, two
signatures, a sharded custom-keyed saver) and a `simple_save` export (asset file, table
initialized by the legacy init op) load and run giving TF's outputs; a TF ``.meta`` imports and
its own saver restores TF's checkpoint.

tensorweave -> TF (with ``TENSORWEAVE_TF_PYTHON`` naming a Python that has TF,
``tests/data/tf_saved_models/tf_run.py``): tensorweave's exports load in TF's ``loader.load``
and every signature gives tensorweave's outputs; ``saved_model_cli show --all`` lists the
signatures; TF's ``import_meta_graph`` plus ``restore`` works on a tensorweave ``.meta``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.formats.tensor_bundle import BundleReader

DATA = Path(__file__).parent / "data" / "tf_saved_models"
EXPECTED = json.loads((DATA / "expected.json").read_text())
INPUTS = EXPECTED["inputs"]
TF_PYTHON = os.environ.get("TENSORWEAVE_TF_PYTHON")
needs_tf = pytest.mark.skipif(not TF_PYTHON, reason="TENSORWEAVE_TF_PYTHON does not name a "
                                                    "Python with TensorFlow, so TF cannot load "
                                                    "tensorweave's export")


def run_signatures(sess, meta) -> dict:
    out = {}
    for name, sig in meta.signature_def.items():
        feeds = {info.name: INPUTS[key] for key, info in sig.inputs.items()}
        got = sess.run({key: info.name for key, info in sig.outputs.items()}, feeds)
        out[name] = {key: np.asarray(value).tolist() for key, value in got.items()}
    return out


def assert_outputs_equal(got: dict, want: dict) -> None:
    assert sorted(got) == sorted(want)
    for name in want:
        assert sorted(got[name]) == sorted(want[name])
        for key in want[name]:
            np.testing.assert_allclose(got[name][key], want[name][key], rtol=1e-6)


@pytest.mark.parametrize("export", ["builder", "simple_save"])
def test_tf_exports_load_and_run_giving_tfs_outputs(export: str) -> None:
    with tf.Graph().as_default() as graph, tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(DATA / export))
        assert_outputs_equal(run_signatures(sess, meta), EXPECTED[export])
        assert graph.get_collection(tf.GraphKeys.TABLE_INITIALIZERS)
    # TF 2's MatMul has an attr TF 1.15's lacks; it imports because it holds the default the
    # producer's stripped_op_list states
    (matmul,) = [op for op in meta.meta_info_def.stripped_op_list.op if op.name == "MatMul"]
    (grad_a,) = [attr for attr in matmul.attr if attr.name == "grad_a"]
    assert grad_a.default_value.b is False and grad_a.default_value.HasField("b")


def test_tfs_asset_collection_re_exports_as_an_any_list() -> None:
    from tensorweave.formats.saved_model_proto import asset_file_def_from_any

    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(DATA / "builder"))
        (asset,) = tf.get_collection(tf.saved_model.ASSETS_KEY)  # an Any, as TF's loader gives
        assert asset_file_def_from_any(asset).filename == "vocab.txt"
        again = tf.train.export_meta_graph()
    exported = again.collection_def[tf.saved_model.ASSETS_KEY]
    assert exported.WhichOneof("kind") == "any_list"  # as TF wrote it, not bytes
    assert exported == meta.collection_def[tf.saved_model.ASSETS_KEY]


def test_tf_meta_graph_restores_through_its_own_saver_ops(tmp_path) -> None:
    with tf.Graph().as_default(), tf.Session() as sess:
        saver = tf.train.import_meta_graph(str(DATA / "meta" / "model.ckpt.meta"))
        # TF's saver chose the checkpoint keys: only its own restore op knows them
        assert saver.as_saver_def().restore_op_name == "save/restore_all"
        saver.restore(sess, str(DATA / "meta" / "model.ckpt"))
        np.testing.assert_array_equal(sess.run("w:0"), EXPECTED["meta"]["w"])
        assert sess.run("global_step:0") == EXPECTED["meta"]["step"]
        assert [t.name for t in tf.get_collection("outputs")] == ["total:0"]
        path = saver.save(sess, str(tmp_path / "again"))
    assert BundleReader(path).names() == ["renamed/step", "renamed/w"]
    assert sorted(os.listdir(tmp_path)) == [
        "again.data-00000-of-00002", "again.data-00001-of-00002", "again.index", "again.meta",
        "checkpoint"]


# -- tensorweave -> TF ------------------------------------------------------------------------


def build_model(vocab: str | None):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    words = tf.placeholder(tf.string, [None], name="words")
    w = tf.Variable([[1.5, -2.0, 0.5], [0.25, 1.0, -1.0]], name="w")
    b = tf.Variable([0.1, 0.2, 0.3], name="b")
    y = tf.add(tf.matmul(x, w), b, name="y")
    init = (tf.lookup.KeyValueTensorInitializer(["a", "b", "c"], np.arange(3, dtype=np.int64))
            if vocab is None else tf.lookup.TextFileInitializer(
                vocab, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
                tf.lookup.TextFileIndex.LINE_NUMBER))
    ids = tf.identity(tf.lookup.StaticHashTable(init, -1).lookup(words), name="ids")
    return x, words, y, ids


def run_tf(*args: str) -> dict:
    done = subprocess.run([TF_PYTHON, str(DATA / "tf_run.py"), *args], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def tensorweave_outputs(sess, meta) -> dict:
    return {name: {key: [v.decode() if isinstance(v, bytes) else v for v in value]
                   for key, value in outputs.items()}
            for name, outputs in run_signatures(sess, meta).items()}


@needs_tf
def test_a_tensorweave_builder_export_runs_in_tf_giving_tensorweaves_outputs(tmp_path) -> None:
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\nc\n")
    export = str(tmp_path / "export")
    x, words, y, ids = build_model(str(vocab))
    info = tf.saved_model.utils.build_tensor_info
    predict = tf.saved_model.signature_constants.PREDICT_METHOD_NAME
    signatures = {
        "lookup": tf.saved_model.signature_def_utils.build_signature_def(
            {"words": info(words)}, {"ids": info(ids)}, predict),
        "serving_default": tf.saved_model.signature_def_utils.build_signature_def(
            {"x": info(x), "words": info(words)}, {"y": info(y), "ids": info(ids)}, predict),
    }
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        builder = tf.saved_model.Builder(export)
        builder.add_meta_graph_and_variables(
            sess, ["serve"], signature_def_map=signatures, main_op=tf.tables_initializer(),
            assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS))
        builder.save()
    vocab.unlink()  # TF must read the export's copy, fed by its loader
    with tf.Graph().as_default(), tf.Session() as sess:
        ours = tensorweave_outputs(sess, tf.saved_model.loader.load(sess, ["serve"], export))
    assert_outputs_equal(run_tf("saved_model", export, json.dumps(INPUTS)), ours)
    shown = subprocess.run([os.path.join(os.path.dirname(TF_PYTHON), "saved_model_cli"),
                            "show", "--all", "--dir", export], capture_output=True, text=True,
                           timeout=300)
    assert shown.returncode == 0, shown.stderr[-3000:]
    for line in ("signature_def['lookup']:", "signature_def['serving_default']:",
                 "inputs['x'] tensor_info:", "outputs['ids'] tensor_info:", "name: y:0"):
        assert line in shown.stdout


@needs_tf
def test_a_tensorweave_simple_save_export_runs_in_tf(tmp_path) -> None:
    export = str(tmp_path / "export")
    x, words, y, ids = build_model(None)
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        tf.saved_model.simple_save(sess, export, {"x": x, "words": words},
                                   {"y": y, "ids": ids}, legacy_init_op=tf.tables_initializer())
    with tf.Graph().as_default(), tf.Session() as sess:
        ours = tensorweave_outputs(sess, tf.saved_model.loader.load(sess, ["serve"], export))
    assert_outputs_equal(run_tf("saved_model", export, json.dumps(INPUTS)), ours)


@needs_tf
@pytest.mark.parametrize("sharded", [False, True])
def test_tf_imports_a_tensorweave_meta_graph_and_restores_with_its_saver(sharded: bool,
                                                                          tmp_path) -> None:
    with tf.device("/cpu:0"):
        w = tf.Variable(np.arange(6.0, dtype=np.float32).reshape(2, 3), name="w")
    step = tf.train.get_or_create_global_step()
    saver = tf.train.Saver({"renamed/w": w, "renamed/step": step}, sharded=sharded)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([w.assign(w * 3.0), step.assign(11)])
        path = saver.save(sess, str(tmp_path / "model.ckpt"))
        want = sess.run([w, step])
    theirs = run_tf("meta", f"{path}.meta", path, json.dumps(["w:0", "global_step:0"]))
    np.testing.assert_array_equal(theirs["w:0"], want[0])
    assert theirs["global_step:0"] == want[1]
