"""``tw.logging``: TF 1.x's logging front on the ``tensorweave`` logger."""

from __future__ import annotations

import logging

import pytest

import tensorweave as tw


@pytest.fixture
def records(caplog: pytest.LogCaptureFixture):  # noqa: ANN201 - pytest fixture
    logger = logging.getLogger("tensorweave")
    old = logger.level
    caplog.set_level(logging.DEBUG, logger="tensorweave")
    yield caplog
    logger.setLevel(old)


def test_levels_are_tf_values_and_verbosity_filters(records: pytest.LogCaptureFixture) -> None:
    assert (tw.logging.DEBUG, tw.logging.INFO, tw.logging.WARN, tw.logging.ERROR,
            tw.logging.FATAL) == (10, 20, 30, 40, 50)
    tw.logging.set_verbosity(tw.logging.WARN)
    assert tw.logging.get_verbosity() == tw.logging.WARN
    tw.logging.info("hidden %d", 1)
    tw.logging.warn("shown %d", 2)
    tw.logging.set_verbosity(tw.logging.INFO)
    tw.logging.info("now shown")
    tw.logging.fatal("still running")
    assert [(r.levelno, r.getMessage()) for r in records.records] == [
        (30, "shown 2"), (20, "now shown"), (50, "still running")]


def test_every_n_and_first_n_count_per_call_site(records: pytest.LogCaptureFixture) -> None:
    tw.logging.set_verbosity(tw.logging.INFO)
    for i in range(7):
        tw.logging.log_every_n(tw.logging.INFO, "every %d", 3, i)
        tw.logging.log_first_n(tw.logging.INFO, "first %d", 2, i)
    tw.logging.log_if(tw.logging.INFO, "if", False)
    messages = [r.getMessage() for r in records.records]
    assert messages == ["every 0", "first 0", "first 1", "every 3", "every 6"]


def test_library_loggers_follow_the_verbosity(records: pytest.LogCaptureFixture) -> None:
    tw.logging.set_verbosity(tw.logging.ERROR)
    assert not logging.getLogger("tensorweave.train.monitored_session").isEnabledFor(logging.INFO)
    tw.logging.set_verbosity(tw.logging.INFO)
    assert logging.getLogger("tensorweave.train.monitored_session").isEnabledFor(logging.INFO)
    assert tw.get_logger() is logging.getLogger("tensorweave")
