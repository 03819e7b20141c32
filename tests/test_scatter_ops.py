"""Variable scatter updates: values against numpy, dtypes, attrs, shape checks at construction,
out-of-range indices at run time, and a variable on a parameter server across gRPC."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.train.local_cluster import LocalCluster


def run_update(initial: np.ndarray, update: Callable[..., tw.Tensor], *args: object) -> tuple:
    """(update's output, the variable afterwards) for `update` applied to a fresh variable."""
    v = tw.Variable(initial)
    out = update(v, *args)
    with tw.Session() as sess:
        sess.run(v.initializer)
        return sess.run(out), sess.run(v)


def reference(ufunc: np.ufunc, initial: np.ndarray, indices: object,
              updates: np.ndarray) -> np.ndarray:
    expected = initial.copy()
    ufunc.at(expected, indices, updates)
    return expected


@pytest.mark.parametrize(("update", "ufunc"), [
    (tw.scatter_add, np.add), (tw.scatter_sub, np.subtract), (tw.scatter_mul, np.multiply),
    (tw.scatter_div, np.divide), (tw.scatter_max, np.maximum), (tw.scatter_min, np.minimum),
])
def test_combining_scatters_accumulate_repeated_indices(update, ufunc) -> None:
    initial = np.arange(1.0, 13.0, dtype=np.float32).reshape(4, 3)
    indices = [3, 0, 3]
    updates = np.array([[2.0, -1.0, 4.0], [0.5, 3.0, -2.0], [1.5, 2.0, 8.0]], np.float32)
    out, after = run_update(initial, update, indices, updates)
    expected = reference(ufunc, initial, indices, updates)
    np.testing.assert_allclose(after, expected, rtol=1e-6)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert out.dtype == after.dtype == np.float32


def test_scatter_update_replaces_rows_and_broadcasts_a_scalar() -> None:
    initial = np.zeros((3, 2), np.int64)
    out, after = run_update(initial, tw.scatter_update, [2, 0], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(after, [[3, 4], [0, 0], [1, 2]])
    assert after.dtype == np.int64
    _, after = run_update(initial, tw.scatter_update, [1], np.int64(9))
    np.testing.assert_array_equal(after, [[0, 0], [9, 9], [0, 0]])


def test_scalar_index_and_integer_division_truncates() -> None:
    initial = np.array([[7, -7], [9, 4]], np.int32)
    _, after = run_update(initial, tw.scatter_div, 0, np.array([2, 2], np.int32))
    np.testing.assert_array_equal(after, [[3, -3], [9, 4]])
    _, after = run_update(initial, tw.scatter_div, [0, 0], np.array([[2, 2], [2, 2]], np.int32))
    np.testing.assert_array_equal(after, [[1, -1], [9, 4]])


def test_integer_division_by_zero_is_an_error() -> None:
    v = tw.Variable(np.array([4, 5], np.int32))
    op = tw.scatter_div(v, [1], np.array([0], np.int32))
    with tw.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(errors.InvalidArgumentError, match="division by zero"):
            sess.run(op)
        np.testing.assert_array_equal(sess.run(v), [4, 5])


def test_attrs_names_and_default_use_locking() -> None:
    v = tw.Variable([1.0, 2.0])
    up = tw.scatter_update(v, [0], [3.0])
    add = tw.scatter_add(v, [0], [3.0], use_locking=True, name="plus")
    nd = tw.scatter_nd_update(v, [[0]], [3.0])
    assert (up.op.type, up.op.name, up.op.get_attr("use_locking")) == (
        "ScatterUpdate", "ScatterUpdate", True)
    assert (add.op.type, add.op.name, add.op.get_attr("use_locking")) == (
        "ScatterAdd", "plus", True)
    assert tw.scatter_sub(v, [0], [1.0]).op.get_attr("use_locking") is False
    assert nd.op.get_attr("use_locking") is True
    assert tw.scatter_nd_add(v, [[0]], [1.0]).op.get_attr("use_locking") is False
    assert up.op.get_attr("Tindices") == tw.int32
    assert up.shape.as_list() == [2] and up.dtype == tw.float32
    assert up.op.inputs[0].op is v.op  # the ref, not a snapshot


def test_shape_mismatch_and_bad_dtypes_fail_at_construction() -> None:
    v = tw.Variable(np.zeros((4, 3), np.float32))
    with pytest.raises(ValueError, match="updates.shape"):
        tw.scatter_add(v, [0, 1], np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match="updates"):
        tw.scatter_nd_add(v, [[0, 1]], np.zeros((3,), np.float32))
    with pytest.raises(ValueError):
        tw.scatter_nd_update(v, [[0, 1, 2]], [1.0])
    with pytest.raises(TypeError):
        tw.scatter_add(v, [0.5], np.zeros((1, 3), np.float32))
    with pytest.raises(TypeError):
        tw.scatter_add(v, [0], tw.zeros([1, 3], tw.int32))
    flag = tw.Variable([True, False])
    with pytest.raises(TypeError):
        tw.scatter_add(flag, [0], [True])
    tw.scatter_update(flag, [0], [False])  # any dtype may be replaced


def test_out_of_range_index_is_an_error_and_leaves_the_variable() -> None:
    v = tw.Variable([1.0, 2.0, 3.0], name="v")
    too_big = tw.scatter_add(v, [1, 3], [1.0, 1.0], name="too_big")
    negative = tw.scatter_update(v, [[0, -1]], [[1.0, 1.0]])
    nd = tw.scatter_nd_sub(v, [[5]], [1.0], name="nd")
    with tw.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(errors.InvalidArgumentError,
                           match=r"indices\[1\] = 3 is not in \[0, 3\)[\s\S]*too_big "
                                 r"\(op: ScatterAdd\) on device .*CPU:0"):
            sess.run(too_big)
        with pytest.raises(errors.InvalidArgumentError, match=r"indices\[0,1\] = -1"):
            sess.run(negative)
        with pytest.raises(errors.InvalidArgumentError,
                           match=r"indices\[0\] = \[5\] does not index into param shape \[3\]"):
            sess.run(nd)
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0, 3.0])


