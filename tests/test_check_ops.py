"""Assertions (``assert_equal``, ..., ``assert_rank``, ``assert_type``, ``assert_integer``,
``assert_scalar``): static failures at construction with TF's error types, run-time failures as
`InvalidArgumentError`, default messages, names, and ``tw.debugging`` aliases."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors

BINARY = [
    (tw.assert_equal, np.equal, "=="), (tw.assert_none_equal, np.not_equal, "!="),
    (tw.assert_less, np.less, "<"), (tw.assert_less_equal, np.less_equal, "<="),
    (tw.assert_greater, np.greater, ">"), (tw.assert_greater_equal, np.greater_equal, ">="),
]
PAIRS = [([1, 2], [1, 2]), ([1, 2], [2, 3]), ([3, 2], [1, 2]), ([1, 5], [3, 2])]


@pytest.mark.parametrize(("check", "reference", "symbol"), BINARY)
def test_binary_checks_at_run_time(check, reference, symbol) -> None:
    x = tw.placeholder(tw.int32, [2], name="x")
    y = tw.placeholder(tw.int32, [2], name="y")
    op = check(x, y, message="msg")
    assert op.type == "Assert"
    with tw.Session() as sess:
        for a, b in PAIRS:
            if np.all(reference(a, b)):
                sess.run(op, {x: a, y: b})
            else:
                with pytest.raises(errors.InvalidArgumentError) as info:
                    sess.run(op, {x: a, y: b})
                text = str(info.value)
                assert text.startswith(
                    f"assertion failed: [msg] [Condition x {symbol} y did not hold element-wise:] "
                    f"[x (x:0) = ] [{a[0]} {a[1]}] [y (y:0) = ] [{b[0]} {b[1]}]")


@pytest.mark.parametrize(("check", "reference", "symbol"), BINARY)
def test_binary_checks_of_constants_fail_at_construction(check, reference, symbol) -> None:
    for a, b in PAIRS:
        if np.all(reference(a, b)):
            assert check(tw.constant(a), tw.constant(b)).type == "Assert"
        else:
            with pytest.raises(errors.InvalidArgumentError,
                               match=rf"Condition x {'[!]' if symbol == '!=' else ''}"):
                check(tw.constant(a), tw.constant(b))


def test_broadcasting_summarize_data_and_names() -> None:
    x = tw.placeholder(tw.float32, [None, 2])
    op = tw.assert_less(x, 10.0 * tw.ones([2]), data=["x too big", x], summarize=1,
                        name="small")
    assert op.name == "small/Assert/Assert" and op.get_attr("summarize") == 1
    with tw.Session() as sess:
        sess.run(op, {x: [[1.0, 2.0], [3.0, 9.5]]})
        with pytest.raises(errors.InvalidArgumentError,
                           match=r"assertion failed: \[x too big\] \[\[1\.\.\.\]\.\.\.\]"):
            sess.run(op, {x: [[1.0, 20.0]]})


def test_empty_operands_pass() -> None:
    x = tw.placeholder(tw.float32, [None])
    with tw.Session() as sess:
        sess.run(tw.assert_greater(x, 1.0), {x: np.zeros(0, np.float32)})


SIGNS = [
    (tw.assert_positive, lambda v: v > 0, ">"), (tw.assert_negative, lambda v: v < 0, "<"),
    (tw.assert_non_negative, lambda v: v >= 0, ">="),
    (tw.assert_non_positive, lambda v: v <= 0, "<="),
]


@pytest.mark.parametrize(("check", "holds", "symbol"), SIGNS)
def test_sign_checks(check, holds, symbol) -> None:
    x = tw.placeholder(tw.float64, [None], name="v")
    op = check(x, message="sign")
    with tw.Session() as sess:
        for values in ([1.0, 2.0], [-1.0, -3.0], [0.0, 0.0], [-1.0, 1.0]):
            if all(holds(v) for v in values):
                sess.run(op, {x: values})
            else:
                with pytest.raises(errors.InvalidArgumentError,
                                   match=rf"\[sign\] \[Condition x {symbol} 0 did not hold "
                                         r"element-wise:\] \[x \(v:0\) = \]"):
                    sess.run(op, {x: values})
    with pytest.raises(errors.InvalidArgumentError):
        check(tw.constant([7, 0, -7]))


def test_assert_rank_static_and_dynamic() -> None:
    assert tw.assert_rank(tw.zeros([2, 3]), 2).type == "NoOp"
    with pytest.raises(ValueError, match="must have rank 1.  Received rank 2"):
        tw.assert_rank(tw.zeros([2, 3]), 1, message="oops")
    with pytest.raises(ValueError, match="Rank must be a scalar"):
        tw.assert_rank(tw.zeros([2]), [1])
    with pytest.raises(TypeError):
        tw.assert_rank(tw.zeros([2]), np.int64(1))
    x = tw.placeholder(tw.float32)
    rank = tw.placeholder(tw.int32)
    fixed = tw.assert_rank(x, 2)
    dynamic = tw.assert_rank(x, rank)
    with tw.Session() as sess:
        sess.run(fixed, {x: np.zeros((1, 1))})
        with pytest.raises(errors.InvalidArgumentError, match=r"must have rank\] \[2\]"):
            sess.run(fixed, {x: np.zeros(3)})
        sess.run(dynamic, {x: np.zeros(3), rank: 1})
        with pytest.raises(errors.InvalidArgumentError, match="Rank must be a scalar"):
            sess.run(dynamic, {x: np.zeros(3), rank: [1]})


def test_assert_type_and_integer() -> None:
    op = tw.assert_type(tw.constant(1), tw.int32)
    assert op.type == "NoOp"
    with pytest.raises(TypeError, match="must be of type tf.int64"):
        tw.assert_type(tw.constant(1), tw.int64)
    assert tw.assert_integer(tw.constant([1], tw.uint8)).type == "NoOp"
    with pytest.raises(TypeError, match='Expected "x" to be integer type'):
        tw.assert_integer(tw.constant(1.0))


def test_assert_scalar_returns_its_tensor() -> None:
    x = tw.constant(3.0)
    assert tw.assert_scalar(x) is x
    with pytest.raises(ValueError, match="Expected scalar shape"):
        tw.assert_scalar(tw.constant([3.0]))
    with pytest.raises(ValueError, match="Expected scalar shape"):
        tw.assert_scalar(tw.placeholder(tw.float32))


def test_debugging_namespace_and_compat() -> None:
    import tensorweave.compat.v1 as tf1

    for name in ("assert_equal", "assert_rank", "assert_type", "assert_scalar", "Assert"):
        assert getattr(tw.debugging, name) is getattr(tw, name) is getattr(tf1.debugging, name)
