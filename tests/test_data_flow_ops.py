"""TF1 queues: FIFO, padding, random shuffle and priority queues through the public API --
order, dtypes, static shapes, blocking with concurrent runs, close semantics, deadlines and
aborts that release waiting steps, validation, sharing by name, placement, and a queue on a ps
task of a real cluster. Every run that could wait has a deadline, every thread a join timeout."""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.train.local_cluster import LocalCluster
from tests.blocking import SHORT_MS, WAIT_MS, Background, run

# -- FIFO basics --------------------------------------------------------------------------------

def test_fifo_order_dtypes_and_static_shapes() -> None:
    q = tf.FIFOQueue(10, [tf.float32, tf.int64], shapes=[[2], []])
    enqueue = q.enqueue_many([np.arange(8, dtype=np.float32).reshape(4, 2),
                              np.array([10, 11, 12, 13])])
    one = q.dequeue()
    many = q.dequeue_many(2)
    up_to = q.dequeue_up_to(3)
    assert [t.shape.as_list() for t in one] == [[2], []]
    assert [t.shape.as_list() for t in many] == [[2, 2], [2]]
    assert [t.shape.as_list() for t in up_to] == [[None, 2], [None]]
    assert [t.dtype for t in one] == [tf.float32, tf.int64]
    with tf.Session() as sess:
        run(sess, enqueue)
        assert run(sess, q.size()) == 4
        first = run(sess, one)
        np.testing.assert_array_equal(first[0], [0.0, 1.0])
        assert first[1] == 10 and first[0].dtype == np.float32 and first[1].dtype == np.int64
        batch = run(sess, many)
        np.testing.assert_array_equal(batch[0], [[2, 3], [4, 5]])
        np.testing.assert_array_equal(batch[1], [11, 12])
        assert run(sess, q.size()).dtype == np.int32


def test_single_component_gives_a_tensor_and_names_give_a_dict() -> None:
    single = tf.FIFOQueue(3, tf.int32, shapes=[[]])
    assert isinstance(single.dequeue(), tf.Tensor)
    named = tf.FIFOQueue(3, [tf.int32, tf.string], shapes=[[], []], names=["n", "s"])
    enqueue = named.enqueue({"n": 4, "s": "four"})
    out = named.dequeue()
    assert set(out) == {"n", "s"}
    with tf.Session() as sess:
        run(sess, [single.enqueue(7), enqueue])
        assert run(sess, single.dequeue()) == 7
        assert run(sess, out) == {"n": 4, "s": b"four"}
    with pytest.raises(ValueError, match="must enqueue a dictionary"):
        named.enqueue([1, "x"])
    with pytest.raises(ValueError, match="do not match names"):
        named.enqueue({"n": 1, "t": "x"})
    with pytest.raises(ValueError, match="must have names"):
        single.enqueue({"n": 1})


def test_queue_object_properties_and_namespaces() -> None:
    q = tf.FIFOQueue(2, [tf.float32], shapes=[[3]], name="my_queue")
    assert q.name == "my_queue" and q.queue_ref.op.type == "FIFOQueueV2"
    assert q.queue_ref.dtype == tf.string
    assert q.dtypes == [tf.float32] and q.shapes == [tf.TensorShape([3])]
    assert q.enqueue([[1.0, 2.0, 3.0]]).type == "QueueEnqueueV2"
    assert q.close().type == "QueueCloseV2"
    assert q.is_closed().dtype == tf.bool
    assert tf.queue.FIFOQueue is tf.FIFOQueue
    assert tf.queue.RandomShuffleQueue is tf.RandomShuffleQueue
    assert tf.queue.PaddingFIFOQueue is tf.PaddingFIFOQueue
    assert issubclass(tf.FIFOQueue, tf.queue.QueueBase)
    with tf.Session() as sess:
        handle = tf.raw_ops.FIFOQueueV2(component_types=[tf.int32], capacity=1,
                                        shared_name="raw")
        tf.raw_ops.QueueEnqueueV2(handle=handle, components=[tf.constant(5)],
                                  Tcomponents=[tf.int32])
        assert run(sess, tf.raw_ops.QueueSizeV2(handle=handle)) == 0


