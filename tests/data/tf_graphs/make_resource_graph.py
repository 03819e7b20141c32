"""Writes resource_linear.pb (a GraphDef) and resource_linear.json (TF's outputs).

Run with TensorFlow 2.x: ``/opt/tfvenv/bin/python tests/data/tf_graphs/make_resource_graph.py``.
The graph is built by ``tf.compat.v1`` with v2 behaviour (resource variables, v2 control
flow), so it holds ``VarHandleOp``/``ReadVariableOp``/``AssignVariableOp`` and
``ResourceApplyGradientDescent``/``ResourceApplyAdam``/``ResourceSparseApplyAdagrad``, plus
TF 2.x's added attrs (MatMul's ``grad_a``/``grad_b``, ``allowed_devices``, ...).
"""

import json
import pathlib

import numpy as np
import tensorflow.compat.v1 as tf

tf.enable_v2_behavior()
tf.disable_eager_execution()

HERE = pathlib.Path(__file__).parent
X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]], dtype=np.float32)
Y = np.array([[1.0], [0.0], [2.0]], dtype=np.float32)
IDS = np.array([0, 2, 2], dtype=np.int32)

graph = tf.Graph()
with graph.as_default():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    ids = tf.placeholder(tf.int32, [None], name="ids")
    w = tf.get_variable("w", initializer=tf.constant([[0.5], [-0.25]]))
    b = tf.get_variable("b", initializer=tf.constant([0.1]))
    emb = tf.get_variable("emb", initializer=tf.reshape(tf.range(8, dtype=tf.float32), [4, 2]))
    h = x + tf.gather(emb, ids)
    pred = tf.matmul(h, w) + b
    loss = tf.reduce_mean(tf.square(pred - y), name="loss")
    step = tf.train.get_or_create_global_step()
    sgd = tf.train.GradientDescentOptimizer(0.02).minimize(loss, var_list=[w], name="sgd")
    adam = tf.train.AdamOptimizer(0.05).minimize(loss, var_list=[b], global_step=step,
                                                 name="adam")
    adagrad = tf.train.AdagradOptimizer(0.1).minimize(loss, var_list=[emb], name="adagrad")
    train = tf.group(sgd, adam, adagrad, name="train")
    init = tf.global_variables_initializer()
    tf.identity(w, name="w_value")
    tf.identity(b, name="b_value")
    tf.identity(emb, name="emb_value")
    tf.identity(step, name="step_value")

(HERE / "resource_linear.pb").write_bytes(graph.as_graph_def().SerializeToString())
feeds = {"x:0": X, "y:0": Y, "ids:0": IDS}
with tf.Session(graph=graph) as sess:
    sess.run(init)
    losses = []
    for _ in range(3):
        losses.append(float(sess.run(loss, {x: X, y: Y, ids: IDS})))
        sess.run(train, {x: X, y: Y, ids: IDS})
    final = sess.run(["w_value:0", "b_value:0", "emb_value:0", "loss:0", "step_value:0"],
                     {x: X, y: Y, ids: IDS})
out = {"feeds": {k: v.tolist() for k, v in feeds.items()},
       "steps": 3, "losses": losses,
       "w": final[0].tolist(), "b": final[1].tolist(), "emb": final[2].tolist(),
       "final_loss": float(final[3]), "global_step": int(final[4])}
(HERE / "resource_linear.json").write_text(json.dumps(out, indent=1) + "\n")
