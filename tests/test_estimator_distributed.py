"""Distributed `Estimator` training from ``TF_CONFIG``: `RunConfig`'s cluster settings and
`train_and_evaluate`'s tasks, with 1 ps + 1 chief + 1 worker as separate processes
(``tests/estimator_task.py``) on free loopback ports.

The cluster test orders its tasks by what they print, never by sleeping: the ps first (the
others' sessions need it reachable), then the worker, and the chief once the worker polls for the
chief's initialization, so that both train. Every task holds a pipe from this process on its
standard input and exits when it closes, and each one still alive at the end is killed.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.namespaces.summary import FileWriterCache
from tensorweave.train.local_cluster import free_ports
from tensorweave.train.meta_graph import read_meta_graph_file
from tests import estimator_task

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "tests" / "estimator_task.py"
# A few hundred steps a second each: enough steps that the worker, which polls for the chief's
# initialization every 0.1 s, joins long before the chief would be done alone.
MAX_STEPS = 1000
DEADLINE_SECS = 90.0  # for the whole cluster run; it takes a few seconds when all goes well

CLUSTER = {"chief": ["host0:2222"], "ps": ["host1:2222", "host2:2222"],
           "worker": ["host3:2222", "host4:2222", "host5:2222"]}


@pytest.fixture(autouse=True)
def closed_writer_cache() -> Iterator[None]:
    yield
    FileWriterCache.clear()


def set_tf_config(monkeypatch: pytest.MonkeyPatch, cluster: Any, task_type: str | None = None,
                  index: int | None = 0, **extra: Any) -> None:
    config: dict[str, Any] = {"cluster": cluster, **extra}
    if task_type is not None:
        config["task"] = {"type": task_type, "index": index}
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))


# -- RunConfig --------------------------------------------------------------------------------

@pytest.mark.parametrize("task_type,index,master,is_chief,global_id", [
    ("chief", 0, "grpc://host0:2222", True, 0),
    ("worker", 1, "grpc://host4:2222", False, 2),
    ("worker", 2, "grpc://host5:2222", False, 3),
    ("ps", 1, "grpc://host2:2222", False, 5),
])
def test_run_config_reads_the_task_of_a_cluster(monkeypatch: pytest.MonkeyPatch, task_type: str,
                                                index: int, master: str, is_chief: bool,
                                                global_id: int) -> None:
    set_tf_config(monkeypatch, CLUSTER, task_type, index)
    config = tf.estimator.RunConfig()
    assert config.cluster_spec == tf.train.ClusterSpec(CLUSTER)
    assert (config.task_type, config.task_id) == (task_type, index)
    assert config.master == master and config.evaluation_master == ""
    assert config.is_chief is is_chief
    assert (config.num_ps_replicas, config.num_worker_replicas) == (2, 4)
    assert config.global_id_in_cluster == global_id
    assert config.replace(save_summary_steps=5).master == master  # the copy keeps the task


def test_run_config_evaluator_is_outside_the_training_cluster(
        monkeypatch: pytest.MonkeyPatch) -> None:
    set_tf_config(monkeypatch, CLUSTER, "evaluator", 0, eval_session_master="grpc://e:1")
    config = tf.estimator.RunConfig()
    assert config.cluster_spec == tf.train.ClusterSpec({}) and not config.cluster_spec
    assert (config.task_type, config.task_id, config.is_chief) == ("evaluator", 0, False)
    assert config.master == "" and config.evaluation_master == "grpc://e:1"
    assert (config.num_ps_replicas, config.num_worker_replicas) == (0, 0)
    assert config.global_id_in_cluster is None


def test_run_config_legacy_master_and_one_task_clusters(
        monkeypatch: pytest.MonkeyPatch) -> None:
    set_tf_config(monkeypatch, {"master": ["m:1"], "ps": ["p:1"], "worker": ["w:1", "w:2"]},
                  "master", 0)
    config = tf.estimator.RunConfig()
    assert config.is_chief and config.master == "grpc://m:1"
    assert (config.num_ps_replicas, config.num_worker_replicas) == (1, 3)
    set_tf_config(monkeypatch, {"master": ["m:1"], "ps": ["p:1"], "worker": ["w:1", "w:2"]},
                  "worker", 0)
    assert tf.estimator.RunConfig().global_id_in_cluster == 1
    # One task does everything itself: a direct session, no gRPC.
    set_tf_config(monkeypatch, {"chief": ["c:1"]}, "chief", 0)
    assert tf.estimator.RunConfig().master == ""
    set_tf_config(monkeypatch, CLUSTER, "worker", 0, session_master="grpc://elsewhere:1")
    assert tf.estimator.RunConfig().master == "grpc://elsewhere:1"


@pytest.mark.parametrize("cluster,task_type,index,extra,error,message", [
    ({"worker": ["w:1"]}, "worker", 0, {}, ValueError, 'must have one "chief" node'),
    ({"chief": ["c:1", "c:2"]}, "chief", 0, {}, ValueError, 'only one "chief" node'),
    (CLUSTER, None, None, {}, ValueError, "task type must be set"),
    (CLUSTER, "worker", None, {}, ValueError, "task index must be set"),
    (CLUSTER, "worker", -1, {}, ValueError, "must be non-negative"),
    (CLUSTER, "trainer", 0, {}, ValueError, "trainer is not a valid task_type"),
    (CLUSTER, "worker", 3, {}, ValueError, "3 is not a valid task_id for task_type worker"),
    (CLUSTER, "worker", 0, {"eval_session_master": "e:1"}, ValueError,
     "should not be set for task type other than evaluator"),
    ({"master": ["m:1"], "chief": ["c:1"]}, "master", 0, {}, ValueError,
     "job `chief` is not supported"),
    ({"master": ["m:1"]}, "evaluator", 0, {}, ValueError, "`evaluator` is not supported"),
    (CLUSTER, "worker", 0, {"service": "x"}, TypeError, '"service" is set in TF_CONFIG'),
])
def test_run_config_refuses_malformed_tf_config(monkeypatch: pytest.MonkeyPatch, cluster: Any,
                                                task_type: str | None, index: int | None,
                                                extra: dict[str, Any], error: type[Exception],
                                                message: str) -> None:
    config: dict[str, Any] = {"cluster": cluster, **extra}
    if task_type is not None:
        config["task"] = {"type": task_type, **({} if index is None else {"index": index})}
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))
    with pytest.raises(error, match=re.escape(message)):
        tf.estimator.RunConfig()


# -- the estimator's graph and the executor, in this process -----------------------------------

def test_estimator_places_variables_on_the_ps(monkeypatch: pytest.MonkeyPatch) -> None:
    set_tf_config(monkeypatch, CLUSTER, "worker", 1)
    estimator = tf.estimator.Estimator(estimator_task.model_fn, model_dir="unused")
    with tf.Graph().as_default() as graph, graph.device(estimator._device_fn):
        global_step = tf.train.get_or_create_global_step()
        features, labels = estimator_task.input_fn()
        estimator_task.model_fn(features, labels, tf.estimator.ModeKeys.TRAIN)
    variables = {op.name: op.device for op in graph.get_operations()
                 if op.type == "VariableV2"}
    # round-robin over the two ps tasks, in creation order
    assert variables == {"global_step": "/job:ps/task:0", "w": "/job:ps/task:1",
                         "b": "/job:ps/task:0"}
    assert global_step.device == "/job:ps/task:0"
    matmuls = [op for op in graph.get_operations() if op.type == "MatMul"]
    assert matmuls and {op.device for op in matmuls} == {"/job:worker/task:1"}


def test_evaluator_task_evaluates_until_max_steps(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    def estimator() -> tf.estimator.Estimator:
        return tf.estimator.Estimator(estimator_task.model_fn, config=tf.estimator.RunConfig(
            model_dir=str(tmp_path), save_checkpoints_steps=10, log_step_count_steps=None))

    estimator().train(estimator_task.input_fn, max_steps=30)
    set_tf_config(monkeypatch, CLUSTER, "evaluator", 0)
    metrics, exports = tf.estimator.train_and_evaluate(
        estimator(), tf.estimator.TrainSpec(estimator_task.input_fn, max_steps=30),
        tf.estimator.EvalSpec(estimator_task.input_fn, steps=1, start_delay_secs=0,
                              throttle_secs=0))
    assert metrics["global_step"] == 30 and exports == []
    assert metrics["loss"] == pytest.approx(np.mean(np.square(
        estimator_task.data()[1] - predict(tmp_path))), rel=1e-4)
    set_tf_config(monkeypatch, CLUSTER, "evaluator", 1)
    with pytest.raises(ValueError, match="only be one `evaluator` task"):
        tf.estimator.train_and_evaluate(
            estimator(), tf.estimator.TrainSpec(estimator_task.input_fn, max_steps=30),
            tf.estimator.EvalSpec(estimator_task.input_fn))


def test_one_task_master_trains_and_evaluates_locally(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    set_tf_config(monkeypatch, {"master": ["localhost:1"]}, "master", 0)
    estimator = tf.estimator.Estimator(estimator_task.model_fn, config=tf.estimator.RunConfig(
        model_dir=str(tmp_path), save_checkpoints_steps=10, log_step_count_steps=None))
    metrics, _ = tf.estimator.train_and_evaluate(
        estimator, tf.estimator.TrainSpec(estimator_task.input_fn, max_steps=20),
        tf.estimator.EvalSpec(estimator_task.input_fn, steps=1, throttle_secs=0))
    assert metrics["global_step"] == 20  # no server on port 1: the master is local


def test_unknown_task_type_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    set_tf_config(monkeypatch, {**CLUSTER, "trainer": ["t:1"]}, "trainer", 0)
    estimator = tf.estimator.Estimator(estimator_task.model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match=r"Task type trainer is not supported\. Supported task "
                                         r"types are \['chief', 'evaluator', 'master', 'ps', "
                                         r"'worker'\]"):
        tf.estimator.train_and_evaluate(
            estimator, tf.estimator.TrainSpec(estimator_task.input_fn, max_steps=1),
            tf.estimator.EvalSpec(estimator_task.input_fn))


def test_a_task_of_a_larger_cluster_needs_a_master(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    set_tf_config(monkeypatch, CLUSTER, "chief", 0, session_master="")
    estimator = tf.estimator.Estimator(estimator_task.model_fn, model_dir=str(tmp_path))
    with pytest.raises(RuntimeError, match="be sure to specify master"):
        tf.estimator.train_and_evaluate(
            estimator, tf.estimator.TrainSpec(estimator_task.input_fn, max_steps=1),
            tf.estimator.EvalSpec(estimator_task.input_fn))
    assert tf.train.latest_checkpoint(str(tmp_path)) is None


def predict(model_dir: Path) -> np.ndarray:
    x, _ = estimator_task.data()
    w = tf.train.load_variable(str(model_dir), "w")
    b = tf.train.load_variable(str(model_dir), "b")
    return x @ w + b


# -- 1 ps + 1 chief + 1 worker ----------------------------------------------------------------

class Task:
    """One task's process; its output lines are queued as they come."""

    def __init__(self, cluster: dict[str, list[str]], task_type: str, model_dir: Path) -> None:
        self.name = f"{task_type}:0"
        env = {**os.environ, "PYTHONPATH": str(REPO),
               "TF_CONFIG": json.dumps({"cluster": cluster,
                                        "task": {"type": task_type, "index": 0}})}
        self.process = subprocess.Popen(
            [sys.executable, str(SCRIPT), str(model_dir), str(MAX_STEPS)], env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for_line(self, pattern: str, deadline: float) -> re.Match[str]:
        """The first line (from now on) matching `pattern`; fails if the task ends first."""
        while True:
            try:
                line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"{self.name}: no line matching {pattern!r} in time:\n"
                                     + self.output()) from None
            if line is None:
                raise AssertionError(f"{self.name} ended (exit code {self.process.wait()}) "
                                     f"before a line matching {pattern!r}:\n" + self.output())
            self.lines.append(line)
            match = re.search(pattern, line)
            if match:
                return match

    def output(self) -> str:
        while True:  # whatever has been read since
            try:
                line = self._queue.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                self.lines.append(line)
        return "\n".join(self.lines)

    def stop(self) -> None:
        """Close the task's stdin (it exits), and kill it if it is still there shortly after."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def test_ps_chief_and_worker_train_the_model_together(tmp_path: Path) -> None:
    ps_port, chief_port, worker_port = free_ports(3)
    cluster = {"ps": [f"localhost:{ps_port}"], "chief": [f"localhost:{chief_port}"],
               "worker": [f"localhost:{worker_port}"]}
    deadline = time.monotonic() + DEADLINE_SECS
    tasks: list[Task] = []
    try:
        ps = Task(cluster, "ps", tmp_path)
        tasks.append(ps)
        ps.wait_for_line(rf"Started server /job:ps/task:0 on grpc://localhost:{ps_port}",
                         deadline)
        worker = Task(cluster, "worker", tmp_path)
        tasks.append(worker)
        worker.wait_for_line("Waiting for model to be ready", deadline)
        chief = Task(cluster, "chief", tmp_path)
        tasks.append(chief)
        steps = {}
        for task in (chief, worker):
            steps[task.name] = int(task.wait_for_line(rf"task {task.name} ran (\d+) steps",
                                                      deadline).group(1))
            assert task.process.wait(max(0.0, deadline - time.monotonic())) == 0, task.output()
        assert ps.process.poll() is None  # a ps serves until it is stopped
    finally:
        for task in tasks:
            task.stop()
    assert ps.process.returncode == 3  # it left when its stdin closed, as on our death

    # Both pushed updates to the variables on the ps; the chief alone checkpointed.
    assert steps["chief:0"] >= 1 and steps["worker:0"] >= 1, steps
    chief_log, worker_log = chief.output(), worker.output()
    saved = r"Saving checkpoints for (\d+) into " + re.escape(str(tmp_path / "model.ckpt."))
    saves = [int(step) for step in re.findall(saved, chief_log)]
    assert len(saves) >= 2, chief_log  # at least when the session started and at the end
    assert "Saving checkpoints" not in worker_log and "Start Tensorflow server." in worker_log
    checkpoint = tf.train.latest_checkpoint(str(tmp_path))
    named_step = int(re.fullmatch(re.escape(str(tmp_path / "model.ckpt-")) + r"(\d+)",
                                  checkpoint).group(1))
    assert named_step == saves[-1] >= MAX_STEPS
    # The worker may push an update between the chief's read of the step and its save.
    assert int(tf.train.load_variable(checkpoint, "global_step")) >= named_step

    # The chief's graph put the variables on the ps and the compute on the chief.
    nodes = read_meta_graph_file(checkpoint + ".meta").graph_def.node
    devices = {node.name: node.device for node in nodes if node.op == "VariableV2"}
    assert devices == {"global_step": "/job:ps/task:0", "w": "/job:ps/task:0",
                       "b": "/job:ps/task:0"}
    assert {node.device for node in nodes if node.op == "MatMul"} == {"/job:chief/task:0"}

    _, y = estimator_task.data()
    np.testing.assert_allclose(tf.train.load_variable(checkpoint, "w"), estimator_task.TRUE_W,
                               atol=1e-3)
    np.testing.assert_allclose(tf.train.load_variable(checkpoint, "b"), [estimator_task.TRUE_B],
                               atol=1e-3)
    np.testing.assert_allclose(predict(tmp_path), y, atol=1e-3)
