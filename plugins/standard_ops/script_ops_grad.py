"""``PyFunc`` and ``PyFuncStateless`` are not differentiable, as TF's ``ops.NotDifferentiable``:
`tw.gradients` gives ``None`` for what reaches a loss only through them."""

from __future__ import annotations

from typing import Any


def register_gradients(registry: Any) -> None:
    registry.add("PyFunc", None)
    registry.add("PyFuncStateless", None)
