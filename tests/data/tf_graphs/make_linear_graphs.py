"""Writes the graphs of a small model trained by TF 2.x's ``tf.compat.v1``, and TF's outputs.

Run with TensorFlow 2.x: ``/opt/tfvenv/bin/python tests/data/tf_graphs/make_linear_graphs.py``.
For ``v2`` (``enable_v2_behavior``: resource variables) and ``v1`` (``disable_v2_behavior``:
ref variables) it writes ``linear_<b>.pb`` (the GraphDef), ``linear_<b>.meta`` (the
MetaGraphDef, with its variable collections; no saver, whose ``SaveV2``/``RestoreV2`` ops
tensorweave does not have) and ``linear_<b>.json`` (the feeds, the
loss before each of 3 training steps, and the variables after them). The v2 graph holds
``VarHandleOp``/``ReadVariableOp``/``AssignVariableOp``, ``ResourceGather``,
``ResourceApplyGradientDescent``/``ResourceApplyAdam``/``ResourceSparseApplyAdagrad`` and the
attrs TF 2.x added (MatMul's ``grad_a``/``grad_b``, ``debug_name``, ``allowed_devices``).
"""

import json
import pathlib

import numpy as np
import tensorflow.compat.v1 as tf

HERE = pathlib.Path(__file__).parent
X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]], dtype=np.float32)
Y = np.array([[1.0], [0.0], [2.0]], dtype=np.float32)
IDS = np.array([0, 2, 2], dtype=np.int32)
FETCHES = ["w_value:0", "b_value:0", "emb_value:0", "loss:0", "step_value:0"]


def build() -> tf.Graph:
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        ids = tf.placeholder(tf.int32, [None], name="ids")
        w = tf.get_variable("w", initializer=tf.constant([[0.5], [-0.25]]))
        b = tf.get_variable("b", initializer=tf.constant([0.1]))
        emb = tf.get_variable("emb",
                              initializer=tf.reshape(tf.range(8, dtype=tf.float32), [4, 2]))
        h = x + tf.gather(emb, ids)
        pred = tf.matmul(h, w) + b
        loss = tf.reduce_mean(tf.square(pred - y), name="loss")
        step = tf.train.get_or_create_global_step()
        # Every gradient is computed before any update, so no update races a read (TF's ref
        # variables are updated in place under their readers).
        grad_w, grad_b, grad_emb = tf.gradients(loss, [w, b, emb])
        with tf.control_dependencies([grad_w, grad_b, grad_emb.values, grad_emb.indices]):
            sgd = tf.train.GradientDescentOptimizer(0.02).apply_gradients([(grad_w, w)],
                                                                          name="sgd")
            adam = tf.train.AdamOptimizer(0.05).apply_gradients([(grad_b, b)],
                                                                global_step=step, name="adam")
            adagrad = tf.train.AdagradOptimizer(0.1).apply_gradients([(grad_emb, emb)],
                                                                     name="adagrad")
        tf.group(sgd, adam, adagrad, name="train")
        tf.global_variables_initializer()
        for var, name in ((w, "w"), (b, "b"), (emb, "emb"), (step, "step")):
            tf.identity(var, name=f"{name}_value")
    return graph


def write(behaviour: str) -> None:
    graph = build()
    stem = HERE / f"linear_{behaviour}"
    stem.with_suffix(".pb").write_bytes(graph.as_graph_def().SerializeToString())
    with graph.as_default():
        meta = tf.train.export_meta_graph()
    stem.with_suffix(".meta").write_bytes(meta.SerializeToString())
    feeds = {"x:0": X, "y:0": Y, "ids:0": IDS}
    with tf.Session(graph=graph) as sess:
        sess.run("init")
        losses = []
        for _ in range(3):
            losses.append(float(sess.run("loss:0", feeds)))
            sess.run("train", feeds)
        final = sess.run(FETCHES, feeds)
    out = {"feeds": {k: v.tolist() for k, v in feeds.items()}, "losses": losses,
           "fetches": {k: np.asarray(v).tolist() for k, v in zip(FETCHES, final)}}
    stem.with_suffix(".json").write_text(json.dumps(out, indent=1) + "\n")


tf.disable_eager_execution()
tf.enable_v2_behavior()
tf.disable_eager_execution()
write("v2")
tf.disable_v2_behavior()
write("v1")
