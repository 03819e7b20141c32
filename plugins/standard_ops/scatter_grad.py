"""Gradients of the variable scatter updates: none, as in TF (they update state; their outputs
are not differentiable)."""

from __future__ import annotations

from typing import Any

from tensorweave.plugins.standard_ops.scatter import ALL_OPS


def register(registry: Any) -> None:
    for name in ALL_OPS:
        registry.add(name, None)
