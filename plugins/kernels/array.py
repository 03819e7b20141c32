"""Kernels for the array ops."""

from __future__ import annotations

from typing import Any


def register(registry: Any, device_type: str) -> None:
    """Register this module's kernels for `device_type`."""
