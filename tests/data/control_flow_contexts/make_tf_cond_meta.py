"""Writes ``tf_cond.meta``: a meta graph TF 2.21's ``compat.v1`` (v1 behaviour, so TF1's
``Switch``/``Merge`` control flow) wrote for a cond with a nested cond, whose ``cond_context``
collection holds TF's ``CondContextDef``s, and ``tf_cond.json``: what TF reads back from it.

Run with a Python that has TensorFlow: ``python make_tf_cond_meta.py``.
"""

import json
import pathlib

import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
HERE = pathlib.Path(__file__).parent

x = tf.placeholder(tf.float32, [], name="x")
y = tf.cond(x > 0, lambda: tf.cond(x > 1, lambda: x * 2.0, lambda: x * 3.0, name="inner"),
            lambda: x - 1.0, name="outer")
z = tf.identity(x + 1.0, name="z")
tf.train.export_meta_graph(str(HERE / "tf_cond.meta"))

tf.reset_default_graph()
tf.train.import_meta_graph(str(HERE / "tf_cond.meta"))
contexts = [{
    "name": c.name, "pred": c.pred.name, "pivot": c.pivot.name, "branch": c.branch,
    "values": sorted(c._values),
    "external_values": {k: v.name for k, v in sorted(c._external_values.items())},
} for c in tf.get_collection(tf.GraphKeys.COND_CONTEXT)]
with tf.Session() as sess:
    fetched = {"z:0": float(sess.run("z:0", {"x:0": 1.5}))}
(HERE / "tf_cond.json").write_text(json.dumps({"contexts": contexts, "fetched": fetched},
                                              indent=1) + "\n")
