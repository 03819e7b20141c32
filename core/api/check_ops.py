"""Assertions on tensors: ``assert_equal``, ``assert_less``, ..., ``assert_rank``,
``assert_type``, ``assert_integer``, ``assert_scalar``, as ``tf.compat.v1`` (and
``tw.debugging``).

Contract: when the answer is known while the graph is built, a failing check raises right away
as TF does: `InvalidArgumentError` for value comparisons whose operands are both constant,
`ValueError` for ranks and scalar shapes, `TypeError` for dtypes. Otherwise a check returns an
``Assert`` op (a ``NoOp`` when it was decided statically, for the rank and dtype checks) to run
through `control_dependencies`; it fails the step with `InvalidArgumentError`. ``assert_scalar``
returns its tensor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.api import array_ops, math_ops
from tensorweave.api.control_flow_ops import no_op
from tensorweave.api.logging_ops import Assert
from tensorweave.api.scopes import control_dependencies, name_scope
from tensorweave.engine import dtypes, errors
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Operation, Tensor, constant_value
from tensorweave.engine.graph.op_builder import apply

__all__ = [
    "assert_equal", "assert_greater", "assert_greater_equal", "assert_integer", "assert_less",
    "assert_less_equal", "assert_negative", "assert_non_negative", "assert_non_positive",
    "assert_none_equal", "assert_positive", "assert_rank", "assert_scalar", "assert_type",
]


def _static_text(item: Any) -> str:
    if not isinstance(item, Tensor):
        return str(item)
    value = constant_value(item)
    return str(item) if value is None else str(value)


def _assert_static(condition: bool, data: list[Any]) -> None:
    if not condition:
        raise errors.InvalidArgumentError(None, None, "\n".join(map(_static_text, data)))


def _binary_assert(symbol: str, default_name: str, test: Callable[..., Tensor],
                   static_test: np.ufunc, x: Any, y: Any, data: list[Any] | None,
                   summarize: int | None, message: str | None,
                   name: str | None) -> Operation:
    with name_scope(name, default_name, [x, y]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y")
        if data is None:
            data = [f"Condition x {symbol} y did not hold element-wise:", f"x ({x.name}) = ", x,
                    f"y ({y.name}) = ", y]
        if message is not None:
            data = [message, *data]
        condition = math_ops.reduce_all(test(x, y))
        x_static, y_static = constant_value(x), constant_value(y)
        if x_static is not None and y_static is not None:
            _assert_static(bool(np.all(static_test(x_static, y_static))), data)
        return Assert(condition, data, summarize=summarize)


def assert_equal(x: Any, y: Any, data: list[Any] | None = None, summarize: int | None = None,
                 message: str | None = None, name: str | None = None) -> Operation:
    return _binary_assert("==", "assert_equal", math_ops.equal, np.equal, x, y, data,
                          summarize, message, name)


def assert_none_equal(x: Any, y: Any, data: list[Any] | None = None,
                      summarize: int | None = None, message: str | None = None,
                      name: str | None = None) -> Operation:
    return _binary_assert("!=", "assert_none_equal", math_ops.not_equal, np.not_equal, x, y,
                          data, summarize, message, name)


def assert_less(x: Any, y: Any, data: list[Any] | None = None, summarize: int | None = None,
                message: str | None = None, name: str | None = None) -> Operation:
    return _binary_assert("<", "assert_less", math_ops.less, np.less, x, y, data, summarize,
                          message, name)


def assert_less_equal(x: Any, y: Any, data: list[Any] | None = None,
                      summarize: int | None = None, message: str | None = None,
                      name: str | None = None) -> Operation:
    return _binary_assert("<=", "assert_less_equal", math_ops.less_equal, np.less_equal, x, y,
                          data, summarize, message, name)


def assert_greater(x: Any, y: Any, data: list[Any] | None = None, summarize: int | None = None,
                   message: str | None = None, name: str | None = None) -> Operation:
    return _binary_assert(">", "assert_greater", math_ops.greater, np.greater, x, y, data,
                          summarize, message, name)


def assert_greater_equal(x: Any, y: Any, data: list[Any] | None = None,
                         summarize: int | None = None, message: str | None = None,
                         name: str | None = None) -> Operation:
    return _binary_assert(">=", "assert_greater_equal", math_ops.greater_equal,
                          np.greater_equal, x, y, data, summarize, message, name)


def _sign_assert(symbol: str, default_name: str, compare: Callable[..., Operation],
                 zero_first: bool, x: Any, data: list[Any] | None, summarize: int | None,
                 message: str | None, name: str | None) -> Operation:
    """``x <symbol> 0`` through `compare` (``assert_less`` or ``assert_less_equal``)."""
    with name_scope(name, default_name, [x]):
        x = convert_to_tensor(x, name="x")
        if data is None:
            data = [message or "", f"Condition x {symbol} 0 did not hold element-wise:",
                    f"x ({x.name}) = ", x]
        zero = convert_to_tensor(0, dtype=x.dtype)
        left, right = (zero, x) if zero_first else (x, zero)
        return compare(left, right, data=data, summarize=summarize)


def assert_positive(x: Any, data: list[Any] | None = None, summarize: int | None = None,
                    message: str | None = None, name: str | None = None) -> Operation:
    return _sign_assert(">", "assert_positive", assert_less, True, x, data, summarize, message,
                        name)


def assert_negative(x: Any, data: list[Any] | None = None, summarize: int | None = None,
                    message: str | None = None, name: str | None = None) -> Operation:
    return _sign_assert("<", "assert_negative", assert_less, False, x, data, summarize,
                        message, name)


def assert_non_negative(x: Any, data: list[Any] | None = None, summarize: int | None = None,
                        message: str | None = None, name: str | None = None) -> Operation:
    return _sign_assert(">=", "assert_non_negative", assert_less_equal, True, x, data,
                        summarize, message, name)


def assert_non_positive(x: Any, data: list[Any] | None = None, summarize: int | None = None,
                        message: str | None = None, name: str | None = None) -> Operation:
    return _sign_assert("<=", "assert_non_positive", assert_less_equal, False, x, data,
                        summarize, message, name)


def assert_rank(x: Any, rank: Any, data: list[Any] | None = None, summarize: int | None = None,
                message: str | None = None, name: str | None = None) -> Operation:
    with name_scope(name, "assert_rank", [x, rank]):
        x = convert_to_tensor(x, name="x")
        rank = convert_to_tensor(rank, name="rank")
        message = message or ""
        assert_type(rank, dtypes.int32)
        if data is None:
            data = [message, f"Tensor {x.name} must have rank", rank, "Received shape: ",
                    array_ops.shape(x)]
        rank_static = constant_value(rank)
        if rank_static is not None:
            if np.ndim(rank_static) != 0:
                raise ValueError("Rank must be a scalar.")
            x_rank = x.shape.ndims
            if x_rank is not None:
                if x_rank != int(rank_static):
                    raise ValueError(
                        f"{message}.  Tensor {x.name} must have rank {int(rank_static)}.  "
                        f"Received rank {x_rank}, shape {x.shape}")
                return no_op(name="static_checks_determined_all_ok")
        condition = math_ops.equal(array_ops.rank(x), rank)
        if rank_static is None:
            # assert_rank(x, [n]) for assert_rank(x, n) must not pass silently.
            rank_check = assert_rank(rank, 0,
                                     data=["Rank must be a scalar. Received rank: ", rank])
            with control_dependencies([rank_check]):
                condition = apply("Identity", [condition])
        return Assert(condition, data, summarize=summarize)


def assert_type(tensor: Any, tf_type: Any, message: str | None = None,
                name: str | None = None) -> Operation:
    with name_scope(name, "assert_type", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype != dtypes.as_dtype(tf_type):
            raise TypeError(f"{message or ''}  {tensor.name} must be of type "
                            f"{dtypes.as_dtype(tf_type)!r}")
        return no_op("statically_determined_correct_type")


def assert_integer(x: Any, message: str | None = None, name: str | None = None) -> Operation:
    with name_scope(name, "assert_integer", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError(f'{message or ""}  Expected "x" to be integer type.  Found: {x.name} '
                            f"of dtype {x.dtype!r}")
        return no_op("statically_determined_was_integer")


def assert_scalar(tensor: Any, name: str | None = None, message: str | None = None) -> Tensor:
    with name_scope(name, "assert_scalar", [tensor]) as scope:
        tensor = convert_to_tensor(tensor, name=scope)
        if tensor.shape.ndims != 0:
            raise ValueError(f"{message or ''}Expected scalar shape for {tensor.name}, saw shape: "
                             f"{tensor.shape}.")
        return tensor
