"""Graph optimization passes and the pipeline that runs them.

Contract: a `Pass` is a named graph-to-graph function with a phase (``pre_placement``,
``post_placement`` or ``post_partition``) and an order within it; a pass that names another in
`replaces` (``replaces="cse"``) runs instead of it (`plugin_manager` settles that). `run_phase`
applies the passes of one phase in order and returns the new graph with a `PassRecord` per pass
(node counts before and after). A pass must keep every result identical.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from tensorweave.engine.graph.graph_def import GraphDef

PHASES = ("pre_placement", "post_placement", "post_partition")


@attrs.frozen
class PassContext:
    """What a pass may consult: the frozen registries, the protected nodes and the config."""

    registries: Any
    protected: frozenset[str]  # nodes whose identity must survive (fed, fetched, targeted)
    config: Any = None


@attrs.frozen
class Pass:
    """One optimization pass provided by a plugin."""

    name: str
    phase: str = attrs.field(validator=attrs.validators.in_(PHASES))
    order: int
    run: Callable[[GraphDef, PassContext], GraphDef]
    replaces: str | None = None  # the name of the pass this one takes the place of


@attrs.frozen
class PassRecord:
    """What one pass changed."""

    name: str
    phase: str
    nodes_before: int
    nodes_after: int


def run_phase(graph_def: GraphDef, passes: Sequence[Pass], phase: str,
              ctx: PassContext) -> tuple[GraphDef, list[PassRecord]]:
    records = []
    for p in passes:
        if p.phase != phase:
            continue
        before = len(graph_def.node)
        graph_def = p.run(graph_def, ctx)
        records.append(PassRecord(p.name, phase, before, len(graph_def.node)))
    return graph_def, records
