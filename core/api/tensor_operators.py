"""Python operators on `Tensor`, as TF overloads them."""

from __future__ import annotations

from typing import Any

from tensorweave.api import math_ops
from tensorweave.framework.graph import Tensor


def _swap(fn: Any) -> Any:
    return lambda self, other: fn(other, self)


def install() -> None:
    for name, fn in {"add": math_ops.add, "sub": math_ops.subtract, "mul": math_ops.multiply,
                     "truediv": math_ops.truediv}.items():
        setattr(Tensor, f"__{name}__", lambda self, other, fn=fn: fn(self, other))
        setattr(Tensor, f"__r{name}__", _swap(fn))


install()
