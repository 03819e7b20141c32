"""`LocalCluster`: the tasks of a cluster as ``tensorweave server`` processes on this machine.

Contract: ``LocalCluster({"ps": 1, "worker": 2})`` picks free ports on `host`, writes the
cluster spec to a temporary file and, on `start`, launches one ``python -m tensorweave server``
process per task, then waits (bounded by `start_timeout`) until each prints its serving line;
a task that exits or stays silent raises `RuntimeError` with its output. `stop` sends SIGTERM,
waits, then SIGKILLs whatever is left, and removes the spec file; it runs on exit of a ``with``
block and on garbage collection, so no server outlives its owner. `kill` stops one task abruptly
(for failure tests). Each server runs with ``--stop-on-stdin-eof`` and its standard input is a
pipe from this process, so the servers also shut down when their owner dies without cleaning up
(SIGKILL included): the kernel closes the pipe.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from tensorweave.train.cluster import ClusterSpec

READY_MARKER = "serving on "


def free_ports(count: int, host: str = "localhost") -> list[int]:
    """`count` distinct ports that were free on `host` a moment ago."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((socket.gethostbyname(host), 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class _Task:
    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.output: deque[str] = deque(maxlen=200)
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line.rstrip("\n"))
            if READY_MARKER in line:
                self.ready.set()


class LocalCluster:
    """Server processes for every task of ``{job: number of tasks}`` on `host`."""

    def __init__(self, jobs: Mapping[str, int], host: str = "localhost",
                 env: Mapping[str, str] | None = None, extra_args: Sequence[str] = (),
                 start_timeout: float = 60.0) -> None:
        ports = iter(free_ports(sum(jobs.values()), host))
        self.cluster = ClusterSpec({job: [f"{host}:{next(ports)}" for _ in range(n)]
                                    for job, n in jobs.items()})
        self._env = {**os.environ, **(env or {})}
        self._extra_args = list(extra_args)
        self._start_timeout = start_timeout
        self._tasks: dict[tuple[str, int], _Task] = {}
        fd, self.spec_path = tempfile.mkstemp(prefix="tw-cluster-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(self.cluster.as_dict(), f)

    def target(self, job: str, task: int = 0) -> str:
        return f"grpc://{self.cluster.task_address(job, task)}"

    def start(self) -> LocalCluster:
        try:
            for job, index, _ in self.cluster.tasks():
                command = [sys.executable, "-m", "tensorweave", "server", "--cluster",
                           self.spec_path, "--job", job, "--task", str(index),
                           "--stop-on-stdin-eof", *self._extra_args]
                self._tasks[(job, index)] = _Task(subprocess.Popen(
                    command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, text=True, env=self._env))
            deadline = time.monotonic() + self._start_timeout
            for (job, index), task in self._tasks.items():
                while not task.ready.wait(0.05):
                    if task.process.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(
                            f"Task /job:{job}/task:{index} did not start (exit code "
                            f"{task.process.poll()}):\n" + "\n".join(task.output))
        except BaseException:
            self.stop()
            raise
        return self

    def process(self, job: str, task: int = 0) -> subprocess.Popen[str]:
        return self._tasks[(job, task)].process

    def output(self, job: str, task: int = 0) -> list[str]:
        return list(self._tasks[(job, task)].output)

    def kill(self, job: str, task: int = 0, sig: int = signal.SIGKILL) -> None:
        process = self.process(job, task)
        process.send_signal(sig)
        process.wait(10)

    def stop(self, timeout: float = 10.0) -> dict[tuple[str, int], int | None]:
        """Stop every task; returns each one's exit code."""
        for task in self._tasks.values():
            if task.process.stdin is not None:
                task.process.stdin.close()
            if task.process.poll() is None:
                task.process.terminate()
        deadline = time.monotonic() + timeout
        codes: dict[tuple[str, int], int | None] = {}
        for key, task in self._tasks.items():
            try:
                task.process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                task.process.kill()
                task.process.wait()
            codes[key] = task.process.returncode
        self._tasks.clear()
        if os.path.exists(self.spec_path):
            os.unlink(self.spec_path)
        return codes

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __del__(self) -> None:
        try:
            self.stop(timeout=2.0)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
