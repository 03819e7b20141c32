"""Function graphs: captures (values, refs, control edges, through nested graphs), the
`FunctionDef` they become, and its checks."""

from __future__ import annotations

import pytest

import tensorweave as tw
from tensorweave.engine.graph.func_graph import (
    RETVAL_OP,
    FuncGraph,
    FunctionDef,
    build_func_graph,
    check_function,
    to_function_def,
)
from tensorweave.engine.graph.graph_def import NodeDef
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.tensor_shape import TensorShape


def test_an_outer_tensor_is_captured_once_as_a_placeholder() -> None:
    outer = tw.get_default_graph()
    x = tw.placeholder(tw.float32, [2, 3], name="x")
    g, (a, b) = build_func_graph("f", lambda: (x * 2.0, x + 1.0), [], outer)
    assert isinstance(g, FuncGraph) and g.outer_graph is outer
    assert a.graph is g and b.graph is g
    inner = g.captures[x]
    assert inner.op.type == "Placeholder" and inner.graph is g
    assert inner.dtype == tw.float32 and inner.shape.as_list() == [2, 3]
    assert a.op.inputs[0] is inner and b.op.inputs[0] is inner
    assert g.outer_inputs() == [x]
    assert [op.graph for op in outer.get_operations()] == [outer]  # nothing leaked outside


def test_arguments_are_placeholders_in_order() -> None:
    g, out = build_func_graph("f", lambda a, b: a * tw.cast(b, tw.float32),
                              [(tw.float32, [None]), (tw.int32, [])], tw.get_default_graph())
    assert [(t.dtype, t.shape.as_list()) for t in g.inputs] == [(tw.float32, [None]),
                                                                 (tw.int32, [])]
    assert out.graph is g and g.captures == {}


def test_a_tensor_two_graphs_out_is_captured_by_the_graph_between() -> None:
    outer = tw.get_default_graph()
    x = tw.constant(3.0, name="x")
    captured: dict[str, FuncGraph] = {}

    def middle() -> tw.Tensor:
        inner, result = build_func_graph("inner", lambda: x * x, [], tw.get_default_graph())
        captured["inner"] = inner
        return result

    mid, _ = build_func_graph("middle", middle, [], outer)
    inner = captured["inner"]
    assert inner.outer_graph is mid
    assert inner.outer_inputs() == [mid.captures[x]]
    assert mid.outer_inputs() == [x]


def test_a_variable_ref_becomes_a_shared_variable_node() -> None:
    v = tw.Variable(1.0, name="counter")
    g, out = build_func_graph("f", lambda: v.assign_add(2.0), [], tw.get_default_graph())
    var = out.op.inputs[0].op
    assert var.type == "VariableV2" and var.graph is g
    assert var.get_attr("shared_name") == "counter"
    assert var.get_attr("dtype") == tw.float32
    assert g.variables == [v.op] and g.outer_inputs() == []


def test_outer_control_dependencies_are_collected() -> None:
    outer = tw.get_default_graph()
    gate = tw.no_op(name="gate")

    def fn() -> tw.Tensor:
        with tw.control_dependencies([gate]):
            return tw.constant(1)

    g, out = build_func_graph("f", fn, [], outer)
    assert out.op.control_inputs == [] and g.control_captures == [gate]


def test_a_tensor_of_an_unrelated_graph_is_refused() -> None:
    other = tw.Graph()
    with other.as_default():
        foreign = tw.constant(1.0)
    g = FuncGraph("f", tw.get_default_graph())
    with pytest.raises(ValueError, match="must be from the same graph"):
        g.capture(foreign)


def test_function_def_keeps_only_what_the_results_need() -> None:
    g, (a, unused) = build_func_graph(
        "f", lambda x, y: (tw.identity(x * 2.0, name="keep"), tw.square(y, name="drop")),
        [(tw.float32, []), (tw.float32, [])], tw.get_default_graph())
    fn = to_function_def(g, g.inputs, [a], "f_1")
    ops = {n.name: n.op for n in fn.nodes}
    assert "drop" not in ops and ops["keep"] == "Identity"
    assert fn.arg_types == [tw.float32, tw.float32]
    assert fn.ret_types == [tw.float32] and fn.ret_shapes == [TensorShape([])]
    args = [n for n in fn.nodes if n.op == "_Arg"]
    assert sorted(n.attr["index"] for n in args) == [0, 1]
    (ret,) = [n for n in fn.nodes if n.op == RETVAL_OP]
    assert ret.input == ["keep"] and ret.attr["index"] == 0
    assert all(n.device == "" for n in fn.nodes)
    assert fn.graph is g and fn != to_function_def(g, g.inputs, [a])  # compared by identity
    check_function(fn)
    assert not fn.is_stateful(get_registries().ops)


def test_stateful_nodes_make_a_stateful_function() -> None:
    g, out = build_func_graph("f", lambda: tw.random_uniform([2]), [], tw.get_default_graph())
    assert to_function_def(g, [], [out]).is_stateful(get_registries().ops)


def _arg(name: str, index: object) -> NodeDef:
    return NodeDef(name, "_Arg", attr={"T": tw.float32, "index": index,
                                       "_output_types": [tw.float32],
                                       "_output_shapes": [TensorShape([])]})


def _ret(name: str, source: str, index: int) -> NodeDef:
    return NodeDef(name, RETVAL_OP, [source], attr={"T": tw.float32, "index": index,
                                                   "_shape": TensorShape([])})


@pytest.mark.parametrize("nodes, message", [
    ((_arg("a", 1),), "_Arg indices are not 0..n-1"),
    ((_arg("a", 0), _arg("a", 1)), "two nodes named 'a'"),
    ((_arg("a", 0), _ret("r", "b", 0)), "input 'b'"),
    ((_arg("a", 0), _ret("r", "a:1", 0)), "input 'a:1'"),
    ((_arg("a", 0), _ret("r", "a", 3)), "_FunctionRetval indices"),
])
def test_check_function_refuses_malformed_functions(nodes: tuple[NodeDef, ...],
                                                    message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_function(FunctionDef("bad", nodes))


def test_collections_are_a_snapshot_of_the_outer_graph() -> None:
    v = tw.Variable(1.0, name="v")
    seen: list[object] = []

    def fn() -> tw.Tensor:
        seen.extend(tw.global_variables())
        tw.add_to_collection("inner", 1)
        return tw.constant(0)

    build_func_graph("f", fn, [], tw.get_default_graph())
    assert seen == [v] and tw.get_collection("inner") == []
