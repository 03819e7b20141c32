"""`RunConfig`: where and how an `Estimator` runs, as ``tf.compat.v1.estimator.RunConfig``.

Contract: the constructor takes TF's arguments and validates them with TF's errors; checkpoints
default to every 600 seconds, unless `save_checkpoints_steps` is given (giving both raises
``ValueError``; both ``None`` disables checkpoints). `replace(**kwargs)` returns a copy with some
of the constructor's properties changed.

The task comes from ``TF_CONFIG`` (JSON: ``cluster``, ``task: {type, index}``, and optionally
``session_master``, ``eval_session_master``, ``model_dir``, ``service``), read as TF 1.15 does:

- no ``cluster``: local mode, the chief ``worker`` 0 (any other task raises ``ValueError``),
  master ``session_master`` or ``""``, no ps and one worker;
- a ``cluster`` must have exactly one ``chief`` (or a legacy ``master``, which excludes a
  ``chief`` and an ``evaluator``) and name this task, which must be in it (an ``evaluator``
  need not be: it is outside the training cluster); TF's ``ValueError`` otherwise. The master
  is ``session_master``, else ``""`` for a one-task cluster, else ``grpc://<this task's
  address>``; the chief is the ``chief``/``master`` task; ``num_ps_replicas`` counts the ps
  tasks and ``num_worker_replicas`` the workers plus the chief; ``global_id_in_cluster``
  numbers the chief 0, then the other jobs alphabetically, the ps last. An evaluator has an
  empty cluster, master ``""``, no replicas and no global id; ``eval_session_master`` is its
  `evaluation_master` and is refused for any other task.

Deviation from TF: TF gives a distributed task a default `session_config` with device filters
(each worker sees only the ps and itself); tensorweave's `ConfigProto` has no device filters,
so `session_config` stays as given. Distribution strategies are not supported:
`train_distribute`/`eval_distribute` must be ``None``.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from typing import Any

import attrs

from tensorweave.engine.client.config import ConfigProto
from tensorweave.train.cluster import ClusterSpec

__all__ = ["RunConfig", "TaskType"]

_USE_DEFAULT = object()
_SAVE_CKPT_ERR = "save_checkpoints_steps and save_checkpoints_secs cannot be both set."
_REPLACEABLE = (
    "model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
    "save_checkpoints_secs", "session_config", "keep_checkpoint_max",
    "keep_checkpoint_every_n_hours", "log_step_count_steps", "train_distribute", "device_fn",
    "protocol", "eval_distribute", "experimental_distribute",
    "experimental_max_worker_delay_secs", "session_creation_timeout_secs",
)


class TaskType:
    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


_LOCAL_MASTER = ""
_GRPC_SCHEME = "grpc://"


@attrs.frozen
class _TaskSetting:
    """This process's place in the cluster, as ``TF_CONFIG`` gives it."""

    cluster_spec: ClusterSpec
    task_type: str
    task_id: int
    master: str
    evaluation_master: str
    is_chief: bool
    num_ps_replicas: int
    num_worker_replicas: int
    global_id_in_cluster: int | None
    service: dict[str, Any] | None


def _read_tf_config() -> dict[str, Any]:
    return json.loads(os.environ.get("TF_CONFIG") or "{}")


def _validate_service(service: Any) -> dict[str, Any] | None:
    if service is not None and not isinstance(service, dict):
        raise TypeError(f'If "service" is set in TF_CONFIG, it must be a dict. Given '
                        f"{type(service)}")
    return service


