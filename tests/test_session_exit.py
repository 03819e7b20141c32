"""Exit with remote sessions left open: a TF1 script that never closes its sessions exits
within a second of one that opened none, whether their servers are alive or gone (real server
processes). The baseline is measured in the same test: tearing down the interpreter itself
takes a good part of a second on a loaded machine."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from tensorweave.train.local_cluster import LocalCluster

SESSIONS = 3
EXIT_BUDGET_SECONDS = 1.0

# opens the sessions, runs a step on each, then waits for a line and returns without closing
CHILD = textwrap.dedent("""
    import sys
    import tensorweave as tf
    x = tf.constant(1.0)
    sessions = [tf.Session(sys.argv[1]) for _ in range(int(sys.argv[2]))]
    assert [s.run(x) for s in sessions] == [1.0] * len(sessions)
    print("READY", flush=True)
    sys.stdin.readline()
""")


def exit_seconds(target: str, cluster: LocalCluster, kill_servers: bool, sessions: int,
                 ) -> float:
    """Seconds from the child script's last line to its process's exit."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, target, str(sessions)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "READY"
        if kill_servers:
            cluster.kill("local", 0)
        start = time.monotonic()
        child.stdin.write("\n")
        child.stdin.flush()
        child.wait(30)
        elapsed = time.monotonic() - start
        assert child.returncode == 0
        return elapsed
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


@pytest.mark.parametrize("kill_servers", [False, True], ids=["live", "dead"])
def test_open_remote_sessions_do_not_delay_exit(kill_servers: bool) -> None:
    with LocalCluster({"local": 1}) as cluster:
        target = cluster.target("local", 0)
        baseline = exit_seconds(target, cluster, False, 0)
        elapsed = exit_seconds(target, cluster, kill_servers, SESSIONS)
    assert elapsed - baseline < EXIT_BUDGET_SECONDS, (
        f"exit took {elapsed:.2f} s, {baseline:.2f} s without sessions")
