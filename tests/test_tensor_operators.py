"""Python operators on tensors build TF's ops, including reflected forms and numpy operands."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import tensorweave as tw

X = np.array([[7.0, -3.0, 2.5], [-1.5, 4.0, 9.0]], np.float32)
Y = np.array([2.0, -4.0, 1.5], np.float32)


def run(fetches, feed_dict=None):
    with tw.Session() as sess:
        return sess.run(fetches, feed_dict)


def check(actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype
    np.testing.assert_allclose(actual, expected, rtol=1e-6)


ARITHMETIC = [
    (operator.add, "AddV2", "add"), (operator.sub, "Sub", "sub"),
    (operator.mul, "Mul", "mul"), (operator.truediv, "RealDiv", "truediv"),
    (operator.floordiv, "FloorDiv", "floordiv"), (operator.mod, "FloorMod", "mod"),
    (operator.pow, "Pow", "pow"),
]


@pytest.mark.parametrize(("op", "op_type", "node_name"), ARITHMETIC,
                         ids=[a[2] for a in ARITHMETIC])
def test_arithmetic_operators_and_reflections(op, op_type, node_name):
    x, y = tw.constant(X), tw.constant(Y)
    pos = tw.constant(np.abs(X))  # Pow of negative bases by fractions is NaN: keep it real
    base = pos if op is operator.pow else x
    forward = op(base, y)
    assert forward.op.type == op_type
    assert forward.op.name == node_name
    outs = [forward, op(base, 2.0), op(3.0, base), op(np.abs(X) if op is operator.pow else X, y)]
    ref_base = np.abs(X) if op is operator.pow else X
    expected = [op(ref_base, Y), op(ref_base, np.float32(2)), op(np.float32(3), ref_base),
                op(ref_base, Y)]
    for result, ref in zip(run(outs), expected):
        check(result, ref.astype(np.float32))


def test_numpy_array_on_the_left_builds_a_tensor():
    y = tw.constant(Y)
    for op in (operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
               operator.mod):
        out = op(X, y)
        assert isinstance(out, tw.Tensor)
        check(run(out), op(X, Y))
    product = np.ones((2, 3), np.float32) @ tw.constant(np.ones((3, 2), np.float32))
    assert isinstance(product, tw.Tensor)
    check(run(product), np.full((2, 2), 3.0, np.float32))


def test_division_operators_on_integers():
    a, b = tw.constant([7, -7]), tw.constant([2, 2])
    true, floor, mod = run([a / b, a // b, a % b])
    check(true, np.array([3.5, -3.5]))  # int32 / int32 is float64, as in TF
    check(floor, np.array([3, -4], np.int32))
    check(mod, np.array([1, 1], np.int32))
    check(run(tw.constant(np.array([7], np.int8)) / 2), np.array([3.5], np.float32))


def test_python_scalars_take_the_tensor_dtype():
    x = tw.constant(np.array([1, 2], np.uint8))
    assert (x + 1).dtype == tw.uint8
    assert (2 * x).dtype == tw.uint8
    check(run(200 + x), np.array([201, 202], np.uint8))
    with pytest.raises(TypeError):
        x + 1.5  # noqa: B018 - 1.5 does not fit uint8


def test_mismatched_tensor_dtypes_raise_type_error():
    with pytest.raises(TypeError):
        tw.constant([1.0]) + tw.constant([1])


def test_matmul_operator():
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((3, 2), np.float32)
    out = tw.constant(a) @ tw.constant(b)
    assert out.op.type == "MatMul"
    check(run(out), a @ b)
    batched = tw.constant(np.ones((4, 2, 3), np.float32)) @ b
    assert batched.op.type == "BatchMatMulV2"
    check(run(batched), np.full((4, 2, 2), 3.0, np.float32))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        tw.constant(a) @ tw.constant(a.T.copy()[:2])


def test_unary_operators():
    x = tw.constant(X)
    neg, absolute = -x, abs(x)
    assert (neg.op.type, absolute.op.type) == ("Neg", "Abs")
    check(run(neg), -X)
    check(run(absolute), np.abs(X))
    check(run(-tw.constant(np.array([-128, 5], np.int8))), np.array([-128, -5], np.int8))


@pytest.mark.parametrize(("op", "op_type"), [
    (operator.lt, "Less"), (operator.le, "LessEqual"), (operator.gt, "Greater"),
    (operator.ge, "GreaterEqual")])
def test_comparison_operators(op, op_type):
    x = tw.constant(X)
    out = op(x, 2.5)
    assert out.op.type == op_type
    reflected = op(2.5, x)  # Python swaps to the mirrored comparison on x
    from_numpy = op(X, tw.constant(Y))
    results = run([out, reflected, from_numpy])
    check(results[0], op(X, np.float32(2.5)))
    check(results[1], op(np.float32(2.5), X))
    check(results[2], op(X, Y))


def test_equality_operators_keep_identity_semantics():
    x = tw.constant([1.0])
    y = tw.constant([1.0])
    assert (x == x) is True
    assert (x == y) is False
    assert x != y
    assert {x: 1}[x] == 1


def test_logical_operators_on_bools():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    ta, tb = tw.constant(a), tw.constant(b)
    outs = [ta & tb, ta | tb, ta ^ tb, ~ta, a & tb, a | tb, a ^ tb, ta & True]
    assert [o.op.type for o in outs[:4]] == ["LogicalAnd", "LogicalOr", "LogicalAnd",
                                             "LogicalNot"]
    expected = [a & b, a | b, a ^ b, ~a, a & b, a | b, a ^ b, a]
    for result, ref in zip(run(outs), expected):
        check(result, ref)
    with pytest.raises(TypeError):
        tw.constant([1]) & tw.constant([1])


def test_operators_broadcast_and_check_shapes():
    x = tw.placeholder(tw.float32, [None, 3])
    out = x * tw.constant(Y)
    assert out.shape.as_list() == [None, 3]
    check(run(out, {x: X}), X * Y)
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        x + tw.constant([1.0, 2.0])


def test_getitem_delegates_to_slice_helper():
    x = tw.constant(X)
    first_row, column = x[0], x[:, 1]
    check(run(first_row), X[0])
    check(run(column), X[:, 1])
