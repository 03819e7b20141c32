"""`ConditionalAccumulator` and `SparseConditionalAccumulator` through the public API: the mean
(or sum) of the gradients a take gives (row by row for sparse ones, against a numpy reference),
stale gradients dropped, the global step, takes that wait for gradients from other runs,
deadlines and closed sessions that release them, validation at construction and at run time,
sharing by name and placement. Every run that could wait has a deadline, every thread a join
timeout."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tests.blocking import SHORT_MS, WAIT_MS, Background, run


class Feeds:
    """An accumulator's apply op fed with a gradient and a local step."""

    def __init__(self, acc: tf.ConditionalAccumulator, shape: Any = None,
                 dtype: tf.DType = tf.float32) -> None:
        self.grad = tf.placeholder(dtype, shape)
        self.step = tf.placeholder(tf.int64, [])
        self.apply = acc.apply_grad(self.grad, local_step=self.step)

    def __call__(self, sess: tf.Session, grad: Any, step: int = 0) -> None:
        run(sess, self.apply, feed_dict={self.grad: grad, self.step: step})


# -- the math -----------------------------------------------------------------------------------

def test_take_gives_the_mean_once_and_resets() -> None:
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2, 2])
    feed = Feeds(acc, [2, 2])
    take, count = acc.take_grad(2), acc.num_accumulated()
    assert take.shape.as_list() == [2, 2] and take.dtype == tf.float32
    assert count.dtype == tf.int32 and count.shape.as_list() == []
    a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    b = np.array([[0.5, -2.0], [1.0, 8.0]], np.float32)
    with tf.Session() as sess:
        assert run(sess, count) == 0
        feed(sess, a)
        feed(sess, b)
        assert run(sess, count) == 2
        got = run(sess, take)
        np.testing.assert_array_equal(got, (a + b) / 2)
        assert got.dtype == np.float32
        assert run(sess, count) == 0


def test_take_increments_the_global_step_so_older_gradients_are_stale() -> None:
    acc = tf.ConditionalAccumulator(tf.float64, shape=[])
    feed = Feeds(acc, [], tf.float64)
    take, count = acc.take_grad(1), acc.num_accumulated()
    with tf.Session() as sess:
        feed(sess, 4.0, step=0)
        assert run(sess, take) == 4.0  # the global step is now 1
        feed(sess, 100.0, step=0)  # stale: dropped
        assert run(sess, count) == 0
        feed(sess, 2.0, step=1)
        feed(sess, 6.0, step=7)  # a step ahead is fine
        assert run(sess, count) == 2
        assert run(sess, acc.take_grad(2)) == 4.0


def test_set_global_step_moves_the_staleness_bar_both_ways(caplog: Any) -> None:
    acc = tf.ConditionalAccumulator(tf.float32, shape=[1])
    feed = Feeds(acc, [1])
    step = tf.placeholder(tf.int32, [])  # cast to int64 by set_global_step
    set_step = acc.set_global_step(step)
    assert set_step.type == "AccumulatorSetGlobalStep"
    count = acc.num_accumulated()
    with tf.Session() as sess:
        run(sess, set_step, feed_dict={step: 5})
        feed(sess, [1.0], step=4)
        assert run(sess, count) == 0
        feed(sess, [1.0], step=5)
        assert run(sess, count) == 1
        with caplog.at_level("WARNING"):
            run(sess, set_step, feed_dict={step: 2})  # smaller: set all the same, as TF
        assert "below its current global step 5" in caplog.text
        feed(sess, [3.0], step=2)
        np.testing.assert_array_equal(run(sess, acc.take_grad(2)), [2.0])


def test_sum_reduction_and_integer_means_truncate_toward_zero() -> None:
    total = tf.ConditionalAccumulator(tf.int32, shape=[3], reduction_type="SUM")
    mean = tf.ConditionalAccumulator(tf.int32, shape=[3])
    grads = [np.array([-3, 5, 7], np.int32), np.array([0, 2, -2], np.int32)]
    with tf.Session() as sess:
        for acc in (total, mean):
            for g in grads:
                run(sess, acc.apply_grad(g))
        summed = run(sess, total.take_grad(2))
        averaged = run(sess, mean.take_grad(2))
    np.testing.assert_array_equal(summed, [-3, 7, 5])
    np.testing.assert_array_equal(averaged, [-1, 3, 2])  # C++ division: -1.5 -> -1
    assert summed.dtype == averaged.dtype == np.int32


