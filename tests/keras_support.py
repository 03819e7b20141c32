"""Shared by the tw.keras tests: a cleared Keras session (and graph) around every test, and
running a tensor in the Keras session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tensorweave.keras import backend


@pytest.fixture(autouse=True)
def fresh_graph() -> Iterator[None]:
    backend.clear_session()
    yield
    backend.clear_session()


def run(tensor: Any) -> Any:
    return backend.get_session().run(tensor)