def test_uninitialized_variable_is_a_failed_precondition() -> None:
    v = tw.Variable([1.0, 2.0], name="cold")
    with tw.Session() as sess, pytest.raises(errors.FailedPreconditionError, match="cold"):
        sess.run(tw.scatter_add(v, [0], [1.0]))


@pytest.mark.parametrize(("update", "ufunc"), [
    (tw.scatter_nd_add, np.add), (tw.scatter_nd_sub, np.subtract)])
def test_scatter_nd_accumulates_elements_and_slices(update, ufunc) -> None:
    initial = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    indices = np.array([[1, 2], [0, 0], [1, 2]])
    updates = np.arange(12, dtype=np.int64).reshape(3, 4) * 10
    out, after = run_update(initial, update, indices, updates)
    expected = reference(ufunc, initial, tuple(indices.T), updates)
    np.testing.assert_array_equal(after, expected)
    np.testing.assert_array_equal(out, expected)
    assert after.dtype == np.int64


def test_scatter_nd_update_elements() -> None:
    initial = np.zeros((2, 2), np.float64)
    _, after = run_update(initial, tw.scatter_nd_update, [[0, 1], [1, 0]], [5.0, 6.0])
    np.testing.assert_array_equal(after, [[0.0, 5.0], [6.0, 0.0]])


