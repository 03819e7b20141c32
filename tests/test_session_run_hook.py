"""`SessionRunHook` and its value classes, and the order a `MonitoredSession` calls hooks in."""

from __future__ import annotations

from typing import Any

import numpy as np

import tensorweave as tf
from tensorweave.train.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)


class RecordingHook(SessionRunHook):
    """Records every call, fetches `fetches` and feeds `feeds` in each run."""

    def __init__(self, name: str, calls: list[str], fetches: Any = None,
                 feeds: dict[Any, Any] | None = None) -> None:
        self.name, self.calls, self.fetches, self.feeds = name, calls, fetches, feeds
        self.results: list[Any] = []

    def begin(self) -> None:
        self.calls.append(f"{self.name}.begin")

    def after_create_session(self, session: Any, coord: Any) -> None:
        assert isinstance(session, tf.Session)
        assert isinstance(coord, tf.train.Coordinator)
        self.calls.append(f"{self.name}.after_create_session")

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        self.calls.append(f"{self.name}.before_run")
        if self.fetches is None and self.feeds is None:
            return None
        return SessionRunArgs(self.fetches, self.feeds)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        self.calls.append(f"{self.name}.after_run")
        self.results.append(run_values.results)

    def end(self, session: Any) -> None:
        self.calls.append(f"{self.name}.end")


def test_session_run_args_defaults_and_fields() -> None:
    args = SessionRunArgs("x:0")
    assert args == ("x:0", None, None)
    assert args.fetches == "x:0" and args.feed_dict is None and args.options is None
    values = SessionRunValues(results=3, options=None, run_metadata=None)
    assert values.results == 3


def test_run_context_records_a_stop_request() -> None:
    context = SessionRunContext(SessionRunArgs(["a"], {"b": 1}), session="sess")
    assert context.original_args.fetches == ["a"]
    assert context.original_args.feed_dict == {"b": 1}
    assert context.session == "sess"
    assert not context.stop_requested
    context.request_stop()
    assert context.stop_requested


def test_base_hook_methods_do_nothing() -> None:
    hook = SessionRunHook()
    context = SessionRunContext(SessionRunArgs(None), None)
    hook.begin()
    hook.after_create_session(None, None)
    assert hook.before_run(context) is None
    hook.after_run(context, SessionRunValues(None, None, None))
    hook.end(None)


def test_monitored_session_calls_hooks_in_order_and_merges_their_fetches_and_feeds() -> None:
    calls: list[str] = []
    x = tf.placeholder(tf.float32, [], name="x")
    y = tf.placeholder(tf.float32, [], name="y")
    counter = tf.Variable(0.0, name="counter")
    total = tf.assign_add(counter, x)
    first = RecordingHook("a", calls, fetches={"double": x * 2.0})
    second = RecordingHook("b", calls, fetches=[y + 1.0], feeds={y: 10.0})
    with tf.train.MonitoredSession(hooks=[first, second]) as sess:
        assert calls == ["a.begin", "b.begin", "a.after_create_session",
                         "b.after_create_session"]
        del calls[:]
        assert sess.run(total, {x: 3.0}) == 3.0
        assert calls == ["a.before_run", "b.before_run", "a.after_run", "b.after_run"]
        assert sess.run(total, {x: 4.0}) == 7.0
    assert calls[-2:] == ["a.end", "b.end"]
    assert first.results == [{"double": 6.0}, {"double": 8.0}]
    assert second.results == [[np.float32(11.0)], [np.float32(11.0)]]
    assert isinstance(second.results[0][0], np.float32)


def test_a_hook_without_a_request_gets_none_results() -> None:
    calls: list[str] = []
    hook = RecordingHook("a", calls)
    v = tf.Variable(1.0)
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        assert sess.run(v) == 1.0
    assert hook.results == [None]
