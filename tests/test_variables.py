"""Variables: naming, initialization, assignment and collections."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import errors


def test_variable_nodes_are_named_as_in_tf():
    v = tf.Variable([1.0, 2.0], name="v")
    names = {op.name for op in tf.get_default_graph().get_operations()}
    assert {"v", "v/initial_value", "v/Assign", "v/read"} <= names
    assert v.name == "v:0" and v.op.type == "VariableV2"
    assert v.shape.as_list() == [2] and v.dtype == tf.float32
    assert v.initializer.name == "v/Assign"
    assert v.value().op.get_attr("_class") == ["loc:@v"]
    w = tf.Variable(lambda: tf.constant(3), name="w")
    assert w.initial_value.op.name.startswith("w/Initializer/")


def test_assignments_and_values():
    v = tf.Variable(np.array([1, 2], np.int64), name="counter")
    add = v.assign_add([10, 10])
    sub = tf.assign_sub(v, [1, 1])
    reset = v.assign([0, 0])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(add), [11, 12])
        np.testing.assert_array_equal(sess.run(sub), [10, 11])
        np.testing.assert_array_equal(sess.run(reset), [0, 0])
        v.load([5, 6], sess)
        np.testing.assert_array_equal(sess.run(v), [5, 6])
        assert sess.run(v).dtype == np.int64


def test_a_value_already_read_is_not_changed_by_a_later_assign():
    v = tf.Variable([1.0])
    before = v.read_value()
    with tf.control_dependencies([before]):
        bump = tf.assign_add(v, [1.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        old, new = sess.run([before, bump])
    assert (old[0], new[0]) == (1.0, 2.0)


def test_a_use_under_control_dependencies_reads_after_them():
    # TF1's idiom: `with tf.control_dependencies([update]): out = tf.identity(v)`.
    v = tf.Variable(0.0, name="v")
    bump = tf.assign_add(v, 1.0)
    with tf.control_dependencies([bump]):
        after = tf.identity(v)
        doubled = v * 2.0
    before = tf.identity(v)
    assert after.op.inputs[0] is not v.value() and after.op.inputs[0].op.type == "Identity"
    assert after.op.inputs[0].op.get_attr("_class") == ["loc:@v"]
    assert before.op.inputs[0] is v.value()
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert [sess.run(after) for _ in range(3)] == [1.0, 2.0, 3.0]
        assert sess.run(doubled) == 8.0
        assert sess.run(before) == 4.0


def test_assign_checks_shapes():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(ValueError):
        v.assign([1.0, 2.0, 3.0])
    loose = tf.Variable([1.0, 2.0], validate_shape=False)
    grow = tf.assign(loose, [1.0, 2.0, 3.0], validate_shape=False)
    with tf.Session() as sess:
        sess.run(loose.initializer)
        assert sess.run(grow).shape == (3,)


def test_uninitialized_read_is_failed_precondition():
    v = tf.Variable(1.0, name="lazy")
    is_init = tf.is_variable_initialized(v)
    with tf.Session() as sess:
        assert not sess.run(is_init)
        with pytest.raises(errors.FailedPreconditionError, match="lazy"):
            sess.run(v + 1.0)
        sess.run(tf.variables_initializer([v]))
        assert sess.run(is_init)


def test_collections_and_initializers():
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b", trainable=False)
    assert tf.global_variables() == [a, b]
    assert tf.trainable_variables() == [a]
    init = tf.global_variables_initializer()
    assert init.name == "init" and init.type == "NoOp"
    with tf.Session() as sess:
        sess.run(init)
        assert sess.run([a, b]) == [1.0, 2.0]


def test_variable_operators_read_the_snapshot():
    v = tf.Variable(3.0)
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(v * 2.0) == 6.0
        assert sess.run(1.0 + v) == 4.0
    with pytest.raises(TypeError):
        bool(v)
    with pytest.raises(ValueError, match="Incompatible type conversion"):
        tf.convert_to_tensor(v, dtype=tf.int32)


def test_tables_initializer_groups_the_table_initializers():
    g = tf.Graph()
    with g.as_default():
        empty = tf.tables_initializer()
        assert empty.name == "init_all_tables" and empty.type == "NoOp"
        assert empty.control_inputs == []
        v = tf.Variable(0, name="table_like")
        bump = tf.assign_add(v, 5)
        tf.add_to_collection(tf.GraphKeys.TABLE_INITIALIZERS, bump.op)
        init = tf.initialize_all_tables()
        assert init.name == "init_all_tables_1" and init.control_inputs == [bump.op]
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(init)
            assert sess.run(v) == 5
