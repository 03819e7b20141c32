"""tw.train: saver."""

from __future__ import annotations

__all__: list[str] = []
