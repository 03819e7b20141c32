"""The ``constant_folding`` plugin: what folds, what never does, limits, and identical results."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.client.session import local_master
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.runtime.passes import PassContext, PassRecord
from tensorweave.engine.runtime.prune import prune
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.constant_folding import fold_constants


def pruned(fetches: Sequence[tf.Tensor], feeds: Sequence[tf.Tensor] = (),
           targets: Sequence[str] = ()) -> tuple[GraphDef, PassContext]:
    graph_def = prune(tf.get_default_graph()._engine_graph_def(), [t.name for t in feeds],
                      [t.name for t in fetches], list(targets))
    keep = {n.name for n in graph_def.node if n.op in ("_Arg", "_Retval")} | set(targets)
    return graph_def, PassContext(get_registries(), frozenset(keep))


def folded(fetches: Sequence[tf.Tensor], feeds: Sequence[tf.Tensor] = (),
           targets: Sequence[str] = (), **limits: int) -> GraphDef:
    graph_def, ctx = pruned(fetches, feeds, targets)
    return fold_constants(graph_def, ctx, **limits)


def ops(graph_def: GraphDef) -> Counter[str]:
    return Counter(n.op for n in graph_def.node)


def partition_ops(build_and_run: Callable[[tf.RunOptions, tf.RunMetadata], np.ndarray],
                  ) -> tuple[np.ndarray, Counter[str], list[PassRecord]]:
    metadata = tf.RunMetadata()
    options = tf.RunOptions(output_partition_graphs=True)
    value = build_and_run(options, metadata)
    counts = Counter(n.op for g in metadata.partition_graphs for n in g.node)
    return value, counts, metadata.pass_records


def test_x_times_c_twice_keeps_one_mul_and_blocking_changes_nothing(
        request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSORWEAVE_FUSION", "0")  # the Muls stay Muls after partitioning
    x = tf.placeholder(tf.float32, [3], name="x")
    c = tf.constant(2.0) * tf.constant(3.0)
    y = x * c + x * c
    feed = {x: [1.0, -2.0, 0.5]}

    def run(options: tf.RunOptions, metadata: tf.RunMetadata) -> np.ndarray:
        with tf.Session() as s:
            return s.run(y, feed, options=options, run_metadata=metadata)

    on, on_ops, records = partition_ops(run)
    assert on_ops["Mul"] == 1
    assert on_ops["Const"] == 1  # c, folded
    assert [(r.name, r.nodes_before, r.nodes_after) for r in records
            if r.phase == "pre_placement"] == [("cse", 8, 7), ("constant_folding", 7, 5)]

    request.getfixturevalue("passes_blocked")
    off, off_ops, records = partition_ops(run)
    assert off_ops["Mul"] == 3
    assert records == []
    assert on.dtype == off.dtype == np.float32
    np.testing.assert_array_equal(on, off)
    np.testing.assert_array_equal(on, np.array([12.0, -24.0, 6.0], np.float32))


def test_a_constant_chain_folds_to_one_const_with_its_dtype() -> None:
    a = tf.constant(np.arange(6, dtype=np.float64).reshape(2, 3))
    b = tf.constant(np.float64(0.5))
    chain = tf.identity((a + b) * a - b, name="chain")
    x = tf.placeholder(tf.float64, [2, 3])
    graph_def = folded([chain + x])
    assert ops(graph_def) == Counter({"Placeholder": 1, "Const": 1, "AddV2": 1, "_Retval": 1})
    const = next(n for n in graph_def.node if n.op == "Const")
    assert const.name == "chain"  # TF's grappler: folded in place, under the node's name
    expected = (np.arange(6.0).reshape(2, 3) + 0.5) * np.arange(6.0).reshape(2, 3) - 0.5
    np.testing.assert_array_equal(const.attr["value"], expected)
    assert const.attr["value"].dtype == np.float64
    assert not const.attr["value"].flags.writeable
    with tf.Session() as s:
        got = s.run(chain + x, {x: np.ones((2, 3))})
    np.testing.assert_array_equal(got, expected + 1)
    assert got.dtype == np.float64


def test_folded_constants_are_named_as_tf_names_them() -> None:
    # one output, node removed: in its place; several outputs: ConstantFolding/<node>-folded-<i>
    halves = tf.split(tf.constant([1.0, 2.0, 3.0, 4.0]), 2, name="halves")
    scaled = tf.multiply(tf.constant([1.0, 2.0]), 3.0, name="scaled")
    p = tf.placeholder(tf.float32, [2], name="p")
    outs = [tf.add(scaled, p, name="total"), tf.add(halves[1], p, name="second")]
    consts = {n.name: n for n in folded(outs).node if n.op == "Const"}
    assert set(consts) == {"scaled", "ConstantFolding/halves-folded-1"}
    np.testing.assert_array_equal(consts["ConstantFolding/halves-folded-1"].attr["value"],
                                  [3.0, 4.0])
    metadata = tf.RunMetadata()
    with tf.Session() as s:
        got = s.run(outs, {p: [1.0, 1.0]}, run_metadata=metadata,
                    options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
    np.testing.assert_array_equal(got, [[4.0, 7.0], [4.0, 5.0]])
    stats = {n.node_name: n for d in metadata.step_stats.dev_stats for n in d.node_stats}
    assert {"scaled", "ConstantFolding/halves-folded-1", "total", "second"} <= set(stats)
    assert stats["scaled"].timeline_label == "scaled = Const()"


def test_a_folded_node_that_stays_is_read_through_a_constant_of_its_own() -> None:
    c = tf.multiply(tf.constant(2.0), 3.0, name="c")
    graph_def = folded([c + tf.placeholder(tf.float32, [])], targets=[c.op.name])
    by_name = graph_def.by_name()
    assert by_name["c"].op == "Mul"  # a target: it stays, and runs
    assert by_name["ConstantFolding/c-folded"].attr["value"] == np.float32(6.0)


def test_integer_folding_keeps_wraparound_and_dtype() -> None:
    big = tf.constant(np.int32(2**30))
    with tf.Session() as s:
        got = s.run(big * 4 + 3)
    assert got.dtype == np.int32
    assert got == np.int32(3)  # 2**32 wraps to 0 in int32, as TF's kernel does


def test_fetching_a_folded_tensor_goes_through_the_new_const() -> None:
    c = tf.constant(2.0) * tf.constant(3.0)
    graph_def = folded([c])
    retval = next(n for n in graph_def.node if n.op == "_Retval")
    assert graph_def.by_name()[retval.input[0]].op == "Const"
    with tf.Session() as s:
        assert s.run(c) == np.float32(6.0)


def test_placeholders_fed_tensors_and_variables_never_fold() -> None:
    p = tf.placeholder(tf.float32, [])
    c = tf.constant(2.0) * tf.constant(3.0)
    v = tf.Variable(1.0)
    graph_def = folded([p + 1.0, c * 10.0, v + 1.0], feeds=[c])
    assert ops(graph_def)["Mul"] == 1  # c * 10: c is fed, so it is an _Arg
    assert ops(graph_def)["AddV2"] == 2
    with tf.Session() as s:
        s.run(v.initializer)
        assert s.run(c * 10.0, {c: 5.0}) == np.float32(50.0)
        assert s.run(v + 1.0) == np.float32(2.0)


def test_a_control_input_from_a_stateful_op_is_kept() -> None:
    v = tf.Variable(0.0)
    bump = tf.assign_add(v, 1.0)
    with tf.control_dependencies([bump]):
        c = tf.constant(2.0)
    y = c * 3.0
    assert ops(folded([y]))["Mul"] == 1
    with tf.Session() as s:
        s.run(v.initializer)
        assert s.run(y) == np.float32(6.0)
        assert s.run(v) == np.float32(1.0)


def test_control_edges_from_folded_nodes_are_dropped_with_them() -> None:
    x = tf.placeholder(tf.float32, [])
    m = tf.constant(2.0) * tf.constant(3.0)
    with tf.control_dependencies([m, tf.group(m)]):
        z = x + 1.0
    graph_def = folded([z])
    assert "Mul" not in ops(graph_def) and "NoOp" not in ops(graph_def)
    assert graph_def.by_name()[z.op.name].input == [x.op.name, z.op.inputs[1].op.name]
    names = set(graph_def.by_name())
    assert all(t.lstrip("^").split(":")[0] in names for n in graph_def.node for t in n.input)
    with tf.Session() as s:
        assert s.run(z, {x: 1.0}) == np.float32(2.0)


def test_a_protected_target_is_kept() -> None:
    m = tf.constant(2.0) * tf.constant(3.0)
    graph_def = folded([m + 1.0], targets=[m.op.name])
    assert m.op.name in graph_def.by_name()
    with tf.Session() as s:
        assert s.run([m + 1.0, m.op])[0] == np.float32(7.0)


def test_outputs_over_the_size_limit_stay_unfolded() -> None:
    big = tf.constant(np.ones(1000, np.float32)) * 2.0
    x = tf.placeholder(tf.float32, [1000])
    assert ops(folded([big + x]))["Mul"] == 0
    assert ops(folded([big + x], max_constant_bytes=3999))["Mul"] == 1


def test_size_limit_applies_to_values_whose_shape_was_unknown() -> None:
    big = tf.constant(np.ones(1000, np.float32)) * 2.0
    x = tf.placeholder(tf.float32, [1000])
    graph_def, ctx = pruned([big + x])
    mul = graph_def.by_name()[big.op.name]
    mul.attr["_output_shapes"] = [TensorShape(None)]
    assert ops(fold_constants(graph_def, ctx, max_constant_bytes=3999))["Mul"] == 1
    assert ops(fold_constants(graph_def, ctx, max_constant_bytes=4000))["Mul"] == 0


def _node(name: str, op: str, inputs: list[str], out: tf.DType, shape: list[int],
          **attr: object) -> NodeDef:
    return NodeDef(name=name, op=op, input=inputs, attr={
        **attr, "_output_types": [out], "_output_shapes": [TensorShape(shape)]})


def _broken_graph() -> list[NodeDef]:
    """A Mul of incompatible constants (as a GraphDef from elsewhere could hold) feeding an
    Identity, and an Identity that declares a dtype its kernel would not return."""
    f32 = tf.float32
    return [
        _node("a", "Const", [], f32, [2], value=np.ones(2, np.float32), dtype=f32),
        _node("b", "Const", [], f32, [3], value=np.ones(3, np.float32), dtype=f32),
        _node("bad", "Mul", ["a", "b"], f32, [2], T=f32),
        _node("after", "Identity", ["bad"], f32, [2], T=f32),
        _node("liar", "Identity", ["a"], tf.int32, [2], T=tf.int32),
    ]


def test_failing_or_inconsistent_kernels_are_skipped_silently() -> None:
    retvals = [NodeDef(name=f"r{i}", op="_Retval", input=[src],
                       attr={"T": dtype, "index": i, "_output_types": [], "_output_shapes": []})
               for i, (src, dtype) in enumerate([("after", tf.float32), ("liar", tf.int32)])]
    graph_def = GraphDef(node=[*_broken_graph(), *retvals])
    ctx = PassContext(get_registries(), frozenset({"r0", "r1"}))
    assert fold_constants(graph_def, ctx) is graph_def


def test_a_skipped_kernel_failure_surfaces_at_run_time() -> None:
    master, workers = local_master(tf.ConfigProto())
    try:
        master.extend(_broken_graph())
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad"):
            master.run({}, ["after:0"], [])
    finally:
        master.close()
        for worker in workers:
            worker.close()


def test_a_fold_is_found_when_the_graph_lists_consumers_first() -> None:
    y = tf.negative(tf.constant([1.0, 2.0]))
    graph_def, ctx = pruned([y])
    graph_def.node.reverse()
    out = fold_constants(graph_def, ctx)
    assert "Neg" not in ops(out) and ops(out)["Const"] == 1
