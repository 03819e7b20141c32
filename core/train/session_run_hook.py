"""`SessionRunHook`: code that runs around the steps of a `MonitoredSession`, as
``tf.compat.v1.train.SessionRunHook``.

Contract, per hook and session: `begin` once, before the graph is finalized (the last chance to
add ops); `after_create_session` each time a session is created (again after a recovery); then for
every ``run`` call `before_run`, which may return `SessionRunArgs` whose fetches and feeds are
merged into that run, and `after_run`, which receives the hook's own fetched values in
`SessionRunValues.results`; finally `end` when the monitored session is closed without an
error. A hook asks the loop to stop through `SessionRunContext.request_stop`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues"]


class SessionRunHook:
    """Hook to extend calls to `MonitoredSession.run`; every method does nothing by default."""

    def begin(self) -> None:
        """Called once before using the session; the graph can still be changed here."""

    def after_create_session(self, session: Any, coord: Any) -> None:
        """Called when a new session is created, after its variables are initialized or
        restored; the graph is finalized by then."""

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        """Called before each run; returns the fetches, feeds and options to add to it."""
        return None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        """Called after each run, with what this hook's `before_run` asked for."""

    def end(self, session: Any) -> None:
        """Called at the end of the session (not when it ends with an error)."""


class SessionRunArgs(NamedTuple):
    """What a hook adds to a ``run`` call."""

    fetches: Any
    feed_dict: dict[Any, Any] | None = None
    options: Any = None


class SessionRunValues(NamedTuple):
    """What a hook gets back: `results` has the structure of its `SessionRunArgs.fetches`."""

    results: Any
    options: Any
    run_metadata: Any


class SessionRunContext:
    """The ``run`` call in progress, as seen by hooks: its arguments, the session, and the
    stop request any hook can make."""

    def __init__(self, original_args: SessionRunArgs, session: Any) -> None:
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self) -> SessionRunArgs:
        """The fetches and feeds the caller passed to ``run``."""
        return self._original_args

    @property
    def session(self) -> Any:
        """The raw `Session` the step runs in."""
        return self._session

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def request_stop(self) -> None:
        """Make `MonitoredSession.should_stop` true once this run finishes."""
        self._stop_requested = True