def test_strings_and_unshaped_components() -> None:
    q = tf.FIFOQueue(5, [tf.string])
    value = tf.placeholder(tf.string, [None])
    enqueue = q.enqueue([value])
    out = q.dequeue()
    assert out.shape.ndims is None
    with tf.Session() as sess:
        run(sess, enqueue, feed_dict={value: ["a", "bc"]})
        run(sess, enqueue, feed_dict={value: ["d"]})
        assert list(run(sess, out)) == [b"a", b"bc"]
        assert list(run(sess, out)) == [b"d"]
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="DequeueMany and DequeueUpTo require the components"):
            run(sess, q.dequeue_many(1))


def test_enqueued_values_are_copied() -> None:
    q = tf.FIFOQueue(2, tf.float32, shapes=[[2]])
    x = tf.placeholder(tf.float32, [2])
    with tf.Session() as sess:
        fed = np.array([1.0, 2.0], np.float32)
        run(sess, q.enqueue(x), feed_dict={x: fed})
        fed[0] = 99.0
        np.testing.assert_array_equal(run(sess, q.dequeue()), [1.0, 2.0])


# -- close ----------------------------------------------------------------------------------------

def test_closed_queue_refuses_enqueues_and_drains() -> None:
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    with tf.Session() as sess:
        run(sess, q.enqueue_many([[1, 2, 3]]))
        assert not run(sess, q.is_closed())
        run(sess, q.close())
        assert run(sess, q.is_closed())
        with pytest.raises(tf.errors.CancelledError, match="FIFOQueue 'fifo_queue' is closed"):
            run(sess, q.enqueue(4))
        with pytest.raises(tf.errors.OutOfRangeError,
                           match=r"is closed and has insufficient elements \(requested 5, "
                                 r"current size 3\)"):
            run(sess, q.dequeue_many(5))
        assert run(sess, q.size()) == 3  # a failed dequeue_many takes nothing
        np.testing.assert_array_equal(run(sess, q.dequeue_up_to(2)), [1, 2])
        np.testing.assert_array_equal(run(sess, q.dequeue_up_to(2)), [3])
        with pytest.raises(tf.errors.OutOfRangeError, match="requested 1, current size 0"):
            run(sess, q.dequeue())
        with pytest.raises(tf.errors.OutOfRangeError):
            run(sess, q.dequeue_up_to(2))
        with pytest.raises(tf.errors.CancelledError, match="already closed"):
            run(sess, q.close())


def test_close_releases_waiting_dequeues_with_out_of_range() -> None:
    q = tf.FIFOQueue(10, tf.float32, shapes=[[]])
    with tf.Session() as sess:
        waiting = Background(lambda: run(sess, q.dequeue()))
        assert waiting.still_waiting()
        run(sess, q.close())
        with pytest.raises(tf.errors.OutOfRangeError, match="is closed"):
            waiting.join()


def test_close_puts_a_partial_dequeue_many_back() -> None:
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    with tf.Session() as sess:
        run(sess, q.enqueue_many([[5, 6]]))
        waiting = Background(lambda: run(sess, q.dequeue_many(3)))
        assert waiting.still_waiting()
        assert run(sess, q.size()) == 0  # the waiting dequeue holds both elements
        run(sess, q.close())
        with pytest.raises(tf.errors.OutOfRangeError, match="requested 3, current size 2"):
            waiting.join()
        np.testing.assert_array_equal(run(sess, q.dequeue_up_to(3)), [5, 6])


def test_close_with_cancel_fails_blocked_enqueues() -> None:
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    with tf.Session() as sess:
        run(sess, q.enqueue(1))
        blocked = Background(lambda: run(sess, q.enqueue(2)))
        assert blocked.still_waiting()
        run(sess, q.close(cancel_pending_enqueues=True))
        with pytest.raises(tf.errors.CancelledError, match="Enqueue operation was cancelled"):
            blocked.join()
        assert run(sess, q.dequeue()) == 1
        with pytest.raises(tf.errors.OutOfRangeError):
            run(sess, q.dequeue())


def test_close_waits_behind_pending_enqueues() -> None:
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    with tf.Session() as sess:
        run(sess, q.enqueue(1))
        blocked = Background(lambda: run(sess, q.enqueue(2)))
        assert blocked.still_waiting()
        closing = Background(lambda: run(sess, q.close()))
        assert closing.still_waiting()  # TF: close queues behind the pending enqueue
        assert run(sess, q.dequeue()) == 1
        blocked.join()
        closing.join()
        assert run(sess, q.dequeue()) == 2
        assert run(sess, q.is_closed())


