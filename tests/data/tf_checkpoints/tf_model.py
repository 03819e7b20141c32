"""The model of the checkpoint fixtures, in TensorFlow (run with a Python that has TF).

`python tf_model.py make OUT_DIR` trains the model in TF for 5 steps and saves to OUT_DIR/v1
(ref variables), OUT_DIR/v2 (resource variables) and OUT_DIR/sharded (ref variables on two CPUs,
one data file each) the checkpoint and TF's losses of the next 3 steps. `python tf_model.py
continue CKPT_PREFIX` restores CKPT_PREFIX (written by anyone, e.g. tensorweave) into the same
model and prints the losses of the next 3 steps as JSON. `tests/test_tf_checkpoints.py` builds
the same graph with tensorweave.
"""

import json
import os
import sys

import numpy as np
import tensorflow.compat.v1 as tf

STEPS_BEFORE, STEPS_AFTER = 5, 3


def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(0)
    return rng.randn(8, 4).astype(np.float32), rng.randint(0, 3, size=8).astype(np.int32)


def build(use_resource: bool, extras_device: str | None = None):
    """The graph: a partitioned first layer, a dense second one, Adam; extra variables of other
    dtypes (on `extras_device`). Returns (loss, train_op, extras)."""
    x_np, y_np = data()
    x, y = tf.constant(x_np), tf.constant(y_np)
    with tf.variable_scope("model", use_resource=use_resource):
        w1 = tf.get_variable("w1", [4, 6], partitioner=tf.fixed_size_partitioner(2),
                             initializer=tf.random_normal_initializer(stddev=0.5, seed=1))
        b1 = tf.get_variable("b1", [6], initializer=tf.zeros_initializer())
        hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
        with tf.variable_scope("dense"):
            kernel = tf.get_variable("kernel", [6, 3],
                                     initializer=tf.random_normal_initializer(stddev=0.5, seed=2))
            bias = tf.get_variable("bias", [3], initializer=tf.zeros_initializer())
        logits = tf.matmul(hidden, kernel) + bias
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    step = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=step)
    with tf.variable_scope("extras", use_resource=use_resource), tf.device(extras_device):
        extras = [
            tf.get_variable("vocab",
                            initializer=tf.constant([b"a", b"", b"b\x00c", b"\xff" * 300])),
            tf.get_variable("counts", initializer=tf.constant([1, -2, 2 ** 40], tf.int64)),
            tf.get_variable("flags", initializer=tf.constant([[True, False]])),
            tf.get_variable("half", initializer=tf.constant([1.5, -0.25], tf.float16)),
        ]
    return loss, train, extras


def make(out_dir: str) -> None:
    # "sharded": v1 behaviour, the extras on a second CPU, saved one shard per device.
    for behaviour, use_resource, sharded in (("v1", False, False), ("v2", True, False),
                                             ("sharded", False, True)):
        tf.reset_default_graph()
        loss, train, _ = build(use_resource, "/cpu:1" if sharded else None)
        saver = tf.train.Saver(sharded=sharded)
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(STEPS_BEFORE):
                sess.run(train)
            directory = os.path.join(out_dir, behaviour)
            os.makedirs(directory, exist_ok=True)
            saver.save(sess, os.path.join(directory, "model.ckpt"), global_step=STEPS_BEFORE,
                       write_meta_graph=False)
            losses = [float(sess.run([loss, train])[0]) for _ in range(STEPS_AFTER)]
        with open(os.path.join(directory, "losses.json"), "w") as f:
            json.dump(losses, f)


def continue_from(prefix: str) -> None:
    tf.reset_default_graph()
    loss, train, _ = build(use_resource=False)
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, prefix)
        losses = [float(sess.run([loss, train])[0]) for _ in range(STEPS_AFTER)]
        step = int(sess.run(tf.train.get_global_step()))
    print(json.dumps({"losses": losses, "global_step": step}))


if __name__ == "__main__":
    tf.disable_v2_behavior()
    {"make": make, "continue": continue_from}[sys.argv[1]](sys.argv[2])
