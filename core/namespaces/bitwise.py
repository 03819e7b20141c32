"""``tw.bitwise``: TF's bitwise ops under ``tf.bitwise``'s names. Each builds one op
(``BitwiseAnd``, ``BitwiseOr``, ``BitwiseXor``, ``Invert``, ``LeftShift``, ``RightShift``);
a Python operand takes the other operand's dtype, as TF's binary ops convert it."""

from __future__ import annotations

from typing import Any

from tensorweave.api.math_ops import binary_inputs
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import apply

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]


def _binary(op: str, x: Any, y: Any, name: str | None) -> Tensor:
    return apply(op, list(binary_inputs(x, y)), name=name)


def bitwise_and(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise ``x & y`` of two integer tensors (broadcast)."""
    return _binary("BitwiseAnd", x, y, name)


def bitwise_or(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise ``x | y`` of two integer tensors (broadcast)."""
    return _binary("BitwiseOr", x, y, name)


def bitwise_xor(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise ``x ^ y`` of two integer tensors (broadcast)."""
    return _binary("BitwiseXor", x, y, name)


def left_shift(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x << y``; shifts outside ``[0, bits)`` are clamped into it, as TF's kernel does."""
    return _binary("LeftShift", x, y, name)


def right_shift(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x >> y`` (arithmetic for signed types); shifts are clamped to ``[0, bits)``."""
    return _binary("RightShift", x, y, name)


def invert(x: Any, name: str | None = None) -> Tensor:
    """Every bit of the integer tensor `x` flipped (``~x``)."""
    return apply("Invert", [convert_to_tensor(x)], name=name)
