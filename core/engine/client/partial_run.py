"""The bookkeeping of TF's partial runs (``Session.partial_run_setup`` / ``partial_run``).

Contract: `partial_run_setup(fetches, feeds)` declares every fetch and feed of one partial
run and returns its handle. Each `partial_run(handle, fetches, feed_dict)` may feed only
declared feeds not fed before, and fetch only declared fetches not fetched before, else
`InvalidArgumentError` with TF's words. Values fed, and tensors fetched, by earlier calls are
fed again to later ones, so a later call reuses what an earlier one computed instead of
computing it anew. Unlike TF's, which is one step, each call is a step of its own: an op
that two calls need and neither fetched runs in both.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from tensorweave.engine import errors


@attrs.define
class PartialRun:
    """One partial run: what it may feed and fetch, and what it fed and computed so far."""

    fetches: frozenset[str]
    feeds: frozenset[str]
    values: dict[str, np.ndarray] = attrs.field(factory=dict)  # fed or fetched so far
    fed: set[str] = attrs.field(factory=set)
    fetched: set[str] = attrs.field(factory=set)

    def check(self, feeds: dict[str, Any], fetches: list[str]) -> None:
        """`InvalidArgumentError` unless `feeds` and `fetches` (names) may be used now."""
        for name in feeds:
            if name not in self.feeds:
                raise errors.InvalidArgumentError(
                    None, None, f"The feed {name} was not specified in partial_run_setup.")
            if name in self.fed:
                raise errors.InvalidArgumentError(
                    None, None, f"The feed {name} has already been fed.")
        for name in fetches:
            if name not in self.fetches:
                raise errors.InvalidArgumentError(
                    None, None, f"The fetch {name} was not specified in partial_run_setup.")
            if name in self.fetched:
                raise errors.InvalidArgumentError(
                    None, None, f"The fetch {name} has already been fetched.")

    def record(self, feeds: dict[str, np.ndarray], fetches: list[str],
               values: dict[str, np.ndarray]) -> None:
        """Note a call's feeds and fetches, and keep the tensor values it fed and computed."""
        self.fed.update(feeds)
        self.fetched.update(fetches)
        self.values.update(feeds)
        self.values.update(values)