# -- blocking, deadlines and aborts ---------------------------------------------------------------

def test_dequeue_waits_for_an_enqueue_from_another_run() -> None:
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]])
    x = tf.placeholder(tf.float32, [])
    with tf.Session() as sess:
        waiting = Background(lambda: run(sess, q.dequeue() * 2.0))
        assert waiting.still_waiting()
        run(sess, q.enqueue(x), feed_dict={x: 21.0})
        assert waiting.join() == 42.0


def test_a_dequeue_inside_cond_and_while_waits_too() -> None:
    q = tf.FIFOQueue(4, tf.float32, shapes=[[]])
    take = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float32, [])
    picked = tf.cond(take, lambda: q.dequeue(), lambda: tf.constant(-1.0))
    _, total = tf.while_loop(lambda i, t: i < 2, lambda i, t: (i + 1, t + q.dequeue()),
                             [0, tf.constant(0.0)])
    with tf.Session() as sess:
        waiting = Background(lambda: run(sess, picked, feed_dict={take: True}))
        assert waiting.still_waiting()
        run(sess, q.enqueue(x), feed_dict={x: 1.5})
        assert waiting.join() == 1.5
        looping = Background(lambda: run(sess, total))
        for value in (2.0, 3.0):
            assert looping.still_waiting()
            run(sess, q.enqueue(x), feed_dict={x: value})
        assert looping.join() == 5.0
        with pytest.raises(tf.errors.DeadlineExceededError):
            run(sess, picked, timeout_ms=SHORT_MS, feed_dict={take: True})
        assert run(sess, picked, feed_dict={take: False}) == -1.0


def test_enqueue_waits_for_room() -> None:
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    with tf.Session() as sess:
        blocked = Background(lambda: run(sess, q.enqueue_many([[1, 2, 3, 4]])))
        assert blocked.still_waiting()
        assert run(sess, q.size()) == 2  # enqueue_many makes partial progress
        np.testing.assert_array_equal(run(sess, q.dequeue_many(2)), [1, 2])
        blocked.join()
        np.testing.assert_array_equal(run(sess, q.dequeue_many(2)), [3, 4])


def test_dequeue_many_larger_than_capacity_completes() -> None:
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    with tf.Session() as sess:
        producer = Background(lambda: run(sess, q.enqueue_many([np.arange(5, dtype=np.int32)])))
        np.testing.assert_array_equal(run(sess, q.dequeue_many(5)), np.arange(5))
        producer.join()


def test_deadline_withdraws_a_waiting_dequeue() -> None:
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    with tf.Session() as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError) as info:
            run(sess, q.dequeue(), timeout_ms=SHORT_MS)
        assert time.monotonic() - start < 3.0
        assert "QueueDequeueV2" in str(info.value)
        run(sess, q.enqueue(5))
        assert run(sess, q.dequeue()) == 5  # the timed-out dequeue took nothing


def test_deadline_puts_a_partial_dequeue_many_back() -> None:
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    with tf.Session() as sess:
        run(sess, q.enqueue_many([[7, 8]]))
        with pytest.raises(tf.errors.DeadlineExceededError):
            run(sess, q.dequeue_many(3), timeout_ms=SHORT_MS)
        assert run(sess, q.size()) == 2
        np.testing.assert_array_equal(run(sess, q.dequeue_many(2)), [7, 8])


def test_deadline_withdraws_a_blocked_enqueue() -> None:
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    with tf.Session() as sess:
        run(sess, q.enqueue(1))
        with pytest.raises(tf.errors.DeadlineExceededError):
            run(sess, q.enqueue(2), timeout_ms=SHORT_MS)
        assert run(sess, q.dequeue()) == 1
        with pytest.raises(tf.errors.DeadlineExceededError):
            run(sess, q.dequeue(), timeout_ms=SHORT_MS)


def test_an_error_elsewhere_in_the_step_releases_the_wait() -> None:
    q = tf.FIFOQueue(1, tf.float32, shapes=[[]])
    x = tf.placeholder(tf.float32, [])
    check = tf.Assert(tf.greater(x, 0.0), [x])
    with tf.Session() as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.InvalidArgumentError):
            run(sess, [q.dequeue(), check], feed_dict={x: -1.0})
        assert time.monotonic() - start < 3.0
        run(sess, q.enqueue(3.0))
        assert run(sess, q.dequeue()) == 3.0