def test_a_take_gets_everything_accumulated_beyond_num_required() -> None:
    acc = tf.ConditionalAccumulator(tf.float32)  # unknown shape: any gradient shape
    take = acc.take_grad(1)
    assert take.shape.dims is None
    with tf.Session() as sess:
        for g in ([1.0, 2.0], [3.0, 4.0], [5.0, 9.0]):
            run(sess, acc.apply_grad(g))
        np.testing.assert_array_equal(run(sess, take), [3.0, 5.0])
        run(sess, acc.apply_grad(np.ones([2, 2], np.float32), local_step=1))
        np.testing.assert_array_equal(run(sess, take), np.ones([2, 2]))


def test_gradients_are_copied_when_applied() -> None:
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    feed = Feeds(acc, [2])
    with tf.Session() as sess:
        value = np.array([1.0, 2.0], np.float32)
        feed(sess, value)
        value[:] = 100.0
        np.testing.assert_array_equal(run(sess, acc.take_grad(1)), [1.0, 2.0])


# -- waiting ------------------------------------------------------------------------------------

def test_take_waits_for_gradients_from_other_runs() -> None:
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    feed = Feeds(acc, [])
    take = acc.take_grad(2)
    with tf.Session() as sess:
        waiting = Background(lambda: run(sess, take))
        assert waiting.still_waiting()
        feed(sess, 1.0)
        assert waiting.still_waiting()
        feed(sess, 2.0)
        assert waiting.join() == 1.5


def test_takes_complete_in_arrival_order() -> None:
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    feed = Feeds(acc, [])
    first_take, second_take = acc.take_grad(1), acc.take_grad(1)
    with tf.Session() as sess:
        first = Background(lambda: run(sess, first_take))
        assert first.still_waiting()
        second = Background(lambda: run(sess, second_take))
        assert second.still_waiting()
        feed(sess, 1.0)
        assert first.join() == 1.0
        assert second.still_waiting()
        feed(sess, 2.0, step=1)
        assert second.join() == 2.0


def test_deadline_withdraws_a_waiting_take() -> None:
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    feed = Feeds(acc, [])
    take = acc.take_grad(2)
    with tf.Session() as sess:
        feed(sess, 3.0)
        with pytest.raises(tf.errors.DeadlineExceededError) as info:
            run(sess, take, timeout_ms=SHORT_MS)
        assert "AccumulatorTakeGradient" in str(info.value)
        assert run(sess, acc.num_accumulated()) == 1  # the withdrawn take took nothing
        feed(sess, 5.0)  # the global step is still 0
        assert run(sess, take) == 4.0


def test_an_error_elsewhere_in_the_step_releases_the_take() -> None:
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    x = tf.placeholder(tf.float32, [])
    check = tf.Assert(tf.greater(x, 0.0), [x])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError):
            run(sess, [acc.take_grad(1), check], feed_dict={x: -1.0})
        run(sess, acc.apply_grad(2.0))
        assert run(sess, acc.take_grad(1)) == 2.0


def test_closing_the_session_cancels_a_waiting_take() -> None:
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    take = acc.take_grad(1)
    sess = tf.Session()
    waiting = Background(lambda: run(sess, take))
    assert waiting.still_waiting()
    sess.close()
    with pytest.raises(tf.errors.CancelledError, match="Session has been closed"):
        waiting.join()


# -- validation ---------------------------------------------------------------------------------

def test_bad_arguments_fail_at_construction() -> None:
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    with pytest.raises(ValueError):
        acc.apply_grad([1.0, 2.0, 3.0])
    with pytest.raises((TypeError, ValueError)):
        acc.apply_grad(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="reduction_type must be one of"):
        tf.ConditionalAccumulator(tf.float32, reduction_type="MAX")
    with pytest.raises(ValueError, match="rank 0"):
        acc.apply_grad([1.0, 2.0], local_step=[1, 2])
    with pytest.raises(ValueError, match="rank 0"):
        acc.take_grad([1, 2])
    with pytest.raises(TypeError):
        tf.ConditionalAccumulator(tf.string)


