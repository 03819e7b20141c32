"""Shared fixtures: every test starts with a fresh default graph."""

from __future__ import annotations

import pytest

import tensorweave as tf


@pytest.fixture(autouse=True)
def fresh_graph() -> None:
    tf.reset_default_graph()
    yield