def _validate_task(cluster: ClusterSpec, task_env: dict[str, Any],
                   chief_type: str) -> tuple[str, int]:
    if chief_type not in cluster.jobs:
        raise ValueError(f'If "cluster" is set in TF_CONFIG, it must have one "{chief_type}" '
                         "node.")
    if cluster.num_tasks(chief_type) > 1:
        raise ValueError(f'The "cluster" in TF_CONFIG must have only one "{chief_type}" node.')
    task_type = task_env.get("type")
    task_id = task_env.get("index")
    if not task_type:
        raise ValueError('If "cluster" is set in TF_CONFIG, task type must be set.')
    if task_id is None:
        raise ValueError('If "cluster" is set in TF_CONFIG, task index must be set.')
    task_id = int(task_id)
    if task_id < 0:
        raise ValueError("Task index must be non-negative number.")
    if task_type == TaskType.EVALUATOR:  # not part of the training cluster
        return task_type, task_id
    if task_type not in cluster.jobs:
        raise ValueError(f"{task_type} is not a valid task_type in the cluster_spec:\n{cluster}"
                         "\n\nNote that these values may be coming from the TF_CONFIG "
                         "environment variable.")
    if task_id not in cluster.task_indices(task_type):
        raise ValueError(f"{task_id} is not a valid task_id for task_type {task_type} in the "
                         f"cluster_spec:\n{cluster}\n\nNote that these values may be coming "
                         "from the TF_CONFIG environment variable.")
    return task_type, task_id


def _session_master(cluster: ClusterSpec, task_type: str, task_id: int,
                    tf_config: dict[str, Any]) -> str:
    if "session_master" in tf_config:
        return tf_config["session_master"]
    # One task does everything itself: a direct session beats a round trip through gRPC.
    if len(cluster.tasks()) == 1:
        return _LOCAL_MASTER
    return _GRPC_SCHEME + cluster.task_address(task_type, task_id)


def _eval_session_master(task_type: str, tf_config: dict[str, Any]) -> str:
    if task_type == TaskType.EVALUATOR:
        return tf_config.get("eval_session_master", _LOCAL_MASTER)
    if "eval_session_master" in tf_config:
        raise ValueError(f"Key (eval_session_master) should not be set for task type other than "
                         f"{TaskType.EVALUATOR}. Task type: {task_type}")
    return _LOCAL_MASTER


def _num_workers(cluster: ClusterSpec, chief_type: str) -> int:
    return sum(cluster.num_tasks(job) for job in (TaskType.WORKER, chief_type)
               if job in cluster.jobs)


def _global_id(cluster: ClusterSpec, task_type: str, task_id: int, chief_type: str) -> int:
    """The chief is 0, then every other job's tasks by job name and index, the ps last."""
    order = [chief_type] + [job for job in cluster.jobs if job not in (chief_type, TaskType.PS)]
    if TaskType.PS in cluster.jobs:
        order.append(TaskType.PS)
    next_id = 0
    for job in order:
        if job == task_type:
            return next_id + task_id
        next_id += cluster.num_tasks(job)
    raise RuntimeError(f"Internal Error: `task_type` ({task_type}) is not in cluster_spec "
                       f"({cluster}).")


def _task_setting(tf_config: dict[str, Any]) -> _TaskSetting:
    """This task's setting, from ``TF_CONFIG``; see the module docstring."""
    service = _validate_service(tf_config.get("service"))
    cluster = ClusterSpec(tf_config.get("cluster") or {})
    task_env = tf_config.get("task") or {}
    if not cluster:
        task_type = task_env.get("type", TaskType.WORKER)
        task_id = int(task_env.get("index", 0))
        if task_type != TaskType.WORKER:
            raise ValueError('If "cluster" is not set in TF_CONFIG, task type must be WORKER.')
        if task_id != 0:
            raise ValueError('If "cluster" is not set in TF_CONFIG, task index must be 0.')
        return _TaskSetting(cluster, task_type, task_id,
                            tf_config.get("session_master", _LOCAL_MASTER),
                            tf_config.get("eval_session_master", _LOCAL_MASTER), True, 0, 1, 0,
                            service)
    if TaskType.MASTER in cluster.jobs:
        # A cluster with both would leave it unclear which task is the chief.
        if TaskType.CHIEF in cluster.jobs:
            raise ValueError("If `master` node exists in `cluster`, job `chief` is not "
                             "supported.")
        chief_type = TaskType.MASTER
    else:
        chief_type = TaskType.CHIEF
    task_type, task_id = _validate_task(cluster, task_env, chief_type)
    if task_type == TaskType.EVALUATOR:
        if chief_type == TaskType.MASTER:
            raise ValueError("If `master` node exists in `cluster`, task_type `evaluator` is "
                             "not supported.")
        return _TaskSetting(ClusterSpec({}), task_type, task_id, _LOCAL_MASTER,
                            _eval_session_master(task_type, tf_config), False, 0, 0, None,
                            service)
    return _TaskSetting(
        cluster, task_type, task_id, _session_master(cluster, task_type, task_id, tf_config),
        _eval_session_master(task_type, tf_config), task_type == chief_type,
        cluster.num_tasks(TaskType.PS) if TaskType.PS in cluster.jobs else 0,
        _num_workers(cluster, chief_type), _global_id(cluster, task_type, task_id, chief_type),
        service)


