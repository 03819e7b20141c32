"""Gradient functions for the standard ops (math ops)."""

from __future__ import annotations

from typing import Any


def register(registry: Any) -> None:
    """Register this module's gradient functions."""
