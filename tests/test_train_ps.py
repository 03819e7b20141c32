"""The main job, ``examples/train_ps.py``: on its own 1 ps + 2 worker cluster and with
``--local`` it converges, checkpoints, resumes on a second run, and leaves no server behind.

Accuracy thresholds: the classes are Gaussian blobs whose centers lie several standard deviations
apart, so a trained MLP classifies about 99.5 % of the points (train and held-out) while an
untrained one is near chance (25 %); 0.97 leaves room for the order in which asynchronous
updates from two workers land, which differs from run to run.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import tensorweave as tf
from tests.examples_support import load_example

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "examples" / "train_ps.py"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
STARTED = re.compile(r"started /job:(\w+)/task:(\d+) on localhost:(\d+) \(pid (\d+)\)")


def train(checkpoint_dir: Path, steps: int, *flags: str) -> str:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), *flags, "--steps", str(steps), "--checkpoint-dir",
         str(checkpoint_dir)], env=ENV, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def final_step(output: str) -> int:
    return int(re.search(r"trained to global step (\d+) in", output).group(1))


def last_bar_step(output: str, last: int) -> int:
    """The global step of the last progress line of a run to `last` (asynchronous workers may
    overshoot it by the step the other worker had in flight)."""
    steps = re.findall(rf"step (\d+)/{last}\s+loss [0-9.]+\s+acc [0-9.]+", output)
    assert steps, output
    assert last <= int(steps[-1]) <= last + 1
    return int(steps[-1])


def final_accuracy(output: str) -> tuple[float, float]:
    match = re.search(r"final accuracy: train ([0-9.]+), held-out ([0-9.]+)", output)
    return float(match.group(1)), float(match.group(2))


def assert_servers_gone(output: str) -> None:
    """Every server the run started has exited (and was reaped) and freed its port."""
    started = STARTED.findall(output)
    assert sorted((job, int(task)) for job, task, _, _ in started) == [
        ("ps", 0), ("worker", 0), ("worker", 1)]
    for _, _, port, pid in started:
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            pass
        else:
            raise AssertionError(f"server process {pid} is still running")
        with socket.socket() as s:
            s.bind(("localhost", int(port)))  # OSError if a server still listens there


def test_cluster_training_converges_resumes_and_stops_its_servers(tmp_path) -> None:
    first = train(tmp_path, 100)
    assert "starting from scratch" in first
    last_bar_step(first, 100)
    runs = re.search(r"worker 0 ran (\d+) steps, worker 1 ran (\d+) steps", first)
    assert int(runs.group(1)) > 0 and int(runs.group(2)) > 0  # both pushed updates to the ps
    step = final_step(first)
    assert 100 <= step <= 101 and int(runs.group(1)) + int(runs.group(2)) == step
    assert min(final_accuracy(first)) > 0.97
    assert (tmp_path / f"model.ckpt-{step}.index").exists()
    assert "stopped 3 servers (exit codes [0, 0, 0])" in first
    assert_servers_gone(first)

    second = train(tmp_path, 40)
    assert f"resumed from {tmp_path / f'model.ckpt-{step}'} at global step {step}" in second
    last_bar_step(second, step + 40)
    assert step + 40 <= final_step(second) <= step + 41
    assert min(final_accuracy(second)) > 0.97
    assert_servers_gone(second)


def test_ctrl_c_stops_the_servers(tmp_path) -> None:
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--steps", "100000", "--checkpoint-dir", str(tmp_path)],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        for line in process.stdout:
            lines.append(line)
            if "loss" in line:  # training is under way on both workers
                break
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    output = "".join(lines) + rest
    assert process.returncode == 130, output
    assert "interrupted" in output and "stopped 3 servers" in output
    assert_servers_gone(output)


def test_an_error_stops_the_servers(tmp_path) -> None:
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-5"\n')
    (tmp_path / "model.ckpt-5.index").write_bytes(b"not a checkpoint")
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--steps", "10", "--checkpoint-dir", str(tmp_path)],
        env=ENV, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "DataLossError" in result.stderr and "model.ckpt-5" in result.stderr
    assert "stopped 3 servers" in result.stdout
    assert_servers_gone(result.stdout)


def test_worker_graph_puts_state_on_the_ps_and_compute_on_its_worker() -> None:
    example = load_example("train_ps")
    cluster = tf.train.ClusterSpec({"ps": ["localhost:1"],
                                    "worker": ["localhost:2", "localhost:3"]})
    graph, _ = example.build_graph(1, example.parse_args([]), cluster)
    ops = graph.get_operations()
    variables = {op.name: op.device for op in ops if op.type == "VariableV2"}
    # weights, biases, the global step and a momentum slot for each weight and bias
    assert sorted(variables) == sorted(
        ["global_step", "hidden/w", "hidden/b", "logits/w", "logits/b", "hidden/w/Momentum",
         "hidden/b/Momentum", "logits/w/Momentum", "logits/b/Momentum"])
    assert set(variables.values()) == {"/job:ps/task:0"}
    updates = [op for op in ops if op.type == "ApplyMomentum"]
    assert sorted(op.colocation_groups()[0] for op in updates) == [
        "loc:@hidden/b", "loc:@hidden/w", "loc:@logits/b", "loc:@logits/w"]
    assert {op.device for op in updates} == {"/job:ps/task:0"}
    matmuls = [op for op in ops if op.type == "MatMul"]
    assert matmuls and {op.device for op in matmuls} == {"/job:worker/task:1"}


def test_local_training_converges_and_resumes(tmp_path) -> None:
    first = train(tmp_path, 200, "--local")
    assert "starting from scratch" in first and "started /job" not in first
    assert last_bar_step(first, 200) == final_step(first) == 200
    assert min(final_accuracy(first)) > 0.97
    second = train(tmp_path, 50, "--local")
    assert f"resumed from {tmp_path / 'model.ckpt-200'} at global step 200" in second
    assert last_bar_step(second, 250) == final_step(second) == 250
    assert (tmp_path / "model.ckpt-250.index").exists()
