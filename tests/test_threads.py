"""The thread budget: ``ConfigProto``'s thread counts size the executor's pool and set the BLAS
threads of a session's steps; the defaults never keep more threads busy than cores."""

from __future__ import annotations

import subprocess
import sys

import pytest

import tensorweave as tf
from tensorweave.engine.runtime import threads
from tensorweave.engine.runtime.threads import ThreadBudget


@pytest.mark.parametrize("cores", [1, 2, 16])
def test_the_default_budget_fits_the_cores(cores: int) -> None:
    budget = ThreadBudget.of(tf.ConfigProto(), available=cores)
    assert 1 <= budget.intra_op <= cores
    assert budget.inter_op == max(1, cores // budget.intra_op)
    assert budget.inter_op * budget.intra_op <= cores


def test_configured_counts_are_taken_as_given() -> None:
    config = tf.ConfigProto(inter_op_parallelism_threads=3, intra_op_parallelism_threads=5)
    assert ThreadBudget.of(config, available=2) == ThreadBudget(3, 5)
    assert ThreadBudget.of(tf.ConfigProto(intra_op_parallelism_threads=4), available=8) \
        == ThreadBudget(2, 4)
    assert ThreadBudget.of(tf.ConfigProto(inter_op_parallelism_threads=-1,
                                          intra_op_parallelism_threads=-1)) == ThreadBudget(1, 1)


_ALTERNATING_SESSIONS = """
import numpy as np
import threadpoolctl

import tensorweave as tf

def blas_threads():
    return max(lib["num_threads"] for lib in threadpoolctl.threadpool_info()
               if lib["user_api"] == "blas")

a = tf.constant(np.ones((64, 64), np.float32))
product = tf.matmul(a, a)
one = tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1))
two = tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=2))
for session in (one, two, one, two):
    assert session.run(product)[0, 0] == 64.0
    print(blas_threads())
"""


def test_a_session_runs_its_steps_with_its_intra_op_blas_threads() -> None:
    # In a process of its own: the BLAS setting is process-wide, so a session that another
    # test left running in the background would change it between a step and the check.
    if threads.cores() < 2:
        pytest.skip("needs two cores to tell one BLAS thread from two")
    done = subprocess.run([sys.executable, "-c", _ALTERNATING_SESSIONS], capture_output=True,
                          text=True, timeout=120, check=True)
    assert done.stdout.split() == ["1", "2", "1", "2"]


def test_the_worker_pool_has_inter_op_threads() -> None:
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=3)) as session:
        (worker,) = session._workers
        assert worker.budget.inter_op == 3
        assert worker.pool._max_workers == 3
        assert worker.parallel
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=1)) as session:
        assert not session._workers[0].parallel
