"""Helpers shared by the monitored-session and hook tests: a tiny model, a training loop that
runs until the session says stop, and the scalar summaries an event file holds."""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any

import tensorweave as tf
from tensorweave.formats.event_file import read_events


def model(learning_rate: float = 0.1) -> dict[str, Any]:
    """Minimize w**2 from w = 5, counting global steps."""
    global_step = tf.train.get_or_create_global_step()
    w = tf.Variable(5.0, name="w")
    loss = tf.square(w, name="loss")
    train = tf.train.GradientDescentOptimizer(learning_rate).minimize(
        loss, global_step=global_step)
    return {"global_step": global_step, "w": w, "loss": loss, "train": train}


def train_until_stopped(sess: Any, fetches: Any, limit: int = 1000) -> list[Any]:
    """Run `fetches` until `sess.should_stop()`; the result of every run (fewer than `limit`)."""
    results = []
    while not sess.should_stop():
        results.append(sess.run(fetches))
        assert len(results) < limit
    return results


def scalar_summaries(logdir: Path | str) -> list[tuple[int, str, float]]:
    """``(step, tag, simple_value)`` of every scalar summary in the one event file of
    `logdir`."""
    files = glob.glob(os.path.join(str(logdir), "events.out.tfevents.*"))
    assert len(files) == 1, files
    return [(event.step, value.tag, value.simple_value)
            for event in read_events(files[0]) for value in event.summary.value]
