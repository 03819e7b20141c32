"""The pass pipeline: phases, order, records, the hook, and blocking the built-in passes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.runtime.passes import Pass, PassContext, PassRecord, run_phase


def _appending(tag: str, log: list[str]) -> Callable[[GraphDef, PassContext], GraphDef]:
    def run(graph_def: GraphDef, ctx: PassContext) -> GraphDef:
        log.append(tag)
        return GraphDef(node=[*graph_def.node, NodeDef(name=tag, op="NoOp")])

    return run


def test_run_phase_runs_its_phase_in_order_and_records_node_counts() -> None:
    log: list[str] = []
    passes = [Pass("late", "pre_placement", 20, _appending("late", log)),
              Pass("placed", "post_placement", 0, _appending("placed", log)),
              Pass("early", "pre_placement", 10, _appending("early", log))]
    passes.sort(key=lambda p: (p.phase, p.order, p.name))  # as the registries hold them
    ctx = PassContext(get_registries(), frozenset())
    graph_def, records = run_phase(GraphDef(node=[NodeDef(name="a", op="NoOp")]), passes,
                                   "pre_placement", ctx)
    assert log == ["early", "late"]
    assert [n.name for n in graph_def.node] == ["a", "early", "late"]
    assert records == [PassRecord("early", "pre_placement", 1, 2),
                       PassRecord("late", "pre_placement", 2, 3)]


def test_a_pass_needs_a_known_phase() -> None:
    with pytest.raises(ValueError, match="phase"):
        Pass("bad", "after_lunch", 0, _appending("x", []))


def test_builtin_passes_come_from_the_hook_cse_first() -> None:
    passes = [(p.name, p.phase) for p in get_registries().passes]
    assert passes.index(("cse", "pre_placement")) < passes.index(
        ("constant_folding", "pre_placement"))


def test_blocked_plugins_provide_no_pass(passes_blocked: None) -> None:
    registries = get_registries()
    assert {p.name for p in registries.passes}.isdisjoint({"cse", "constant_folding"})
    status = {p.name: p.status for p in registries.plugins}
    assert status["cse"] == status["constant_folding"] == "disabled"


def _graphs() -> list[tuple[Any, dict[Any, Any], tf.ConfigProto]]:
    """Graphs the passes change, each with its feeds and config."""
    cases = []
    x = tf.placeholder(tf.float32, [3], name="x")
    c = tf.constant(2.0) * tf.constant(3.0)
    cases.append(({"y": x * c + x * c, "c": c, "cc": [c, c * 1.0]}, {x: [1.0, 2.0, 3.0]},
                  tf.ConfigProto()))
    with tf.device("/cpu:1"):
        far = (x + 1.0) * (x + 1.0)
    with tf.device("/cpu:0"):
        near = far - (x + 1.0) / tf.constant(4.0)
    cases.append(([near, far], {x: [0.5, -1.0, 8.0]}, tf.ConfigProto(device_count={"CPU": 2})))
    i = tf.constant(np.int32(7))
    cases.append(((i * 3 - i, i * 3), {}, tf.ConfigProto()))
    fed = tf.constant(1.0) + tf.constant(1.0)
    cases.append((fed * fed, {fed: 5.0}, tf.ConfigProto()))
    return cases


def _run_all(cases: list[tuple[Any, dict[Any, Any], tf.ConfigProto]]) -> list[Any]:
    results = []
    for fetches, feeds, config in cases:
        with tf.Session(config=config) as s:
            results.append(s.run(fetches, feeds))
    return results


def _assert_identical(a: Any, b: Any) -> None:
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            _assert_identical(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for u, v in zip(a, b):
            _assert_identical(u, v)
    else:
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(a, b)


def test_blocking_cse_and_constant_folding_leaves_every_result_identical(
        request: pytest.FixtureRequest) -> None:
    cases = _graphs()
    with_passes = _run_all(cases)
    request.getfixturevalue("passes_blocked")
    without = _run_all(cases)
    _assert_identical(with_passes, without)


def test_a_variable_update_runs_once_per_step_with_or_without_passes(
        request: pytest.FixtureRequest) -> None:
    def steps() -> list[float]:
        v = tf.Variable(0.0)
        inc = tf.constant(0.5) * tf.constant(2.0)
        step = tf.group(tf.assign_add(v, inc), tf.assign_add(v, inc))
        with tf.Session() as s:
            s.run(v.initializer)
            values = []
            for _ in range(3):
                s.run(step)
                values.append(float(s.run(v)))
            return values

    with_passes = steps()
    request.getfixturevalue("passes_blocked")
    assert with_passes == steps() == [2.0, 4.0, 6.0]
