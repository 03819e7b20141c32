"""``tw.keras.constraints``: projections applied to a weight after every optimizer update (a
layer's ``*_constraint`` arguments; ``tw.train.Optimizer.apply_gradients`` assigns
``constraint(var)`` to each variable that has one, as TF 1.x).

Contract: a constraint is a callable from a weight tensor to a tensor of its shape and dtype.
`MaxNorm`, `UnitNorm` and `MinMaxNorm` rescale the slices along `axis` (0: each column of a Dense
kernel, one norm per output unit) by ``desired / (1e-7 + norm)``; `NonNeg` zeroes the negative
entries. `serialize` gives ``{"class_name", "config"}``; `deserialize` and `get` take that dict,
a class name or one of Keras's lower-case aliases (``"max_norm"``, ``"nonneg"``, ...), and `get`
also passes None and callables through; anything else is a `ValueError`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import math_ops
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor

__all__ = [
    "Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "UnitNorm", "deserialize", "get",
    "max_norm", "min_max_norm", "non_neg", "serialize", "unit_norm",
]

EPSILON = 1e-7


class Constraint:
    """The base class: the identity."""

    def __call__(self, w: Any) -> Any:
        return w

    def get_config(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Constraint:
        return cls(**config)


def _norms(w: Tensor, axis: Any) -> Tensor:
    return math_ops.sqrt(math_ops.reduce_sum(math_ops.square(w), axis=axis, keepdims=True))


class MaxNorm(Constraint):
    """Rescale the slices along `axis` whose L2 norm exceeds `max_value` down to it."""

    def __init__(self, max_value: float = 2, axis: Any = 0) -> None:
        self.max_value, self.axis = max_value, axis

    def __call__(self, w: Any) -> Tensor:
        w = convert_to_tensor(w)
        norms = _norms(w, self.axis)
        desired = math_ops.clip_by_value(norms, 0.0, self.max_value)
        return w * (desired / (EPSILON + norms))

    def get_config(self) -> dict[str, Any]:
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """The weight with its negative entries set to zero."""

    def __call__(self, w: Any) -> Tensor:
        w = convert_to_tensor(w)
        return w * math_ops.cast(math_ops.greater_equal(w, 0.0), w.dtype)


class UnitNorm(Constraint):
    """The slices along `axis` rescaled to unit L2 norm."""

    def __init__(self, axis: Any = 0) -> None:
        self.axis = axis

    def __call__(self, w: Any) -> Tensor:
        w = convert_to_tensor(w)
        return w / (EPSILON + _norms(w, self.axis))

    def get_config(self) -> dict[str, Any]:
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """The slices along `axis` moved a fraction `rate` of the way to norms clipped into
    ``[min_value, max_value]`` (`rate` 1: exactly there)."""

    def __init__(self, min_value: float = 0.0, max_value: float = 1.0, rate: float = 1.0,
                 axis: Any = 0) -> None:
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w: Any) -> Tensor:
        w = convert_to_tensor(w)
        norms = _norms(w, self.axis)
        desired = (self.rate * math_ops.clip_by_value(norms, self.min_value, self.max_value)
                   + (1 - self.rate) * norms)
        return w * (desired / (EPSILON + norms))

    def get_config(self) -> dict[str, Any]:
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate,
                "axis": self.axis}


# Keras's aliases
max_norm = MaxNorm
non_neg = NonNeg
unit_norm = UnitNorm
min_max_norm = MinMaxNorm

_BY_NAME: dict[str, type[Constraint]] = {
    "Constraint": Constraint, "MaxNorm": MaxNorm, "NonNeg": NonNeg, "UnitNorm": UnitNorm,
    "MinMaxNorm": MinMaxNorm, "max_norm": MaxNorm, "non_neg": NonNeg, "unit_norm": UnitNorm,
    "min_max_norm": MinMaxNorm, "maxnorm": MaxNorm, "nonneg": NonNeg, "unitnorm": UnitNorm,
}


def serialize(constraint: Constraint) -> dict[str, Any]:
    return {"class_name": type(constraint).__name__, "config": constraint.get_config()}


def deserialize(config: Any) -> Constraint:
    """The constraint a ``{"class_name", "config"}`` dict or a name describes."""
    if isinstance(config, str):
        config = {"class_name": config, "config": {}}
    name = config.get("class_name")
    if name not in _BY_NAME:
        raise ValueError(f"Unknown constraint: {name}")
    return _BY_NAME[name].from_config(config.get("config", {}))


def get(identifier: Any) -> Any:
    """The constraint `identifier` is or describes (see the module docstring)."""
    if identifier is None:
        return None
    if isinstance(identifier, (dict, str)):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret constraint identifier: {identifier}")
