"""What several benchmarks share: timing loops and the seed graph with its numpy twin."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

import tensorweave as tf

SEED_SHAPE = [16]


def timed(fn: Callable[[], object], repeats: int, warmup: int = 0) -> list[float]:
    """Seconds per call of `fn`, `repeats` times, after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


@attrs.frozen
class SeedGraph:
    """``S += w * x + b`` built in its own graph."""

    graph: tf.Graph
    x: Any
    update: Any
    init: Any


def seed_graph(shape: list[int] = SEED_SHAPE, device: Any = None) -> SeedGraph:
    """The seed graph over float32 tensors of `shape`, under the device scope `device`."""
    graph = tf.Graph()
    with graph.as_default(), graph.device(device):
        x = tf.placeholder(tf.float32, shape, name="x")
        w = tf.Variable(np.full(shape, 0.5, np.float32), name="w")
        b = tf.Variable(np.full(shape, 0.25, np.float32), name="b")
        s_var = tf.Variable(np.zeros(shape, np.float32), name="S")
        update = tf.assign_add(s_var, w * x + b)
        init = tf.group(w.initializer, b.initializer, s_var.initializer)
    return SeedGraph(graph, x, update, init)


def numpy_seed_step(shape: list[int], feed: np.ndarray) -> Callable[[], None]:
    """One seed-graph step in plain numpy: the baseline of the step figures."""
    w_np, b_np = np.full(shape, 0.5, np.float32), np.full(shape, 0.25, np.float32)
    s_np = np.zeros(shape, np.float32)

    def step() -> None:
        np.add(s_np, w_np * feed + b_np, out=s_np)

    return step


def rss(pid: int) -> int:
    """Resident memory of process `pid`, in bytes (Linux's /proc)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")