def test_closing_the_session_cancels_waiting_runs() -> None:
    q = tf.FIFOQueue(1, tf.float32, shapes=[[]])
    sess = tf.Session()
    waiting = Background(lambda: run(sess, q.dequeue()))
    assert waiting.still_waiting()
    sess.close()
    with pytest.raises(tf.errors.CancelledError, match="Session has been closed"):
        waiting.join()


def test_concurrent_runs_on_one_session() -> None:
    q = tf.FIFOQueue(4, tf.int64, shapes=[[]])
    x = tf.placeholder(tf.int64, [])
    enqueue, dequeue = q.enqueue(x), q.dequeue()
    with tf.Session() as sess:
        consumers = [Background(lambda: [run(sess, dequeue) for _ in range(25)])
                     for _ in range(4)]
        producers = [Background(lambda k=k: [run(sess, enqueue, feed_dict={x: 25 * k + i})
                                             for i in range(25)]) for k in range(4)]
        for p in producers:
            p.join(20)
        got = sorted(int(v) for c in consumers for v in c.join(20))
        assert got == list(range(100))
        assert run(sess, q.size()) == 0


# -- validation ------------------------------------------------------------------------------------

def test_bad_construction_arguments() -> None:
    with pytest.raises(ValueError, match="fully defined"):
        tf.FIFOQueue(2, tf.float32, shapes=[[None]])
    with pytest.raises(ValueError, match="same length as dtypes"):
        tf.FIFOQueue(2, [tf.float32, tf.int32], shapes=[[1]])
    with pytest.raises(ValueError, match="same length as the list of dtypes"):
        tf.FIFOQueue(2, [tf.float32], names=["a", "b"])
    with pytest.raises(ValueError, match="partial shapes"):
        tf.PaddingFIFOQueue(2, tf.float32, shapes=None)
    with pytest.raises(ValueError, match="Shapes must be provided for all components"):
        tf.PaddingFIFOQueue(2, [tf.float32, tf.int32], shapes=[[None]])
    with pytest.raises(TypeError):
        tf.FIFOQueue(2, "not a dtype")


def test_bad_elements_fail_at_construction() -> None:
    q = tf.FIFOQueue(2, [tf.float32, tf.int32], shapes=[[2], []])
    with pytest.raises(ValueError, match="incompatible"):
        q.enqueue([[1.0, 2.0, 3.0], 1])
    with pytest.raises(ValueError, match="Expected 2 components"):
        q.enqueue([[1.0, 2.0]])
    with pytest.raises((TypeError, ValueError)):
        q.enqueue([tf.constant([1, 2]), 1])  # an int32 tensor for a float32 component
    with pytest.raises(ValueError, match="rank at least 1"):
        q.enqueue_many([tf.constant(1.0), 1])
    with pytest.raises(ValueError, match="not compatible"):
        q.enqueue_many([np.zeros((3, 2), np.float32), np.zeros(2, np.int32)])


