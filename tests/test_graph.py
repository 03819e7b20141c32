"""Graph, Operation and Tensor: naming, scopes, structure and look-ups, as tf.compat.v1."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf


def test_unique_names_under_name_scopes():
    with tf.name_scope("layer"):
        a = tf.constant(1.0, name="MatMul")
        b = tf.constant(1.0, name="MatMul")
    with tf.name_scope("layer"):
        c = tf.constant(1.0, name="MatMul")
    assert [a.op.name, b.op.name, c.op.name] == ["layer/MatMul", "layer/MatMul_1",
                                                 "layer_1/MatMul"]
    assert a.name == "layer/MatMul:0"


def test_nested_and_absolute_name_scopes():
    with tf.name_scope("outer") as outer:
        assert outer == "outer/"
        with tf.name_scope("inner") as inner:
            assert inner == "outer/inner/"
            x = tf.constant(0, name="x")
        with tf.name_scope(outer):  # re-entering by the full name adds no suffix
            y = tf.constant(0, name="y")
        with tf.name_scope(None):
            z = tf.constant(0, name="z")
    assert (x.op.name, y.op.name, z.op.name) == ("outer/inner/x", "outer/y", "z")


def test_op_and_tensor_properties():
    g = tf.Graph()
    with g.as_default():
        assert tf.get_default_graph() is g
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.identity(x, name="y")
    assert tf.get_default_graph() is not g
    assert y.op.type == "Identity" and y.op.inputs[0] is x and x.consumers() == [y.op]
    assert y.graph is g and y.dtype == tf.float32
    assert y.shape.as_list() == [None, 3] and y.get_shape().as_list() == [None, 3]
    assert g.get_tensor_by_name("y:0") is y
    assert g.get_operation_by_name("x") is x.op
    assert y.op.get_attr("T") == tf.float32
    with pytest.raises(ValueError, match="no attr"):
        y.op.get_attr("nope")
    with pytest.raises(KeyError):
        g.get_tensor_by_name("missing:0")
    with pytest.raises(KeyError, match="only has 1 outputs"):
        g.get_tensor_by_name("y:1")
    with pytest.raises(ValueError, match="Tensor names must be"):
        g.get_tensor_by_name("y")


def test_tensor_is_not_a_python_bool_and_hashes_by_identity():
    x = tf.constant(1.0)
    with pytest.raises(TypeError, match="Python `bool`"):
        bool(x)
    assert len({x, x, tf.identity(x)}) == 2


def test_device_scopes_merge_like_tf():
    with tf.device("/job:ps/task:1"):
        a = tf.constant(1.0)
        with tf.device("/cpu:0"):
            b = tf.constant(1.0)
            with tf.device(None):
                c = tf.constant(1.0)
        with tf.device("/job:worker"):
            d = tf.constant(1.0)
    assert a.device == "/job:ps/task:1"
    assert b.device == "/job:ps/task:1/device:CPU:0"
    assert c.device == ""
    assert d.device == "/job:worker/task:1"


def test_device_functions():
    with tf.device(lambda op: "/cpu:1" if op.type == "Const" else "/cpu:0"):
        a = tf.constant(1.0)
        b = tf.identity(a)
    assert (a.device, b.device) == ("/device:CPU:1", "/device:CPU:0")


def test_control_dependencies():
    a = tf.constant(1.0)
    b = tf.constant(2.0)
    with tf.control_dependencies([a, b.op]):
        c = tf.identity(a)
        with tf.control_dependencies(None):
            d = tf.constant(3.0)
    assert c.op.control_inputs == [b.op]  # a is a data input already
    assert d.op.control_inputs == []
    g = tf.group(c, d, name="both")
    assert g.type == "NoOp" and set(g.control_inputs) == {c.op, d.op}


def test_colocate_with_pins_device_and_class():
    with tf.device("/cpu:1"):
        v = tf.constant(1.0, name="v")
    with tf.device("/cpu:0"), tf.colocate_with(v):
        w = tf.identity(v, name="w")
    assert w.op.get_attr("_class") == ["loc:@v"]
    assert w.device == "/device:CPU:1"


def test_collections():
    tf.add_to_collection("things", 1)
    tf.add_to_collections(["things", "more"], 2)
    assert tf.get_collection("things") == [1, 2]
    assert tf.get_collection("more") == [2]
    ref = tf.get_collection_ref("things")
    ref.append(3)
    assert tf.get_collection("things") == [1, 2, 3]
    assert tf.get_collection("empty") == []


def test_version_changes_with_every_op():
    g = tf.get_default_graph()
    v0 = g.version
    tf.constant(1.0)
    assert g.version > v0


def test_finalized_graph_rejects_new_ops():
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0)
        g.finalize()
        with pytest.raises(RuntimeError, match="finalized"):
            tf.constant(2.0)


def test_inputs_from_another_graph_are_rejected():
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default():
        a = tf.constant(1.0)
    with g2.as_default(), pytest.raises(ValueError, match="same graph"):
        tf.raw_ops.AddV2(x=a, y=tf.constant(1.0))


def test_unknown_op_and_bad_attrs():
    with pytest.raises(AttributeError, match="NoSuchOp"):
        tf.raw_ops.NoSuchOp()
    with pytest.raises(TypeError, match="unexpected attrs"):
        tf.raw_ops.Identity(input=tf.constant(1.0), bogus=1)
    with pytest.raises(TypeError, match="missing required inputs"):
        tf.raw_ops.AddV2(x=tf.constant(1.0))


def test_dtype_mismatch_between_tensors_is_a_type_error():
    with pytest.raises(TypeError, match="int32.*float32|float32.*int32"):
        tf.raw_ops.AddV2(x=tf.constant(1.0), y=tf.constant(1))
    with pytest.raises((TypeError, ValueError)):
        _ = tf.constant(1.0) + tf.constant(1)


def test_python_scalars_take_the_tensor_dtype():
    x = tf.constant(np.array([1, 2], np.int64))
    assert (x + 1).dtype == tf.int64
    assert (2.5 * tf.constant([1.0], tf.float16)).dtype == tf.float16
    with pytest.raises(TypeError):
        _ = x + 1.5


def test_as_graph_def_has_tf_node_fields():
    with tf.device("/cpu:0"):
        a = tf.constant(1.0, name="a")
    tf.identity(a, name="b")
    nodes = {n.name: n for n in tf.get_default_graph().as_graph_def().node}
    assert nodes["b"].op == "Identity" and nodes["b"].input == ["a"]
    assert nodes["a"].device == "/device:CPU:0"


def test_tensor_str_is_tf_print_form():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(3.0)
        total = a + tf.constant(4.0)
        p = tf.placeholder(tf.float32)
        with tf.device("/cpu:0"):
            c = tf.constant([1, 2])
    assert str(a) == 'Tensor("Const:0", shape=(), dtype=float32)'
    assert str(total) == 'Tensor("add:0", shape=(), dtype=float32)'
    assert str(p) == 'Tensor("Placeholder:0", dtype=float32)'  # unknown rank: no shape
    assert str(c) == 'Tensor("Const_2:0", shape=(2,), dtype=int32, device=/device:CPU:0)'
    assert repr(total) == "<tf.Tensor 'add:0' shape=() dtype=float32>"


def test_graph_keys_keep_tf1_aliases_and_layer_collections() -> None:
    # pre-1.0 scripts read tf.GraphKeys.VARIABLES; it names the same collection as GLOBAL_VARIABLES
    assert tf.GraphKeys.VARIABLES == tf.GraphKeys.GLOBAL_VARIABLES == "variables"
    assert (tf.GraphKeys.WEIGHTS, tf.GraphKeys.BIASES, tf.GraphKeys.ACTIVATIONS) == (
        "weights", "biases", "activations")
    assert (tf.GraphKeys.RESOURCES, tf.GraphKeys.LOCAL_RESOURCES, tf.GraphKeys.EVAL_STEP) == (
        "resources", "local_resources", "eval_step")
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(1.0, name="v")
        assert g.get_collection(tf.GraphKeys.VARIABLES) == [v]
