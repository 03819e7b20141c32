"""Pruning: only what the fetches and targets need runs, and feeds cut off their producers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.graph.graph_def import GraphDef
from tensorweave.engine.runtime.prune import prune


def pruned(feeds: Sequence[str], fetches: Sequence[str], targets: Sequence[str] = ()) -> GraphDef:
    return prune(tf.get_default_graph()._engine_graph_def(), feeds, fetches, list(targets))


def test_only_the_needed_subgraph_is_kept_in_graph_order() -> None:
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    tf.constant(3.0, name="unused")
    c = tf.add(a, b, name="c")
    tf.multiply(c, 2.0, name="downstream")
    graph_def = pruned([], [c.name])
    assert [n.name for n in graph_def.node] == ["a", "b", "c", "_retval_c_0_0"]
    retval = graph_def.node[-1]
    assert (retval.op, retval.input, retval.attr["index"]) == ("_Retval", ["c"], 0)


def test_an_unneeded_stateful_op_never_runs() -> None:
    v = tf.Variable(1.0)
    tf.assign_add(v, 10.0, name="never")
    out = v + 1.0
    assert "never" not in pruned([], [out.name]).by_name()
    with tf.Session() as s:
        s.run(v.initializer)
        assert s.run(out) == np.float32(2.0)
        assert s.run(v) == np.float32(1.0)


def test_a_fed_tensor_cuts_off_its_producer() -> None:
    p = tf.placeholder(tf.float32, [2], name="p")
    fails_if_run = tf.multiply(p, 2.0, name="needs_p")
    out = fails_if_run + 1.0
    graph_def = pruned([fails_if_run.name], [out.name])
    assert {"p", "needs_p"}.isdisjoint(graph_def.by_name())
    arg = graph_def.node[0]
    assert (arg.op, arg.attr["index"], arg.attr["T"]) == ("_Arg", 0, tf.float32)
    assert graph_def.by_name()[out.op.name].input[0] == arg.name
    with tf.Session() as s:
        got = s.run(out, {fails_if_run: [3.0, 4.0]})
        np.testing.assert_array_equal(got, np.array([4.0, 5.0], np.float32))
        with pytest.raises(tf.errors.InvalidArgumentError, match="placeholder tensor 'p'"):
            s.run(out)


def test_args_and_retvals_are_numbered_by_position() -> None:
    x = tf.placeholder(tf.float32, [], name="x")
    y = tf.placeholder(tf.float32, [], name="y")
    s1, s2 = x + y, x - y
    graph_def = pruned([y.name, x.name], [s2.name, s1.name, s2.name])
    args = {n.attr["index"]: n for n in graph_def.node if n.op == "_Arg"}
    retvals = [n for n in graph_def.node if n.op == "_Retval"]
    assert [args[0].attr["_output_types"], args[1].attr["_output_types"]] == [[tf.float32]] * 2
    assert [r.attr["index"] for r in retvals] == [0, 1, 2]
    assert [r.input[0] for r in retvals] == [s2.op.name, s1.op.name, s2.op.name]
    with tf.Session() as s:
        assert s.run([s2, s1, s2], {x: 5.0, y: 2.0}) == [3.0, 7.0, 3.0]


def test_targets_pull_in_their_control_inputs() -> None:
    v = tf.Variable(0.0)
    bump = tf.assign_add(v, 1.0, name="bump")
    step = tf.group(bump, name="step")
    graph_def = pruned([], [], [step.name])
    assert {"step", "bump"} <= set(graph_def.by_name())
    assert not [n for n in graph_def.node if n.op == "_Retval"]
    with tf.Session() as s:
        s.run(v.initializer)
        s.run(step)
        s.run(step)
        assert s.run(v) == np.float32(2.0)


def test_control_edges_on_nodes_that_ran_are_dropped() -> None:
    # a partial run's later step: `bump` ran in an earlier one
    v = tf.Variable(0.0, name="v")
    bump = tf.assign_add(v, 1.0, name="bump")
    x = tf.placeholder(tf.float32, [], name="x")
    with tf.control_dependencies([bump]):
        after = tf.identity(x, name="after")
    doubled = tf.multiply(bump, 2.0, name="doubled")
    graph_def = prune(tf.get_default_graph()._engine_graph_def(), [], [after.name],
                      [], ran={"bump"})
    assert "bump" not in graph_def.by_name()
    assert graph_def.by_name()["after"].input == ["x"]
    # a data edge that no feed cuts still needs it
    graph_def = prune(tf.get_default_graph()._engine_graph_def(), [], [doubled.name], [],
                      ran={"bump"})
    assert "bump" in graph_def.by_name()


def test_unknown_names_raise_not_found() -> None:
    x = tf.constant(1.0, name="x")
    with pytest.raises(tf.errors.NotFoundError, match="'nope:0'"):
        pruned([], ["nope:0"])
    with pytest.raises(tf.errors.NotFoundError, match="'x:1'"):
        pruned([], ["x:1"])
    with pytest.raises(tf.errors.NotFoundError, match="Feed tensor 'ghost:0'"):
        pruned(["ghost:0"], [x.name])
    with pytest.raises(tf.errors.NotFoundError, match="Target node 'ghost'"):
        pruned([], [], ["ghost"])


def test_pruning_leaves_the_graph_untouched() -> None:
    p = tf.placeholder(tf.float32, [])
    out = p * 2.0
    graph_def = tf.get_default_graph()._engine_graph_def()
    before = [(n.name, list(n.input)) for n in graph_def.node]
    prune(graph_def, [p.name], [out.name], [])
    assert [(n.name, list(n.input)) for n in graph_def.node] == before