def test_bad_gradients_and_counts_fail_at_run_time() -> None:
    acc = tf.ConditionalAccumulator(tf.float32)
    grad = tf.placeholder(tf.float32, None)
    apply_op = acc.apply_grad(grad)
    required = tf.placeholder(tf.int32, [])
    with tf.Session() as sess:
        run(sess, apply_op, feed_dict={grad: [1.0, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Shape mismatch: expected \[2\], got \[3\]"):
            run(sess, apply_op, feed_dict={grad: [1.0, 2.0, 3.0]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="num_required must be positive, but was 0"):
            run(sess, acc.take_grad(required), feed_dict={required: 0})
        assert run(sess, acc.num_accumulated()) == 1


def test_a_stale_gradient_is_dropped_before_its_shape_is_checked() -> None:
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    grad = tf.placeholder(tf.float32, None)
    apply_op = acc.apply_grad(grad, local_step=0)
    with tf.Session() as sess:
        run(sess, acc.set_global_step(3))
        run(sess, apply_op, feed_dict={grad: [1.0, 2.0, 3.0]})  # as TF: no error
        with pytest.raises(tf.errors.InvalidArgumentError, match="Shape mismatch"):
            run(sess, acc.apply_grad(grad, local_step=3), feed_dict={grad: [1.0]})


# -- sharing and placement ----------------------------------------------------------------------

def test_accumulators_with_one_shared_name_are_one_accumulator() -> None:
    a = tf.ConditionalAccumulator(tf.float32, shape=[], shared_name="grads")
    b = tf.ConditionalAccumulator(tf.float32, shape=[], shared_name="grads")
    other = tf.ConditionalAccumulator(tf.float64, shape=[], shared_name="grads")
    with tf.Session() as sess:
        run(sess, a.apply_grad(2.0))
        run(sess, b.apply_grad(4.0))
        assert run(sess, a.num_accumulated()) == 2
        assert run(sess, b.take_grad(2)) == 3.0
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="has dtype float32 but dtype float64 was requested"):
            run(sess, other.num_accumulated())


def test_accumulator_ops_follow_the_accumulator_to_its_device() -> None:
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.device("/cpu:1"):
        acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    with tf.device("/cpu:0"):
        apply_op = acc.apply_grad(tf.constant(1.0) * 3.0)
        take = acc.take_grad(1)
    meta = tf.RunMetadata()
    with tf.Session(config=config) as sess:
        run(sess, apply_op)
        value = sess.run(take, options=tf.RunOptions(timeout_in_ms=WAIT_MS,
                                                      output_partition_graphs=True),
                         run_metadata=meta)
    assert value == 3.0
    devices = {n.op: n.device for g in meta.partition_graphs for n in g.node}
    assert devices["AccumulatorTakeGradient"].endswith("CPU:1")
    assert devices["ConditionalAccumulator"].endswith("CPU:1")


def test_names_and_raw_ops() -> None:
    acc = tf.ConditionalAccumulator(tf.float32, shape=[], name="acc")
    assert acc.name == "acc" and acc.dtype == tf.float32
    assert acc.accumulator_ref.dtype == tf.string
    assert acc.num_accumulated().op.name == "acc_NumAccumulated"
    assert isinstance(acc, tf.ConditionalAccumulatorBase)
    handle = tf.raw_ops.ConditionalAccumulator(dtype=tf.float32, shape=tf.TensorShape([]),
                                               shared_name="raw")
    count = tf.raw_ops.AccumulatorNumAccumulated(handle=handle)
    with tf.Session() as sess:
        run(sess, tf.raw_ops.AccumulatorApplyGradient(
            handle=handle, local_step=tf.constant(0, tf.int64), gradient=tf.constant(1.0)))
        assert run(sess, count) == 1


# -- sparse accumulators ------------------------------------------------------------------------

class SparseFeeds:
    """A sparse accumulator's apply op fed with indices, values and a local step."""

    def __init__(self, acc: tf.SparseConditionalAccumulator, row_shape: list[int],
                 dtype: tf.DType = tf.float32, grad_shape: Any = None) -> None:
        self.indices = tf.placeholder(tf.int64, [None])
        self.values = tf.placeholder(dtype, [None, *row_shape])
        self.step = tf.placeholder(tf.int64, [])
        self.apply = acc.apply_grad(self.indices, self.values, grad_shape=grad_shape,
                                    local_step=self.step)

    def __call__(self, sess: tf.Session, indices: Any, values: Any, step: int = 0) -> None:
        run(sess, self.apply, feed_dict={self.indices: indices, self.values: values,
                                         self.step: step})


def sparse_mean(grads: list[tuple[list[int], np.ndarray]], rows: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """TF's sparse mean in numpy: the touched rows, ascending, each summed and divided by the
    number of gradients that touched it."""
    total = np.zeros((rows, *grads[0][1].shape[1:]))
    touched = np.zeros(rows)
    for indices, values in grads:
        np.add.at(total, indices, values)
        touched[sorted(set(indices))] += 1
    index = np.flatnonzero(touched)
    return index, total[index] / touched[index].reshape(-1, *[1] * (total.ndim - 1))


def test_sparse_take_gives_each_rows_mean_over_the_gradients_that_touched_it() -> None:
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[6, 2])
    feed = SparseFeeds(acc, [2])
    indices, values, shape = acc.take_grad(2)
    assert [indices.dtype, values.dtype, shape.dtype] == [tf.int64, tf.float32, tf.int64]
    assert values.shape.as_list() == [None, 2] and shape.shape.as_list() == [2]
    grads = [([4, 0, 4], np.array([[1, 2], [3, 4], [5, 6]], np.float32)),
             ([1, 4], np.array([[10, 20], [30, 40]], np.float32))]
    with tf.Session() as sess:
        for i, v in grads:
            feed(sess, i, v)
        assert run(sess, acc.num_accumulated()) == 2
        got_indices, got_values, got_shape = run(sess, [indices, values, shape])
        ref_indices, ref_values = sparse_mean(grads, 6)
        np.testing.assert_array_equal(got_indices, ref_indices)  # [0, 1, 4]
        np.testing.assert_allclose(got_values, ref_values)
        np.testing.assert_array_equal(got_shape, [6, 2])
        assert got_indices.dtype == np.int64 and got_values.dtype == np.float32
        assert run(sess, acc.num_accumulated()) == 0


def test_sparse_sum_and_integer_means_truncate_toward_zero() -> None:
    summed = tf.SparseConditionalAccumulator(tf.float64, shape=[3], reduction_type="SUM")
    ints = tf.SparseConditionalAccumulator(tf.int32, shape=[4, 1])
    sum_feed, int_feed = SparseFeeds(summed, [], tf.float64), SparseFeeds(ints, [1], tf.int32)
    with tf.Session() as sess:
        sum_feed(sess, [2, 0], [1.5, 2.0])
        sum_feed(sess, [2], [4.0])
        got = run(sess, summed.take_grad(2))
        np.testing.assert_array_equal(got[0], [0, 2])
        np.testing.assert_array_equal(got[1], [2.0, 5.5])
        assert got[1].dtype == np.float64
        int_feed(sess, [1, 3], [[-7], [5]])
        int_feed(sess, [3], [[2]])
        got = run(sess, ints.take_grad(2))
        np.testing.assert_array_equal(got[0], [1, 3])
        np.testing.assert_array_equal(got[1], [[-7], [3]])  # 7 / 2 truncates to 3
        assert got[1].dtype == np.int32


def test_indexed_slices_in_and_out() -> None:
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[5, 3], name="emb_acc")
    grad = tf.IndexedSlices(tf.constant([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]),
                            tf.constant([3, 1]), tf.constant([5, 3]))
    apply_op = acc.apply_indexed_slices_grad(grad)
    assert apply_op.type == "SparseAccumulatorApplyGradient"
    assert apply_op.get_attr("has_known_shape") is True
    taken = acc.take_indexed_slices_grad(1)
    assert isinstance(taken, tf.IndexedSlices) and taken.dtype == tf.float32
    assert acc.name == "emb_acc"
    assert acc.accumulator_ref.op.type == "SparseConditionalAccumulator"
    assert isinstance(acc, tf.ConditionalAccumulatorBase)
    with tf.Session() as sess:
        run(sess, apply_op)
        value = run(sess, taken)
        np.testing.assert_array_equal(value.indices, [1, 3])
        np.testing.assert_array_equal(value.values, [[2.0, 2.0, 2.0], [1.0, 1.0, 1.0]])
        np.testing.assert_array_equal(value.dense_shape, [5, 3])
        # a gradient without a dense shape is not checked against one (the take made the
        # global step 1)
        run(sess, acc.apply_indexed_slices_grad(tf.IndexedSlices(grad.values, grad.indices),
                                                local_step=1))
        assert run(sess, acc.num_accumulated()) == 1


def test_an_unknown_first_dim_gives_minus_one_in_the_dense_shape() -> None:
    acc = tf.SparseConditionalAccumulator(tf.float32)
    with tf.Session() as sess:
        run(sess, acc.apply_grad([7], [[1.0, 2.0]]))
        _, values, shape = run(sess, acc.take_grad(1))
        np.testing.assert_array_equal(shape, [-1, 2])
        np.testing.assert_array_equal(values, [[1.0, 2.0]])


def test_sparse_stale_gradients_are_dropped_and_takes_wait() -> None:
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[4])
    feed = SparseFeeds(acc, [])
    take = acc.take_grad(1)
    with tf.Session() as sess:
        waiting = Background(lambda: run(sess, take))
        assert waiting.still_waiting()
        feed(sess, [2], [3.0])
        np.testing.assert_array_equal(waiting.join()[1], [3.0])  # the global step is now 1
        feed(sess, [9], [1.0], step=0)  # stale: dropped before the index is checked
        assert run(sess, acc.num_accumulated()) == 0
        with pytest.raises(tf.errors.DeadlineExceededError):
            run(sess, take, timeout_ms=SHORT_MS)
        run(sess, acc.set_global_step(5))
        feed(sess, [1], [2.0], step=4)
        assert run(sess, acc.num_accumulated()) == 0
        feed(sess, [1], [2.0], step=5)
        np.testing.assert_array_equal(run(sess, take)[0], [1])


def test_bad_sparse_gradients_fail_at_run_time() -> None:
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[4, None])
    indices = tf.placeholder(tf.int64, None)
    values = tf.placeholder(tf.float32, None)
    dense_shape = tf.placeholder(tf.int64, [None])
    loose = acc.apply_grad(indices, values)
    shaped = acc.apply_grad(indices, values, grad_shape=dense_shape)
    required = tf.placeholder(tf.int32, [])
    cases = [
        (loose, {indices: [4], values: [[1.0]]},
         "index of slice 0 exceeded limits of shape; index is 4 exceeded 4"),
        (loose, {indices: [-1], values: [[1.0]]}, "Index of slice 0 is negative: -1"),
        (loose, {indices: [[0]], values: [[1.0]]}, "Input indices should be vector"),
        (loose, {indices: [0, 1], values: [[1.0]]}, "Expected 2 non-empty input values, got 1"),
        (loose, {indices: [0], values: [1.0]}, "expected values rank at least 2, got 1"),
        (shaped, {indices: [0], values: [[1.0]], dense_shape: [3, 1]},
         "expected shape dim 0 to be 4, got 3"),
    ]
    with tf.Session() as sess:
        for op, feeds, message in cases:
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                run(sess, op, feed_dict=feeds)
        run(sess, loose, feed_dict={indices: [0], values: [[1.0, 2.0]]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="expected values dim 1 to be 2, got 3"):
            run(sess, loose, feed_dict={indices: [1], values: [[1.0, 2.0, 3.0]]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="expected values rank 2, got 3"):
            run(sess, loose, feed_dict={indices: [1], values: [[[1.0, 2.0]]]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="num_required must be positive, but was 0"):
            run(sess, acc.take_grad(required), feed_dict={required: 0})
        assert run(sess, acc.num_accumulated()) == 1


def test_bad_sparse_arguments_fail_at_construction() -> None:
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[4, 2])
    with pytest.raises(ValueError):
        acc.apply_grad([0], [[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="rank 1"):
        acc.apply_grad([[0]], [[1.0, 2.0]])
    with pytest.raises((TypeError, ValueError)):
        acc.apply_grad([0], [["a", "b"]])
    with pytest.raises(ValueError, match="rank 0"):
        acc.apply_grad([0], [[1.0, 2.0]], local_step=[1])
    with pytest.raises(ValueError, match="reduction_type must be one of"):
        tf.SparseConditionalAccumulator(tf.float32, reduction_type="MAX")
    with pytest.raises(TypeError):
        tf.SparseConditionalAccumulator(tf.string)


def test_sparse_and_dense_accumulators_of_one_name_are_apart() -> None:
    sparse = tf.SparseConditionalAccumulator(tf.float32, shape=[3], shared_name="g")
    again = tf.SparseConditionalAccumulator(tf.float32, shape=[3], shared_name="g")
    dense = tf.ConditionalAccumulator(tf.float32, shape=[3], shared_name="g")
    wrong = tf.raw_ops.AccumulatorTakeGradient(handle=sparse.accumulator_ref,
                                               num_required=tf.constant(1), dtype=tf.float32)
    with tf.Session() as sess:
        run(sess, sparse.apply_grad([0], [1.0]))
        run(sess, again.apply_grad([0], [3.0]))
        run(sess, dense.apply_grad([5.0, 5.0, 5.0]))
        assert run(sess, sparse.num_accumulated()) == 2
        assert run(sess, dense.num_accumulated()) == 1
        np.testing.assert_array_equal(run(sess, again.take_grad(2))[1], [2.0])
        with pytest.raises(tf.errors.NotFoundError):
            run(sess, wrong)