def test_bad_elements_fail_at_run_time() -> None:
    q = tf.FIFOQueue(2, tf.float32, shapes=[[2]])
    x = tf.placeholder(tf.float32, None)
    batch = tf.placeholder(tf.float32, None)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Shape mismatch in tuple component 0. Expected \[2\], got \[3\]"):
            run(sess, q.enqueue(x), feed_dict={x: [1.0, 2.0, 3.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Expected \[4,2\], got \[4,3\]"):
            run(sess, q.enqueue_many(batch), feed_dict={batch: np.zeros((4, 3))})
        with pytest.raises(tf.errors.InvalidArgumentError, match="requested -1 < 0 elements"):
            run(sess, q.dequeue_many(tf.constant(-1)))
        assert run(sess, q.size()) == 0


def test_empty_enqueue_many_and_dequeue_many_of_zero() -> None:
    q = tf.FIFOQueue(2, tf.float32, shapes=[[3]])
    with tf.Session() as sess:
        run(sess, q.enqueue_many([np.zeros((0, 3), np.float32)]))
        empty = run(sess, q.dequeue_many(0))
        assert empty.shape == (0, 3) and empty.dtype == np.float32
        assert run(sess, q.size()) == 0


# -- padding and random shuffle queues -------------------------------------------------------------

def test_padding_queue_pads_each_batch_to_its_longest_element() -> None:
    q = tf.PaddingFIFOQueue(5, [tf.int32, tf.string], shapes=[[None], [None, 2]])
    ints = tf.placeholder(tf.int32, [None])
    strs = tf.placeholder(tf.string, [None, 2])
    enqueue = q.enqueue([ints, strs])
    batch = q.dequeue_many(2)
    assert [t.shape.as_list() for t in batch] == [[2, None], [2, None, 2]]
    with tf.Session() as sess:
        run(sess, enqueue, feed_dict={ints: [1, 2, 3], strs: [["a", "b"]]})
        run(sess, enqueue, feed_dict={ints: [4], strs: [["c", "d"], ["e", "f"]]})
        padded_ints, padded_strs = run(sess, batch)
        np.testing.assert_array_equal(padded_ints, [[1, 2, 3], [4, 0, 0]])
        assert padded_ints.dtype == np.int32
        assert padded_strs.tolist() == [[[b"a", b"b"], [b"", b""]], [[b"c", b"d"], [b"e", b"f"]]]
        loose = tf.placeholder(tf.string, None)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Shape mismatch in tuple component 1. Expected \[\?,2\]"):
            run(sess, q.enqueue([ints, loose]), feed_dict={ints: [1], loose: [["a", "b", "c"]]})


def test_random_shuffle_queue_is_a_seeded_permutation() -> None:
    def order() -> list[int]:
        tf.reset_default_graph()
        q = tf.RandomShuffleQueue(20, 0, tf.int32, shapes=[[]], seed=7)
        with tf.Session() as sess:
            run(sess, q.enqueue_many([np.arange(20, dtype=np.int32)]))
            return [int(v) for v in run(sess, q.dequeue_many(20))]

    first, second = order(), order()
    assert sorted(first) == list(range(20))
    assert first == second
    assert first != list(range(20))


def test_random_shuffle_queue_keeps_min_after_dequeue_until_closed() -> None:
    q = tf.RandomShuffleQueue(10, 3, tf.int32, shapes=[[]], seed=1)
    with tf.Session() as sess:
        run(sess, q.enqueue_many([[1, 2, 3, 4]]))
        run(sess, q.dequeue())
        with pytest.raises(tf.errors.DeadlineExceededError):
            run(sess, q.dequeue(), timeout_ms=SHORT_MS)
        run(sess, q.close())
        rest = run(sess, q.dequeue_up_to(10))
        assert len(rest) == 3
        with pytest.raises(tf.errors.OutOfRangeError, match="RandomShuffleQueue"):
            run(sess, q.dequeue())


def test_random_shuffle_queue_checks_min_after_dequeue() -> None:
    q = tf.RandomShuffleQueue(2, 2, tf.int32, shapes=[[]])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="must be < capacity"):
            run(sess, q.size())


# -- priority queue -------------------------------------------------------------------------------

def test_priority_queue_gives_least_priority_first_with_the_priority_leading() -> None:
    q = tf.PriorityQueue(10, [tf.string, tf.float32], shapes=[[], [2]])
    assert q.dtypes == [tf.int64, tf.string, tf.float32]
    assert q.shapes == [tf.TensorShape([]), tf.TensorShape([]), tf.TensorShape([2])]
    assert q.queue_ref.op.type == "PriorityQueueV2"
    assert q.queue_ref.op.get_attr("component_types") == [tf.string, tf.float32]
    enqueue = q.enqueue_many([[5, 1, 3, 1], [b"e", b"a", b"c", b"b"],
                              np.arange(8, dtype=np.float32).reshape(4, 2)])
    one, many = q.dequeue(), q.dequeue_many(2)
    assert [t.dtype for t in one] == [tf.int64, tf.string, tf.float32]
    assert [t.shape.as_list() for t in many] == [[2], [2], [2, 2]]
    with tf.Session() as sess:
        run(sess, enqueue)
        priority, text, row = run(sess, one)
        assert (priority, text) == (1, b"a") and priority.dtype == np.int64
        np.testing.assert_array_equal(row, [2.0, 3.0])
        assert run(sess, one)[1] == b"b"  # equal priorities leave in arrival order
        priorities, texts, rows = run(sess, many)
        np.testing.assert_array_equal(priorities, [3, 5])
        assert list(texts) == [b"c", b"e"] and rows.dtype == np.float32
        np.testing.assert_array_equal(rows, [[4.0, 5.0], [0.0, 1.0]])


def test_priority_queue_names_namespaces_and_priority_only_elements() -> None:
    named = tf.PriorityQueue(3, [tf.int32], shapes=[[]], names=["p", "x"])
    assert tf.queue.PriorityQueue is tf.PriorityQueue
    assert issubclass(tf.PriorityQueue, tf.queue.QueueBase)
    bare = tf.PriorityQueue(3, [])
    assert isinstance(bare.dequeue(), tf.Tensor) and bare.dequeue().dtype == tf.int64
    with tf.Session() as sess:
        run(sess, named.enqueue({"p": 7, "x": 70}))
        run(sess, named.enqueue({"p": -2, "x": 20}))
        assert run(sess, named.dequeue()) == {"p": -2, "x": 20}
        run(sess, bare.enqueue_many([[4, 2, 9]]))
        assert [run(sess, bare.dequeue()) for _ in range(3)] == [2, 4, 9]
    with pytest.raises(ValueError, match="Queue names must have the same length"):
        tf.PriorityQueue(3, [tf.int32], names=["x"])


def test_priority_dequeue_many_waits_for_the_whole_sorted_batch() -> None:
    q = tf.PriorityQueue(5, [tf.int32], shapes=[[]])
    priority = tf.placeholder(tf.int64, [])
    enqueue = q.enqueue([priority, 0])
    with tf.Session() as sess:
        run(sess, enqueue, feed_dict={priority: 8})
        waiting = Background(lambda: run(sess, q.dequeue_many(2)[0]))
        assert waiting.still_waiting()
        assert run(sess, q.size()) == 1  # a waiting batch takes nothing piecemeal
        run(sess, enqueue, feed_dict={priority: 3})
        np.testing.assert_array_equal(waiting.join(), [3, 8])
        run(sess, enqueue, feed_dict={priority: 1})
        with pytest.raises(tf.errors.DeadlineExceededError):
            run(sess, q.dequeue_many(2), timeout_ms=SHORT_MS)
        assert run(sess, q.size()) == 1


def test_closed_priority_queue_drains_in_order() -> None:
    q = tf.PriorityQueue(5, [tf.int32], shapes=[[]])
    with tf.Session() as sess:
        run(sess, q.enqueue_many([[4, 1, 6], [40, 10, 60]]))
        run(sess, q.close())
        with pytest.raises(tf.errors.CancelledError,
                           match="PriorityQueue 'priority_queue' is closed"):
            run(sess, q.enqueue([0, 0]))
        with pytest.raises(tf.errors.OutOfRangeError,
                           match=r"PriorityQueue 'priority_queue' is closed and has "
                                 r"insufficient elements \(requested 4, current size 3\)"):
            run(sess, q.dequeue_many(4))
        priorities, values = run(sess, q.dequeue_up_to(4))
        np.testing.assert_array_equal(priorities, [1, 4, 6])
        np.testing.assert_array_equal(values, [10, 40, 60])


def test_priority_queue_checks_its_priorities() -> None:
    q = tf.PriorityQueue(5, [tf.float32])
    priority = tf.placeholder(tf.int64, None)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"priority element to be a scalar, but received shape: \[2\]"):
            run(sess, q.enqueue([priority, 1.0]), feed_dict={priority: [1, 2]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"priority element to be a scalar, but received shape: \[1\]"):
            run(sess, q.enqueue_many([priority, [1.0, 2.0]]), feed_dict={priority: [[1], [2]]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="DequeueMany and DequeueUpTo require the components"):
            run(sess, q.dequeue_many(1))
        assert run(sess, q.size()) == 0
    with pytest.raises((TypeError, ValueError)):
        q.enqueue(["high", 1.0])
    with pytest.raises(ValueError):
        tf.PriorityQueue(5, [tf.float32], shapes=[[2]]).enqueue([1, [1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="Expected 2 components"):
        q.enqueue([1.0])


def test_priority_queues_share_by_name_and_kind() -> None:
    a = tf.PriorityQueue(3, [tf.int32], shapes=[[]], shared_name="pq")
    b = tf.PriorityQueue(3, [tf.int32], shapes=[[]], shared_name="pq")
    fifo = tf.FIFOQueue(3, [tf.int64, tf.int32], shapes=[[], []], shared_name="pq")
    with tf.Session() as sess:
        run(sess, a.enqueue([2, 20]))
        assert run(sess, b.dequeue()) == [2, 20]
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="has type 'PriorityQueue' but a FIFOQueue was requested"):
            run(sess, fifo.size())


# -- sharing and placement -------------------------------------------------------------------------

def test_queues_with_one_shared_name_are_one_queue() -> None:
    a = tf.FIFOQueue(3, tf.int32, shapes=[[]], shared_name="shared")
    b = tf.FIFOQueue(3, tf.int32, shapes=[[]], shared_name="shared")
    other = tf.FIFOQueue(4, tf.int32, shapes=[[]], shared_name="shared")
    with tf.Session() as sess:
        run(sess, a.enqueue(9))
        assert run(sess, b.dequeue()) == 9
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="has capacity 3 but requested capacity was 4"):
            run(sess, other.size())


def test_queue_ops_follow_the_queue_to_its_device() -> None:
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.device("/cpu:1"):
        q = tf.FIFOQueue(3, tf.int32, shapes=[[]])
    with tf.device("/cpu:0"):
        enqueue = q.enqueue(5)
        value = q.dequeue()
    meta = tf.RunMetadata()
    with tf.Session(config=config) as sess:
        run(sess, enqueue)
        sess.run(value, options=tf.RunOptions(output_partition_graphs=True), run_metadata=meta)
    devices = {n.op: n.device for g in meta.partition_graphs for n in g.node}
    assert devices["QueueDequeueV2"].endswith("CPU:1")
    assert devices["FIFOQueueV2"].endswith("CPU:1")


def test_count_up_to_counts_to_its_limit() -> None:
    v = tf.Variable(np.int64(0), trainable=False)
    counter = tf.raw_ops.CountUpTo(ref=v.op.outputs[0], limit=2)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(counter)
        sess.run(v.initializer)
        assert [sess.run(counter), sess.run(counter)] == [0, 1]
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
            sess.run(counter)
        assert sess.run(v) == 2


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster({"ps": 1, "worker": 1}) as local:
        yield local


def test_a_queue_on_a_ps_task_is_shared_between_sessions(cluster: LocalCluster) -> None:
    with tf.device("/job:ps/task:0"):
        q = tf.FIFOQueue(4, tf.float32, shapes=[[2]], shared_name="ps_queue")
    with tf.device("/job:worker/task:0"):
        x = tf.placeholder(tf.float32, [2])
        doubled = q.dequeue() * 2.0
        enqueue = q.enqueue(x + 1.0)
    with tf.Session(cluster.target("worker", 0)) as sess:
        run(sess, enqueue, feed_dict={x: [1.0, 2.0]})
        with pytest.raises(tf.errors.DeadlineExceededError):
            run(sess, q.dequeue_many(2), timeout_ms=300)
    meta = tf.RunMetadata()
    with tf.Session(cluster.target("worker", 0)) as sess:
        value = sess.run(doubled, options=tf.RunOptions(timeout_in_ms=WAIT_MS,
                                                        output_partition_graphs=True),
                         run_metadata=meta)
        np.testing.assert_array_equal(value, [4.0, 6.0])
        assert run(sess, q.size()) == 0
    devices = {n.op: n.device for g in meta.partition_graphs for n in g.node}
    assert devices["QueueDequeueV2"].startswith("/job:ps/replica:0/task:0")


def test_closing_a_remote_session_cancels_its_waiting_run(cluster: LocalCluster) -> None:
    with tf.device("/job:ps/task:0"):
        q = tf.FIFOQueue(2, tf.float32, shapes=[[]], shared_name="close_queue")
    sess = tf.Session(cluster.target("worker", 0))
    waiting = Background(lambda: sess.run(q.dequeue()))  # the default 60 s deadline
    assert waiting.still_waiting(0.5)
    start = time.monotonic()
    sess.close()
    with pytest.raises(tf.errors.CancelledError, match="Session has been closed"):
        waiting.join(10.0)
    assert time.monotonic() - start < 5.0
    with tf.Session(cluster.target("worker", 0)) as other:  # the queue took nothing
        run(other, q.enqueue(1.0))
        assert run(other, q.dequeue()) == 1.0
