"""The thread budget of a worker: how many threads its steps may keep busy.

Contract: `ThreadBudget.of(config)` reads ``ConfigProto``'s two fields as TF does:
``intra_op_parallelism_threads`` is the number of threads one kernel may use (the BLAS
libraries' threads, set through threadpoolctl), ``inter_op_parallelism_threads`` the size of the
executor's pool, which runs expensive kernels side by side. 0 means "choose": intra-op then
keeps the BLAS libraries' own thread count (their default is every core, or what
``OPENBLAS_NUM_THREADS`` and its kin say), capped at the cores, and inter-op gets as many threads
as leave each kernel its intra-op share (``max(1, cores // intra_op)``), so that by default the
pool's kernels never keep more threads busy than there are cores. A negative value counts as 1
(TF: run in the caller's thread).

The BLAS thread count is a process-wide setting: `ThreadBudget.apply` sets it before each step
of a worker when it differs from the value last applied (sessions with different budgets in one
process each run their steps with their own; it stays set after the step), and costs one
comparison otherwise. The default budget leaves it untouched unless it exceeds the cores.
"""

from __future__ import annotations

import os
import threading

import attrs
import threadpoolctl


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS reports one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


class _Blas:
    """The BLAS libraries' thread setting, applied only when it changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._controller: threadpoolctl.ThreadpoolController | None = None
        self.threads: int | None = None  # the value last applied, None before any

    def _blas(self) -> threadpoolctl.ThreadpoolController:
        if self._controller is None:  # made on first use: it scans the loaded libraries
            self._controller = threadpoolctl.ThreadpoolController().select(user_api="blas")
        return self._controller

    def current(self) -> int:
        """The most threads any loaded BLAS library uses now (1 if none is loaded)."""
        with self._lock:
            return max((lib.num_threads for lib in self._blas().lib_controllers), default=1)

    def set(self, threads: int) -> None:
        if self.threads == threads:
            return
        with self._lock:
            self._blas().limit(limits=threads)
            self.threads = threads


BLAS = _Blas()


@attrs.frozen
class ThreadBudget:
    """Threads of one kernel (`intra_op`) and of the executor's pool (`inter_op`)."""

    inter_op: int
    intra_op: int

    @classmethod
    def of(cls, config: object, available: int | None = None) -> ThreadBudget:
        """The budget `config` asks for on `available` cores (default: `cores()`)."""
        n = cores() if available is None else available
        intra = _requested(getattr(config, "intra_op_parallelism_threads", 0)) \
            or min(BLAS.current(), n)
        inter = _requested(getattr(config, "inter_op_parallelism_threads", 0)) \
            or max(1, n // intra)
        return cls(inter, intra)

    def apply(self) -> None:
        """Give kernels run from now on `intra_op` BLAS threads."""
        BLAS.set(self.intra_op)


def _requested(value: int) -> int:
    """A configured thread count: 0 (choose) stays 0, a negative one is 1."""
    return 1 if value < 0 else value
