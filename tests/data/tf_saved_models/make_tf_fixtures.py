"""TF-made SavedModels and a meta graph for `tests/test_tf_saved_models.py` (run with a Python
that has TF: ``python make_tf_fixtures.py OUT_DIR``; OUT_DIR is this directory).

- ``builder/``: `SavedModelBuilder` export (tag ``serve``) of a vocabulary lookup table over an
  asset file (initialized by the ``main_op``, `tables_initializer`) and a linear model with two
  signatures: ``lookup`` (words -> ids) and ``serving_default`` (x -> x @ w + b, and the ids of
  the words); its variables are saved by a sharded saver with custom checkpoint keys.
- ``simple_save/``: `simple_save` export of the same model (the table initialized by the
  ``legacy_init_op``), one signature ``serving_default``.

The graphs are TF 2's: some nodes carry attrs TF 1.15's ops lack (``MatMul``'s ``grad_a``,
``MergeV2Checkpoints``' ``allow_missing_files``) at their defaults, which the meta graphs'
``stripped_op_list`` states, so they import as in TF.
- ``meta/``: ``tf.train.Saver`` checkpoint ``model.ckpt`` and its ``model.ckpt.meta`` (custom
  checkpoint keys, sharded).
- ``expected.json``: TF's outputs of each signature for ``INPUTS``, and the variables' values.
"""

import json
import os
import shutil
import sys

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

INPUTS = {"x": [[1.0, 2.0], [3.0, -1.0]], "words": ["b", "zz", "a", "c"]}
VOCAB = ["a", "b", "c"]


def build(vocab_path: str):
    """The model; the table reads `vocab_path` (an asset)."""
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    words = tf.placeholder(tf.string, [None], name="words")
    w = tf.Variable([[1.5, -2.0, 0.5], [0.25, 1.0, -1.0]], name="w")
    b = tf.Variable([0.1, 0.2, 0.3], name="b")
    y = tf.add(tf.matmul(x, w), b, name="y")
    table = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(vocab_path, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE,
                                      tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER), -1)
    ids = tf.identity(table.lookup(words), name="ids")
    return x, words, w, b, y, ids


def export_builder(out: str, vocab_path: str) -> dict:
    with tf.Graph().as_default(), tf.Session() as sess:
        x, words, w, b, y, ids = build(vocab_path)
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        info = tf.saved_model.utils.build_tensor_info
        sigs = {
            "lookup": tf.saved_model.signature_def_utils.build_signature_def(
                {"words": info(words)}, {"ids": info(ids)}, "tensorflow/serving/predict"),
            "serving_default": tf.saved_model.signature_def_utils.build_signature_def(
                {"x": info(x), "words": info(words)}, {"y": info(y), "ids": info(ids)},
                "tensorflow/serving/predict"),
        }
        builder = tf.saved_model.Builder(os.path.join(out, "builder"))
        builder.add_meta_graph_and_variables(
            sess, ["serve"], signature_def_map=sigs, main_op=tf.tables_initializer(),
            assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS),
            saver=tf.train.Saver({"custom/w": w, "custom/b": b}, sharded=True))
        builder.save()
        feed = {x: INPUTS["x"], words: INPUTS["words"]}
        got = sess.run({"y": y, "ids": ids}, feed)
        return {"lookup": {"ids": got["ids"].tolist()},
                "serving_default": {k: v.tolist() for k, v in got.items()}}


def export_simple(out: str, vocab_path: str) -> dict:
    with tf.Graph().as_default(), tf.Session() as sess:
        x, words, _, _, y, ids = build(vocab_path)
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        tf.saved_model.simple_save(sess, os.path.join(out, "simple_save"),
                                   {"x": x, "words": words}, {"y": y, "ids": ids},
                                   legacy_init_op=tf.tables_initializer())
        got = sess.run({"y": y, "ids": ids}, {x: INPUTS["x"], words: INPUTS["words"]})
        return {"serving_default": {k: v.tolist() for k, v in got.items()}}


def export_meta(out: str) -> dict:
    with tf.Graph().as_default(), tf.Session() as sess:
        with tf.device("/cpu:0"):
            w = tf.Variable(np.arange(6.0, dtype=np.float32).reshape(2, 3), name="w")
        step = tf.train.get_or_create_global_step()
        tf.add_to_collection("outputs", tf.reduce_sum(w, name="total"))
        saver = tf.train.Saver({"renamed/w": w, "renamed/step": step}, sharded=True)
        sess.run(tf.global_variables_initializer())
        sess.run([w.assign(w * 2.0), step.assign(7)])
        os.makedirs(os.path.join(out, "meta"))
        saver.save(sess, os.path.join(out, "meta", "model.ckpt"), write_state=False)
        return {"w": sess.run(w).tolist(), "step": int(sess.run(step))}


def main(out: str) -> None:
    for name in ("builder", "simple_save", "meta"):
        shutil.rmtree(os.path.join(out, name), ignore_errors=True)
    vocab_path = os.path.join(out, "vocab.txt")
    with open(vocab_path, "w") as f:
        f.write("\n".join(VOCAB) + "\n")
    expected = {"inputs": INPUTS, "builder": export_builder(out, vocab_path),
                "simple_save": export_simple(out, vocab_path), "meta": export_meta(out)}
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
    os.remove(vocab_path)  # the exports hold their copies under assets/


if __name__ == "__main__":
    main(sys.argv[1])
