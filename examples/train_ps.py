"""Train a small classifier with a TF1-style script: an MLP on a synthetic, separable dataset.

A plain TF1 graph-mode training script (only the import differs from TensorFlow's): it builds the
model with ``tf.get_variable``, trains it with ``MomentumOptimizer``, shows a progress bar with
the loss and accuracy, checkpoints with ``tf.train.Saver`` and, when run again with the same
``--checkpoint-dir``, resumes from the last checkpoint (the global step goes on counting). It
prints the final accuracy on the training set and on held-out data.

``--local`` runs everything in this process with a plain ``tf.Session()``. The default mode
(between-graph replication on a ps/worker cluster that the script starts itself) plugs into
`run_cluster`; `build_model` and `train` are shared by both.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import numpy as np

import tensorweave as tf

CLASSES = 4
FEATURES = 8


def make_dataset(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian blobs around `CLASSES` well-separated centers (the same centers for every seed)."""
    centers = np.random.default_rng(1234).normal(scale=2.0, size=(CLASSES, FEATURES))
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, CLASSES, n)
    data = centers[labels] + rng.normal(scale=1.0, size=(n, FEATURES))
    return data.astype(np.float32), labels.astype(np.int64)


def build_model(hidden: int, learning_rate: float) -> dict[str, Any]:
    """The graph: placeholders, a 2-layer MLP, loss, accuracy and the training op."""
    x = tf.placeholder(tf.float32, [None, FEATURES], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    with tf.variable_scope("hidden"):
        w1 = tf.get_variable("w", [FEATURES, hidden])
        b1 = tf.get_variable("b", [hidden], initializer=tf.zeros_initializer())
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
    with tf.variable_scope("logits"):
        w2 = tf.get_variable("w", [hidden, CLASSES])
        b2 = tf.get_variable("b", [CLASSES], initializer=tf.zeros_initializer())
        logits = tf.matmul(h, w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                        logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    global_step = tf.train.get_or_create_global_step()
    optimizer = tf.train.MomentumOptimizer(learning_rate, momentum=0.9)
    train_op = optimizer.minimize(loss, global_step=global_step)
    with tf.control_dependencies([train_op]):  # the step this update brought the model to
        step_after = global_step.read_value()
    return {"x": x, "y": y, "loss": loss, "accuracy": accuracy, "global_step": global_step,
            "train": step_after}


def progress(step: int, first: int, last: int, loss: float, accuracy: float,
             width: int = 30) -> None:
    done = (step - first) / max(last - first, 1)
    bar = "#" * int(done * width) + "." * (width - int(done * width))
    # On a terminal the bar redraws in place; in a log it prints one line per update.
    end = "\n" if step >= last or not sys.stdout.isatty() else ""
    print(f"\r[{bar}] step {step}/{last}  loss {loss:.4f}  acc {accuracy:.3f}", end=end,
          flush=True)


def train(sess: Any, model: dict[str, Any], saver: Any, args: argparse.Namespace,
          data: tuple[np.ndarray, np.ndarray]) -> int:
    """Restore or initialize, run `args.steps` steps with checkpoints, return the global step."""
    checkpoint = tf.train.latest_checkpoint(args.checkpoint_dir)
    if checkpoint is None:
        sess.run(tf.global_variables_initializer())
        print("Starting from scratch")
    else:
        saver.restore(sess, checkpoint)
        state = tf.train.get_checkpoint_state(args.checkpoint_dir)
        saver.recover_last_checkpoints(state.all_model_checkpoint_paths)
        print(f"Resumed from {checkpoint}")
    features, labels = data
    rng = np.random.default_rng(args.seed)
    first = tf.train.global_step(sess, model["global_step"])
    last = first + args.steps
    prefix = os.path.join(args.checkpoint_dir, "model.ckpt")
    step = first
    while step < last:
        batch = rng.integers(0, len(labels), args.batch_size)
        feed = {model["x"]: features[batch], model["y"]: labels[batch]}
        step, loss, accuracy = sess.run([model["train"], model["loss"], model["accuracy"]],
                                        feed)
        if step % args.log_every == 0 or step >= last:
            progress(step, first, last, loss, accuracy)
        if step % args.checkpoint_every == 0 or step >= last:
            saver.save(sess, prefix, global_step=step)
    return int(step)


def evaluate(sess: Any, model: dict[str, Any], data: tuple[np.ndarray, np.ndarray]) -> float:
    return float(sess.run(model["accuracy"], {model["x"]: data[0], model["y"]: data[1]}))


def run_local(args: argparse.Namespace) -> None:
    os.makedirs(args.checkpoint_dir, exist_ok=True)
    tf.set_random_seed(args.seed)
    model = build_model(args.hidden, args.learning_rate)
    saver = tf.train.Saver(max_to_keep=3)
    train_data, test_data = make_dataset(2000, seed=1), make_dataset(500, seed=2)
    start = time.time()
    with tf.Session() as sess:
        step = train(sess, model, saver, args, train_data)
        train_accuracy = evaluate(sess, model, train_data)
        test_accuracy = evaluate(sess, model, test_data)
    print(f"Trained to global step {step} in {time.time() - start:.1f}s; checkpoints in "
          f"{args.checkpoint_dir}")
    print(f"Final accuracy: train {train_accuracy:.4f}, held-out {test_accuracy:.4f}")


def run_cluster(args: argparse.Namespace) -> None:
    raise SystemExit("The ps/worker cluster mode of this example is not available in this "
                     "build; run it with --local.")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--local", action="store_true",
                        help="train in this process with a plain Session")
    parser.add_argument("--steps", type=int, default=300, help="training steps for this run")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--checkpoint-dir", default=os.path.join("checkpoints", "train_ps"))
    parser.add_argument("--checkpoint-every", type=int, default=100)
    parser.add_argument("--log-every", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    if args.local:
        run_local(args)
    else:
        run_cluster(args)


if __name__ == "__main__":
    main(sys.argv[1:])
