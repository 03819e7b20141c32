"""`QueueRunner`, `add_queue_runner` and `start_queue_runners`: threads fill a queue, close it
when their input ends, report other errors to the coordinator, and end cleanly on a stop request
even while blocked on a full queue; `MonitoredSession` starts the graph's runners. Every
consumer run has a deadline and every join a timeout."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import tensorweave as tf

WAIT_MS = 5000
OPTIONS = tf.RunOptions(timeout_in_ms=WAIT_MS)


def counting_queue(capacity: int = 4) -> tuple[tf.FIFOQueue, tf.Operation, tf.Variable]:
    """A queue fed 0, 1, 2, ... by an enqueue op that counts in a variable."""
    counter = tf.Variable(0, name="counter")
    q = tf.FIFOQueue(capacity, tf.int32, shapes=[[]])
    return q, q.enqueue(tf.assign_add(counter, 1) - 1), counter


def test_threads_fill_the_queue_and_stop_on_request() -> None:
    q, enqueue, counter = counting_queue()
    runner = tf.train.QueueRunner(q, [enqueue])
    coord = tf.train.Coordinator()
    with tf.Session() as sess:
        sess.run(counter.initializer)
        threads = runner.create_threads(sess, coord=coord, start=True)
        assert len(threads) == 2  # the enqueue thread and the close-on-stop thread
        values = [int(sess.run(q.dequeue(), options=OPTIONS)) for _ in range(10)]
        assert values == list(range(10))
        assert runner.create_threads(sess, coord=coord) == []  # already running
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)  # the blocked enqueue is cancelled
        assert not any(t.is_alive() for t in threads)
        assert sess.run(q.is_closed())


def test_end_of_input_closes_the_queue_after_the_last_thread() -> None:
    source = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    fill = source.enqueue_many([np.arange(6, dtype=np.int32)])
    q = tf.FIFOQueue(3, tf.int32, shapes=[[]])
    runner = tf.train.QueueRunner(q, [q.enqueue(source.dequeue())] * 2)
    coord = tf.train.Coordinator()
    with tf.Session() as sess:
        sess.run(fill)
        sess.run(source.close())
        threads = runner.create_threads(sess, coord=coord, daemon=True, start=True)
        got = []
        with pytest.raises(tf.errors.OutOfRangeError, match="is closed"):
            while True:
                got.append(int(sess.run(q.dequeue(), options=OPTIONS)))
        assert sorted(got) == list(range(6))
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
        assert runner.exceptions_raised == []


def test_other_errors_are_reported_to_the_coordinator() -> None:
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    x = tf.placeholder(tf.float32, [])  # never fed: the enqueue fails
    runner = tf.train.QueueRunner(q, [q.enqueue(x)])
    coord = tf.train.Coordinator()
    with tf.Session() as sess:
        threads = runner.create_threads(sess, coord=coord, start=True)
        assert coord.wait_for_stop(5)
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value"):
            coord.join(threads, stop_grace_period_secs=5)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_without_a_coordinator_errors_are_kept() -> None:
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    x = tf.placeholder(tf.float32, [])
    runner = tf.train.QueueRunner(q, [q.enqueue(x)])
    with tf.Session() as sess:
        (thread,) = runner.create_threads(sess, start=True)
        thread.join(5)
        assert not thread.is_alive()
    assert len(runner.exceptions_raised) == 1
    assert isinstance(runner.exceptions_raised[0], tf.errors.InvalidArgumentError)


def test_start_queue_runners_uses_the_collection_and_default_session() -> None:
    q, enqueue, counter = counting_queue()
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [enqueue]))
    assert len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)) == 1
    coord = tf.train.Coordinator()
    with tf.Session() as sess:
        sess.run(counter.initializer)
        threads = tf.train.start_queue_runners(coord=coord)
        assert all(t.daemon for t in threads) and len(threads) == 2
        np.testing.assert_array_equal(sess.run(q.dequeue_many(3), options=OPTIONS), [0, 1, 2])
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)


def test_bad_arguments() -> None:
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    with pytest.raises(ValueError, match="Must provide queue and enqueue_ops"):
        tf.train.QueueRunner(q, [])
    with pytest.raises(TypeError, match="queue_closed_exception_types"):
        tf.train.QueueRunner(q, [q.enqueue(1.0)], queue_closed_exception_types=(ValueError,))
    with pytest.raises(ValueError, match="No default session"):
        tf.train.start_queue_runners()
    with pytest.raises(TypeError, match="must be a `tf.Session`"):
        tf.train.start_queue_runners(sess=object())


def test_queue_closed_exception_types_are_configurable() -> None:
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    x = tf.placeholder(tf.float32, [])
    runner = tf.train.QueueRunner(q, [q.enqueue(x)],
                                  queue_closed_exception_types=(tf.errors.InvalidArgumentError,))
    coord = tf.train.Coordinator()
    with tf.Session() as sess:
        threads = runner.create_threads(sess, coord=coord, start=True)
        threads[0].join(5)
        assert not threads[0].is_alive()
        assert sess.run(q.is_closed())  # the "closed" error closed the queue, no stop
        assert not coord.should_stop()
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)


def test_monitored_session_starts_and_stops_queue_runners() -> None:
    source = tf.train.range_input_producer(5, shuffle=False, num_epochs=1)
    value = source.dequeue()
    got = []
    with tf.train.MonitoredSession() as sess:
        while not sess.should_stop():
            got.append(int(sess.run(value, options=OPTIONS)))
    assert got == list(range(5))
    assert not [t for t in threading.enumerate() if t.name.startswith("QueueRunnerThread")
                and t.is_alive()]


def test_queue_runner_def_round_trips_through_a_meta_graph(tmp_path) -> None:
    from tensorweave.formats.meta_graph_proto import QueueRunnerDef

    q, enqueue, counter = counting_queue()
    runner = tf.train.QueueRunner(q, [enqueue],
                                  queue_closed_exception_types=(tf.errors.CancelledError,))
    tf.train.add_queue_runner(runner)
    tf.identity(q.dequeue(), name="next")
    hand_made = QueueRunnerDef(queue_name=q.name, enqueue_op_name=[enqueue.name],
                               close_op_name=runner.close_op.name,
                               cancel_op_name=runner.cancel_op.name,
                               queue_closed_exception_types=[1])  # error.Code CANCELLED
    assert runner.to_proto() == hand_made
    assert runner.to_proto(export_scope="elsewhere") is None
    path = str(tmp_path / "model.meta")
    tf.train.export_meta_graph(path)

    with tf.Graph().as_default():
        tf.train.import_meta_graph(path, import_scope="restored")
        (imported,) = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        assert imported.name == "restored/" + q.name
        assert [op.name for op in imported.enqueue_ops] == ["restored/" + enqueue.name]
        assert imported.queue_closed_exception_types == (tf.errors.CancelledError,)
        graph = tf.get_default_graph()
        coord = tf.train.Coordinator()
        with tf.Session() as sess:
            sess.run(graph.get_operation_by_name("restored/" + counter.op.name + "/Assign"))
            threads = tf.train.start_queue_runners(sess, coord=coord)
            nxt = graph.get_tensor_by_name("restored/next:0")
            assert [int(sess.run(nxt, options=OPTIONS)) for _ in range(5)] == list(range(5))
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)
    with pytest.raises(ValueError, match="mutually exclusive"):
        tf.train.QueueRunner(q, [enqueue], queue_runner_def=hand_made)
