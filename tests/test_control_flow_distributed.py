"""Functional control flow across processes: function attrs (and lists of them) as wire values
(nested NodeDefs, validated on receipt), then a ``cond``, a ``switch_case`` and a
``while_loop`` (a variable assigned inside a branch, a ps variable read by both) placed on
``/job:worker/task:0`` of a real local cluster; results equal the in-process run."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.distributed import messages
from tensorweave.engine.graph.func_graph import FunctionDef
from tensorweave.plugins.grpc import wire
from tensorweave.train.local_cluster import LocalCluster

WORKER = "/job:worker/replica:0/task:0/device:CPU:0"


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster({"ps": 1, "worker": 1}) as local:
        yield local


def over_the_wire(value: object) -> object:
    return wire.decode(wire.encode(value).frame()).body


def test_function_attrs_round_trip_as_nested_node_lists() -> None:
    n = tf.placeholder(tf.int32, [], name="n")
    p = tf.placeholder(tf.bool, [], name="p")
    out = tf.cond(p, lambda: tf.while_loop(lambda i: i < n, lambda i: i + 2, [0]),
                  lambda: tf.constant(-1), name="outer")
    graph_def = tf.get_default_graph()._engine_graph_def()
    encoded = messages.graph_to_wire(graph_def.node)
    node = next(v for v in encoded if v[1] == out.op.type)
    assert isinstance(node[4]["then_branch"], wire.WireFunction)
    nodes = messages.graph_from_wire(over_the_wire(encoded), "RegisterGraphRequest")
    decoded = next(v for v in nodes if v.name == out.op.name)
    then_fn = decoded.attr["then_branch"]
    original = out.op.get_attr("then_branch")
    assert isinstance(then_fn, FunctionDef) and then_fn.graph is None
    assert then_fn.name == original.name
    assert [(x.name, x.op, x.input) for x in then_fn.nodes] == \
        [(x.name, x.op, x.input) for x in original.nodes]
    loop = next(x for x in then_fn.nodes if x.op.endswith("While"))
    assert isinstance(loop.attr["body"], FunctionDef)  # nested functions decode too
    assert loop.attr["body"].ret_types == [tf.int32, tf.int32]  # the loop var and n


def _wire_node(attr: dict[str, object]) -> list[object]:
    return ["f", "If", [], "", {**attr, "_output_types": [], "_output_shapes": []}]


def _arg(index: object) -> list[object]:
    return ["a", "_Arg", [], "", {"T": tf.float32, "index": index,
                                  "_output_types": [tf.float32],
                                  "_output_shapes": [tf.TensorShape([])]}]


@pytest.mark.parametrize("attr, message", [
    ({"then_branch": wire.WireFunction("g", [_arg(1)])}, "malformed function.*indices"),
    ({"then_branch": wire.WireFunction("g", [_arg(0), ["r", "_FunctionRetval", ["ghost"], "",
                                                      {"_output_types": [],
                                                       "_output_shapes": []}]])},
     "input 'ghost'"),
    ({"then_branch": wire.WireFunction("g", "nodes")}, "not a name and a list of nodes"),
    ({"branches": [wire.WireFunction("g", []), 1]}, "list attr of functions and other"),
    ({"branches": [wire.WireFunction("g", [_arg(1)])]}, "malformed function.*indices"),
])
def test_malformed_functions_are_refused(attr: dict[str, object], message: str) -> None:
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        messages.graph_from_wire(over_the_wire([_wire_node(attr)]), "RegisterGraphRequest")


def test_a_function_tag_with_a_bad_body_is_malformed() -> None:
    frame = bytearray(wire.encode(wire.WireFunction("g", [])).frame())
    head = frame.index(bytes([wire.T_FUNCTION]))
    frame[head + 1] = wire.T_INT  # the name is no longer a string
    with pytest.raises(tf.errors.InvalidArgumentError, match="Malformed"):
        wire.decode(bytes(frame))


def build(ps: str | None, worker: str | None) -> tuple[object, ...]:
    with tf.device(ps):
        scale = tf.Variable(3.0, name="scale")
    with tf.device(worker):
        x = tf.placeholder(tf.float32, [], name="x")
        n = tf.placeholder(tf.int32, [], name="n")
        counter = tf.Variable(0, name="counter")
        y = tf.cond(x > 0.0, lambda: x * scale, lambda: tf.square(x), name="branch")
        bump = tf.cond(x > 0.0, lambda: counter.assign_add(1), lambda: tf.identity(counter),
                       name="bump")
        i, total = tf.while_loop(lambda i, t: i < n, lambda i, t: (i + 1, t + x * scale),
                                 [0, 0.0], name="loop")
    return x, n, y, bump, i, total, tf.global_variables_initializer()


def run_all(sess: tf.Session, x: object, n: object, y: object, bump: object, i: object,
            total: object) -> list[object]:
    out = []
    for value, steps in ((2.0, 4), (-3.0, 2), (0.5, 0)):
        out.append(sess.run([y, i, total], {x: value, n: steps}))
        out.append(sess.run(bump, {x: value}))
    return out


def test_cond_and_while_on_a_worker_match_the_in_process_run(cluster: LocalCluster) -> None:
    x, n, y, bump, i, total, init = build(None, None)
    with tf.Session() as sess:
        sess.run(init)
        expected = run_all(sess, x, n, y, bump, i, total)
    tf.reset_default_graph()
    x, n, y, bump, i, total, init = build("/job:ps/task:0", "/job:worker/task:0")
    metadata = tf.RunMetadata()
    with tf.Session(cluster.target("worker", 0)) as sess:
        sess.run(init)
        got = run_all(sess, x, n, y, bump, i, total)
        sess.run([y, total], {x: 1.0, n: 3},
                 options=tf.RunOptions(output_partition_graphs=True), run_metadata=metadata)
    assert str(got) == str(expected)
    assert got[0] == [6.0, 4, 24.0] and got[1] == 1 and got[3] == 1 and got[5] == 2
    placed = {n.name: (g, n) for g in metadata.partition_graphs for n in g.node}
    assert placed["branch/If"][1].device == WORKER
    assert placed["loop/While"][1].device == WORKER
    # the functions came back from the worker (GetStepInfo) and are in the partition's library
    graph, loop = placed["loop/While"]
    (body,) = [f for f in graph.library.function
               if f.signature.name == loop.attr["body"].func.name]
    assert {node.op for node in body.node_def} >= {"_Arg", "_FunctionRetval", "Mul"}


def test_an_error_inside_a_remote_branch_names_the_inner_node(cluster: LocalCluster) -> None:
    with tf.device("/job:worker/task:0"):
        p = tf.placeholder(tf.bool, [], name="p")
        k = tf.placeholder(tf.int32, [], name="k")
        out = tf.cond(p, lambda: tf.reshape(tf.range(6), tf.stack([k, 4])),
                      lambda: tf.zeros([2, 3], tf.int32), name="shaped")
    with tf.Session(cluster.target("worker", 0)) as sess:
        np.testing.assert_array_equal(sess.run(out, {p: False, k: 1}), np.zeros((2, 3)))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"shaped/Reshape \(op: Reshape\) on device "
                                 r"/job:worker/replica:0/task:0"):
            sess.run(out, {p: True, k: 5})


def test_switch_case_and_its_gradient_on_a_worker(cluster: LocalCluster) -> None:
    # a Case's list of functions crosses to the worker; a ps variable is read in a branch
    with tf.device("/job:ps/task:0"):
        w = tf.Variable([3.0, 4.0], name="w")
    with tf.device("/job:worker/task:0"):
        i = tf.placeholder(tf.int32, [], name="i")
        x = tf.placeholder(tf.float32, [2], name="x")
        out = tf.switch_case(i, [lambda: x * 2.0, lambda: x * w], default=lambda: tf.sin(x),
                             name="pick")
        dx, dw = tf.gradients(out, [x, w])
    feed = [1.0, 2.0]
    metadata = tf.RunMetadata()
    with tf.Session(cluster.target("worker", 0)) as sess:
        sess.run(w.initializer)
        got = [sess.run([out, dx, dw], {i: k, x: feed}) for k in (0, 1, 2, -4)]
        sess.run(out, {i: 1, x: feed}, options=tf.RunOptions(output_partition_graphs=True),
                 run_metadata=metadata)
    for (value, gx, gw), (want, want_dx, want_dw) in zip(got, [
            ([2.0, 4.0], [2.0, 2.0], [0.0, 0.0]), ([3.0, 8.0], [3.0, 4.0], feed),
            (np.sin(feed), np.cos(feed), [0.0, 0.0]), (np.sin(feed), np.cos(feed), [0.0, 0.0])]):
        np.testing.assert_allclose(value, want, rtol=1e-6)
        np.testing.assert_allclose(gx, want_dx, rtol=1e-6)
        np.testing.assert_allclose(gw, want_dw, rtol=1e-6)
    placed = {n.name: (g, n) for g in metadata.partition_graphs for n in g.node}
    partition, case = placed["pick/indexed_case"]
    assert case.device == WORKER and case.op == "StatelessCase"
    branches = [f.name for f in case.attr["branches"].list.func]
    assert len(branches) == 3  # every branch travels in the worker partition's library
    assert set(branches) <= {f.signature.name for f in partition.library.function}
