"""``tw.keras.regularizers``: weight penalties for a layer's ``*_regularizer`` arguments.

Contract: `L1L2(l1, l2)` called on a weight is ``l1 * sum(|w|) + l2 * sum(w ** 2)`` as a float
scalar tensor (a constant 0 when both are 0); `l1`, `l2` and `l1_l2` build one (default factor
0.01). `get` resolves None, a callable, a name (``"l1"``, ``"l2"``, ``"l1_l2"``) or a config dict
``{"class_name": "L1L2", "config": {...}}`` (what `serialize` gives); anything else is a
`ValueError`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import math_ops
from tensorweave.engine.graph.constant_op import constant
from tensorweave.engine.graph.graph import Tensor
from tensorweave.keras import backend

__all__ = ["L1L2", "Regularizer", "deserialize", "get", "l1", "l1_l2", "l2", "serialize"]


class Regularizer:
    """The base class: a callable from a weight to a scalar penalty."""

    def __call__(self, x: Any) -> Any:
        return 0.0

    def get_config(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Regularizer:
        return cls(**config)


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x ** 2)``."""

    def __init__(self, l1: float = 0.0, l2: float = 0.0) -> None:
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x: Any) -> Tensor:
        if not self.l1 and not self.l2:
            return constant(0.0, dtype=backend.floatx())
        terms = []
        if self.l1:
            terms.append(self.l1 * math_ops.reduce_sum(math_ops.abs(x)))
        if self.l2:
            terms.append(self.l2 * math_ops.reduce_sum(math_ops.square(x)))
        return terms[0] if len(terms) == 1 else math_ops.add(terms[0], terms[1])

    def get_config(self) -> dict[str, Any]:
        return {"l1": self.l1, "l2": self.l2}


def l1(l: float = 0.01) -> L1L2:  # noqa: E741 - Keras's argument name
    return L1L2(l1=l)


def l2(l: float = 0.01) -> L1L2:  # noqa: E741 - Keras's argument name
    return L1L2(l2=l)


def l1_l2(l1: float = 0.01, l2: float = 0.01) -> L1L2:
    return L1L2(l1=l1, l2=l2)


_BY_NAME = {"l1": l1, "l2": l2, "l1_l2": l1_l2}
_CLASSES = {"L1L2": L1L2}


def serialize(regularizer: Regularizer) -> dict[str, Any]:
    return {"class_name": type(regularizer).__name__, "config": regularizer.get_config()}


def deserialize(config: dict[str, Any]) -> Regularizer:
    """The regularizer of a ``{"class_name", "config"}`` dict."""
    name = config.get("class_name")
    if name not in _CLASSES:
        raise ValueError(f"Unknown regularizer: {name}")
    return _CLASSES[name].from_config(config.get("config", {}))


def get(identifier: Any) -> Any:
    """The regularizer `identifier` is, names or configures (see the module docstring)."""
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]()
    raise ValueError(f"Could not interpret regularizer identifier: {identifier}")
