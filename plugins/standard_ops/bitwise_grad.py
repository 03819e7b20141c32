"""The bitwise ops are not differentiable (TF's ``ops.NotDifferentiable``): `tw.gradients` gives
``None`` for what reaches a loss only through them."""

from __future__ import annotations

from typing import Any

from tensorweave.plugins.standard_ops.bitwise import BINARY


def register_gradients(registry: Any) -> None:
    for name in (*BINARY, "Invert", "PopulationCount"):
        registry.add(name, None)
