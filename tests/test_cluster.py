"""`ClusterSpec` and ``TF_CONFIG``, as ``tf.train.ClusterSpec`` and TF's distribution tools."""

from __future__ import annotations

import json

import pytest

import tensorweave as tf
from tensorweave.train.cluster import TFConfig

SPEC = {"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}


def test_dense_jobs() -> None:
    cluster = tf.train.ClusterSpec(SPEC)
    assert cluster.jobs == ["ps", "worker"]
    assert cluster.as_dict() == SPEC
    assert cluster.num_tasks("worker") == 3
    assert cluster.task_indices("ps") == [0, 1]
    assert cluster.task_address("worker", 2) == "w2:2222"
    assert cluster.job_tasks("ps") == ["ps0:2222", "ps1:2222"]
    assert cluster.tasks()[0] == ("ps", 0, "ps0:2222")


def test_sparse_jobs_keep_their_indices() -> None:
    cluster = tf.train.ClusterSpec({"worker": {3: "w3:1", 1: "w1:1"}, "ps": ["ps0:1"]})
    assert cluster.as_dict() == {"ps": ["ps0:1"], "worker": {1: "w1:1", 3: "w3:1"}}
    assert cluster.task_indices("worker") == [1, 3]
    assert cluster.job_tasks("worker") == [None, "w1:1", None, "w3:1"]
    assert cluster.num_tasks("worker") == 2
    with pytest.raises(ValueError, match="No task with index 0"):
        cluster.task_address("worker", 0)


def test_copy_equality_and_repr() -> None:
    cluster = tf.train.ClusterSpec(SPEC)
    copy = tf.train.ClusterSpec(cluster)
    assert copy == cluster and hash(copy) == hash(cluster)
    assert copy != tf.train.ClusterSpec({"ps": ["ps0:2222"]})
    assert "ClusterSpec(" in repr(cluster) and "w1:2222" in repr(cluster)
    assert not tf.train.ClusterSpec({})


def test_unknown_jobs_raise_value_error() -> None:
    cluster = tf.train.ClusterSpec(SPEC)
    for call in (lambda: cluster.num_tasks("chief"), lambda: cluster.task_indices("chief"),
                 lambda: cluster.task_address("chief", 0), lambda: cluster.job_tasks("chief")):
        with pytest.raises(ValueError, match="No such job in cluster: 'chief'"):
            call()


@pytest.mark.parametrize("bad, error", [
    (["w0:1"], TypeError), ({"worker": "w0:1"}, TypeError), ({"worker": [1]}, TypeError),
    ({"": ["w0:1"]}, TypeError), ({"worker": {-1: "w:1"}}, ValueError),
    ({"worker": {"x": "w:1"}}, TypeError), ({"worker": {True: "w:1"}}, TypeError),
])
def test_malformed_specs_are_rejected(bad: object, error: type) -> None:
    with pytest.raises(error):
        tf.train.ClusterSpec(bad)


def test_tf_config_parses_cluster_and_task() -> None:
    text = json.dumps({"cluster": {"ps": ["localhost:1"], "worker": {"1": "localhost:2"}},
                       "task": {"type": "worker", "index": 1}})
    config = TFConfig.from_env({"TF_CONFIG": text})
    assert config.task_type == "worker" and config.task_index == 1
    assert config.cluster.task_address("worker", 1) == "localhost:2"
    assert TFConfig.from_env({}) is None


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON"), ("[]", "'cluster'"),
    ('{"cluster": {"ps": ["a:1"]}, "task": {"type": "worker", "index": 0}}', "No such job"),
    ('{"cluster": {"ps": ["a:1"]}, "task": {"type": "ps", "index": 3}}', "No task with index"),
    ('{"cluster": {"ps": ["a:1"]}, "task": "ps"}', "'task' must be an object"),
])
def test_tf_config_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TFConfig.parse(text)
