"""`ClusterSpec` and ``TF_CONFIG``: which tasks make up a cluster, and where each one listens.

Contract: a `ClusterSpec` maps job names to tasks, each job given as a list of ``"host:port"``
addresses (task i at position i) or as a sparse ``{index: address}`` mapping, as
``tf.train.ClusterSpec``. It is immutable; `jobs` are sorted, `as_dict` gives lists for dense jobs
and dicts for sparse ones, and lookups of unknown jobs or tasks raise `ValueError`. Malformed specs
raise `TypeError` (wrong types) or `ValueError` (bad index or address).

`TFConfig` reads the ``TF_CONFIG`` environment variable (JSON with ``cluster`` and
``task: {"type", "index"}``), the way TF's distribution tools do.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import attrs

__all__ = ["ClusterSpec"]


def _index(value: Any, job: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"Task index for job '{job}' must be an integer, got {value!r}")
    if isinstance(value, str) and value.isdigit():  # JSON object keys are strings
        value = int(value)
    if not isinstance(value, int):
        raise TypeError(f"Task index for job '{job}' must be an integer, got {value!r}")
    if value < 0:
        raise ValueError(f"Task index for job '{job}' must be >= 0, got {value}")
    return value


def _address(value: Any, job: str, index: int) -> str:
    if isinstance(value, bytes):
        value = value.decode()
    if not isinstance(value, str) or not value:
        raise TypeError(f"Address of task {index} of job '{job}' must be a non-empty "
                        f"'host:port' string, got {value!r}")
    return value


class ClusterSpec:
    """A cluster as a set of jobs, each a set of tasks with network addresses."""

    def __init__(self, cluster: Any) -> None:
        if isinstance(cluster, ClusterSpec):
            self._spec: dict[str, dict[int, str]] = {
                job: dict(tasks) for job, tasks in cluster._spec.items()}
            return
        if not isinstance(cluster, Mapping):
            raise TypeError("`cluster` must be a dictionary mapping one or more job names to "
                            "lists of network addresses, or a `ClusterSpec`")
        spec: dict[str, dict[int, str]] = {}
        for job, tasks in cluster.items():
            if not isinstance(job, str) or not job:
                raise TypeError(f"Job names must be non-empty strings, got {job!r}")
            if isinstance(tasks, (list, tuple)):
                spec[job] = {i: _address(a, job, i) for i, a in enumerate(tasks)}
            elif isinstance(tasks, Mapping):
                by_index: dict[int, str] = {}
                for key, address in tasks.items():
                    i = _index(key, job)
                    by_index[i] = _address(address, job, i)
                spec[job] = dict(sorted(by_index.items()))
            else:
                raise TypeError(f"The tasks for job '{job}' must be a list or a dictionary "
                                f"from task index to address, got {type(tasks).__name__}")
        self._spec = dict(sorted(spec.items()))

    @property
    def jobs(self) -> list[str]:
        """The job names, sorted."""
        return list(self._spec)

    def _job(self, job_name: str) -> dict[int, str]:
        try:
            return self._spec[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def num_tasks(self, job_name: str) -> int:
        return len(self._job(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        return list(self._job(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        tasks = self._job(job_name)
        try:
            return tasks[task_index]
        except KeyError:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}") from None

    def job_tasks(self, job_name: str) -> list[str | None]:
        """The addresses of a job's tasks by index, ``None`` where the spec has a gap."""
        tasks = self._job(job_name)
        out: list[str | None] = [None] * (max(tasks) + 1 if tasks else 0)
        for i, address in tasks.items():
            out[i] = address
        return out

    def as_dict(self) -> dict[str, list[str] | dict[int, str]]:
        """Dense jobs as lists, sparse ones as ``{index: address}``."""
        out: dict[str, list[str] | dict[int, str]] = {}
        for job, tasks in self._spec.items():
            dense = list(tasks) == list(range(len(tasks)))
            out[job] = list(tasks.values()) if dense else dict(tasks)
        return out

    def tasks(self) -> list[tuple[str, int, str]]:
        """Every (job, index, address), jobs sorted, tasks by index."""
        return [(job, i, a) for job, tasks in self._spec.items() for i, a in tasks.items()]

    def __bool__(self) -> bool:
        return bool(self._spec)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClusterSpec):
            return NotImplemented
        return self._spec == other._spec

    def __hash__(self) -> int:
        return hash(tuple((job, tuple(t.items())) for job, t in self._spec.items()))

    def __repr__(self) -> str:
        return f"ClusterSpec({self.as_dict()!r})"


@attrs.frozen
class TFConfig:
    """The parsed ``TF_CONFIG``: the cluster and this process's task in it."""

    cluster: ClusterSpec
    task_type: str | None = None
    task_index: int | None = None

    @classmethod
    def parse(cls, text: str) -> TFConfig:
        """Parse ``TF_CONFIG`` text; `ValueError` for malformed JSON or fields."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"TF_CONFIG is not valid JSON: {exc}") from None
        if not isinstance(data, dict) or "cluster" not in data:
            raise ValueError("TF_CONFIG must be a JSON object with a 'cluster' entry")
        task = data.get("task") or {}
        if not isinstance(task, dict):
            raise ValueError("TF_CONFIG 'task' must be an object with 'type' and 'index'")
        task_type = task.get("type")
        index = task.get("index", 0 if task_type is not None else None)
        if task_type is not None and not isinstance(task_type, str):
            raise ValueError(f"TF_CONFIG task type must be a string, got {task_type!r}")
        if index is not None:
            index = _index(index, task_type or "?")
        cluster = ClusterSpec(data["cluster"])
        if task_type is not None:
            cluster.task_address(task_type, index)  # the task must be in the cluster
        return cls(cluster, task_type, index)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> TFConfig | None:
        """The ``TF_CONFIG`` of `environ` (default ``os.environ``), or ``None`` if unset."""
        text = (os.environ if environ is None else environ).get("TF_CONFIG", "").strip()
        return cls.parse(text) if text else None
