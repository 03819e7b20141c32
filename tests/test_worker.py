"""The worker's asynchronous entry points (`run_graph_async`, `recv_tensor_async`), their
deadlines, and the cleaned-step memory of an in-process worker."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.device_spec import DeviceSpec
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.runtime.device import TaskSpec
from tensorweave.engine.runtime.master import MasterSession
from tensorweave.engine.runtime.rendezvous import create_key
from tensorweave.engine.runtime.worker import Worker
from tests.callbacks import Inbox


def _compiled(sess: tf.Session, feeds: list[str], fetches: list[str]) -> tuple[Worker, str]:
    sess._extend()
    compiled = sess._master.compile(feeds, fetches, [])
    (worker,) = sess._workers
    return worker, compiled.handles[worker.task.name]


def test_run_graph_async_of_a_straight_line_step_answers_before_returning() -> None:
    x = tf.placeholder(tf.float32, [3], name="x")
    y = x * 2.0 + 1.0
    feed = np.array([1.0, -2.0, 0.5], np.float32)
    with tf.Session() as sess:
        worker, handle = _compiled(sess, ["x:0"], [y.name])
        box = Inbox()
        worker.run_graph_async(handle, 7, {0: feed}, False, 5.0, box)
        assert len(box.calls) == 1  # no thread involved: done ran inside the call
        error, (retvals, stats) = box.calls[0]
        assert error is None and stats
        sync, _ = worker.run_graph(handle, 8, {0: feed})
    np.testing.assert_array_equal(retvals[0], feed * np.float32(2.0) + np.float32(1.0))
    assert retvals[0].dtype == np.float32
    np.testing.assert_array_equal(retvals[0], sync[0])


def test_run_graph_async_across_devices_calls_back_once_with_the_results() -> None:
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:1"):
        a = x * 2.0
    with tf.device("/cpu:0"):
        b = a + x
    feed = np.array([1.0, 2.0], np.float32)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        worker, handle = _compiled(sess, ["x:0"], [b.name])
        box = Inbox()
        worker.run_graph_async(handle, 11, {0: feed}, False, 5.0, box)
        assert box.event.wait(5)
        time.sleep(0.05)
        assert len(box.calls) == 1
        error, (retvals, _) = box.calls[0]
        assert error is None
        np.testing.assert_array_equal(retvals[0], np.array([3.0, 6.0], np.float32))


def test_unknown_handles_and_cleaned_steps_raise_before_starting() -> None:
    x = tf.placeholder(tf.float32, [2], name="x")
    y = x + 1.0
    with tf.Session() as sess:
        worker, handle = _compiled(sess, ["x:0"], [y.name])
        with pytest.raises(tf.errors.AbortedError, match="Graph handle is not found"):
            worker.run_graph_async("nope", 1, {}, False, 1.0, Inbox())
    remembering = Worker(worker.task, tf.ConfigProto(), worker.registries)
    remembering.cleanup_step(99)
    key = create_key(remembering.devices[0].name, 1, remembering.devices[0].name, "t:0")
    with pytest.raises(tf.errors.AbortedError, match="already cleaned up"):
        remembering.recv_tensor_async(99, key, 1.0, Inbox())
    remembering.close()


def test_an_in_process_worker_remembers_no_cleaned_steps() -> None:
    x = tf.placeholder(tf.float32, [2], name="x")
    y = x + 1.0
    with tf.Session() as sess:
        step = sess.make_callable(y, [x])
        for _ in range(50):
            step(np.zeros(2, np.float32))
        (worker,) = sess._workers
        assert not worker._cleaned and not worker._deadlines
        assert len(worker.rendezvous_mgr) == 0


def test_a_straight_line_piece_that_sends_and_calls_nothing_is_self_contained() -> None:
    x = tf.placeholder(tf.float32, [2], name="x")
    y = x + 1.0
    with tf.device("/cpu:1"):
        z = y * 2.0  # a second device: a send and a recv
    _, looped = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v + 1.0),
                              [tf.constant(0), x])
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess._extend()
        contained = sess._master.compile(["x:0"], [y.name], [])
        assert contained.self_contained
        assert not sess._master.compile(["x:0"], [z.name], []).self_contained
        assert not sess._master.compile(["x:0"], [looped.name], []).self_contained
        (worker,) = sess._workers
        handle = contained.handles[worker.task.name]
        for step_id in (1, 2):  # run without a cleanup, as the master runs it
            retvals, _ = worker.run_graph(handle, step_id, {0: np.zeros(2, np.float32)})
            np.testing.assert_array_equal(retvals[0], [1.0, 1.0])
        assert len(worker.rendezvous_mgr) == 0 and not worker._deadlines
        np.testing.assert_array_equal(sess.run(z, {x: [1.0, 2.0]}), [4.0, 6.0])


def test_a_worker_that_remembers_cleaned_steps_refuses_them_and_wants_every_cleanup() -> None:
    x = tf.placeholder(tf.float32, [2], name="x")
    y = x + 1.0
    with tf.Session() as sess:
        sess._extend()
        graph_def = sess._master.graph_def
    remembering = Worker(TaskSpec("localhost", 0, 0), tf.ConfigProto(), get_registries())
    master = MasterSession({remembering.task.name: remembering},
                           DeviceSpec(job="localhost", replica=0, task=0), tf.ConfigProto(),
                           get_registries())
    master.extend(graph_def.node)
    compiled = master.compile(["x:0"], [y.name], [])
    assert not compiled.self_contained  # the worker must hear of every cleanup
    values, _ = master.run_compiled(compiled, [np.zeros(2, np.float32)])
    np.testing.assert_array_equal(values[0], [1.0, 1.0])
    remembering.cleanup_step(41)
    with pytest.raises(tf.errors.AbortedError, match="already cleaned up"):
        remembering.run_graph(compiled.handles[remembering.task.name], 41,
                              {0: np.zeros(2, np.float32)})
    master.close()
    remembering.close()


def _recv_setup() -> tuple[Worker, str]:
    worker = Worker(TaskSpec("worker", 0, 0), tf.ConfigProto(), get_registries())
    device = worker.devices[0]
    return worker, create_key(device.name, device.incarnation, device.name, "edge:0")


def test_recv_tensor_async_gets_a_value_sent_before_or_after() -> None:
    worker, key = _recv_setup()
    value = np.arange(4, dtype=np.float32)
    try:
        worker.rendezvous_mgr.find_or_create(1).send(key, value)
        early = Inbox()
        worker.recv_tensor_async(1, key, 5.0, early)
        assert len(early.calls) == 1 and early.calls[0][0] is None
        np.testing.assert_array_equal(early.calls[0][1], value)

        late = Inbox()
        worker.recv_tensor_async(2, key, 5.0, late)
        assert not late.calls
        threading.Thread(target=worker.rendezvous_mgr.find_or_create(2).send,
                         args=(key, value * 2)).start()
        assert late.event.wait(5)
        np.testing.assert_array_equal(late.calls[0][1], value * 2)
    finally:
        worker.close()


def test_recv_tensor_async_past_its_deadline_fails_once_and_leaves_no_waiter() -> None:
    worker, key = _recv_setup()
    try:
        box = Inbox()
        start = time.monotonic()
        worker.recv_tensor_async(3, key, 0.2, box)
        assert box.event.wait(5)
        assert 0.15 < time.monotonic() - start < 3.0
        error, _ = box.calls[0]
        assert isinstance(error, tf.errors.DeadlineExceededError)
        assert "Timed out after 0.2s" in error.message
        rendezvous = worker.rendezvous_mgr.find_or_create(3)
        assert rendezvous.pending_count() == 0
        rendezvous.send(key, np.zeros(1))  # too late: stored, never delivered twice
        time.sleep(0.05)
        assert len(box.calls) == 1
    finally:
        worker.close()


def test_cleanup_fails_a_waiting_async_recv_with_cancelled() -> None:
    worker, key = _recv_setup()
    try:
        box = Inbox()
        worker.recv_tensor_async(4, key, 30.0, box)
        worker.cleanup_step(4)
        assert box.event.wait(5)
        assert isinstance(box.calls[0][0], tf.errors.CancelledError)
    finally:
        worker.close()


def test_run_graph_async_that_waits_forever_is_aborted_at_its_deadline() -> None:
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:1"):
        a = x * 2.0
    with tf.device("/cpu:0"):
        b = a + 1.0
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        worker, handle = _compiled(sess, ["x:0"], [b.name])
        registered = worker._graphs[handle]
        cpu1 = next(name for name in registered.executors if name.endswith("CPU:1"))
        del registered.executors[cpu1]  # the sender's partition does not run
        box = Inbox()
        start = time.monotonic()
        worker.run_graph_async(handle, 21, {0: np.ones(2, np.float32)}, False, 0.2, box)
        assert box.event.wait(5)
        assert 0.15 < time.monotonic() - start < 3.0
        assert isinstance(box.calls[0][0], tf.errors.DeadlineExceededError)
        assert "exceeded its deadline" in box.calls[0][0].message
