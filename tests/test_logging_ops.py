"""``Assert`` and ``Print``: run-time failure with the data listed, value formatting as TF's
``SummarizeValue`` (strings as their text), ``first_n``, never folded or merged, gradients, and a
session that keeps working after a failed assertion."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.plugins.kernels.logging_ops import summarize


def test_assert_passes_and_fails_with_its_data() -> None:
    x = tw.placeholder(tw.int32, [None], name="x")
    check = tw.Assert(tw.reduce_all(x > 0), ["x must be positive:", x, tw.shape(x),
                                             tw.constant(["caf\u00e9", "b"])],
                      name="positive")
    assert isinstance(check, tw.Operation)
    assert (check.type, check.name) == ("Assert", "positive/Assert")
    assert check.get_attr("summarize") == 3 and check.outputs == []
    with tw.control_dependencies([check]):
        doubled = tw.identity(x * 2)
    with tw.Session() as sess:
        np.testing.assert_array_equal(sess.run(doubled, {x: [1, 2]}), [2, 4])
        with pytest.raises(errors.InvalidArgumentError,
                           match=r"assertion failed: \[x must be positive:\] \[1 -2 3\.\.\.\] "
                                 r"\[4\] \[café b\][\s\S]*positive/Assert \(op: Assert\) "
                                 r"on device"):
            sess.run(doubled, {x: [1, -2, 3, 4]})
        # the failed step leaves the session usable
        np.testing.assert_array_equal(sess.run(doubled, {x: [5]}), [10])


def test_assert_summarize_attr_and_types() -> None:
    x = tw.constant([[1.5, 2.0], [3.0, 4.25]])
    check = tw.Assert(False, [x], summarize=10)
    assert check.get_attr("summarize") == 10
    with tw.Session() as sess, pytest.raises(errors.InvalidArgumentError,
                                             match=r"\[\[1\.5 2\]\[3 4\.25\]\]"):
        sess.run(check)
    with pytest.raises(TypeError):
        tw.Assert(tw.constant(1.0), [x])
    with pytest.raises(TypeError):
        tw.Assert(True, x)


def test_assert_with_a_constant_condition_is_not_folded_away() -> None:
    check = tw.Assert(tw.constant(False), ["always"])
    with tw.control_dependencies([check]):
        out = tw.constant(1.0) + 1.0
    with tw.Session() as sess, pytest.raises(errors.InvalidArgumentError, match=r"\[always\]"):
        sess.run(out)


def test_assert_condition_must_be_a_scalar_at_run_time() -> None:
    cond = tw.placeholder(tw.bool)
    check = tw.Assert(cond, [])
    with tw.Session() as sess:
        sess.run(check, {cond: [True]})  # TF's legacy scalar
        with pytest.raises(errors.InvalidArgumentError, match=r"should be a scalar: \[2\]"):
            sess.run(check, {cond: [True, True]})


def test_summarize_matches_tf_formatting() -> None:
    assert summarize(np.array(3, np.int64), 3) == "3"
    assert summarize(np.array([1, 2, 3, 4], np.int32), 3) == "1 2 3..."
    assert summarize(np.arange(6).reshape(2, 3), 4) == "[0 1 2][3...]..."
    assert summarize(np.arange(6).reshape(2, 3), -1) == "[0 1 2][3 4 5]"
    assert summarize(np.array([0.1, 2.0, 1e-10], np.float32), 3) == "0.1 2 1e-10"
    assert summarize(np.array([1 / 3, 0.5], np.float64), 3) == "0.33333333333333331 0.5"
    assert summarize(np.array([16777217.0], np.float64), 3) == "16777217"
    assert summarize(np.array([True, False]), 3) == "1 0"
    assert summarize(np.zeros((0,), np.float32), 3) == ""


def test_print_forwards_its_input_and_writes_to_stderr(capfd) -> None:
    x = tw.placeholder(tw.float32, [None])
    printed = tw.Print(x, ["sum", tw.reduce_sum(x), x], message="dbg: ", summarize=2)
    assert printed.op.type == "Print" and printed.op.name == "Print"
    assert printed.dtype == tw.float32 and printed.shape.as_list() == [None]
    with tw.Session() as sess:
        out = sess.run(printed * 1.0, {x: [1.0, 2.5, 3.0]})
    np.testing.assert_array_equal(out, [1.0, 2.5, 3.0])
    assert capfd.readouterr().err == "dbg: [sum][6.5][1 2.5...]\n"


def test_print_first_n_and_no_merging(capfd) -> None:
    x = tw.constant([1, 2])
    once = tw.Print(x, [x], first_n=1, name="once")
    twin_a = tw.Print(x, [x], message="a")
    twin_b = tw.Print(x, [x], message="a")
    with tw.Session() as sess:
        for _ in range(3):
            sess.run(once)
        sess.run([twin_a, twin_b])
    assert capfd.readouterr().err == "[1 2]\na[1 2]\na[1 2]\n"


def test_print_passes_gradients_through() -> None:
    x = tw.constant([1.0, 2.0])
    y = tw.Print(x * 3.0, [x])
    (grad,) = tw.gradients(tw.reduce_sum(y * y), [x])
    with tw.Session() as sess:
        np.testing.assert_allclose(sess.run(grad), [18.0, 36.0])


def test_assert_failure_across_processes_is_typed() -> None:
    from tensorweave.train.local_cluster import LocalCluster

    with LocalCluster({"worker": 2}) as cluster:
        with tw.device("/job:worker/task:1"):
            x = tw.placeholder(tw.float32, [], name="x")
            check = tw.assert_non_negative(x, message="x on task 1")
        with tw.device("/job:worker/task:0"), tw.control_dependencies([check]):
            out = tw.identity(x + 1.0)
        with tw.Session(cluster.target("worker", 0)) as sess:
            with pytest.raises(errors.InvalidArgumentError,
                               match=r"\[x on task 1\][\s\S]*/job:worker/replica:0/task:1"):
                sess.run(out, {x: -1.0})
            assert sess.run(out, {x: 1.0}) == 2.0
