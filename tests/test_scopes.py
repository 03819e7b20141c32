"""Name scopes, device/control/colocation scopes and collections on the default graph."""

from __future__ import annotations

import pytest

import tensorweave as tw
from tensorweave.api import scopes


def test_name_scope_yields_the_prefix_and_names_ops() -> None:
    with scopes.name_scope("layer") as scope:
        assert scope == "layer/"
        assert scopes.get_name_scope() == "layer"
        c = tw.constant(1.0, name="c")
    assert c.op.name == "layer/c"
    assert scopes.get_name_scope() == ""


def test_nested_scopes() -> None:
    with scopes.name_scope("a"), scopes.name_scope("b") as scope:
        assert scope == "a/b/"
        assert scopes.get_name_scope() == "a/b"
        assert tw.constant(0).op.name == "a/b/Const"


def test_reused_name_is_made_unique() -> None:
    with scopes.name_scope("block") as first:
        pass
    with scopes.name_scope("block") as second:
        pass
    assert (first, second) == ("block/", "block_1/")


def test_default_name_when_name_is_none() -> None:
    with scopes.name_scope(None, "default") as scope:
        assert scope == "default/"
    with scopes.name_scope(None, "default") as scope:
        assert scope == "default_1/"


def test_name_wins_over_default_name() -> None:
    with scopes.name_scope("given", "default") as scope:
        assert scope == "given/"


def test_none_and_none_is_the_root_scope() -> None:
    with scopes.name_scope("outer"), scopes.name_scope(None) as scope:
        assert scope == ""
        assert scopes.get_name_scope() == ""
        assert tw.constant(1).op.name == "Const"


def test_trailing_slash_reenters_an_existing_scope() -> None:
    with scopes.name_scope("s"):
        pass
    with scopes.name_scope("s/") as scope:
        assert scope == "s/"
        assert tw.constant(1, name="k").op.name == "s/k"


def test_invalid_scope_name() -> None:
    with pytest.raises(ValueError, match="not a valid scope name"):
        with scopes.name_scope("bad name!"):
            pass


def test_values_select_their_graph() -> None:
    other = tw.Graph()
    with other.as_default():
        x = tw.constant(1.0)
    assert tw.get_default_graph() is not other
    with scopes.name_scope("in_other", values=[None, 3, x]) as scope:
        assert tw.get_default_graph() is other
        y = tw.identity(x)
    assert scope == "in_other/"
    assert y.graph is other and y.op.name == "in_other/Identity"
    assert tw.get_default_graph() is not other


def test_collections() -> None:
    with scopes.name_scope("net"):
        inner = tw.constant(1.0, name="w")
    outer = tw.constant(2.0, name="w")
    scopes.add_to_collection("weights", inner)
    scopes.add_to_collections(["weights", "all"], outer)
    assert scopes.get_collection("weights") == [inner, outer]
    assert scopes.get_collection("weights", scope="net") == [inner]
    assert scopes.get_collection("all") == [outer]
    assert scopes.get_collection("missing") == []
    ref = scopes.get_collection_ref("weights")
    ref.clear()
    assert scopes.get_collection("weights") == []
    copy = scopes.get_collection("all")
    copy.append("x")
    assert scopes.get_collection("all") == [outer]


def test_device_scope() -> None:
    with scopes.device("/cpu:0"):
        c = tw.constant(1.0)
    assert c.op.device == "/device:CPU:0"
    assert tw.constant(2.0).op.device == ""


def test_control_dependencies_scope() -> None:
    first = tw.constant(1.0)
    with scopes.control_dependencies([first]):
        second = tw.constant(2.0)
    assert second.op.control_inputs == [first.op]
    assert tw.constant(3.0).op.control_inputs == []


def test_colocate_with() -> None:
    with scopes.device("/cpu:0"):
        anchor = tw.constant(1.0, name="anchor")
    with scopes.colocate_with(anchor.op):
        near = tw.constant(2.0)
    assert near.op.get_attr("_class") == ["loc:@anchor"]
    assert near.op.device == anchor.op.device


def test_container_sets_the_empty_container_attr_of_stateful_ops() -> None:
    with tw.Graph().as_default() as g:
        with tw.container("experiment0") as name:
            assert name == "experiment0"
            v = tw.Variable([1.0, 2.0], name="v")
            q = tw.FIFOQueue(3, tw.float32, name="q")
            with scopes.container("inner"):
                w = tw.Variable(3.0, name="w")
            pinned = g.create_op("VariableV2", [], {"shape": [], "dtype": tw.float32,
                                                    "container": "mine"}, name="pinned")
            c = tw.constant(1.0)
            r = tw.random_uniform([2])
        after = tw.Variable(0.0, name="after")
        assert v.op.get_attr("container") == "experiment0"
        assert q.queue_ref.op.get_attr("container") == "experiment0"
        assert w.op.get_attr("container") == "inner"
        assert pinned.get_attr("container") == "mine"
        assert "container" not in c.op.attrs and "container" not in r.op.attrs
        assert after.op.get_attr("container") == ""
        node = next(n for n in g.as_graph_def().node if n.name == "v")
        assert node.attr["container"].s == b"experiment0"
        with tw.Session() as sess:
            sess.run(tw.global_variables_initializer())
            assert sess.run(v).tolist() == [1.0, 2.0]
