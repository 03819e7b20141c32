"""Train an LSTM sequence classifier with a MonitoredTrainingSession, TF1-style.

A plain TF1 graph-mode script (only the import differs from TensorFlow's) that uses the parts of
the API built on control flow: ``tf.nn.dynamic_rnn`` runs an ``LSTMCell`` over each sequence
inside a ``tf.while_loop`` (one ``While`` node whose body is a function graph; its gradient runs
through the loop too), ``tf.layers.dense`` classifies the last output, ``tf.losses`` gives the
loss, ``tf.train.exponential_decay`` the learning rate and ``tf.metrics.accuracy`` the held-out
score. The task: a sequence of ``STEPS`` numbers is labelled 1 when its sum is positive, so the
classifier must carry a running sum through the loop; chance is 50 %.

By default it starts 1 ps + 1 worker (``tensorweave server`` processes on free loopback ports):
the variables live on the ps through ``replica_device_setter``, the loop runs on the worker, and
``tf.train.MonitoredTrainingSession`` initializes or restores the model, stops at
``--steps`` with a ``StopAtStepHook``, logs the loss with a ``LoggingTensorHook`` and checkpoints
into ``--checkpoint-dir`` (a fresh temporary directory by default). ``--local`` trains the same
graph in this process; with the same seed both print the same losses. It ends with ``held-out
accuracy: 0.9xx``.
"""

from __future__ import annotations

import argparse
import logging
import tempfile

import numpy as np

import tensorweave as tf
from tensorweave.train.local_cluster import LocalCluster

STEPS = 6  # numbers per sequence
HIDDEN = 16


def make_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.random.default_rng(seed).normal(size=(n, STEPS, 1)).astype(np.float32)
    return x, (x.sum(axis=(1, 2)) > 0).astype(np.int64)


def build_model() -> dict[str, tf.Tensor]:
    x = tf.placeholder(tf.float32, [None, STEPS, 1], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    cell = tf.nn.rnn_cell.LSTMCell(HIDDEN)
    outputs, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    logits = tf.layers.dense(outputs[:, -1], 2, name="classifier")
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    global_step = tf.train.get_or_create_global_step()
    learning_rate = tf.train.exponential_decay(0.02, global_step, 100, 0.7, staircase=True)
    train = tf.train.AdamOptimizer(learning_rate).minimize(loss, global_step=global_step)
    accuracy, update_accuracy = tf.metrics.accuracy(y, tf.argmax(logits, axis=1))
    return {"x": x, "y": y, "loss": loss, "train": train, "global_step": global_step,
            "accuracy": accuracy, "update_accuracy": update_accuracy}


def train(master: str, cluster: tf.train.ClusterSpec | None, args: argparse.Namespace) -> float:
    """Train to ``args.steps`` on `master`; returns the held-out accuracy."""
    tf.reset_default_graph()
    tf.set_random_seed(args.seed)
    with tf.device(tf.train.replica_device_setter(cluster=cluster) if cluster else None):
        model = build_model()
    train_x, train_y = make_data(4096, args.seed)
    test_x, test_y = make_data(1024, args.seed + 1)
    rng = np.random.default_rng(args.seed)
    hooks = [tf.train.StopAtStepHook(last_step=args.steps),
             tf.train.LoggingTensorHook({"step": model["global_step"], "loss": model["loss"]},
                                        every_n_iter=args.log_every)]
    checkpoint_dir = args.checkpoint_dir or tempfile.mkdtemp(prefix="tw_sequence_classifier_")
    with tf.train.MonitoredTrainingSession(master=master, checkpoint_dir=checkpoint_dir,
                                           hooks=hooks, save_checkpoint_steps=100,
                                           log_step_count_steps=None) as sess:
        while not sess.should_stop():
            batch = rng.integers(0, len(train_x), args.batch_size)
            sess.run(model["train"], {model["x"]: train_x[batch], model["y"]: train_y[batch]})
    print(f"checkpoints in {checkpoint_dir}: {tf.train.latest_checkpoint(checkpoint_dir)}")
    # Evaluate from the last checkpoint, as a separate evaluation job would.
    with tf.train.MonitoredSession(tf.train.ChiefSessionCreator(
            master=master, checkpoint_dir=checkpoint_dir)) as sess:
        for start in range(0, len(test_x), 256):
            sess.run(model["update_accuracy"], {model["x"]: test_x[start:start + 256],
                                                model["y"]: test_y[start:start + 256]})
        return float(sess.run(model["accuracy"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--local", action="store_true", help="train in this process")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint-dir", help="default: a new temporary directory")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("tensorweave.train.monitored_session").setLevel(logging.WARNING)
    if args.local:
        accuracy = train("", None, args)
    else:
        with LocalCluster({"ps": 1, "worker": 1}) as local:
            print(f"cluster: {local.cluster.as_dict()}")
            accuracy = train(local.target("worker"), local.cluster, args)
    print(f"held-out accuracy: {accuracy:.3f}")


if __name__ == "__main__":
    main()
