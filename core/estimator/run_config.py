"""`RunConfig`: where and how an `Estimator` runs, as ``tf.compat.v1.estimator.RunConfig``.

Contract: the constructor takes TF's arguments and validates them with TF's errors; checkpoints
default to every 600 seconds, unless `save_checkpoints_steps` is given (giving both raises
``ValueError``; both ``None`` disables checkpoints). `replace(**kwargs)` returns a copy with some
of the constructor's properties changed. The config is local only: the task is chief ``worker``
0 with master ``""``, no ps and one worker. ``TF_CONFIG`` is read as TF does in local mode
(``session_master``, ``eval_session_master``, a ``task`` that must be worker 0); a ``cluster``
in it raises ``ValueError``, because distributed estimators are not implemented. Distribution
strategies are not supported: `train_distribute`/`eval_distribute` must be ``None``.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from typing import Any

from tensorweave.client.config import ConfigProto
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


def _tf_config() -> dict[str, Any]:
    config = json.loads(os.environ.get("TF_CONFIG", "{}") or "{}")
    if config.get("cluster"):
        raise ValueError("TF_CONFIG names a cluster, but tensorweave's Estimator runs locally "
                         "only: distributed estimators are not implemented.")
    task = config.get("task", {})
    if task.get("type", TaskType.WORKER) != TaskType.WORKER:
        raise ValueError('If "cluster" is not set in TF_CONFIG, task type must be WORKER.')
    if int(task.get("index", 0)) != 0:
        raise ValueError('If "cluster" is not set in TF_CONFIG, task index must be 0.')
    return config


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
        tf_config = _tf_config()
        self._master = tf_config.get("session_master", "")
        self._evaluation_master = tf_config.get("eval_session_master", "")
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

    # -- the task (local mode) ----------------------------------------------------------------

    @property
    def cluster_spec(self) -> ClusterSpec:
        return ClusterSpec({})

    @property
    def master(self) -> str:
        return self._master

    @property
    def evaluation_master(self) -> str:
        return self._evaluation_master

    @property
    def is_chief(self) -> bool:
        return True

    @property
    def task_type(self) -> str:
        return TaskType.WORKER

    @property
    def task_id(self) -> int:
        return 0

    @property
    def global_id_in_cluster(self) -> int:
        return 0

    @property
    def num_ps_replicas(self) -> int:
        return 0

    @property
    def num_worker_replicas(self) -> int:
        return 1

    @property
    def service(self) -> None:
        return None


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
