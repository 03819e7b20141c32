"""Placeholders and assignments: shapes, dtypes, attrs, shape validation, initialization."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.api import state_ops
from tensorweave.engine import errors


def test_placeholder_dtype_shape_and_name() -> None:
    p = state_ops.placeholder("float32", [None, 3])
    assert p.op.type == "Placeholder" and p.op.name == "Placeholder"
    assert p.dtype == tw.float32
    assert p.shape.as_list() == [None, 3]
    assert p.op.get_attr("dtype") == tw.float32
    named = state_ops.placeholder(tw.int32, name="ids")
    assert named.op.name == "ids"
    assert named.shape.dims is None


def test_placeholder_feeds() -> None:
    p = state_ops.placeholder(tw.int32, [2])
    with tw.Session() as sess:
        out = sess.run(p * 2, {p: [3, 4]})
        np.testing.assert_array_equal(out, [6, 8])
        assert out.dtype == np.int32
        with pytest.raises(errors.InvalidArgumentError):
            sess.run(p * 2)


def test_placeholder_with_default_shape() -> None:
    p = state_ops.placeholder_with_default(tw.constant([1.0, 2.0, 3.0]), [None])
    assert p.op.type == "PlaceholderWithDefault"
    assert p.shape.as_list() == [None]
    assert p.dtype == tw.float32
    with tw.Session() as sess:
        np.testing.assert_array_equal(sess.run(p), [1.0, 2.0, 3.0])
        np.testing.assert_array_equal(sess.run(p, {p: [9.0]}), [9.0])


def test_placeholder_with_default_incompatible_shape() -> None:
    with pytest.raises(ValueError, match="PlaceholderWithDefault"):
        state_ops.placeholder_with_default(tw.constant([1.0, 2.0, 3.0]), [2])


def test_assign_default_attrs_and_value() -> None:
    v = tw.Variable([1.0, 2.0], name="v")
    a = state_ops.assign(v, [5.0, 6.0])
    assert a.op.type == "Assign" and a.op.name == "Assign"
    assert a.op.get_attr("validate_shape") is True
    assert a.op.get_attr("use_locking") is True
    with tw.Session() as sess:
        np.testing.assert_array_equal(sess.run(a), [5.0, 6.0])
        np.testing.assert_array_equal(sess.run(v), [5.0, 6.0])


def test_assign_explicit_attrs() -> None:
    v = tw.Variable([1.0, 2.0])
    a = state_ops.assign(v, [5.0, 6.0], validate_shape=True, use_locking=False, name="set")
    assert a.op.name == "set"
    assert a.op.get_attr("use_locking") is False


def test_assign_validates_shape() -> None:
    v = tw.Variable([1.0, 2.0])
    with pytest.raises(ValueError):
        state_ops.assign(v, [1.0, 2.0, 3.0])


def test_assign_without_shape_validation_changes_the_shape() -> None:
    v = tw.Variable([1.0, 2.0])
    a = state_ops.assign(v, [1.0, 2.0, 3.0], validate_shape=False)
    assert a.op.get_attr("validate_shape") is False
    assert a.shape.as_list() == [3]
    with tw.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(a), [1.0, 2.0, 3.0])


def test_assign_add_and_sub() -> None:
    v = tw.Variable(10, name="n")
    add = state_ops.assign_add(v, 5)
    sub = state_ops.assign_sub(v, 3, use_locking=True)
    assert (add.op.type, add.op.name) == ("AssignAdd", "AssignAdd")
    assert add.op.get_attr("use_locking") is False
    assert sub.op.type == "AssignSub" and sub.op.get_attr("use_locking") is True
    assert add.dtype == tw.int32
    with tw.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(add) == 15
        assert sess.run(sub) == 12
        assert sess.run(v) == 12


def test_assign_add_refuses_bool() -> None:
    v = tw.Variable([True])
    with pytest.raises(TypeError):
        state_ops.assign_add(v, [True])


def test_is_variable_initialized() -> None:
    v = tw.Variable([1.0], name="maybe")
    check = state_ops.is_variable_initialized(v)
    assert check.op.type == "IsVariableInitialized"
    assert check.dtype == tw.bool
    assert check.shape.as_list() == []
    assert check.op.get_attr("dtype") == tw.float32
    with tw.Session() as sess:
        assert not sess.run(check)
        with pytest.raises(errors.FailedPreconditionError, match="maybe"):
            sess.run(v)
        sess.run(v.initializer)
        assert sess.run(check)


@pytest.mark.parametrize("update", [tw.assign_add, tw.assign_sub])
@pytest.mark.parametrize("shape", [(2, 1, 3), (), (3, 1)])
def test_assign_add_and_sub_refuse_a_value_of_another_shape(update, shape) -> None:
    # TF: "Parameters and update must be the same size"; numpy would broadcast and reshape v
    v = tw.Variable(np.zeros(3, np.float32))
    delta = tw.placeholder(tw.float32)
    op = update(v, delta)
    with tw.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(errors.InvalidArgumentError, match="must be the same size") as info:
            sess.run(op, {delta: np.ones(shape, np.float32)})
        assert info.value.node_def.name == op.op.name
        assert sess.run(v).shape == (3,)
        np.testing.assert_array_equal(sess.run(op, {delta: np.ones(3, np.float32)}),
                                      np.ones(3) if update is tw.assign_add else -np.ones(3))
