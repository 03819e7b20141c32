"""The ``cse`` plugin: which nodes merge, which never do, and that results stay the same."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.graph.graph_def import GraphDef
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.runtime.passes import PassContext
from tensorweave.engine.runtime.prune import prune
from tensorweave.plugins.cse import eliminate_common_subexpressions


def cse(fetches: Sequence[tf.Tensor], targets: Sequence[str] = ()) -> GraphDef:
    """The pruned default graph for `fetches` after CSE, protected as the master does it."""
    graph_def = prune(tf.get_default_graph()._engine_graph_def(), [], [t.name for t in fetches],
                      list(targets))
    keep = {n.name for n in graph_def.node if n.op in ("_Arg", "_Retval")}
    ctx = PassContext(get_registries(), frozenset(keep | set(targets)))
    return eliminate_common_subexpressions(graph_def, ctx)


def ops(graph_def: GraphDef) -> Counter[str]:
    return Counter(n.op for n in graph_def.node)


def test_duplicates_merge_and_consumers_are_rewired() -> None:
    x = tf.constant([1.0, 2.0])
    y = tf.constant([3.0, 4.0])
    out = (x + y) * (x + y)
    graph_def = cse([out])
    assert ops(graph_def)["AddV2"] == 1
    mul = graph_def.by_name()[out.op.name]
    assert mul.input[0] == mul.input[1]
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(out), np.array([16.0, 36.0], np.float32))


def test_merges_cascade_through_rewired_inputs() -> None:
    x = tf.placeholder(tf.float32, [2])
    a = (x * 2.0 + 1.0) - x
    b = (x * 2.0 + 1.0) - x
    graph_def = cse([a + b])
    # The two Const 2.0 and 1.0 merge first, then Mul, AddV2 and Sub merge on merged inputs.
    assert ops(graph_def) == Counter({"Placeholder": 1, "Const": 2, "Mul": 1, "Sub": 1,
                                      "AddV2": 2, "_Retval": 1})


def test_const_values_compare_by_dtype_shape_and_bytes() -> None:
    same = [tf.constant(2.0), tf.constant(2.0)]
    other = [tf.constant(2.0, tf.float64), tf.constant([2.0]), tf.constant(-0.0),
             tf.constant(0.0), tf.constant(2, tf.int32)]
    graph_def = cse(same + other)
    consts = [n for n in graph_def.node if n.op == "Const"]
    assert len(consts) == 1 + len(other)
    retvals = [n for n in graph_def.node if n.op == "_Retval"]
    assert retvals[0].input == retvals[1].input


def test_different_attrs_inputs_or_devices_do_not_merge() -> None:
    x = tf.constant([1.0, 2.0])
    y = tf.constant([3.0, 4.0])
    with tf.device("/cpu:1"):
        on_other_device = x + y
    fetches = [x + y, y + x, x - y, on_other_device]
    assert ops(cse(fetches))["AddV2"] == 3


def test_control_inputs_compare_as_a_set() -> None:
    x = tf.constant(1.0)
    g1, g2 = tf.no_op(name="g1"), tf.no_op(name="g2")
    with tf.control_dependencies([g1, g2]):
        a = tf.identity(x)
    with tf.control_dependencies([g2, g1]):
        b = tf.identity(x)
    with tf.control_dependencies([g1]):
        c = tf.identity(x)
    graph_def = cse([a, b, c])
    # g1 and g2 are identical NoOps and merge too, so all three Identity nodes end up equal.
    assert ops(graph_def)["NoOp"] == 1
    assert ops(graph_def)["Identity"] == 1
    identity = next(n for n in graph_def.node if n.op == "Identity")
    assert identity.input == [x.op.name, f"^{g1.name}"]


def test_only_control_inputs_differ_keeps_both() -> None:
    x = tf.constant(1.0)
    v = tf.Variable(0.0)
    bump = tf.assign_add(v, 1.0)
    with tf.control_dependencies([bump]):
        a = tf.identity(x)
    b = tf.identity(x)
    assert ops(cse([a, b]))["Identity"] == 2


def test_stateful_ops_never_merge() -> None:
    v = tf.Variable(0.0, name="v")
    w = tf.Variable(0.0, name="w")
    first = tf.assign_add(v, 1.0)
    second = tf.assign_add(v, 1.0)
    step = tf.group(first, second)
    graph_def = cse([], targets=[step.name, w.initializer.name])
    assert ops(graph_def)["AssignAdd"] == 2
    assert ops(graph_def)["VariableV2"] == 2
    with tf.Session() as s:
        s.run([v.initializer, w.initializer])
        s.run(step)
        assert s.run(v) == 2.0


def test_random_ops_never_merge() -> None:
    if get_registries().ops.get("RandomUniform") is None:
        pytest.skip("random ops are not registered yet")
    a = tf.random_uniform([4], seed=1)
    b = tf.random_uniform([4], seed=1)
    assert ops(cse([a, b]))["RandomUniform"] == 2


def test_placeholders_never_merge() -> None:
    a = tf.placeholder(tf.float32, [2], name="a")
    b = tf.placeholder(tf.float32, [2], name="b")
    assert ops(cse([a + 1.0, b + 1.0]))["Placeholder"] == 2
    with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError, match="'b'"):
        s.run(b + 1.0, {a: [1.0, 2.0]})


def test_protected_nodes_are_never_removed() -> None:
    x = tf.constant(1.0)
    a = tf.identity(x, name="a")
    b = tf.identity(x, name="b")
    assert "b" not in cse([a, b]).by_name()
    assert {"a", "b"} <= set(cse([a], targets=[b.op.name]).by_name())


def test_session_records_the_pass_and_keeps_results() -> None:
    x = tf.placeholder(tf.float32, [3])
    out = tf.identity(x * 2.0) + tf.identity(x * 2.0)
    metadata = tf.RunMetadata()
    with tf.Session() as s:
        got = s.run(out, {x: [1.0, 2.0, 3.0]}, run_metadata=metadata)
    np.testing.assert_array_equal(got, np.array([4.0, 8.0, 12.0], np.float32))
    record = next(r for r in metadata.pass_records if r.name == "cse")
    assert (record.phase, record.nodes_before - record.nodes_after) == ("pre_placement", 3)


def test_graph_without_duplicates_is_returned_as_is() -> None:
    y = tf.constant(1.0) + 2.0
    graph_def = prune(tf.get_default_graph()._engine_graph_def(), [], [y.name], [])
    ctx = PassContext(get_registries(), frozenset())
    assert eliminate_common_subexpressions(graph_def, ctx) is graph_def


def test_twins_are_found_out_of_order_and_however_their_inputs_are_spelled() -> None:
    x = tf.placeholder(tf.float32, [2])
    first = tf.negative(x)
    second = tf.negative(x)
    graph_def = prune(tf.get_default_graph()._engine_graph_def(), [], [first.name, second.name], [])
    graph_def.node.reverse()  # consumers before their inputs
    for node in graph_def.node:
        if node.name == second.op.name:
            node.input = [f"{x.op.name}:0"]  # output 0 named with its index
    ctx = PassContext(get_registries(), frozenset())
    assert ops(eliminate_common_subexpressions(graph_def, ctx))["Neg"] == 1


def test_string_consts_merge_by_value() -> None:
    graph_def = cse([tf.constant(["ab", "c"]), tf.constant(["ab", "c"]), tf.constant(["ab", "d"])])
    assert ops(graph_def)["Const"] == 2
