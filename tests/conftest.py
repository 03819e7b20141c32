"""Shared fixtures: every test starts with a fresh default graph."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import tensorweave as tf
from tensorweave.engine import plugin_manager


@pytest.fixture(autouse=True)
def fresh_graph() -> Iterator[None]:
    tf.reset_default_graph()
    yield


@pytest.fixture
def passes_blocked(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The optimization plugins blocked
    (``TENSORWEAVE_DISABLE_PLUGINS=cse,constant_folding,fusion``)."""
    monkeypatch.setenv("TENSORWEAVE_DISABLE_PLUGINS", "cse,constant_folding,fusion")
    plugin_manager.reset()
    yield
    monkeypatch.undo()
    plugin_manager.reset()
