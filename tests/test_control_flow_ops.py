"""Structure ops: ``no_op``, ``identity``, ``group`` and ``tuple`` (with its control gate)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.api import control_flow_ops as cf
from tensorweave.engine.graph.graph import Operation, Tensor


def test_no_op() -> None:
    op = cf.no_op(name="nothing")
    assert isinstance(op, Operation)
    assert (op.type, op.name, op.outputs) == ("NoOp", "nothing", [])
    with tw.Session() as sess:
        assert sess.run(op) is None


def test_identity_keeps_value_dtype_and_shape() -> None:
    x = tw.constant([[1, 2]], dtype=tw.int64)
    y = cf.identity(x, name="same")
    assert isinstance(y, Tensor)
    assert (y.op.type, y.op.name) == ("Identity", "same")
    assert y.dtype == tw.int64 and y.shape.as_list() == [1, 2]
    with tw.Session() as sess:
        out = sess.run(y)
    np.testing.assert_array_equal(out, [[1, 2]])
    assert out.dtype == np.int64


def test_group_depends_on_every_input_incl_nested() -> None:
    a, b, c = tw.constant(1), tw.constant(2), tw.constant(3)
    op_d = cf.no_op(name="d")
    g = cf.group(a, [b, (c.op, [op_d])])
    assert g.type == "NoOp" and g.name == "group_deps"
    assert set(g.control_inputs) == {a.op, b.op, c.op, op_d}
    assert list(g.inputs) == []


def test_group_spans_devices_as_tf() -> None:
    # control_flow_ops_test.GroupTestCase: one NoOp per device (sorted), the root over them;
    # inputs on one device make the root itself, on that device.
    with tw.device("/job:ps/task:0"):
        a = tw.constant(1.0, name="a")
    with tw.device("/job:worker/task:0"):
        b = tw.constant(2.0, name="b")
    c = tw.constant(3.0, name="c")
    g = cf.group(a, b, c)
    assert (g.name, g.device) == ("group_deps", "")
    per_device = {op.name: (op.device, [i.name for i in op.control_inputs])
                  for op in g.control_inputs}
    assert per_device == {"group_deps/NoOp": ("", ["c"]),
                          "group_deps/NoOp_1": ("/job:ps/task:0", ["a"]),
                          "group_deps/NoOp_2": ("/job:worker/task:0", ["b"])}
    single = cf.group(a, name="mine")
    assert (single.name, single.device) == ("mine", "/job:ps/task:0")
    with tw.device("/cpu:0"):
        nested = cf.group(b, c)
    assert nested.device == "/device:CPU:0"
    assert sorted(op.device for op in nested.control_inputs) == [
        "/device:CPU:0", "/job:worker/task:0/device:CPU:0"]


def test_group_name() -> None:
    assert cf.group(tw.constant(1), name="train").name == "train"


def test_group_of_nothing() -> None:
    g = cf.group()
    assert g.control_inputs == [] and g.graph is tw.get_default_graph()


def test_group_uses_the_inputs_graph() -> None:
    other = tw.Graph()
    with other.as_default():
        x = tw.constant(1)
    g = cf.group(x)
    assert g.graph is other


def test_group_refuses_non_graph_elements() -> None:
    with pytest.raises(TypeError, match="Expected a Tensor or Operation"):
        cf.group(tw.constant(1), 3)


def test_group_runs_its_inputs() -> None:
    v = tw.Variable(0, name="counter")
    inc = tw.assign_add(v, 1)
    g = cf.group(inc)
    with tw.Session() as sess:
        sess.run(v.initializer)
        sess.run(g)
        sess.run(g)
        assert sess.run(v) == 2


def test_tuple_values_and_structure() -> None:
    a = tw.constant([1.0, 2.0])
    b = tw.constant(7, dtype=tw.int32)
    out = cf.tuple([a, None, b])
    assert out[1] is None
    assert [t.op.type for t in (out[0], out[2])] == ["Identity", "Identity"]
    assert out[0].op.name.startswith("tuple/") and out[2].op.name.startswith("tuple/")
    gate = out[0].op.control_inputs
    assert len(gate) == 1 and gate[0].type == "NoOp"
    assert out[2].op.control_inputs == gate
    assert set(gate[0].control_inputs) == {a.op, b.op}
    with tw.Session() as sess:
        va, vb = sess.run([out[0], out[2]])
    np.testing.assert_array_equal(va, [1.0, 2.0])
    assert vb == 7 and vb.dtype == np.int32


def test_tuple_name_scope() -> None:
    out = cf.tuple([tw.constant(1)], name="gated")
    assert out[0].op.name.startswith("gated/")


def test_tuple_gate_runs_every_input_and_control_input() -> None:
    v = tw.Variable(0, name="v")
    w = tw.Variable(0, name="w")
    inc_v = tw.assign_add(v, 1)
    inc_w = tw.assign_add(w, 10)
    x = tw.constant(5)
    gated = cf.tuple([x, inc_v], control_inputs=[inc_w.op])
    with tw.Session() as sess:
        sess.run([v.initializer, w.initializer])
        assert sess.run(gated[0]) == 5  # fetching x alone still runs the whole gate
        assert sess.run(v) == 1
        assert sess.run(w) == 10
