"""Run-time errors about the user's Operation: ``e.op``, "defined at", folded names."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import errors
from tensorweave.train.local_cluster import free_ports


def _line_of(marker: str) -> int:
    """The line of this file that holds `marker` (where a test built its failing op)."""
    lines = inspect.getsource(inspect.getmodule(_line_of)).splitlines()
    return 1 + next(i for i, text in enumerate(lines)
                    if marker in text and "_line_of" not in text)


def test_the_error_carries_the_operation_and_where_it_was_defined():
    i = tf.placeholder(tf.int32, [])
    picked = tf.gather(tf.constant([1.0, 2.0]), i, name="picked")  # marker: picked
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError) as info:
            sess.run(picked, {i: 5})
    err = info.value
    assert err.op is picked.op and err.node_def == picked.op.node_def
    assert err.message.startswith("indices = 5 is not in [0, 2)")
    assert f"(defined at {__file__}:{_line_of('marker: picked')})]]" in err.message
    assert "\n\nOriginal stack trace for 'picked':\n" in err.message
    assert f'  File "{__file__}", line {_line_of("marker: picked")}, in ' in err.message


def test_a_folded_constant_is_named_by_the_node_it_came_from():
    # The folding pass turns `scaled` into a Const in its place, on the requested GPU.
    with tf.device("/device:GPU:0"):
        scaled = tf.multiply(tf.constant([1.0, 2.0]), 3.0, name="scaled")
    total = scaled + tf.placeholder_with_default(1.0, [])
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError,
                           match=r"Cannot assign a device for operation scaled \(op Mul\)") as info:
            sess.run(total)
    assert "(op Const)" not in info.value.message
    assert info.value.op is scaled.op


def test_a_constant_folded_from_one_of_several_outputs_names_its_node():
    with tf.device("/device:GPU:0"):
        halves = tf.split(tf.constant([1.0, 2.0, 3.0, 4.0]), 2, name="halves")
    total = halves[1] + tf.placeholder_with_default([1.0, 1.0], [2])
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError,
                           match=r"Cannot assign a device for operation halves \(op Split\)"
                           ) as info:
            sess.run(total)
    assert "ConstantFolding/" not in info.value.message
    assert info.value.op is halves[1].op


def test_an_error_from_another_process_is_located_as_well():
    (port,) = free_ports(1)
    with tf.train.Server({"w": [f"localhost:{port}"]}) as server:
        i = tf.placeholder(tf.int32, [])
        far = tf.gather(tf.constant([1.0]), i, name="far")
        with tf.Session(server.target) as sess:
            with pytest.raises(errors.InvalidArgumentError) as info:
                sess.run(far, {i: 3})
            assert sess.run(far, {i: 0}) == 1.0
    assert info.value.op is far.op
    assert "Original stack trace for 'far'" in info.value.message


def test_an_error_in_a_cond_branch_is_the_branch_op_named_as_tf1():
    i = tf.placeholder(tf.int32, [])
    x = tf.constant([1.0, 2.0])
    built = []

    def taken():
        built.append(tf.gather(x, i))  # marker: in a branch
        return built[-1]

    branch = tf.cond(i > 0, taken, lambda: x[0])
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError) as info:
            sess.run(branch, {i: 5})
    err, op = info.value, built[0].op
    assert op.name == "cond/GatherV2"  # TF1's name: the branch's ops are in the cond's scope
    assert err.op is op and err.node_def == op.node_def
    assert "[[node cond/GatherV2 (op: GatherV2) on device " in err.message
    assert "If/then_branch" not in err.message
    assert f"(defined at {__file__}:{_line_of('marker: in a branch')})]]" in err.message
    assert "\n\nOriginal stack trace for 'cond/GatherV2':\n" in err.message


def test_an_error_in_a_cond_nested_in_a_loop_body_is_that_op():
    n = tf.placeholder(tf.int32, [])
    x = tf.constant([1.0, 2.0])
    built = []

    def body(k, total):
        def deep():
            built.append(tf.gather(x, k, name="deep"))
            return built[-1]

        return k + 1, total + tf.cond(k > 0, deep, lambda: 0.0, name="inner")

    loop = tf.while_loop(lambda k, total: k < n, body, [0, 0.0], name="loop")
    with tf.Session() as sess:
        assert sess.run(loop[1], {n: 2}) == 2.0
        with pytest.raises(errors.InvalidArgumentError, match="indices = 2 is not in") as info:
            sess.run(loop, {n: 3})
    assert built[0].op.name == "loop/inner/deep"
    assert info.value.op is built[0].op
    assert "[[node loop/inner/deep (op: GatherV2)" in info.value.message


def test_an_error_in_a_body_whose_function_graph_is_not_at_hand_has_no_op():
    i = tf.placeholder(tf.int32, [], name="i")
    x = tf.constant([1.0, 2.0])
    branch = tf.cond(i > 0, lambda: tf.gather(x, i), lambda: x[0])
    graph_def = tf.get_default_graph().as_graph_def()
    graph = tf.Graph()
    with graph.as_default():  # functions that came as bytes: no function graph behind them
        tf.import_graph_def(type(graph_def).FromString(graph_def.SerializeToString()), name="")
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match="is not in") as info:
                sess.run(branch.name, {"i:0": 5})
    assert info.value.op is None and info.value.node_def is None


def test_operation_traceback_lists_the_creating_frames():
    t = tf.constant(np.float32(1.0), name="here")
    frames = t.op.traceback
    assert frames[-1][:3][2] == "create_op"  # innermost: the graph's own frame
    ours = [f for f in frames if f[0] == __file__]
    assert ours[-1][2] == "test_operation_traceback_lists_the_creating_frames"
    assert "tf.constant(np.float32(1.0)" in ours[-1][3]
