"""`Supervisor`: defaults from the graph, managed sessions that initialize or restore the model,
the checkpoint, summary and step-counter services, queue runners, and stopping, with real
sessions, checkpoint files and event files."""

from __future__ import annotations

import glob
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import errors
from tensorweave.formats.event_file import read_events
from tensorweave.train.coordinator import LooperThread
from tensorweave.train.supervisor import Supervisor
from tests.training import model, scalar_summaries

FAST = {"save_model_secs": 0.05, "save_summaries_secs": 0.05, "stop_grace_secs": 5}


def supervisor_threads() -> list[threading.Thread]:
    """Live threads a supervisor starts: services and loops, queue runners, writer flushes."""
    return [t for t in threading.enumerate()
            if isinstance(t, LooperThread)
            or t.name.startswith(("QueueRunnerThread", "FileWriter-flush"))]


@pytest.fixture(autouse=True)
def no_stray_threads() -> Iterator[None]:
    before = set(supervisor_threads())
    yield
    deadline = time.time() + 2
    while set(supervisor_threads()) - before and time.time() < deadline:
        time.sleep(0.01)
    assert not set(supervisor_threads()) - before


def wait_for_checkpoint(logdir: Path, step: int, timeout: float = 5.0) -> str:
    """The path of the checkpoint of `step`, once the checkpoint service has written it."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        path = tf.train.latest_checkpoint(str(logdir))
        if path is not None and path.endswith(f"-{step}"):
            return path
        time.sleep(0.01)
    raise AssertionError(f"no checkpoint of step {step} in {os.listdir(logdir)}")


# -- construction -----------------------------------------------------------------------------

def test_defaults_come_from_the_graph_and_are_recorded_in_its_collections(tmp_path: Path
                                                                          ) -> None:
    m = model()
    tf.summary.scalar("train_loss", m["loss"])
    sv = Supervisor(logdir=str(tmp_path))
    graph = tf.get_default_graph()
    assert graph.finalized
    assert sv.is_chief and sv.global_step is m["global_step"]
    assert graph.get_collection(tf.GraphKeys.INIT_OP) == [sv.init_op]
    assert graph.get_collection(tf.GraphKeys.READY_OP) == [sv.ready_op]
    assert len(graph.get_collection(tf.GraphKeys.LOCAL_INIT_OP)) == 1
    assert graph.get_collection(tf.GraphKeys.SAVERS) == [sv.saver]
    assert graph.get_collection(tf.GraphKeys.SUMMARY_OP) == [sv.summary_op]
    assert sv.ready_for_local_init_op is None  # TF: no default check before local init
    assert sv.save_path == str(tmp_path / "model.ckpt")
    assert (sv.save_model_secs, sv.save_summaries_secs) == (600, 120)
    assert sv.session_manager is not None and sv.coord is not None
    with pytest.raises(RuntimeError, match="finalized"):
        tf.constant(1.0)
    sv.summary_writer.close()


def test_collected_items_are_used_and_none_turns_a_feature_off() -> None:
    tf.Variable(1.0, name="v")
    init = tf.no_op(name="my_init")
    tf.add_to_collection(tf.GraphKeys.INIT_OP, init)
    sv = Supervisor(saver=None, summary_op=None, global_step=None, ready_op=None)
    assert sv.init_op is init
    assert (sv.saver, sv.summary_op, sv.global_step, sv.ready_op) == (None, None, None, None)
    assert sv.summary_writer is None and sv.save_path is None  # no logdir


def test_a_graph_without_variables_gets_no_saver_nor_global_step() -> None:
    tf.constant(1.0)
    sv = Supervisor()
    assert sv.saver is None and sv.global_step is None and sv.summary_op is None


def test_a_non_chief_needs_placed_variables_and_never_writes(tmp_path: Path) -> None:
    with tf.Graph().as_default():
        tf.Variable(1.0)
        with pytest.raises(ValueError, match="all Variables must have their device set"):
            Supervisor(is_chief=False)
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            tf.Variable(1.0)
        sv = Supervisor(is_chief=False, logdir=str(tmp_path), recovery_wait_secs=0.01)
        assert sv.summary_writer is None and sv.save_path is None
        with pytest.raises(RuntimeError, match="Only chief"):
            sv.start_standard_services(None)
        # Nobody initializes the model: the worker gives up after max_wait_secs.
        with pytest.raises(errors.DeadlineExceededError, match="not ready"):
            sv.prepare_or_wait_for_session(max_wait_secs=0)
    assert os.listdir(tmp_path) == []


# -- managed sessions -------------------------------------------------------------------------

def test_managed_session_initializes_trains_and_checkpoints(tmp_path: Path) -> None:
    m = model()
    sv = Supervisor(logdir=str(tmp_path), **FAST)
    with sv.managed_session() as sess:
        assert sess.run(m["global_step"]) == 0 and sess.run(m["w"]) == np.float32(5.0)
        for _ in range(5):
            sess.run(m["train"])
        path = wait_for_checkpoint(tmp_path, 5)
        w = sess.run(m["w"])
    assert path == str(tmp_path / "model.ckpt-5")
    # w**2 with rate 0.1: w shrinks by 0.8 a step.
    np.testing.assert_allclose(w, 5.0 * 0.8**5, rtol=1e-6)
    np.testing.assert_allclose(tf.train.load_variable(path, "w"), w)
    assert tf.train.load_variable(path, "global_step") == 5
    assert (tmp_path / "graph.pbtxt").is_file()
    assert sv.should_stop()
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(m["w"])


def test_a_second_supervisor_restores_the_latest_checkpoint(tmp_path: Path) -> None:
    with tf.Graph().as_default():
        m = model()
        sv = Supervisor(logdir=str(tmp_path), **FAST)
        with sv.managed_session() as sess:
            for _ in range(4):
                sess.run(m["train"])
            wait_for_checkpoint(tmp_path, 4)
            trained_w = sess.run(m["w"])
    with tf.Graph().as_default():
        m = model()
        sv = Supervisor(logdir=str(tmp_path), save_model_secs=0, save_summaries_secs=0)
        with sv.managed_session() as sess:
            assert sess.run(m["global_step"]) == 4
            assert sess.run(m["w"]) == trained_w
            for _ in range(3):
                sess.run(m["train"])
            assert sess.run(m["global_step"]) == 7
    # save_model_secs=0: the second supervisor wrote no checkpoint.
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-4")


def test_init_feed_dict_feeds_the_init_op() -> None:
    start = tf.placeholder(tf.float32, [], name="start")
    w = tf.Variable(start, name="w")
    sv = Supervisor(init_feed_dict={start: 3.5})
    with sv.managed_session() as sess:
        assert sess.run(w) == np.float32(3.5)


def test_out_of_range_inside_the_block_is_a_clean_stop() -> None:
    tf.Variable(1.0)
    sv = Supervisor()
    with sv.managed_session():
        assert not sv.should_stop()
        raise errors.OutOfRangeError(None, None, "End of sequence")
    assert sv.should_stop()


def test_an_exhausted_input_queue_ends_the_training_loop() -> None:
    # input_producer counts epochs in a local variable: the local init op must run.
    queue = tf.train.input_producer(tf.constant([1.0, 2.0, 3.0, 4.0]), num_epochs=2,
                                    shuffle=False)
    element = queue.dequeue()
    total = tf.Variable(0.0, name="total")
    add = tf.assign_add(total, element)
    sv = Supervisor()
    seen = []
    with sv.managed_session() as sess:
        while not sv.should_stop():
            seen.append(float(sess.run(add)))
    assert seen == list(np.cumsum([1.0, 2.0, 3.0, 4.0] * 2))
    assert sv.should_stop()


def test_an_error_in_the_block_is_raised_after_stopping(tmp_path: Path) -> None:
    m = model()
    sv = Supervisor(logdir=str(tmp_path), **FAST)
    with pytest.raises(ValueError, match="bad step"), sv.managed_session() as sess:
        sess.run(m["train"])
        raise ValueError("bad step")
    assert sv.should_stop()
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(m["w"])


def test_an_error_in_a_loop_thread_stops_the_training_and_is_raised() -> None:
    m = model()
    sv = Supervisor()
    calls: list[int] = []

    def check(sess: Any) -> None:
        calls.append(int(sess.run(m["global_step"])))
        if calls[-1] >= 3:
            raise errors.InvalidArgumentError(None, None, "loss diverged")

    with pytest.raises(errors.InvalidArgumentError, match="loss diverged"), \
            sv.managed_session() as sess:
        sv.loop(0.01, check, args=(sess,))
        steps = 0
        while not sv.should_stop():
            sess.run(m["train"])
            steps += 1
            assert steps < 10_000
            time.sleep(0.001)
    assert calls[-1] >= 3


def test_summaries_and_the_step_counter_are_written(tmp_path: Path) -> None:
    m = model()
    tf.summary.scalar("train_loss", m["loss"])
    sv = Supervisor(logdir=str(tmp_path), **FAST)
    with sv.managed_session() as sess:
        for _ in range(3):
            sess.run(m["train"])
        loss = float(sess.run(m["loss"]))
        deadline = time.time() + 5
        # The summary thread runs every 0.05 s: wait for one at the last step.
        while time.time() < deadline:
            sv.summary_writer.flush()
            if (3, "train_loss", pytest.approx(loss)) in scalar_summaries(tmp_path):
                break
            time.sleep(0.02)
        sv.summary_computed(sess, tf.Summary(value=[tf.Summary.Value(tag="manual",
                                                                      simple_value=7.0)]))
    summaries = scalar_summaries(tmp_path)
    assert (3, "train_loss", pytest.approx(loss)) in summaries
    assert (3, "manual", 7.0) in summaries
    rates = [value for _, tag, value in summaries if tag == "global_step/sec"]
    assert rates and all(rate >= 0 for rate in rates)
    events = read_events(glob.glob(str(tmp_path / "events.out.tfevents.*"))[0])
    assert sum(event.HasField("graph_def") for event in events) == 1


def test_summary_computed_needs_a_writer() -> None:
    model()
    sv = Supervisor()
    with sv.managed_session() as sess, pytest.raises(RuntimeError, match="summary writer"):
        sv.summary_computed(sess, tf.Summary())


def test_without_standard_services_nothing_is_saved_nor_written(tmp_path: Path) -> None:
    queue = tf.train.input_producer(tf.constant([1.0, 2.0]), shuffle=False)
    element = queue.dequeue()
    tf.train.get_or_create_global_step()
    sv = Supervisor(logdir=str(tmp_path), **FAST)
    with sv.managed_session(start_standard_services=False) as sess:
        assert not [t for t in supervisor_threads()
                    if isinstance(t, LooperThread) or t.name.startswith("QueueRunner")]
        threads = sv.start_queue_runners(sess)
        assert threads and all(t.is_alive() for t in threads)
        assert sess.run(element) == 1.0
    assert all(not t.is_alive() for t in threads)
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert scalar_summaries(tmp_path) == []


def test_start_standard_services_returns_the_started_threads(tmp_path: Path) -> None:
    m = model()
    tf.summary.scalar("train_loss", m["loss"])
    sv = Supervisor(logdir=str(tmp_path), **FAST)
    sess = sv.prepare_or_wait_for_session(start_standard_services=False)
    try:
        threads = sv.start_standard_services(sess)
        names = sorted(type(t).__name__ for t in threads)
        assert names == ["SVStepCounterThread", "SVSummaryThread", "SVTimerCheckpointThread"]
        assert all(t.is_alive() for t in threads)
        sv.stop()
        assert all(not t.is_alive() for t in threads)
        assert sv.should_stop()
    finally:
        sess.close()


def test_services_need_a_logdir() -> None:
    m = model()
    sv = Supervisor(**FAST)
    with sv.managed_session() as sess:
        assert sv.start_standard_services(sess) == []
        sess.run(m["train"])


def test_a_supervisor_can_manage_a_second_session_after_a_stop(tmp_path: Path) -> None:
    m = model()
    sv = Supervisor(logdir=str(tmp_path), **FAST)
    with sv.managed_session() as sess:
        sess.run(m["train"])
        wait_for_checkpoint(tmp_path, 1)
    assert sv.should_stop()
    with sv.managed_session() as sess:
        assert not sv.should_stop()  # the coordinator was cleared for the new session
        assert sess.run(m["global_step"]) == 1  # restored, not initialized again
        sess.run(m["train"])
        wait_for_checkpoint(tmp_path, 2)
    # Each session's events go to a new file, as TF's reopened writer.
    assert len(glob.glob(str(tmp_path / "events.out.tfevents.*"))) == 2
