"""Python operators on `Tensor`, as TF overloads them.

Contract: ``+ - * / // % ** @``, unary ``-``, ``abs()``, ``< <= > >=`` and, for bool tensors,
``& | ^ ~`` build the same ops as `tensorweave.api.math_ops` (``/`` is `truediv`, ``//``
`floordiv`, ``%`` `floormod`), reflected forms included, so ``numpy_array + tensor`` is a tensor.
A Python or numpy operand takes the tensor's dtype. ``==`` and ``!=`` are left alone: as in
TF1 they compare identity, so tensors stay usable as dict keys. ``tensor[...]`` delegates to
``array_ops.slice_helper``. `overload_operators` installs the set on a class; importing this
module installs it on `Tensor`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from tensorweave.api import math_ops
from tensorweave.engine.graph.graph import Tensor

# operator name -> (function, node name TF gives the op the operator builds)
BINARY: dict[str, tuple[Callable[..., Any], str]] = {
    "add": (math_ops.add, "add"),
    "sub": (math_ops.subtract, "sub"),
    "mul": (math_ops.multiply, "mul"),
    "truediv": (math_ops.truediv, "truediv"),
    "floordiv": (math_ops.floordiv, "floordiv"),
    "mod": (math_ops.floormod, "mod"),
    "pow": (math_ops.pow, "pow"),
    "matmul": (math_ops.matmul, "MatMul"),
    "and": (math_ops.logical_and, "LogicalAnd"),
    "or": (math_ops.logical_or, "LogicalOr"),
    "xor": (math_ops.logical_xor, "LogicalXor"),
}

COMPARISONS: dict[str, Callable[..., Any]] = {
    "lt": math_ops.less, "le": math_ops.less_equal,
    "gt": math_ops.greater, "ge": math_ops.greater_equal,
}

UNARY: dict[str, Callable[..., Any]] = {
    "neg": math_ops.negative, "abs": math_ops.abs, "invert": math_ops.logical_not,
}


def _forward(fn: Callable[..., Any], op_name: str) -> Callable[[Any, Any], Any]:
    def operator(self: Any, other: Any) -> Any:
        return fn(self, other, name=op_name)

    return operator


def _reflected(fn: Callable[..., Any], op_name: str) -> Callable[[Any, Any], Any]:
    def operator(self: Any, other: Any) -> Any:
        return fn(other, self, name=op_name)

    return operator


def _unary(fn: Callable[..., Any]) -> Callable[[Any], Any]:
    return lambda self: fn(self)


def _getitem(self: Any, slice_spec: Any) -> Any:
    from tensorweave.api import array_ops  # array_ops imports this package's modules too

    return array_ops.slice_helper(self, slice_spec)


def overload_operators(cls: type) -> None:
    """Install TF's operator set on `cls`."""
    for name, (fn, op_name) in BINARY.items():
        setattr(cls, f"__{name}__", _forward(fn, op_name))
        setattr(cls, f"__r{name}__", _reflected(fn, op_name))
    for name, fn in COMPARISONS.items():
        setattr(cls, f"__{name}__", lambda self, other, fn=fn: fn(self, other))
    for name, fn in UNARY.items():
        setattr(cls, f"__{name}__", _unary(fn))
    cls.__getitem__ = _getitem


def _iter(self: Tensor) -> Iterator[Tensor]:
    if self.shape.ndims is None or self.shape[0] is None:
        raise TypeError("Tensor objects are only iterable when the first dimension is known.")
    from tensorweave.api import array_ops

    return iter(array_ops.unstack(self, num=self.shape[0]))


overload_operators(Tensor)
Tensor.__iter__ = _iter
