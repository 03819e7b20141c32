"""The standard hooks, each run in a real `MonitoredSession` with real checkpoint files."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.formats.event_file import read_events
from tensorweave.formats.summary_proto import Summary
from tensorweave.namespaces.summary import FileWriterCache
from tensorweave.train.basic_session_run_hooks import (
    CheckpointSaverHook,
    CheckpointSaverListener,
    FeedFnHook,
    FinalOpsHook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    SecondOrStepTimer,
    StepCounterHook,
    StopAtStepHook,
    SummarySaverHook,
    SummaryWriterCache,
)
from tests.training import model, scalar_summaries, train_until_stopped

HOOKS_LOGGER = "tensorweave.train.basic_session_run_hooks"


@pytest.fixture(autouse=True)
def closed_writer_cache() -> Iterator[None]:
    """Hooks given an output_dir open cached writers: close them after each test."""
    yield
    FileWriterCache.clear()


# -- SecondOrStepTimer ------------------------------------------------------------------------

def test_timer_triggers_every_n_steps_once_per_step() -> None:
    timer = SecondOrStepTimer(every_steps=3)
    assert timer.should_trigger_for_step(0)
    assert timer.update_last_triggered_step(0) == (None, None)
    assert timer.last_triggered_step() == 0
    assert [timer.should_trigger_for_step(s) for s in (0, 1, 2, 3, 4)] == \
        [False, False, False, True, True]
    elapsed_secs, elapsed_steps = timer.update_last_triggered_step(4)
    assert elapsed_steps == 4 and elapsed_secs is not None and elapsed_secs >= 0
    timer.reset()
    assert timer.last_triggered_step() is None and timer.should_trigger_for_step(4)


def test_timer_by_seconds_and_bad_arguments() -> None:
    timer = SecondOrStepTimer(every_secs=0.0)
    timer.update_last_triggered_step(1)
    assert not timer.should_trigger_for_step(1)  # never twice for one step
    assert timer.should_trigger_for_step(2)
    hourly = SecondOrStepTimer(every_secs=3600)
    assert hourly.should_trigger_for_step(0)
    hourly.update_last_triggered_step(0)
    assert not hourly.should_trigger_for_step(1000)
    with pytest.raises(ValueError, match="Either every_secs or every_steps"):
        SecondOrStepTimer()
    with pytest.raises(ValueError, match="Can not provide both"):
        SecondOrStepTimer(every_secs=1, every_steps=1)


# -- StopAtStepHook ---------------------------------------------------------------------------

def test_stop_at_step_stops_exactly_at_last_step() -> None:
    m = model()
    with tf.train.SingularMonitoredSession(hooks=[StopAtStepHook(last_step=7)]) as sess:
        assert len(train_until_stopped(sess, m["train"])) == 7
        assert sess.raw_session().run(m["global_step"]) == 7


def test_stop_at_step_num_steps_counts_from_the_session_start(tmp_path: Path) -> None:
    m = model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(m["global_step"], 10))
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=m["global_step"])
    with tf.train.SingularMonitoredSession(hooks=[StopAtStepHook(num_steps=4)],
                                           checkpoint_filename_with_path=path) as sess:
        assert len(train_until_stopped(sess, m["train"])) == 4
        assert sess.raw_session().run(m["global_step"]) == 14


def test_stop_at_step_arguments_and_missing_global_step() -> None:
    with pytest.raises(ValueError, match="One of num_steps or last_step"):
        StopAtStepHook()
    with pytest.raises(ValueError, match="Only one of num_steps or last_step"):
        StopAtStepHook(num_steps=1, last_step=2)
    tf.Variable(1.0)
    with pytest.raises(RuntimeError, match="Global step should be created to use "
                                           "StopAtStepHook"):
        StopAtStepHook(last_step=3).begin()


# -- CheckpointSaverHook ----------------------------------------------------------------------

class RecordingListener(CheckpointSaverListener):
    def __init__(self, stop_at: int | None = None) -> None:
        self.calls: list[tuple[str, int | None]] = []
        self.stop_at = stop_at

    def begin(self) -> None:
        self.calls.append(("begin", None))

    def before_save(self, session: Any, global_step_value: int) -> None:
        self.calls.append(("before_save", global_step_value))

    def after_save(self, session: Any, global_step_value: int) -> bool:
        self.calls.append(("after_save", global_step_value))
        return global_step_value == self.stop_at

    def end(self, session: Any, global_step_value: int) -> None:
        self.calls.append(("end", global_step_value))


def test_checkpoint_saver_saves_at_start_every_n_steps_and_at_end(tmp_path: Path) -> None:
    tmp_path = tmp_path / "created"  # the hook creates its directory, as TF's does
    m = model()
    listener = RecordingListener()
    hooks = [CheckpointSaverHook(str(tmp_path), save_steps=3, listeners=[listener],
                                 saver=tf.train.Saver(max_to_keep=None)),
             StopAtStepHook(last_step=7)]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        train_until_stopped(sess, m["train"])
    saved = sorted(int(name.split("-")[1].removesuffix(".index")) for name in os.listdir(tmp_path)
                   if name.startswith("model.ckpt-") and name.endswith(".index"))
    assert saved == [0, 3, 6, 7]
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-7")
    assert tf.train.load_variable(str(tmp_path), "global_step") == 7
    # w after 7 steps of w -= 0.1 * 2w
    np.testing.assert_allclose(tf.train.load_variable(str(tmp_path), "w"), 5.0 * 0.8 ** 7,
                               rtol=1e-5)
    assert listener.calls == [("begin", None)] + [
        (event, step) for step in (0, 3, 6, 7) for event in ("before_save", "after_save")
    ] + [("end", 7)]


def test_checkpoint_saver_does_not_save_twice_at_the_end(tmp_path: Path) -> None:
    m = model()
    listener = RecordingListener()
    hooks = [CheckpointSaverHook(str(tmp_path), save_steps=2, listeners=[listener]),
             StopAtStepHook(last_step=4)]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        train_until_stopped(sess, m["train"])
    assert [step for event, step in listener.calls if event == "before_save"] == [0, 2, 4]


def test_a_listener_can_stop_training(tmp_path: Path) -> None:
    m = model()
    hooks = [CheckpointSaverHook(str(tmp_path), save_steps=2,
                                 listeners=[RecordingListener(stop_at=4)])]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        assert len(train_until_stopped(sess, m["train"])) == 4


def test_checkpoint_saver_finds_its_saver(tmp_path: Path) -> None:
    model()
    with pytest.raises(ValueError, match="cannot provide both saver and scaffold"):
        CheckpointSaverHook(str(tmp_path), save_steps=1, saver=tf.train.Saver(),
                            scaffold=tf.train.Scaffold())
    with pytest.raises(ValueError, match="Either every_secs or every_steps"):
        CheckpointSaverHook(str(tmp_path))
    hook = CheckpointSaverHook(str(tmp_path), save_secs=60, checkpoint_basename="m.ckpt")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        hook.begin()
        with pytest.raises(RuntimeError, match="No items in collection savers"):
            hook.after_create_session(sess, None)
        tf.add_to_collection(tf.GraphKeys.SAVERS, tf.train.Saver())
        hook.after_create_session(sess, None)
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "m.ckpt-0")


# -- LoggingTensorHook ------------------------------------------------------------------------

def test_logging_tensor_hook_logs_every_n_iterations(caplog: pytest.LogCaptureFixture) -> None:
    m = model()
    hooks = [LoggingTensorHook({"step": m["global_step"], "loss": "loss"}, every_n_iter=2),
             StopAtStepHook(last_step=5)]
    with caplog.at_level(logging.INFO, logger=HOOKS_LOGGER), \
            tf.train.MonitoredSession(hooks=hooks) as sess:
        train_until_stopped(sess, m["train"])
    lines = [r.getMessage() for r in caplog.records if r.name == HOOKS_LOGGER]
    assert len(lines) == 3
    for i, line in enumerate(lines):
        loss, step = (part.split(" = ")[1] for part in line.split(" (")[0].split(", "))
        assert step == str(2 * i + 1)  # the fetched global step is read after the update
        assert loss == str(np.float32(loss))  # str() of a float32, as TF's "%s"
        np.testing.assert_allclose(float(loss), 25.0 * 0.64 ** (2 * i), rtol=1e-5)
    assert lines[0] == "loss = 25.0, step = 1"  # no elapsed time the first time
    assert lines[1].endswith(" sec)")


def test_logging_tensor_hook_formatter_and_at_end(caplog: pytest.LogCaptureFixture) -> None:
    m = model()
    hooks = [LoggingTensorHook(["w"], at_end=True, formatter=lambda v: f"w is {v['w']:.3f}"),
             StopAtStepHook(last_step=2)]
    with caplog.at_level(logging.INFO, logger=HOOKS_LOGGER), \
            tf.train.MonitoredSession(hooks=hooks) as sess:
        train_until_stopped(sess, m["train"])
    assert [r.getMessage() for r in caplog.records if r.name == HOOKS_LOGGER] == \
        ["w is 3.200"]


def test_logging_tensor_hook_arguments() -> None:
    with pytest.raises(ValueError, match="exactly one of every_n_iter and every_n_secs"):
        LoggingTensorHook(["x"])
    with pytest.raises(ValueError, match="exactly one of every_n_iter and every_n_secs"):
        LoggingTensorHook(["x"], every_n_iter=1, every_n_secs=1)
    with pytest.raises(ValueError, match="invalid every_n_iter=0"):
        LoggingTensorHook(["x"], every_n_iter=0)
    tf.unstack(tf.constant([[1.0], [2.0]]), name="pair")
    with pytest.raises(ValueError, match="ambiguous"):
        LoggingTensorHook(["pair"], every_n_iter=1).begin()
    other = tf.Graph()
    with other.as_default():
        foreign = tf.constant(1.0)
    with pytest.raises(ValueError, match="should have graph attribute"):
        LoggingTensorHook([foreign], every_n_iter=1).begin()


# -- NanTensorHook, StepCounterHook, FinalOpsHook, FeedFnHook --------------------------------

def test_nan_tensor_hook_raises_on_nan_loss() -> None:
    x = tf.placeholder(tf.float32, [])
    loss = tf.sqrt(x)
    with tf.train.MonitoredSession(hooks=[NanTensorHook(loss)]) as sess:
        assert sess.run(loss, {x: 4.0}) == 2.0
        with pytest.raises(NanLossDuringTrainingError, match="NaN loss during training"):
            sess.run(loss, {x: -1.0})


def test_nan_tensor_hook_can_stop_instead(caplog: pytest.LogCaptureFixture) -> None:
    x = tf.placeholder(tf.float32, [])
    loss = tf.sqrt(x)
    with caplog.at_level(logging.WARNING, logger=HOOKS_LOGGER), \
            tf.train.MonitoredSession(hooks=[NanTensorHook(loss, fail_on_nan_loss=False)]) \
            as sess:
        sess.run(loss, {x: -1.0})
        assert sess.should_stop()
    assert "Model diverged with loss = NaN." in caplog.text


def test_step_counter_hook_logs_steps_per_second(caplog: pytest.LogCaptureFixture) -> None:
    m = model()
    hooks = [StepCounterHook(every_n_steps=2), StopAtStepHook(last_step=5)]
    with caplog.at_level(logging.INFO, logger=HOOKS_LOGGER), \
            tf.train.MonitoredSession(hooks=hooks) as sess:
        train_until_stopped(sess, m["train"])
    rates = [r.getMessage() for r in caplog.records if "global_step/sec" in r.getMessage()]
    assert len(rates) == 2  # at steps 3 and 5 (the first trigger only starts the clock)
    assert all(float(line.split(": ")[1]) > 0 for line in rates)
    with pytest.raises(ValueError, match="exactly one of every_n_steps and every_n_secs"):
        StepCounterHook(every_n_steps=None)


def test_step_counter_hook_records_steps_per_second_summaries(tmp_path: Path) -> None:
    m = model()
    writer = tf.summary.FileWriter(str(tmp_path))
    hooks = [StepCounterHook(every_n_steps=2, summary_writer=writer),
             StopAtStepHook(last_step=5)]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        train_until_stopped(sess, m["train"])
    writer.close()
    rates = scalar_summaries(tmp_path)
    assert [(step, tag) for step, tag, _ in rates] == [(3, "global_step/sec"),
                                                       (5, "global_step/sec")]
    assert all(rate > 0 for _, _, rate in rates)


def test_step_counter_warns_when_the_global_step_does_not_move(
        caplog: pytest.LogCaptureFixture) -> None:
    m = model()
    with caplog.at_level(logging.WARNING, logger=HOOKS_LOGGER), \
            tf.train.MonitoredSession(hooks=[StepCounterHook(every_n_steps=1)]) as sess:
        for _ in range(8):
            sess.run(m["loss"])
    assert caplog.text.count("global step (tf.train.get_global_step) has not been "
                             "increased") == 5


def test_final_ops_hook_runs_its_ops_at_the_end() -> None:
    m = model()
    x = tf.placeholder(tf.float32, [])
    hook = FinalOpsHook({"w": m["w"], "scaled": m["w"] * x}, {x: 2.0})
    with tf.train.MonitoredSession(hooks=[hook, StopAtStepHook(last_step=1)]) as sess:
        train_until_stopped(sess, m["train"])
        assert hook.final_ops_values is None
    np.testing.assert_allclose(hook.final_ops_values["w"], 4.0)
    np.testing.assert_allclose(hook.final_ops_values["scaled"], 8.0)


def test_feed_fn_hook_feeds_every_run() -> None:
    x = tf.placeholder(tf.float32, [])
    scaled = x * 10.0
    counter = iter(range(10))
    with tf.train.MonitoredSession(hooks=[FeedFnHook(lambda: {x: next(counter)})]) as sess:
        assert [sess.run(scaled) for _ in range(3)] == [0.0, 10.0, 20.0]
        with pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook and "
                                               "user"):
            sess.run(x, {x: 1.0})


# -- SummarySaverHook and the writer cache ----------------------------------------------------

def test_summary_saver_writes_at_the_first_step_then_every_n_steps(tmp_path: Path) -> None:
    m = model()
    summary = tf.summary.scalar("objective", m["loss"])
    hooks = [SummarySaverHook(save_steps=2, output_dir=str(tmp_path), summary_op=summary),
             StopAtStepHook(last_step=6)]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        train_until_stopped(sess, m["train"])
    # Each run's loss is that of the weight before its update: w = 5 * 0.8**run.
    expected = [(step, "objective", (5.0 * 0.8 ** (step - 1)) ** 2) for step in (1, 3, 5)]
    got = scalar_summaries(tmp_path)  # ended by `end`'s flush, the writer still open
    assert [(step, tag) for step, tag, _ in got] == [(step, tag) for step, tag, _ in expected]
    np.testing.assert_allclose([v for *_, v in got], [v for *_, v in expected], rtol=1e-6)


def test_summary_saver_by_seconds_takes_the_scaffolds_op_and_lists(tmp_path: Path) -> None:
    m = model()
    loss_summary = tf.summary.scalar("objective", m["loss"])
    w_summary = tf.summary.scalar("weight", m["w"])
    scaffold = tf.train.Scaffold(summary_op=loss_summary)
    writer = tf.summary.FileWriter(str(tmp_path / "a"))
    hooks = [SummarySaverHook(save_secs=3600, summary_writer=writer, scaffold=scaffold),
             SummarySaverHook(save_steps=1, output_dir=str(tmp_path / "b"),
                              summary_op=[loss_summary, w_summary]),
             StopAtStepHook(last_step=3)]
    with tf.train.MonitoredSession(hooks=hooks,
                                   session_creator=tf.train.ChiefSessionCreator(scaffold)) \
            as sess:
        train_until_stopped(sess, m["train"])
    assert scalar_summaries(tmp_path / "a") == [(1, "objective", 25.0)]  # the hour never passes
    got = scalar_summaries(tmp_path / "b")
    assert [(step, tag) for step, tag, _ in got] == \
        [(s, t) for s in (1, 2, 3) for t in ("objective", "weight")]
    np.testing.assert_allclose([v for *_, v in got],
                               [25.0, 5.0, 16.0, 4.0, 10.24, 3.2], rtol=1e-6)


def test_summary_saver_arguments_and_missing_global_step(tmp_path: Path) -> None:
    op = tf.summary.scalar("c", tf.constant(1.0))
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        SummarySaverHook(save_steps=1)
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        SummarySaverHook(save_steps=1, summary_op=op, scaffold=tf.train.Scaffold())
    with pytest.raises(ValueError, match="Either every_secs or every_steps"):
        SummarySaverHook(summary_op=op)
    with pytest.raises(ValueError, match="Can not provide both"):
        SummarySaverHook(save_steps=1, save_secs=1, summary_op=op)
    with pytest.raises(RuntimeError, match="Global step should be created to use "
                                           "SummarySaverHook"):
        SummarySaverHook(save_steps=1, output_dir=str(tmp_path), summary_op=op).begin()


def test_hooks_sharing_a_directory_share_its_cached_writer(tmp_path: Path) -> None:
    m = model()
    summary = tf.summary.scalar("objective", m["loss"])
    hooks = [SummarySaverHook(save_steps=2, output_dir=str(tmp_path), summary_op=summary),
             StepCounterHook(every_n_steps=2, output_dir=str(tmp_path)),
             StopAtStepHook(last_step=3)]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        train_until_stopped(sess, m["train"])
    assert [(step, tag) for step, tag, _ in scalar_summaries(tmp_path)] == \
        [(1, "objective"), (3, "objective"), (3, "global_step/sec")]
    events = read_events(FileWriterCache.get(str(tmp_path)).event_file_path)
    assert events[0].file_version == "brain.Event:2"
    assert events[1].graph_def  # the cache's writer starts with the default graph


def test_file_writer_cache_gives_one_writer_per_directory_until_cleared(
        tmp_path: Path) -> None:
    assert SummaryWriterCache is FileWriterCache is tf.summary.FileWriterCache
    first = FileWriterCache.get(str(tmp_path / "a"))
    assert FileWriterCache.get(str(tmp_path / "a")) is first
    assert FileWriterCache.get(str(tmp_path / "b")) is not first
    FileWriterCache.clear()
    first.add_summary(Summary(value=[Summary.Value(tag="late", simple_value=1.0)]), 1)
    assert scalar_summaries(tmp_path / "a") == []  # closed by clear: the add is ignored
    second = FileWriterCache.get(str(tmp_path / "a"))
    assert second is not first and second.event_file_path != first.event_file_path
