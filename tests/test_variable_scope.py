"""``tw.get_variable`` and ``tw.variable_scope``: naming, reuse, defaults and getters, as TF1."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf


def values(*variables):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(variables))


def test_names_follow_variable_scopes_not_name_scopes() -> None:
    with tf.name_scope("ns"):
        with tf.variable_scope("outer"):
            with tf.variable_scope("inner"):
                v = tf.get_variable("w", [2])
                op = tf.constant(1.0, name="c")
    assert v.name == "outer/inner/w:0"
    assert v.op.name == "outer/inner/w"
    assert op.name == "ns/outer/inner/c:0"


def test_reentering_a_scope_name_gets_a_new_name_scope() -> None:
    with tf.variable_scope("s"):
        a = tf.constant(1.0, name="c")
    with tf.variable_scope("s", reuse=True) as scope:
        b = tf.constant(1.0, name="c")
    assert a.name == "s/c:0" and b.name == "s_1/c:0"
    assert scope.name == "s" and scope.original_name_scope == "s_1/"


def test_creating_twice_without_reuse_fails() -> None:
    with tf.variable_scope("s"):
        tf.get_variable("w", [1])
    with pytest.raises(ValueError, match="Variable s/w already exists, disallowed"):
        with tf.variable_scope("s"):
            tf.get_variable("w", [1])


def test_reuse_returns_the_same_variable_and_checks_shape_and_dtype() -> None:
    with tf.variable_scope("s"):
        v = tf.get_variable("w", [2, 3])
    with tf.variable_scope("s", reuse=True):
        assert tf.get_variable("w", [2, 3]) is v
        assert tf.get_variable("w") is v
        with pytest.raises(ValueError, match="specified shape"):
            tf.get_variable("w", [3, 2])
        with pytest.raises(ValueError, match="specified dtype"):
            tf.get_variable("w", [2, 3], dtype=tf.float64)
        with pytest.raises(ValueError, match="does not exist"):
            tf.get_variable("missing", [1])


def test_reuse_is_inherited_and_cannot_be_turned_off() -> None:
    with tf.variable_scope("s"):
        with tf.variable_scope("sub"):
            v = tf.get_variable("w", [1])
    with tf.variable_scope("s", reuse=True):
        with tf.variable_scope("sub", reuse=False) as sub:
            assert sub.reuse is True
            assert tf.get_variable("w", [1]) is v


def test_reuse_variables_and_scope_objects() -> None:
    with tf.variable_scope("model") as scope:
        v = tf.get_variable("w", [1])
        scope.reuse_variables()
        assert tf.get_variable("w", [1]) is v
    with tf.variable_scope(scope, reuse=True):
        assert tf.get_variable("w") is v
    with tf.variable_scope("other"):
        with tf.variable_scope(scope, reuse=True) as jumped:  # absolute, not nested
            assert jumped.name == "model"
            assert tf.get_variable("w") is v


def test_auto_reuse_creates_then_reuses() -> None:
    def layer():
        with tf.variable_scope("layer", reuse=tf.AUTO_REUSE):
            return tf.get_variable("w", [3])

    assert layer() is layer()
    assert len(tf.global_variables()) == 1


def test_default_name_is_made_unique() -> None:
    names = []
    for _ in range(2):
        with tf.variable_scope(None, default_name="dense"):
            names.append(tf.get_variable("w", [1]).op.name)
    assert names == ["dense/w", "dense_1/w"]
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        with tf.variable_scope(None, default_name="x", reuse=True):
            pass
    with pytest.raises(TypeError):
        with tf.variable_scope(None):
            pass


def test_default_initializers_by_dtype() -> None:
    w = tf.get_variable("w", [30, 20])
    step = tf.get_variable("step", [], dtype=tf.int64)
    flag = tf.get_variable("flag", [2], dtype=tf.bool)
    vw, vstep, vflag = values(w, step, flag)
    limit = np.sqrt(6.0 / 50)
    assert np.abs(vw).max() <= limit and vw.std() > 0.3 * limit
    assert vstep == 0 and vstep.dtype == np.int64
    assert not vflag.any()


def test_scope_initializer_dtype_and_explicit_initializer() -> None:
    with tf.variable_scope("s", initializer=tf.constant_initializer(4.0), dtype=tf.float64):
        a = tf.get_variable("a", [2])
        b = tf.get_variable("b", [2], initializer=tf.ones_initializer())
        c = tf.get_variable("c", initializer=tf.constant([1.0, 2.0, 3.0]))
    va, vb, vc = values(a, b, c)
    np.testing.assert_array_equal(va, [4.0, 4.0])
    assert va.dtype == np.float64
    np.testing.assert_array_equal(vb, [1.0, 1.0])
    assert c.dtype == tf.float32 and c.shape.as_list() == [3]
    np.testing.assert_array_equal(vc, [1, 2, 3])
    with pytest.raises(ValueError, match="do not specify shape"):
        tf.get_variable("d", [3], initializer=tf.constant([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="fully defined"):
        tf.get_variable("e", [None, 2])


def test_trainable_and_collections() -> None:
    t = tf.get_variable("t", [1])
    n = tf.get_variable("n", [1], trainable=False)
    local = tf.get_variable("l", [1], collections=[tf.GraphKeys.LOCAL_VARIABLES],
                            trainable=False)
    assert tf.trainable_variables() == [t]
    assert tf.global_variables() == [t, n]
    assert tf.local_variables() == [local]


def test_regularizer_losses_are_collected() -> None:
    with tf.variable_scope("s", regularizer=lambda v: tf.reduce_sum(v) * 2.0):
        v = tf.get_variable("w", [3], initializer=tf.ones_initializer())
        tf.get_variable("no_loss", [1], regularizer=lambda v: None)
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 1 and losses[0].name.startswith("s/w/Regularizer/")
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(losses[0]) == 6.0


def test_custom_getters_nest() -> None:
    calls = []

    def outer(getter, name, *args, **kwargs):
        calls.append(("outer", name))
        return getter(name, *args, **kwargs)

    def inner(getter, name, *args, **kwargs):
        calls.append(("inner", name))
        return getter(name, *args, **kwargs)

    with tf.variable_scope("a", custom_getter=outer):
        with tf.variable_scope("b", custom_getter=inner):
            v = tf.get_variable("w", [1])
    assert v.op.name == "a/b/w"
    assert calls == [("inner", "a/b/w"), ("outer", "a/b/w")]


def test_get_variable_scope_and_partitioner() -> None:
    assert tf.get_variable_scope().name == ""
    with tf.variable_scope("x") as scope:
        assert tf.get_variable_scope() is scope
    assert tf.get_variable_scope().name == ""
    with tf.variable_scope("y", partitioner=lambda shape, dtype: [2]) as scope:
        assert scope.partitioner is not None
        partitioned = tf.get_variable("p", [4])
    assert [v.op.name for v in partitioned] == ["y/p/part_0", "y/p/part_1"]


def test_variables_are_created_outside_control_dependencies() -> None:
    gate = tf.no_op()
    with tf.control_dependencies([gate]):
        v = tf.get_variable("w", [1])
    assert gate not in v.initializer.control_inputs
    assert gate not in v.op.control_inputs


def test_scopes_are_per_graph() -> None:
    g = tf.Graph()
    with tf.variable_scope("s"):
        with g.as_default():
            assert tf.get_variable_scope().name == ""
            v = tf.get_variable("w", [1])
    assert v.op.name == "w" and v.graph is g
