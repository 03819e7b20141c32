"""The thread budget: ``ConfigProto``'s thread counts size the executor's pool and set the BLAS
threads of a session's steps; the defaults never keep more threads busy than cores."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import threadpoolctl

import tensorweave as tf
from tensorweave.engine.runtime import threads
from tensorweave.engine.runtime.threads import ThreadBudget


def _blas_threads() -> int:
    return max(lib["num_threads"] for lib in threadpoolctl.threadpool_info()
               if lib["user_api"] == "blas")


@pytest.fixture
def restore_blas() -> Iterator[None]:
    """Leave the process's BLAS threads as the test found them."""
    before = _blas_threads()
    yield
    threads.BLAS.set(before)


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


def test_a_session_runs_its_steps_with_its_intra_op_blas_threads(restore_blas: None) -> None:
    if threads.cores() < 2:
        pytest.skip("needs two cores to tell one BLAS thread from two")
    a = tf.constant(np.ones((64, 64), np.float32))
    product = tf.matmul(a, a)
    one = tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1))
    two = tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=2))
    for session, want in ((one, 1), (two, 2), (one, 1)):
        assert session.run(product)[0, 0] == 64.0
        assert _blas_threads() == want
    one.close()
    two.close()


def test_the_worker_pool_has_inter_op_threads() -> None:
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=3)) as session:
        (worker,) = session._workers
        assert worker.budget.inter_op == 3
        assert worker.pool._max_workers == 3
        assert worker.parallel
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=1)) as session:
        assert not session._workers[0].parallel
