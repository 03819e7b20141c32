"""Graphs written by TF 2.21's ``tf.compat.v1`` (``tests/data/tf_graphs``, made by its
``make_linear_graphs.py``) import and train in tensorweave as in TF: with v2 behaviour
(resource variables, TF 2.x's added attrs) and v1 behaviour (ref variables), as a GraphDef and
as a MetaGraphDef with its variable collections."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.api.resource_variable_ops import ResourceVariable

DATA = pathlib.Path(__file__).parent / "data" / "tf_graphs"
BEHAVIOURS = ("v1", "v2")


def expected(behaviour: str) -> dict:
    return json.loads((DATA / f"linear_{behaviour}.json").read_text())


def train(sess: tf.Session, init: object, reference: dict) -> tuple[list, list]:
    feeds = {k: np.asarray(v, np.int32 if k == "ids:0" else np.float32)
             for k, v in reference["feeds"].items()}
    sess.run(init)
    losses = []
    for _ in range(3):
        losses.append(sess.run("loss:0", feeds))
        sess.run("train", feeds)
    return losses, sess.run(list(reference["fetches"]), feeds)


def check(losses: list, fetched: list, reference: dict) -> None:
    np.testing.assert_allclose(losses, reference["losses"], rtol=1e-5)
    for value, want in zip(fetched, reference["fetches"].values()):
        np.testing.assert_allclose(value, want, rtol=1e-5)


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_graph_def_imports_and_trains_as_in_tf(behaviour: str) -> None:
    graph_def = tf.GraphDef.FromString((DATA / f"linear_{behaviour}.pb").read_bytes())
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(graph_def, name="")
        types = {op.type for op in graph.get_operations()}
        with tf.Session() as sess:
            losses, fetched = train(sess, "init", expected(behaviour))
    check(losses, fetched, expected(behaviour))
    resource = {"VarHandleOp", "ResourceApplyAdam", "ResourceSparseApplyAdagrad"}
    assert resource <= types if behaviour == "v2" else not resource & types


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_meta_graph_imports_with_its_variables(behaviour: str) -> None:
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(str(DATA / f"linear_{behaviour}.meta"))
        variables = tf.global_variables()
        assert [v.name for v in tf.trainable_variables()] == ["w:0", "b:0", "emb:0"]
        assert all(isinstance(v, ResourceVariable) == (behaviour == "v2") for v in variables)
        assert saver is not None
        with tf.Session() as sess:
            losses, fetched = train(sess, tf.global_variables_initializer(),
                                    expected(behaviour))
    check(losses, fetched, expected(behaviour))
