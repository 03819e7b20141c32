"""The optimizer argument of the canned estimators, as TF's ``canned/optimizers.py``.

Contract: `get_optimizer_instance(opt, learning_rate)` takes a name (``"Adagrad"``, ``"Adam"``,
``"Ftrl"``, ``"RMSProp"``, ``"SGD"``, built with `learning_rate`), an `Optimizer`, or a
callable returning one (called now), and returns the `Optimizer`; anything else is TF's
``ValueError``. The estimators call it inside their `model_fn`, so a name gives a fresh
optimizer in every graph.
"""

from __future__ import annotations

from typing import Any

from tensorweave.train.ftrl import FtrlOptimizer
from tensorweave.train.optimizers import (
    AdagradOptimizer,
    AdamOptimizer,
    GradientDescentOptimizer,
    Optimizer,
    RMSPropOptimizer,
)

__all__ = ["get_optimizer_instance"]

_OPTIMIZER_CLS_NAMES: dict[str, type[Optimizer]] = {
    "Adagrad": AdagradOptimizer,
    "Adam": AdamOptimizer,
    "Ftrl": FtrlOptimizer,
    "RMSProp": RMSPropOptimizer,
    "SGD": GradientDescentOptimizer,
}


def get_optimizer_instance(opt: Any, learning_rate: float | None = None) -> Optimizer:
    """The `Optimizer` that `opt` names or is; see the module docstring."""
    if isinstance(opt, str):
        if opt in _OPTIMIZER_CLS_NAMES:
            if learning_rate is None:
                raise ValueError("learning_rate must be specified when opt is string.")
            return _OPTIMIZER_CLS_NAMES[opt](learning_rate=learning_rate)
        raise ValueError(f"Unsupported optimizer name: {opt}. Supported names are: "
                         f"{tuple(sorted(_OPTIMIZER_CLS_NAMES))}")
    if callable(opt) and not isinstance(opt, Optimizer):
        opt = opt()
    if not isinstance(opt, Optimizer):
        raise ValueError(f"The given object is not an Optimizer instance. Given: {opt}")
    return opt
