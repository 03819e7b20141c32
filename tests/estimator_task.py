"""One task of the distributed `Estimator` test (``tests/test_estimator_distributed.py``).

``python tests/estimator_task.py MODEL_DIR MAX_STEPS`` runs `train_and_evaluate` for the task
that ``TF_CONFIG`` names, on a linear regression ``y = x @ TRUE_W + TRUE_B`` (one fixed batch,
gradient descent), and logs at INFO level to stdout. A chief or worker ends with the line
``task <type>:<index> ran <n> steps``; a ps serves until it is killed. The process exits at once
when its standard input reaches end of file, so a task never outlives the test that holds the
pipe's other end, even a test killed outright (the kernel closes the pipe).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import Any

import numpy as np

import tensorweave as tf
from tensorweave.train import monitored_session

TRUE_W = np.array([[1.0], [-2.0], [0.5]], np.float32)
TRUE_B = 0.3
BATCH = 64
# Workers poll for the chief's initialization every 0.1 s, not TF's 30 s, to keep the test short.
RECOVERY_WAIT_SECS = 0.1


def data() -> tuple[np.ndarray, np.ndarray]:
    x = np.random.RandomState(0).randn(BATCH, TRUE_W.shape[0]).astype(np.float32)
    return x, (x @ TRUE_W + TRUE_B).astype(np.float32)


def input_fn() -> tuple[dict[str, Any], Any]:
    x, y = data()
    return {"x": tf.constant(x)}, tf.constant(y)


def model_fn(features: dict[str, Any], labels: Any, mode: str) -> tf.estimator.EstimatorSpec:
    w = tf.get_variable("w", TRUE_W.shape, initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    pred = tf.matmul(features["x"], w) + b
    loss = tf.reduce_mean(tf.square(pred - labels))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


class StepCounter(tf.train.SessionRunHook):
    """Counts the training steps this task ran."""

    def __init__(self) -> None:
        self.steps = 0

    def after_run(self, run_context: Any, run_values: Any) -> None:
        self.steps += 1


def _exit_on_stdin_eof() -> None:
    while os.read(sys.stdin.fileno(), 4096):
        pass
    os._exit(3)


def main(model_dir: str, max_steps: int) -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format="%(name)s: %(message)s", force=True)
    threading.Thread(target=_exit_on_stdin_eof, daemon=True, name="stdin-eof").start()
    monitored_session.RECOVERY_WAIT_SECS = RECOVERY_WAIT_SECS
    config = tf.estimator.RunConfig(
        model_dir=model_dir, tf_random_seed=0, save_checkpoints_steps=max_steps // 2,
        log_step_count_steps=max_steps // 4, experimental_max_worker_delay_secs=0)
    estimator = tf.estimator.Estimator(model_fn, config=config)
    counter = StepCounter()
    tf.estimator.train_and_evaluate(
        estimator, tf.estimator.TrainSpec(input_fn, max_steps=max_steps, hooks=[counter]),
        tf.estimator.EvalSpec(input_fn, steps=1, start_delay_secs=0, throttle_secs=0))
    print(f"task {config.task_type}:{config.task_id} ran {counter.steps} steps", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
