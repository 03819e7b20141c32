"""`tw.train.Server` and the ``tensorweave server`` command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import tensorweave as tf
from tensorweave.train.local_cluster import LocalCluster, free_ports
from tensorweave.train.server_lib import run_server_cli


def test_job_and_task_default_only_when_the_cluster_leaves_no_choice() -> None:
    (port,) = free_ports(1)
    with tf.train.Server({"solo": [f"localhost:{port}"]}) as server:
        assert (server.job_name, server.task_index) == ("solo", 0)
        assert server.target == f"grpc://localhost:{port}"
        assert server.cluster_spec.as_dict() == {"solo": [f"localhost:{port}"]}
    two_jobs = {"ps": ["localhost:1"], "worker": ["localhost:2"]}
    with pytest.raises(ValueError, match="explicit `job_name`"):
        tf.train.Server(two_jobs, start=False)
    with pytest.raises(ValueError, match="explicit `task_index`"):
        tf.train.Server({"worker": ["localhost:1", "localhost:2"]}, "worker", start=False)
    with pytest.raises(ValueError, match="No task with index 5"):
        tf.train.Server(two_jobs, "ps", 5, start=False)
    with pytest.raises(ValueError, match="protocol 'carrier-pigeon'"):
        tf.train.Server({"solo": ["localhost:1"]}, protocol="carrier-pigeon", start=False)


def test_a_port_in_use_is_an_error() -> None:
    with tf.train.Server.create_local_server() as server:
        taken = server.target[len("grpc://"):]
        with pytest.raises(OSError, match="bind"):
            tf.train.Server({"other": [taken]}, start=False)


def test_cli_serves_until_sigterm_or_sigint_and_exits_cleanly() -> None:
    for sig in (signal.SIGTERM, signal.SIGINT):
        cluster = LocalCluster({"solo": 1})
        with cluster:
            with tf.Session(cluster.target("solo")) as sess:
                assert sess.run(tf.constant(4.0) + 1.0) == 5.0
            process = cluster.process("solo")
            start = time.monotonic()
            process.send_signal(sig)
            assert process.wait(10) == 0
            assert time.monotonic() - start < 5.0
            assert any("serving on grpc://localhost:" in line for line in cluster.output("solo"))


def test_cli_stops_on_a_signal_delivered_to_another_thread() -> None:
    # The kernel hands a process-directed signal to any thread, e.g. one of gRPC's;
    # pthread_kill makes that case deterministic.
    (port,) = free_ports(1)
    code = f"""
import json, signal, socket, sys, threading, time
from tensorweave.train.server_lib import run_server_cli

def deliver():
    while True:
        try:
            socket.create_connection(("localhost", {port}), 0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    signal.pthread_kill(threading.get_ident(), signal.SIGTERM)

threading.Thread(target=deliver, daemon=True).start()
sys.exit(run_server_cli(["--cluster", json.dumps({{"solo": ["localhost:{port}"]}}),
                         "--job", "solo", "--task", "0"]))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=20)
    assert result.returncode == 0, result.stderr
    assert f"serving on grpc://localhost:{port}" in result.stdout


def test_servers_of_a_local_cluster_exit_when_their_owner_is_killed() -> None:
    # The owner prints its servers' pids, then dies by SIGKILL: no `stop`, no atexit.
    code = """
import os, signal
from tensorweave.train.local_cluster import LocalCluster
cluster = LocalCluster({"ps": 1, "worker": 1}).start()
print(cluster.process("ps").pid, cluster.process("worker").pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""
    owner = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=60)
    assert owner.returncode == -signal.SIGKILL, owner.stderr
    pids = [int(pid) for pid in owner.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 10
    alive = pids
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [pid for pid in pids if _running(pid)]
    assert not alive, f"servers still running after their owner died: {alive}"


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (not a zombie awaiting its reaper)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_cli_reads_the_cluster_and_task_from_tf_config() -> None:
    (port,) = free_ports(1)
    env = {**os.environ, "TF_CONFIG": json.dumps({
        "cluster": {"chief": [f"localhost:{port}"]}, "task": {"type": "chief", "index": 0}})}
    process = subprocess.Popen([sys.executable, "-m", "tensorweave", "server"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = process.stdout.readline()
        assert f"/job:chief/task:0 serving on grpc://localhost:{port}" in line
        with tf.Session(f"grpc://localhost:{port}") as sess:
            assert sess.run(tf.constant(2.0)) == 2.0
    finally:
        process.terminate()
        assert process.wait(10) == 0


@pytest.mark.parametrize("argv, message", [
    ([], "give --cluster, or set TF_CONFIG"),
    (["--cluster", "{\"ps\": [\"localhost:1\"], \"w\": [\"localhost:2\"]}"], "job_name"),
    (["--cluster", "/nonexistent/spec.json", "--job", "ps", "--task", "0"], "No such file"),
    (["--cluster", "{\"ps\": [\"localhost:1\"]}", "--job", "worker"], "No such job"),
])
def test_cli_argument_errors_exit_2(argv: list[str], message: str,
                                    monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(SystemExit) as info:
        code = run_server_cli(argv)
        raise SystemExit(code)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_stateful_nodes_of_one_name_in_two_graphs_find_their_own_resources() -> None:
    # a server keeps a stateful kernel's state per node name across graphs; a node of the same
    # name naming another variable or queue must not reuse what the first one found
    with tf.train.Server.create_local_server() as server:
        values = []
        for shared_name, value in (("first", 1.0), ("second", 5.0)):
            with tf.Graph().as_default():
                var = tf.raw_ops.VariableV2(shape=[], dtype=tf.float32, shared_name=shared_name,
                                            name="v")
                queue = tf.FIFOQueue(2, tf.float32, shapes=[[]] if value > 2 else [[2]],
                                     shared_name=shared_name, name="q")
                with tf.Session(server.target) as sess:
                    sess.run(tf.assign(var, value))
                    sess.run(queue.enqueue(tf.fill([] if value > 2 else [2], value)))
                    values.append((sess.run(var), sess.run(queue.size())))
        assert values == [(1.0, 1), (5.0, 1)]
