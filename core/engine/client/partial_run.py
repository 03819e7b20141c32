"""The bookkeeping of TF's partial runs (``Session.partial_run_setup`` / ``partial_run``).

Contract: `partial_run_setup(fetches, feeds)` declares every fetch and feed of one partial
run and returns its handle. Each `partial_run(handle, fetches, feed_dict)` may feed only
declared feeds not fed before, and fetch only declared fetches not fetched before, else
`InvalidArgumentError` with TF's words. As in TF, each op runs at most once per partial run:
each call is a step of its own, and `plan` tells it which of the ops it runs produce values
that a later call may need (a consumer that a declared fetch not fetched yet reaches); the step
fetches those too, and later calls feed them, with every value fed so far, and pass the ops
that already ran as done, so the master drops control edges on them. Ops that only name state
(a ``VariableV2``, a ``VarHandleOp``: no inputs, a ref or resource output) are not values:
they run again wherever needed, naming the same state. So does an op whose resource output a
later call needs, since a handle is not fed back (TF keeps it in its one step).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs
import numpy as np

from tensorweave.engine import dtypes, errors
from tensorweave.engine.graph.graph import Graph, Operation, Tensor


@attrs.frozen
class Plan:
    """What one call of a partial run computes beyond its fetches."""

    keep: list[str]  # tensors this call computes that a later one may need
    ran: set[str]  # the ops this call runs that must not run again


def _names_state(op: Operation) -> bool:
    return not op.inputs and bool(op.outputs) and (
        op.op_def.ref_output or all(t.dtype == dtypes.resource for t in op.outputs))


@attrs.define
class PartialRun:
    """One partial run: what it may feed and fetch, and what it fed, computed and ran so far."""

    fetches: frozenset[str]
    feeds: frozenset[str]
    values: dict[str, np.ndarray] = attrs.field(factory=dict)  # fed or computed so far
    fed: set[str] = attrs.field(factory=set)
    fetched: set[str] = attrs.field(factory=set)
    ran: set[str] = attrs.field(factory=set)  # ops that ran in an earlier call

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

    def plan(self, graph: Graph, feeds: Iterable[str], fetches: list[str]) -> Plan:
        """What a call feeding `feeds` and fetching `fetches` (names) runs and must keep."""
        known = set(self.values) | set(feeds)
        now = self._reached(graph, fetches, known, skip=self.ran)
        later_roots = [name for name in self.fetches - self.fetched if name not in fetches]
        later = self._reached(graph, later_roots, known, skip=set())
        keep: dict[str, None] = {}
        rerun: set[Operation] = set()
        for op in later - now:
            for t in op.inputs:
                if t.op in now and t.name not in known and not _names_state(t.op):
                    if t.dtype == dtypes.resource:
                        rerun.add(t.op)
                    elif t.name not in fetches:
                        keep[t.name] = None
        return Plan(list(keep), {op.name for op in now - rerun if not _names_state(op)})

    @staticmethod
    def _reached(graph: Graph, roots: list[str], known: set[str],
                 skip: set[str]) -> set[Operation]:
        """The ops that `roots` (tensor and op names) need through data and control edges,
        not looking past the `known` tensors nor into the ops named in `skip`."""
        reached: set[Operation] = set()
        stack: list[Operation] = []
        for name in roots:
            element = graph.as_graph_element(name)
            stack.append(element.op if isinstance(element, Tensor) else element)
        while stack:
            op = stack.pop()
            if op in reached or op.name in skip:
                continue
            reached.add(op)
            stack.extend(t.op for t in op.inputs if t.name not in known)
            stack.extend(op.control_inputs)
        return reached

    def record(self, feeds: dict[str, np.ndarray], fetches: list[str],
               values: dict[str, np.ndarray], plan: Plan) -> None:
        """Note a call's feeds and fetches, keep the tensor values it fed and computed, and
        the ops it ran."""
        self.fed.update(feeds)
        self.fetched.update(fetches)
        self.values.update(feeds)
        self.values.update(values)
        self.ran |= plan.ran
