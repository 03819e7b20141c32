"""GraphDef helpers: input strings and `topological_order`."""

from __future__ import annotations

from tensorweave.engine.graph.graph_def import (
    GraphDef,
    NodeDef,
    parse_input,
    tensor_input,
    topological_order,
)


def names(nodes: list[NodeDef] | None) -> list[str] | None:
    return None if nodes is None else [n.name for n in nodes]


def test_input_strings_round_trip() -> None:
    for text, parsed in (("a", ("a", 0)), ("a:2", ("a", 2)), ("^a", ("a", -1)),
                         ("scope/a:1", ("scope/a", 1))):
        assert parse_input(text) == parsed
        assert tensor_input(*parsed) == text


def test_topological_order_puts_inputs_first_and_keeps_ties_in_graph_order() -> None:
    graph = GraphDef(node=[NodeDef("c", "AddV2", ["a", "b:1"]), NodeDef("b", "Split"),
                           NodeDef("d", "NoOp", ["^c"]), NodeDef("a", "Const")])
    assert names(topological_order(graph)) == ["b", "a", "c", "d"]


def test_sorted_graph_comes_back_in_its_order() -> None:
    graph = GraphDef(node=[NodeDef("a", "Const"), NodeDef("b", "Const"),
                           NodeDef("c", "AddV2", ["a", "b"])])
    assert names(topological_order(graph)) == ["a", "b", "c"]


def test_cycle_gives_none() -> None:
    graph = GraphDef(node=[NodeDef("a", "Identity", ["b"]), NodeDef("b", "Identity", ["^a"])])
    assert topological_order(graph) is None