class RunConfig:
    """The configuration of an `Estimator`; see the module docstring."""

    def __init__(self, model_dir: str | os.PathLike[str] | None = None,
                 tf_random_seed: int | None = None, save_summary_steps: int = 100,
                 save_checkpoints_steps: Any = _USE_DEFAULT,
                 save_checkpoints_secs: Any = _USE_DEFAULT,
                 session_config: ConfigProto | None = None, keep_checkpoint_max: int = 5,
                 keep_checkpoint_every_n_hours: float = 10000,
                 log_step_count_steps: int | None = 100, train_distribute: Any = None,
                 device_fn: Callable[[Any], str] | None = None, protocol: str | None = None,
                 eval_distribute: Any = None, experimental_distribute: Any = None,
                 experimental_max_worker_delay_secs: int | None = None,
                 session_creation_timeout_secs: int = 7200) -> None:
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, 600
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError(_SAVE_CKPT_ERR)
        tf_config = _read_tf_config()
        self._task = _task_setting(tf_config)
        model_dir = os.fspath(model_dir) if model_dir is not None else tf_config.get("model_dir")
        self._set(model_dir=model_dir, tf_random_seed=tf_random_seed,
                  save_summary_steps=save_summary_steps,
                  save_checkpoints_steps=save_checkpoints_steps,
                  save_checkpoints_secs=save_checkpoints_secs, session_config=session_config,
                  keep_checkpoint_max=keep_checkpoint_max,
                  keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
                  log_step_count_steps=log_step_count_steps, train_distribute=train_distribute,
                  device_fn=device_fn, protocol=protocol, eval_distribute=eval_distribute,
                  experimental_distribute=experimental_distribute,
                  experimental_max_worker_delay_secs=experimental_max_worker_delay_secs,
                  session_creation_timeout_secs=session_creation_timeout_secs)

    def _set(self, **kwargs: Any) -> None:
        _validate(kwargs)
        for key, value in kwargs.items():
            setattr(self, "_" + key, value)

    def replace(self, **kwargs: Any) -> RunConfig:
        """A copy with the given constructor properties replaced."""
        for key in kwargs:
            if key not in _REPLACEABLE:
                raise ValueError(f"Replacing {key} is not supported. Allowed properties are "
                                 f"{list(_REPLACEABLE)}.")
        new = copy.deepcopy(self)
        steps = kwargs.get("save_checkpoints_steps", new._save_checkpoints_steps)
        secs = kwargs.get("save_checkpoints_secs", new._save_checkpoints_secs)
        if steps is not None and secs is not None:
            if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" in kwargs:
                raise ValueError(_SAVE_CKPT_ERR)
            # As TF: setting one of them through replace turns the other off.
            other = ("save_checkpoints_secs" if "save_checkpoints_steps" in kwargs
                     else "save_checkpoints_steps")
            kwargs[other] = None
        new._set(**kwargs)
        return new

    def __repr__(self) -> str:
        return f"RunConfig({', '.join(f'{k}={getattr(self, k)!r}' for k in _REPLACEABLE)})"

    # -- the constructor's properties ---------------------------------------------------------

    @property
    def model_dir(self) -> str | None:
        return self._model_dir

    @property
    def tf_random_seed(self) -> int | None:
        return self._tf_random_seed

    @property
    def save_summary_steps(self) -> int:
        return self._save_summary_steps

    @property
    def save_checkpoints_steps(self) -> int | None:
        return self._save_checkpoints_steps

    @property
    def save_checkpoints_secs(self) -> float | None:
        return self._save_checkpoints_secs

    @property
    def session_config(self) -> ConfigProto | None:
        return self._session_config

    @property
    def keep_checkpoint_max(self) -> int:
        return self._keep_checkpoint_max

    @property
    def keep_checkpoint_every_n_hours(self) -> float:
        return self._keep_checkpoint_every_n_hours

    @property
    def log_step_count_steps(self) -> int | None:
        return self._log_step_count_steps

    @property
    def train_distribute(self) -> Any:
        return self._train_distribute

    @property
    def eval_distribute(self) -> Any:
        return self._eval_distribute

    @property
    def experimental_distribute(self) -> Any:
        return self._experimental_distribute

    @property
    def device_fn(self) -> Callable[[Any], str] | None:
        return self._device_fn

    @property
    def protocol(self) -> str | None:
        return self._protocol

    @property
    def experimental_max_worker_delay_secs(self) -> int | None:
        return self._experimental_max_worker_delay_secs

    @property
    def session_creation_timeout_secs(self) -> int:
        return self._session_creation_timeout_secs

    # -- the task (from TF_CONFIG) -------------------------------------------------------------

    @property
    def cluster_spec(self) -> ClusterSpec:
        return self._task.cluster_spec

    @property
    def master(self) -> str:
        return self._task.master

    @property
    def evaluation_master(self) -> str:
        return self._task.evaluation_master

    @property
    def is_chief(self) -> bool:
        return self._task.is_chief

    @property
    def task_type(self) -> str:
        return self._task.task_type

    @property
    def task_id(self) -> int:
        return self._task.task_id

    @property
    def global_id_in_cluster(self) -> int | None:
        return self._task.global_id_in_cluster

    @property
    def num_ps_replicas(self) -> int:
        return self._task.num_ps_replicas

    @property
    def num_worker_replicas(self) -> int:
        return self._task.num_worker_replicas

    @property
    def service(self) -> dict[str, Any] | None:
        return self._task.service


