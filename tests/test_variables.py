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


def test_assert_variables_initialized_fails_until_they_are():
    # variables_test.testAssertVariablesInitialized
    v = tf.Variable([1, 2], name="v")
    w = tf.Variable(3.0, name="w")
    check = tf.assert_variables_initialized()
    one = tf.assert_variables_initialized([w])
    with tf.Session() as sess:
        with pytest.raises(errors.FailedPreconditionError, match="uninitialized"):
            sess.run(check)
        sess.run(w.initializer)
        assert sess.run(one) == 0
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(check), [1, 0])
    with tf.Graph().as_default():
        assert tf.assert_variables_initialized() is None


def test_count_up_to_method():
    # variables_test.testCountUpTo
    v = tf.Variable(0, dtype=tf.int32)
    c = v.count_up_to(3)
    assert c.op.type == "CountUpTo" and c.dtype == tf.int32
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert [sess.run(c) for _ in range(3)] == [0, 1, 2]
        with pytest.raises(errors.OutOfRangeError, match="Reached limit of 3"):
            sess.run(c)


def test_to_proto_and_from_proto():
    with tf.name_scope("outer"):
        v = tf.Variable(1.0, name="v")
    proto = v.to_proto()
    assert (proto.variable_name, proto.initializer_name, proto.snapshot_name) == (
        "outer/v:0", "outer/v/Assign", "outer/v/read:0")
    assert proto.trainable
    back = tf.Variable.from_proto(type(proto).FromString(proto.SerializeToString()))
    assert back.name == "outer/v:0" and back.initializer is v.initializer
    scoped = v.to_proto(export_scope="outer")
    assert scoped.variable_name == "v:0"
    assert tf.Variable.from_proto(scoped, import_scope="outer").op is v.op
    assert v.to_proto(export_scope="elsewhere") is None


def test_synchronization_and_aggregation_are_checked_and_kept():
    v = tf.Variable(1.0, synchronization=tf.VariableSynchronization.ON_WRITE,
                    aggregation=tf.VariableAggregation.MEAN)
    assert v.synchronization is tf.VariableSynchronization.ON_WRITE
    assert v.aggregation is tf.VariableAggregation.MEAN
    plain = tf.Variable(1.0)
    assert plain.synchronization is tf.VariableSynchronization.AUTO
    assert plain.aggregation is tf.VariableAggregation.NONE
    assert tf.VariableAggregation.ONLY_FIRST_TOWER is tf.VariableAggregation.ONLY_FIRST_REPLICA
    with pytest.raises(ValueError, match="Invalid variable aggregation mode"):
        tf.Variable(1.0, aggregation="bogus")


def test_constraint_must_be_callable():
    # variables_test.testConstraintArg
    with pytest.raises(ValueError, match="The `constraint` argument must be a callable."):
        tf.Variable(1.0, constraint="not callable")
    clip = tf.Variable(1.0, constraint=lambda x: x)
    assert callable(clip.constraint)


def test_a_variable_made_in_a_cond_branch_lives_outside_it():
    # TF's init_scope: the variable and its initializer are the outer graph's, so
    # global_variables_initializer initializes it (control_flow_ops_test, variables in cond).
    take = tf.placeholder(tf.bool, [])

    def branch():
        with tf.name_scope("inside"):
            inner = tf.Variable(3.0, name="inner")
        lazy = tf.Variable(lambda: tf.fill([2], 1.5), name="lazy")
        return inner * 2.0 + tf.reduce_sum(lazy)

    out = tf.cond(take, branch, lambda: tf.constant(1.0))
    names = [v.name for v in tf.global_variables()]
    assert names == ["cond/inside/inner:0", "cond/lazy:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(out, {take: True}) == 9.0
        assert sess.run(out, {take: False}) == 1.0


def test_a_variable_in_a_branch_refuses_an_initial_value_of_the_branch():
    def branch():
        return tf.Variable(tf.constant(1.0) * 2.0) * 1.0

    with pytest.raises(ValueError, match="use a lambda as the initializer"):
        tf.cond(tf.constant(True), branch, lambda: tf.constant(0.0))


def test_assign_shape_mismatch_words_tf():
    v = tf.Variable([[1.0, 2.0]])
    with pytest.raises(ValueError, match=r"Dimension 1 in both shapes must be equal, but are 2 "
                                         r"and 3\. Shapes are \[1,2\] and \[1,3\]\."):
        v.assign([[2.0, 3.0, 4.0]])
    grown = tf.assign(v, [[2.0, 3.0, 4.0]], validate_shape=False)
    assert grown.shape == tf.TensorShape([1, 3])
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(grown), [[2.0, 3.0, 4.0]])


def test_validate_shape_false_leaves_shapes_to_the_values():
    # TF's variable_ops_test: an assign without shape validation has the value's static
    # shape (unknown for a shapeless value), whatever the variable's
    v = tf.Variable(tf.zeros([1, 2]))
    assert tf.assign(v, tf.placeholder(tf.float32), validate_shape=False).shape.ndims is None
    assert tf.assign(v, np.array([[42.0, 43.0]], np.float32),
                     validate_shape=False).shape.as_list() == [1, 2]
    x = tf.placeholder(tf.float32, [None])
    loose = tf.Variable(x, validate_shape=False)
    assert loose.shape.ndims is None and loose.value().shape.ndims is None
    with tf.Session() as sess:
        sess.run(loose.initializer, {x: [1.0, 2.0, 3.0]})
        assert sess.run(loose).tolist() == [1.0, 2.0, 3.0]
        # a validated assign checks the run-time shape too
        checked = tf.assign(tf.Variable(tf.zeros([2]), name="fixed"), x)
        sess.run(tf.variables_initializer([v for v in tf.global_variables()
                                           if v.op.name == "fixed"]))
        with pytest.raises(errors.InvalidArgumentError, match="shapes of both tensors"):
            sess.run(checked, {x: [1.0, 2.0, 3.0]})


def test_a_variable_grows_by_assign_with_set_shape():
    # the pattern of a variable that grows: its static shape set to what stays fixed
    v = tf.Variable(tf.zeros([1, 4]), validate_shape=False)
    v.set_shape([None, 4])
    doubled = v * 2.0
    row = tf.placeholder(tf.float32, [1, 4])
    extend = tf.assign(v, tf.concat([v, row], 0), validate_shape=False)
    assert v.shape.as_list() == doubled.shape.as_list() == extend.shape.as_list() == [None, 4]
    with pytest.raises(ValueError):
        v.set_shape([None, 5])
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(extend, {row: np.ones([1, 4])})
        sess.run(extend, {row: np.ones([1, 4])})
        assert sess.run(doubled).shape == (3, 4)


def test_initialized_value_initializes_another_variable_in_any_order():
    v = tf.Variable(tf.fill([2], 3.0), validate_shape=False, name="first")
    w = tf.Variable(v.initialized_value() * 2.0, name="second")
    assert v.initialized_value().shape.ndims is None  # read (unknown) or initial value ([2])
    with tf.Session() as sess:
        sess.run(w.initializer)  # before v's: from v's initial value
        assert sess.run(w).tolist() == [6.0, 6.0]
        sess.run(v.initializer)
        sess.run(tf.assign(v, [1.0, 1.0, 1.0], validate_shape=False))
        assert sess.run(v.initialized_value()).tolist() == [1.0, 1.0, 1.0]
