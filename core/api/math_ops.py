"""Math ops: elementwise arithmetic, comparisons, logic, casts, reductions and matmul."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.constant_op import convert_to_tensor, is_tensor_like
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply

__all__ = ["add", "divide", "multiply", "subtract", "truediv"]


def binary_inputs(x: Any, y: Any) -> tuple[Tensor, Tensor]:
    """Convert a binary op's operands: a Python value takes the other operand's dtype."""
    if is_tensor_like(x):
        x = convert_to_tensor(x)
        return x, convert_to_tensor(y, dtype=None if is_tensor_like(y) else x.dtype)
    if is_tensor_like(y):
        y = convert_to_tensor(y)
        return convert_to_tensor(x, dtype=y.dtype), y
    x = convert_to_tensor(x)
    return x, convert_to_tensor(y, dtype=x.dtype)


def _binary(op: str, default_name: str) -> Any:
    def fn(x: Any, y: Any, name: str | None = None) -> Tensor:
        a, b = binary_inputs(x, y)
        return apply(op, [a, b], name=name or default_name)

    fn.__name__ = default_name.lower()
    return fn


add = _binary("AddV2", "add")
subtract = _binary("Sub", "sub")
multiply = _binary("Mul", "mul")
divide = truediv = _binary("RealDiv", "truediv")