def _validate(props: dict[str, Any]) -> None:
    """TF's checks of the constructor's properties (those present in `props`)."""
    def check(key: str, ok: Callable[[Any], bool], message: str,
              error: type[Exception] = ValueError) -> None:
        if key in props and props[key] is not None and not ok(props[key]):
            raise error(message)

    if "model_dir" in props and props["model_dir"] == "":
        raise ValueError("model_dir should be non-empty")
    check("save_summary_steps", lambda v: v >= 0, "save_summary_steps should be >= 0")
    check("save_checkpoints_steps", lambda v: v >= 0, "save_checkpoints_steps should be >= 0")
    check("save_checkpoints_secs", lambda v: v >= 0, "save_checkpoints_secs should be >= 0")
    check("session_config", lambda v: isinstance(v, ConfigProto),
          "session_config must be instance of ConfigProto", TypeError)
    check("keep_checkpoint_max", lambda v: v >= 0, "keep_checkpoint_max should be >= 0")
    check("keep_checkpoint_every_n_hours", lambda v: v > 0,
          "keep_checkpoint_every_n_hours should be > 0")
    check("log_step_count_steps", lambda v: v >= 0, "log_step_count_steps should be >= 0")
    check("tf_random_seed", lambda v: isinstance(v, int), "tf_random_seed must be integer.",
          TypeError)
    check("device_fn", callable, "device_fn must be callable with exactly one argument \"op\".",
          TypeError)
    check("session_creation_timeout_secs", lambda v: v > 0,
          "session_creation_timeout_secs should be > 0")
    for key in ("train_distribute", "eval_distribute", "experimental_distribute"):
        if props.get(key) is not None:
            raise ValueError(f"RunConfig({key}=...) is not supported: tensorweave has no "
                             "distribution strategies.")
