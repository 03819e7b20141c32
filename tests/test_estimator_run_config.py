"""`RunConfig`: defaults, checkpoint settings, `replace`, validation, and ``TF_CONFIG``."""

from __future__ import annotations

import json

import pytest

import tensorweave as tf
from tensorweave.estimator import RunConfig


def test_defaults_are_tfs_and_the_task_is_a_local_chief() -> None:
    config = RunConfig()
    assert config.model_dir is None and config.tf_random_seed is None
    assert (config.save_summary_steps, config.save_checkpoints_steps,
            config.save_checkpoints_secs) == (100, None, 600)
    assert (config.keep_checkpoint_max, config.log_step_count_steps) == (5, 100)
    assert config.is_chief and config.master == "" and config.task_type == "worker"
    assert (config.task_id, config.num_ps_replicas, config.num_worker_replicas) == (0, 0, 1)


def test_checkpoint_steps_replace_the_default_seconds() -> None:
    assert (RunConfig(save_checkpoints_steps=10).save_checkpoints_steps,
            RunConfig(save_checkpoints_steps=10).save_checkpoints_secs) == (10, None)
    off = RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None)
    assert (off.save_checkpoints_steps, off.save_checkpoints_secs) == (None, None)
    with pytest.raises(ValueError, match="save_checkpoints_steps and save_checkpoints_secs "
                                         "cannot be both set."):
        RunConfig(save_checkpoints_steps=10, save_checkpoints_secs=5)


def test_replace_copies_and_switches_the_checkpoint_trigger() -> None:
    config = RunConfig(model_dir="/a")
    steps = config.replace(save_checkpoints_steps=7, model_dir="/b")
    assert (steps.save_checkpoints_steps, steps.save_checkpoints_secs) == (7, None)
    assert steps.model_dir == "/b" and config.model_dir == "/a"
    with pytest.raises(ValueError, match="Replacing master is not supported."):
        config.replace(master="grpc://x")
    with pytest.raises(ValueError, match="cannot be both set"):
        config.replace(save_checkpoints_steps=1, save_checkpoints_secs=1)


def test_validation_errors() -> None:
    with pytest.raises(ValueError, match="model_dir should be non-empty"):
        RunConfig(model_dir="")
    with pytest.raises(ValueError, match="save_summary_steps should be >= 0"):
        RunConfig(save_summary_steps=-1)
    with pytest.raises(TypeError, match="tf_random_seed must be integer."):
        RunConfig(tf_random_seed=1.5)
    with pytest.raises(TypeError, match="session_config must be instance of ConfigProto"):
        RunConfig(session_config={})
    with pytest.raises(ValueError, match="keep_checkpoint_every_n_hours should be > 0"):
        RunConfig(keep_checkpoint_every_n_hours=0)
    with pytest.raises(ValueError, match="no distribution strategies"):
        RunConfig(train_distribute=object())
    assert isinstance(RunConfig(session_config=tf.ConfigProto()).session_config, tf.ConfigProto)


def test_tf_config_local_settings_and_refused_clusters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TF_CONFIG", json.dumps({"session_master": "grpc://localhost:1"}))
    assert RunConfig().master == "grpc://localhost:1"
    monkeypatch.setenv("TF_CONFIG", json.dumps({"task": {"type": "ps", "index": 0}}))
    with pytest.raises(ValueError, match="task type must be WORKER"):
        RunConfig()
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"worker": ["localhost:1"]},
                                                "task": {"type": "worker", "index": 0}}))
    with pytest.raises(ValueError, match="it must have one \"chief\" node"):
        RunConfig()