def test_an_update_keeps_earlier_reads_intact() -> None:
    v = tw.Variable([1.0, 2.0])
    with tw.Session() as sess:
        sess.run(v.initializer)
        before = sess.run(v)
        sess.run(tw.scatter_update(v, [0], [9.0]))
        np.testing.assert_array_equal(before, [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(v), [9.0, 2.0])


def test_scatter_ops_have_no_gradient() -> None:
    v = tw.Variable([1.0, 2.0])
    x = tw.constant([3.0])
    out = tw.scatter_add(v, [0], x)
    assert tw.gradients(tw.reduce_sum(out), [x]) == [None]


def test_scatter_on_a_parameter_server_across_grpc() -> None:
    with LocalCluster({"ps": 1, "worker": 1}) as cluster:
        with tw.device("/job:ps/task:0"):
            table = tw.Variable(np.zeros((4, 2), np.float32), name="table")
        with tw.device("/job:worker/task:0"):
            rows = tw.placeholder(tw.int32, [None], name="rows")
            deltas = tw.placeholder(tw.float32, [None, 2], name="deltas")
            scaled = deltas * 2.0
        add = tw.scatter_add(table, rows, scaled)
        nd = tw.scatter_nd_update(table, [[0, 0]], [-1.0])
        metadata = tw.RunMetadata()
        with tw.Session(cluster.target("worker", 0)) as sess:
            sess.run(table.initializer)
            sess.run(add, {rows: [1, 3, 1], deltas: np.ones((3, 2), np.float32)},
                     options=tw.RunOptions(output_partition_graphs=True),
                     run_metadata=metadata)
            got = sess.run(nd)
            with pytest.raises(errors.InvalidArgumentError,
                               match=r"is not in \[0, 4\)[\s\S]*/job:ps/replica:0/task:0"):
                sess.run(add, {rows: [4], deltas: np.ones((1, 2), np.float32)})
            after = sess.run(table)
    expected = np.zeros((4, 2), np.float32)
    expected[1], expected[3], expected[0, 0] = 4.0, 2.0, -1.0
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(after, expected)
    placed = {n.name: n.device for g in metadata.partition_graphs for n in g.node}
    assert placed["ScatterAdd"] == "/job:ps/replica:0/task:0/device:CPU:0"
    assert placed["mul"] == "/job:worker/replica:0/task:0/device:CPU:0"


def test_variable_scatter_nd_methods() -> None:
    v = tw.Variable(np.zeros((2, 2), np.float32))
    up = v.scatter_nd_update([[0, 1]], [5.0], name="set")
    add = v.scatter_nd_add([[1, 0], [1, 0]], [1.0, 2.0])
    sub = v.scatter_nd_sub([[0]], [[1.0, 1.0]])
    assert (up.op.type, up.op.name) == ("ScatterNdUpdate", "set")
    assert add.op.get_attr("use_locking") is True and sub.op.type == "ScatterNdSub"
    with tw.Session() as sess:
        sess.run(v.initializer)
        sess.run(up)
        sess.run(add)
        np.testing.assert_array_equal(sess.run(sub), [[-1.0, 4.0], [3.0, 0.0]])


def test_a_fetched_value_keeps_its_contents_when_the_variable_is_updated_in_place() -> None:
    v = tw.Variable(np.zeros((5, 2), np.float32))
    update = tw.scatter_add(v, [1, 3], np.ones((2, 2), np.float32))
    with tw.Session() as sess:
        sess.run(v.initializer)
        before = sess.run(v)
        for _ in range(3):
            sess.run(update.op)
        after = sess.run(v)
    np.testing.assert_array_equal(before, np.zeros((5, 2)))
    np.testing.assert_array_equal(after[[1, 3]], np.full((2, 2), 3.0))
    np.testing.assert_array_equal(after[[0, 2, 4]], np.zeros((3, 2)))


def test_tensor_scatter_ops_return_updated_copies() -> None:
    t = tw.placeholder(tw.float32, [4, 3])
    u = tw.placeholder(tw.float32, [2, 3])
    t_value = np.arange(12, dtype=np.float32).reshape(4, 3)
    u_value = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]], np.float32)
    update = tw.tensor_scatter_update(t, [[1], [3]], u)
    add = tw.tensor_scatter_nd_add(t, [[1], [1]], u)  # repeated indices accumulate
    sub = tw.tensor_scatter_sub(t, [[0], [2]], u)
    elements = tw.tensor_scatter_update(t, [[0, 0], [3, 2]], tw.constant([7.0, 9.0]))
    assert update.shape.as_list() == [4, 3] and update.dtype == tw.float32
    with tw.Session() as sess:
        got = sess.run([update, add, sub, elements], {t: t_value, u: u_value})
    want_update, want_add, want_sub = t_value.copy(), t_value.copy(), t_value.copy()
    want_update[[1, 3]] = u_value
    want_add[1] += u_value[0] + u_value[1]
    want_sub[[0, 2]] -= u_value
    want_elements = t_value.copy()
    want_elements[0, 0], want_elements[3, 2] = 7.0, 9.0
    for g, w in zip(got, [want_update, want_add, want_sub, want_elements]):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name", ["tensor_scatter_update", "tensor_scatter_add",
                                  "tensor_scatter_sub"])
def test_tensor_scatter_gradients_match_numeric_ones(name: str) -> None:
    t_value = np.linspace(-1, 1, 12).reshape(4, 3)
    u_value = np.linspace(2, 3, 6).reshape(2, 3)
    t = tw.placeholder(tw.float64, [4, 3])
    u = tw.placeholder(tw.float64, [2, 3])
    y = getattr(tw, name)(t, [[2], [0]], u) ** 2
    assert tw.test.compute_gradient_error(t, [4, 3], y, [4, 3], x_init_value=t_value,
                                          extra_feed_dict={u: u_value}) < 1e-6
    assert tw.test.compute_gradient_error(u, [2, 3], y, [4, 3], x_init_value=u_value,
                                          extra_feed_dict={t: t_value}) < 1e-6


def test_tensor_scatter_errors() -> None:
    t = tw.zeros([3, 2])
    with pytest.raises(ValueError, match="must be indices.shape"):
        tw.tensor_scatter_update(t, [[0]], tw.zeros([1, 3]))
    bad = tw.tensor_scatter_update(t, [[3]], tw.zeros([1, 2]))
    with tw.Session() as sess, pytest.raises(errors.InvalidArgumentError,
                                             match=r"indices\[0\] = \[3\] does not index"):
        sess.run(bad)
