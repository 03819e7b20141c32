"""Shared by the tf.data tests: reading a dataset to its end, and a fresh graph per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import tensorweave as tf


def elements(dataset: tf.data.Dataset, feed: dict | None = None) -> list:
    """Every element of `dataset`, through an initializable iterator."""
    it = dataset.make_initializable_iterator()
    nxt = it.get_next()
    out = []
    with tf.Session() as s:
        s.run(it.initializer, feed)
        while True:
            try:
                out.append(s.run(nxt))
            except tf.errors.OutOfRangeError:
                return out


@pytest.fixture(autouse=True)
def fresh_graph() -> Iterator[tf.Graph]:
    with tf.Graph().as_default() as g:
        yield g
