"""variable_scope of the friendly API."""

from __future__ import annotations

__all__: list[str] = []
