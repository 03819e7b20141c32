"""OpDefs for the random ops."""

from __future__ import annotations

from typing import Any


def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
